"""Many facts at once (`facts.write_facts`, `Memory.write_facts`) against a real FalkorDB: the
batch leaves exactly the graph that writing its facts one by one leaves, checks everything before
writing anything, stays correct under concurrent writers, and its statements start from indexes.
Also the planner's `apply_plan` on plain data, and the hot-path plans the single-fact path keeps."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import datetime, timezone
from typing import Any

import pytest

from relay_graph.memory import fact_planning as fp
from relay_graph.memory import facts
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import InvalidInput, InvalidTenant, InvalidValue, UnknownPredicate
from relay_graph.memory.models import FactInput, Outcome, RetireInput
from relay_graph.runtime.queries import Query
from relay_graph.memory.queries import facts as q
from tests.support import register

DAY = 86_400_000


def at(day: int, hour: int = 0) -> datetime:
    return datetime(2026, 9, day, hour, tzinfo=timezone.utc)


def fact(subject="alice rao", predicate="lives_in", obj="pune", agent="intake", *, vf=None, rec=None, source=None):
    return FactInput(subject=subject, predicate=predicate, object=obj, agent=agent, valid_from=vf, recorded_at=rec,
                     source=source)


async def raw(client: GraphClient, tenant: str, cypher: str, **params) -> list[dict]:
    return await client.run(tenant, Query("test", cypher), params)


async def graph_size(client, tenant) -> tuple[int, int]:
    rows = await raw(client, tenant,
                     "MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n) AS n, count(r) AS r")
    return rows[0]["n"], rows[0]["r"]


# ---------------------------------------------------------------------------------------------
# apply_plan (plain data): planning the next write against the evolving slot is the same as
# planning it against what the graph holds after the write


def test_apply_plan_moves_the_slot_as_the_write_statements_do():
    s0 = fp.Slot()
    create = fp.plan_write(s0, fp.NewValue("City|pune", "Pune", "intake", DAY), single=True,
                           policy=fp.ConflictPolicy.CONFLICT, now_ms=DAY, fact_id="a", conflict_id="k1")
    s1 = fp.apply_plan(s0, create)
    assert s1.version == 1 and [(f.fact_id, f.state, f.corroborations) for f in s1.facts] == [("a", fp.CURRENT, 1)]

    repeat = fp.plan_write(s1, fp.NewValue("City|pune", "Pune", "resolver", 2 * DAY), single=True,
                           policy=fp.ConflictPolicy.CONFLICT, now_ms=2 * DAY, fact_id="b", conflict_id="k2")
    s2 = fp.apply_plan(s1, repeat)
    assert repeat.kind is fp.Kind.CORROBORATE and s2.version == 2
    assert [(f.fact_id, f.corroborations) for f in s2.facts] == [("a", 2)]

    claim = fp.plan_write(s2, fp.NewValue("City|delhi", "Delhi", "resolver", 3 * DAY), single=True,
                          policy=fp.ConflictPolicy.CONFLICT, now_ms=3 * DAY, fact_id="c", conflict_id="k3")
    s3 = fp.apply_plan(s2, claim)
    assert claim.kind is fp.Kind.CREATE_CLAIM and s3.conflict_id == "k3"
    assert {f.fact_id: f.state for f in s3.facts} == {"a": fp.CURRENT, "c": fp.CLAIM}
    # the next different value joins the conflict the batch just opened
    join = fp.plan_write(s3, fp.NewValue("City|goa", "Goa", "netops", 4 * DAY), single=True,
                         policy=fp.ConflictPolicy.CONFLICT, now_ms=4 * DAY, fact_id="d", conflict_id="k4")
    assert (join.kind, join.conflict_id) == (fp.Kind.CREATE_CLAIM, "k3")

    settle = fp.plan_settle(s3, fp.ConflictState("k3", True, ("a", "c")), "c", now_ms=5 * DAY)
    s4 = fp.apply_plan(s3, settle)
    assert s4.conflict_id is None and s4.version == 4
    assert {f.fact_id: (f.state, f.valid_to_ms, f.expired_at_ms) for f in s4.facts} == {
        "a": (fp.SUPERSEDED, 3 * DAY, 5 * DAY), "c": (fp.CURRENT, None, None)}
    assert s4.by_id("c").believed_from == 5 * DAY  # type: ignore[union-attr]


def test_apply_plan_of_a_late_fact_cuts_its_predecessor_short():
    pune = fp.SlotFact("a", "City|pune", "Pune", fp.CURRENT, DAY, None, DAY, None, "intake")
    mumbai_plan = fp.plan_write(fp.Slot(1, (pune,)), fp.NewValue("City|mumbai", "Mumbai", "intake", 10 * DAY),
                                single=True, policy=fp.ConflictPolicy.CONFLICT, now_ms=10 * DAY, fact_id="b",
                                conflict_id="k")
    s = fp.apply_plan(fp.Slot(1, (pune,)), mumbai_plan)
    late = fp.plan_write(s, fp.NewValue("City|delhi", "Delhi", "resolver", 5 * DAY), single=True,
                         policy=fp.ConflictPolicy.CONFLICT, now_ms=12 * DAY, fact_id="c", conflict_id="k")
    s = fp.apply_plan(s, late)
    assert late.kind is fp.Kind.CREATE_HISTORY and s.version == 3
    assert sorted((f.object_name, f.state, f.valid_from_ms // DAY, (f.valid_to_ms or 0) // DAY) for f in s.facts) == [
        ("Delhi", fp.SUPERSEDED, 5, 10), ("Mumbai", fp.CURRENT, 10, 0), ("Pune", fp.SUPERSEDED, 1, 5)]


def test_apply_plan_of_nothing_changes_nothing():
    slot = fp.Slot(3, ())
    assert fp.apply_plan(slot, fp.Plan(fp.Kind.NOTHING)) is slot


# ---------------------------------------------------------------------------------------------
# the same graph as one write after another


async def canonical_graph(client: GraphClient, tenant: str) -> dict[str, Any]:
    """Everything in the tenant's graph, with fact and conflict ids (random) replaced by what
    they stand for, so two graphs written with different ids compare equal."""
    nodes = await raw(client, tenant, "MATCH (n) RETURN id(n) AS id, labels(n) AS labels, properties(n) AS p")
    edges = await raw(client, tenant, "MATCH (a)-[r]->(b) RETURN id(a) AS a, type(r) AS type, properties(r) AS p, "
                                      "id(b) AS b")
    names: dict[str, str] = {}
    for n in nodes:
        if "Fact" in n["labels"]:
            p = n["p"]
            names[p["fact_id"]] = f"fact({p['slot']}|{p['object_name']}|{p['valid_from_ms']}|{p['asserted_by']})"
    conflict_facts: dict[str, list[str]] = {}
    for n in nodes:
        cid = n["p"].get("conflict_id")
        if "Fact" in n["labels"] and cid:
            conflict_facts.setdefault(cid, []).append(names[n["p"]["fact_id"]])
    names.update({cid: f"conflict({','.join(sorted(fs))})" for cid, fs in conflict_facts.items()})

    def plain(value: Any) -> Any:
        if isinstance(value, list):
            return [plain(v) for v in value]
        return names.get(value, value) if isinstance(value, str) else value

    def props(p: dict) -> tuple:
        return tuple(sorted((k, repr(plain(v))) for k, v in p.items() if k != "embedding"))

    key = {n["id"]: (tuple(sorted(n["labels"])), props(n["p"])) for n in nodes}
    return {
        "nodes": Counter(key.values()),
        "edges": Counter((key[e["a"]], e["type"], props(e["p"]), key[e["b"]]) for e in edges),
        "names": names,
    }


def results_in_words(results, names) -> list[tuple]:
    return [(r.outcome, names.get(r.fact_id, r.fact_id), [names[s] for s in r.superseded],
             names.get(r.conflict_id) if r.conflict_id else None) for r in results]


STORY = [
    fact(obj="Pune", vf=at(1), rec=at(1), source="ep-1"),
    fact(obj="pune", agent="resolver", vf=at(2), rec=at(2)),  # a repeat corroborates
    fact(subject="Bob Shah", obj="PUNE", vf=at(2), rec=at(2)),  # another subject, the same city entity
    fact(obj="Mumbai", vf=at(10), rec=at(10)),  # the same agent supersedes
    fact(obj="Delhi", agent="resolver", vf=at(5), rec=at(12), source="ep-1"),  # late: history
    fact(subject="ALICE  rao", obj="mumbai", vf=at(8), rec=at(13)),  # late repeat reaches the value back
    fact(obj="Chennai", agent="netops", vf=at(14), rec=at(14)),  # another agent: a conflict opens
    fact(obj="Kolkata", agent="resolver", vf=at(15), rec=at(15)),  # joins it
    fact(obj="chennai", agent="resolver", vf=at(16), rec=at(16)),  # corroborates a claim
    fact(predicate="name", obj="Alice Rao", vf=at(1), rec=at(1)),
    fact(predicate="name", obj="Alicia Rao", agent="resolver", vf=at(3), rec=at(3)),  # SUPERSEDE policy
    fact(predicate="name", obj="Ally Rao", agent="netops", vf=at(2), rec=at(4)),  # late, between them
    fact(predicate="owns_device", obj="iPhone 15", vf=at(1), rec=at(1)),
    fact(predicate="owns_device", obj="Pixel 8", agent="resolver", vf=at(2), rec=at(2)),
    fact(predicate="owns_device", obj="iphone 15", agent="netops", vf=at(3), rec=at(3)),
    fact(subject="Alice  Rao", predicate="on_plan", obj="Fiber 100", vf=at(4), rec=at(4)),
    fact(subject="carol iyer", predicate="on_plan", obj="fiber 100", vf=at(4), rec=at(4)),
    fact(subject="CAROL IYER", predicate="phone", obj="+91 (98) 765-43210", vf=at(4), rec=at(4)),
    fact(subject="dave nair 7", predicate="has_router", obj="Fritz 7530", vf=at(5), rec=at(5), source="ep-404"),
    fact(subject="dave nair 77", predicate="has_router", obj="fritz 7530", vf=at(5), rec=at(5)),  # not dave 7
]
# Misspelt names of entities already in the graph are not in the stories compared with the
# one-by-one path: both paths find those through the full-text index, which here (FalkorDB 4.16, a
# busy machine) missed a name it held in about 1 of 100 runs of this story, for either path (cause
# not found). Misspellings have their own tests below.


async def write_one_by_one(client, tenant, items):
    return [await facts.write_fact(client, tenant, f) for f in items]


async def seed_episode(client, tenant):
    await raw(client, tenant, "CREATE (:Episode {episode_id: 'ep-1'})")


@pytest.mark.parametrize("split", [len(STORY), 9, 1], ids=["one batch", "two batches", "batches of one"])
async def test_a_batch_leaves_the_graph_one_write_after_another_leaves(graph_client, tenant, split):
    single, batch = tenant, tenant + "-b"
    await register(graph_client.redis, batch)
    await seed_episode(graph_client, single)
    await seed_episode(graph_client, batch)
    expected = await write_one_by_one(graph_client, single, STORY)
    got = []
    for i in range(0, len(STORY), split):
        got += await facts.write_facts(graph_client, batch, STORY[i : i + split])

    want_graph, got_graph = await canonical_graph(graph_client, single), await canonical_graph(graph_client, batch)
    assert got_graph["nodes"] == want_graph["nodes"]
    assert got_graph["edges"] == want_graph["edges"]
    assert results_in_words(got, got_graph["names"]) == results_in_words(expected, want_graph["names"])
    assert set(r.outcome for r in got) == set(Outcome)  # the story has every kind of write
    assert len({r.conflict_id for r in got if r.conflict_id}) == 1


async def test_one_batch_superseding_many_subjects_moves_every_mirror(graph_client, tenant):
    """Several rows of one statement each turn a typed edge into WAS (a FalkorDB subquery deletes
    for one outer row only; the statement must not lean on it)."""
    people = ["anna one", "bela two", "cara three", "dev four"]
    first = [fact(subject=p, obj="Pune", vf=at(1), rec=at(1)) for p in people]
    then = [fact(subject=p, obj="Berlin", vf=at(3), rec=at(3)) for p in people]
    single, batch = tenant, tenant + "-b"
    await register(graph_client.redis, batch)
    await write_one_by_one(graph_client, single, first + then)
    await facts.write_facts(graph_client, batch, first)
    moved = await facts.write_facts(graph_client, batch, then)
    assert [r.outcome for r in moved] == [Outcome.SUPERSEDED] * 4
    for t in (single, batch):
        edges = await raw(graph_client, t, "MATCH (c:Customer)-[r]->(o:City) RETURN c.name_key AS c, type(r) AS t, "
                                           "o.name AS o ORDER BY c, t")
        assert edges == [row for p in people for row in ({"c": p, "t": "LIVES_IN", "o": "Berlin"},
                                                        {"c": p, "t": "WAS", "o": "Pune"})]
    assert (await canonical_graph(graph_client, batch))["edges"] == (await canonical_graph(graph_client, single))["edges"]


async def test_a_batch_reads_existing_slots_and_names(graph_client, tenant):
    single, batch = tenant, tenant + "-b"
    await register(graph_client.redis, batch)
    before = [fact(obj="Pune", vf=at(1), rec=at(1)), fact(predicate="owns_device", obj="Kindle", rec=at(1)),
              fact(subject="Zoya Khan", predicate="name", obj="Zoya Khan", rec=at(1))]
    after = [fact(subject="alice  RAO", obj="Pune", agent="resolver", vf=at(3), rec=at(3)),
             fact(subject="alice rao", obj="Goa", agent="netops", vf=at(4), rec=at(4)),
             fact(predicate="owns_device", obj="kindle", agent="netops", rec=at(5)),
             fact(subject="zoya  KHAN", predicate="name", obj="Zoya Khanna", agent="resolver", rec=at(6)),
             fact(subject="ZOYA KHAN.", predicate="lives_in", obj="Pune", rec=at(6))]
    for t in (single, batch):
        await write_one_by_one(graph_client, t, before)
    expected = await write_one_by_one(graph_client, single, after)
    got = await facts.write_facts(graph_client, batch, after)
    want_graph, got_graph = await canonical_graph(graph_client, single), await canonical_graph(graph_client, batch)
    assert got_graph["nodes"] == want_graph["nodes"] and got_graph["edges"] == want_graph["edges"]
    assert results_in_words(got, got_graph["names"]) == results_in_words(expected, want_graph["names"])
    assert [r.outcome for r in got] == [Outcome.CORROBORATED, Outcome.CONFLICT, Outcome.CORROBORATED,
                                        Outcome.SUPERSEDED, Outcome.CREATED]
    customers = await raw(graph_client, batch, "MATCH (e:Entity:Customer) RETURN e.name AS n ORDER BY n")
    assert customers == [{"n": "Zoya Khan"}, {"n": "alice rao"}]


async def test_names_spelt_alike_inside_a_batch_stay_apart(graph_client, tenant):
    # nothing in the graph yet: the batch names people (and a city) one letter apart from the
    # names it is itself about to create; each is its own entity, exactly as written
    results = await facts.write_facts(graph_client, tenant, [
        fact(subject="Alice Rao", obj="Pune"),
        fact(subject="alcie rao", predicate="on_plan", obj="Fiber 100"),  # not Alice
        fact(subject="Carol Iyer", predicate="on_plan", obj="fiber 100"),
        fact(subject="caroll iyer", predicate="phone", obj="+91 98765 43210"),  # not Carol
        fact(subject="CAROL  iyer", predicate="email", obj="carol@example.in"),  # Carol: case and spacing
        fact(subject="customer 12", predicate="phone", obj="+4930 1234567"),
        fact(subject="customer 123", predicate="phone", obj="+4930 7654321"),
        fact(subject="bob rao", obj="Punne"),  # a city one letter off Pune is another city
    ])
    assert len({r.fact_id for r in results}) == 8
    rows = await raw(graph_client, tenant, "MATCH (f:Fact)-[:ABOUT {role: 'subject'}]->(s:Entity) "
                                           "RETURN s.name AS s, f.predicate AS p, f.object_name AS o ORDER BY s, p")
    assert [(r["s"], r["p"], r["o"]) for r in rows] == [
        ("Alice Rao", "lives_in", "Pune"),
        ("Carol Iyer", "email", "carol@example.in"), ("Carol Iyer", "on_plan", "Fiber 100"),
        ("alcie rao", "on_plan", "Fiber 100"),
        ("bob rao", "lives_in", "Punne"),
        ("caroll iyer", "phone", "+919876543210"),
        ("customer 12", "phone", "+49301234567"), ("customer 123", "phone", "+49307654321"),
    ]
    customers = await raw(graph_client, tenant, "MATCH (e:Entity:Customer) RETURN count(e) AS n")
    assert customers == [{"n": 7}]


async def test_a_misspelt_subject_in_the_graph_is_written_as_a_new_subject(graph_client, tenant):
    await facts.write_fact(graph_client, tenant, fact(subject="Zoya Khan", predicate="name", obj="Zoya Khan",
                                                      rec=at(1)))
    await facts.write_fact(graph_client, tenant, fact(subject="Zoya Khan", obj="Pune", rec=at(1)))
    results = await facts.write_facts(graph_client, tenant, [
        fact(subject="zoya khann", predicate="name", obj="Zoya Khanna", agent="resolver", rec=at(6)),
        fact(subject="ZOYA KHANN", obj="pune", agent="resolver", rec=at(6)),
    ])
    assert [r.outcome for r in results] == [Outcome.CREATED, Outcome.CREATED]
    assert await raw(graph_client, tenant, "MATCH (e:Entity:Customer) RETURN e.name AS n ORDER BY n") == \
        [{"n": "Zoya Khan"}, {"n": "zoya khann"}]
    assert [(f.object, f.state.value) for f in await facts.history(graph_client, tenant, "Zoya Khan", "name")] == \
        [("Zoya Khan", "current")]


async def test_results_come_in_input_order_and_an_empty_batch_writes_nothing(graph_client, tenant):
    assert await facts.write_facts(graph_client, tenant, []) == []
    assert not await graph_client.graph_exists(tenant) or await graph_size(graph_client, tenant) == (0, 0)
    items = [fact(subject=f"customer {i}", predicate="phone", obj=f"+4930{i:07d}") for i in range(40)]
    results = await facts.write_facts(graph_client, tenant, items)
    rows = await raw(graph_client, tenant, "UNWIND $ids AS id MATCH (f:Fact {fact_id: id}) RETURN f.object_name AS o",
                     ids=[r.fact_id for r in results])
    assert [r["o"] for r in rows] == [f"+4930{i:07d}" for i in range(40)]


# ---------------------------------------------------------------------------------------------
# bad input anywhere: a typed error, nothing written


def bad(**overrides) -> FactInput:
    values = dict(subject="alice rao", predicate="lives_in", object="Pune", agent="intake")
    values.update(overrides)
    return FactInput.model_construct(**values)  # skips the model's own checks: the module must catch these


BAD = [
    ("unknown predicate", bad(predicate="favourite_colour"), UnknownPredicate),
    ("symptom as router", bad(predicate="has_router", object="internet keeps dropping"), InvalidValue),
    ("not a phone", bad(predicate="phone", object="call me maybe"), InvalidValue),
    ("empty subject", bad(subject="   "), InvalidValue),
    ("oversized object", bad(object="x" * 201), InvalidValue),
    ("control characters", bad(object="Pu\x00ne"), InvalidValue),
    ("bad agent", bad(agent="intake; DROP"), InvalidInput),
    ("bad time", bad(valid_from="yesterday"), InvalidInput),
    ("not a fact", {"subject": "alice rao", "predicate": "lives_in", "object": "Pune", "agent": "intake"},
     InvalidInput),
]


@pytest.mark.parametrize("case, value, error", BAD, ids=[c[0] for c in BAD])
@pytest.mark.parametrize("where", [0, 3, 6])
async def test_one_bad_fact_anywhere_writes_nothing(graph_client, tenant, case, value, error, where):
    await facts.write_fact(graph_client, tenant, fact(obj="Pune"))
    before = await graph_size(graph_client, tenant)
    items: list[Any] = [fact(subject=f"customer {i}", obj="Goa") for i in range(6)]
    items.insert(where, value)
    with pytest.raises(error) as exc:
        await facts.write_facts(graph_client, tenant, items)
    assert f"facts[{where}]" in str(exc.value)
    assert await graph_size(graph_client, tenant) == before


async def test_bad_batches_raise_typed_errors_and_change_nothing(graph_client, tenant):
    await facts.write_fact(graph_client, tenant, fact(obj="Pune"))
    before = await graph_size(graph_client, tenant)
    for call, error in [
        (facts.write_facts(graph_client, "Bad Tenant!", [fact()]), InvalidTenant),
        (facts.write_facts(graph_client, tenant, fact()), InvalidInput),  # not a list
        (facts.write_facts(graph_client, tenant, [fact(subject=f"c {i}") for i in range(facts.MAX_BATCH + 1)]),
         InvalidInput),
    ]:
        with pytest.raises(error):
            await call
    assert await graph_size(graph_client, tenant) == before


# ---------------------------------------------------------------------------------------------
# concurrency


class InterleavingClient(GraphClient):
    """A client on which another writer gets in between the batch's read and its writes (once)."""

    def __init__(self, settings, between):
        super().__init__(settings)
        self.between = between

    async def run(self, tenant, query, params=None):
        rows = await super().run(tenant, query, params)
        if query is q.BATCH_READ and self.between is not None:
            between, self.between = self.between, None
            await between()
        return rows


async def test_a_slot_that_changed_under_the_batch_is_written_again_in_order(graph_client, tenant):
    pune = await facts.write_fact(graph_client, tenant, fact(obj="Pune", rec=at(1)))
    delhi = None

    async def another_writer():
        nonlocal delhi
        delhi = await facts.write_fact(graph_client, tenant, fact(obj="Delhi", rec=at(2)))

    client = InterleavingClient(graph_client.settings, another_writer)
    try:
        results = await facts.write_facts(client, tenant, [
            fact(obj="Mumbai", rec=at(3)),
            fact(predicate="has_router", obj="Fritz 7530", rec=at(3)),
            fact(obj="Chennai", rec=at(4)),
        ])
    finally:
        await client.close()
    mumbai, router, chennai = results
    assert delhi is not None and delhi.superseded == [pune.fact_id]
    # planned against Pune, written again against Delhi; Chennai after Mumbai, as given
    assert (mumbai.outcome, mumbai.superseded) == (Outcome.SUPERSEDED, [delhi.fact_id])
    assert (chennai.outcome, chennai.superseded) == (Outcome.SUPERSEDED, [mumbai.fact_id])
    assert router.outcome is Outcome.CREATED
    h = await facts.history(graph_client, tenant, "alice rao", "lives_in")
    assert [f.object for f in h] == ["Pune", "Delhi", "Mumbai", "Chennai"]
    assert await raw(graph_client, tenant, "MATCH (s:Slot) RETURN s.predicate AS p, s.version AS v ORDER BY p") == \
        [{"p": "has_router", "v": 1}, {"p": "lives_in", "v": 4}]


async def test_a_row_whose_new_entity_was_not_created_writes_nothing_and_is_written_again(graph_client, tenant):
    # the first row would create Customer "nina das"; its slot moves under the batch, so that row
    # fails its guard and creates nothing; the second row, in the same statement, then finds no
    # subject: it must not move its own slot's version either, and both are written again
    async def slot_moves():
        await raw(graph_client, tenant, "CREATE (:Slot {key: 'Customer|nina das|lives_in', version: 7})")

    client = InterleavingClient(graph_client.settings, slot_moves)
    try:
        city, plan = await facts.write_facts(client, tenant, [
            fact(subject="Nina Das", obj="Goa", rec=at(1)),
            fact(subject="nina das", predicate="on_plan", obj="Fiber 100", rec=at(1)),
        ])
    finally:
        await client.close()
    assert (city.outcome, plan.outcome) == (Outcome.CREATED, Outcome.CREATED)
    assert await raw(graph_client, tenant, "MATCH (s:Slot) RETURN s.predicate AS p, s.version AS v ORDER BY p") == \
        [{"p": "on_plan", "v": 1}, {"p": None, "v": 8}]  # one write, one version
    assert await raw(graph_client, tenant, "MATCH (e:Entity:Customer) RETURN e.name AS n") == [{"n": "Nina Das"}]
    assert await raw(graph_client, tenant, "MATCH (f:Fact) RETURN count(f) AS n") == [{"n": 2}]


CITIES = ["Pune", "Mumbai", "Delhi", "Chennai", "Kolkata", "Jaipur", "Lucknow", "Kanpur", "Nagpur", "Indore", "Bhopal",
          "Patna", "Vadodara", "Ludhiana", "Agra", "Nashik", "Faridabad", "Meerut", "Rajkot", "Varanasi", "Srinagar",
          "Amritsar", "Ranchi", "Howrah", "Jabalpur", "Gwalior", "Coimbatore", "Madurai", "Jodhpur", "Kota", "Guwahati",
          "Chandigarh"]
DEVICES = ["iPhone 15", "Pixel 8", "Galaxy S24", "Kindle", "iPad Air", "Echo Dot", "Roku", "Switch"]


async def test_concurrent_single_and_batch_writers_on_the_same_slots(graph_client, tenant):
    extra = [GraphClient(graph_client.settings) for _ in range(3)]
    clients = [graph_client, *extra]

    def writer(i: int):
        client, agent = clients[i % len(clients)], f"agent-{i}"
        if i % 2 == 0:
            if i % 4 == 2:
                return facts.write_fact(client, tenant, fact(predicate="owns_device", obj=DEVICES[i % 8], agent=agent))
            return facts.write_fact(client, tenant, fact(obj=CITIES[i], agent=agent))
        return facts.write_facts(client, tenant, [
            fact(obj=CITIES[i], agent=agent),
            fact(predicate="name", obj=f"name {chr(97 + i // 26)}{chr(97 + i % 26)}", agent=agent),
            fact(predicate="owns_device", obj=DEVICES[i % 8], agent=agent),
            fact(subject="ALICE RAO", obj=CITIES[i].lower(), agent=agent),  # its own claim again
        ])

    try:
        results = await asyncio.gather(*(writer(i) for i in range(32)))
    finally:
        for c in extra:
            await c.close()
    flat = [r for rs in results for r in (rs if isinstance(rs, list) else [rs])]
    lives = [r for rs, i in zip(results, range(32)) if i % 4 != 2
             for r in ([rs] if i % 2 == 0 else [rs[0], rs[3]])]
    assert len(flat) == 16 * 4 + 16
    assert Counter(r.outcome for r in lives) == {Outcome.CREATED: 1, Outcome.CONFLICT: 23, Outcome.CORROBORATED: 16}
    assert len({r.conflict_id for r in lives if r.conflict_id}) == 1

    rows = await raw(graph_client, tenant, "MATCH (f:Fact) RETURN f.slot AS slot, f.predicate AS p, "
                                           "f.object_name AS o, labels(f) AS l, f.corroborations AS c")
    per_state = Counter((r["slot"], r["o"], tuple(sorted(r["l"]))) for r in rows)
    assert max(per_state.values()) == 1  # zero duplicates
    current = Counter(r["p"] for r in rows if "Current" in r["l"])
    assert current == {"lives_in": 1, "name": 1, "owns_device": 6}  # one value of each single-valued slot
    assert sorted(r["c"] for r in rows if r["p"] == "owns_device") == [4] * 6
    lives_in = [r for r in rows if r["p"] == "lives_in"]
    assert len(lives_in) == 24 and sum(r["c"] for r in lives_in) == 24 + 16
    slots = await raw(graph_client, tenant, "MATCH (s:Slot) RETURN s.predicate AS p, s.version AS v ORDER BY p")
    assert slots == [{"p": "lives_in", "v": 40}, {"p": "name", "v": 16}, {"p": "owns_device", "v": 24}]
    dupes = await raw(graph_client, tenant, "MATCH (e:Entity) WITH e.uid AS uid, count(*) AS n WHERE n > 1 "
                                            "RETURN count(uid) AS n")
    assert dupes == [{"n": 0}]
    edges = await raw(graph_client, tenant, "MATCH (:Entity:Customer)-[r]->() WHERE type(r) <> 'WAS' "
                                            "RETURN type(r) AS t, count(r) AS n ORDER BY t")
    assert edges == [{"t": "LIVES_IN", "n": 1}, {"t": "NAMED", "n": 1}, {"t": "OWNS_DEVICE", "n": 6}]


# ---------------------------------------------------------------------------------------------
# embeddings


async def test_memory_write_facts_embeds_each_claim_once(graph_client, tenant, embedder):
    from relay_graph.memory.facade import Memory

    memory = Memory(graph_client, embedder)
    first = await memory.write_facts(tenant, [fact(subject=f"customer {i}", obj=c)
                                              for i, c in enumerate(["Pune", "Goa", "Pune"])], embed=True)
    linked = await raw(graph_client, tenant, "MATCH (f:Fact)-[:PHRASED_AS]->(t:FactText) "
                                             "RETURN f.fact_id AS f, t.text AS text")
    assert {r["f"]: r["text"] for r in linked} == {first[0].fact_id: "lives in Pune", first[1].fact_id: "lives in Goa",
                                                   first[2].fact_id: "lives in Pune"}
    before = embedder.texts_embedded
    await memory.write_facts(tenant, [fact(subject="customer 9", obj="goa")], embed=True)
    assert embedder.texts_embedded == before  # "lives in Goa" has its vector already
    assert await raw(graph_client, tenant, "MATCH (t:FactText) RETURN count(t) AS n") == [{"n": 2}]
    assert await memory.write_facts(tenant, [], embed=True) == []


# ---------------------------------------------------------------------------------------------
# plans


def _node_scans(plan: str) -> list[str]:
    return [line.strip() for line in plan.splitlines() if "Scan" in line]


async def test_batch_statements_start_from_indexes(graph_client, tenant):
    await facts.write_fact(graph_client, tenant, fact(obj="Pune"))
    writes = q.batch_writes().all()
    for query in (q.BATCH_READ, *writes):
        plan = await graph_client.explain(tenant, query, {"rows": [], "names": [], "slots": []})
        scans = _node_scans(plan)
        assert scans and all(s.startswith("Node By Index Scan") for s in scans), f"{query.name}:\n{plan}"


async def test_hot_single_writes_never_scan_a_label(graph_client, tenant):
    """With no source episode and no object to retire, the single-fact path must not look up a
    null id: FalkorDB answers that by scanning every Episode / Entity of the tenant."""
    await graph_client.ensure_schema(tenant)  # a tenant that has written has these indexes (they are made on first use)
    await raw(graph_client, tenant, "UNWIND range(1, 50) AS i CREATE (:Episode {episode_id: 'ep-' + toString(i)})")
    plans: list[str] = []
    original = graph_client.run

    async def explained(t, query, params=None):
        if t == tenant and query.name.startswith("fact_"):  # with the very parameters it runs with
            plans.append(f"{query.name}\n{await graph_client.explain(t, query, params)}")
        return await original(t, query, params)

    graph_client.run = explained  # type: ignore[method-assign]
    try:
        await facts.write_fact(graph_client, tenant, fact(obj="Pune"))
        await facts.write_fact(graph_client, tenant, fact(obj="Goa"))
        await facts.retire_fact(graph_client, tenant, RetireInput(subject="alice rao", predicate="lives_in",
                                                                  agent="intake"))
    finally:
        del graph_client.run
    assert len(plans) == 6  # three reads, three writes
    for plan in plans:
        assert "Label Scan" not in plan and "All Node Scan" not in plan, plan
