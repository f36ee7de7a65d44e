"""Facts with two clocks against a real FalkorDB: the write path, reads on both clocks,
disagreement and trust, isolation, bad input, concurrency, and query plans."""

from __future__ import annotations

import asyncio
import itertools
import re
from collections import Counter
from datetime import datetime, timezone

import pytest

from relay_graph.memory import entity_refs, facts
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import (
    AlreadyExists,
    InvalidInput,
    InvalidTenant,
    InvalidValue,
    NotFound,
    UnknownPredicate,
)
from relay_graph.memory.models import ClaimsView, Clock, FactInput, FactState, Outcome, RetireInput
from relay_graph.runtime.queries import Query
from relay_graph.memory.queries import facts as q
from tests.support import register


def at(day: int, hour: int = 0) -> datetime:
    return datetime(2026, 9, day, hour, tzinfo=timezone.utc)


def fact(subject="alice rao", predicate="lives_in", obj="pune", agent="intake", *, vf=None, rec=None, source=None):
    return FactInput(subject=subject, predicate=predicate, object=obj, agent=agent, valid_from=vf, recorded_at=rec,
                     source=source)


async def raw(client: GraphClient, tenant: str, cypher: str, **params) -> list[dict]:
    """Tests look at the graph directly to check what the module promises about it."""
    return await client.run(tenant, Query("test", cypher), params)


async def labels_of(client, tenant, fact_id) -> set[str]:
    rows = await raw(client, tenant, "MATCH (f:Fact {fact_id: $id}) RETURN labels(f) AS l", id=fact_id)
    return set(rows[0]["l"])


async def mirror_edges(client, tenant, subject_uid="Customer|alice rao") -> list[dict]:
    return await raw(
        client, tenant,
        "MATCH (s:Entity {uid: $s})-[r]->(o:Entity) RETURN type(r) AS type, properties(r) AS p, o.name AS object "
        "ORDER BY type, o.name",
        s=subject_uid,
    )


async def graph_size(client, tenant) -> tuple[int, int]:
    rows = await raw(client, tenant, "MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n) AS n, count(r) AS r")
    return rows[0]["n"], rows[0]["r"]


# ---------------------------------------------------------------------------------------------
# write path


async def test_supersede_closes_both_clocks_and_moves_the_mirror(graph_client, tenant):
    first = await facts.write_fact(graph_client, tenant, fact(obj="Pune", vf=at(1), rec=at(1)))
    second = await facts.write_fact(graph_client, tenant, fact(obj="Mumbai", vf=at(5), rec=at(6)))
    assert first.outcome is Outcome.CREATED
    assert second.outcome is Outcome.SUPERSEDED and second.superseded == [first.fact_id]

    old, new = await facts.history(graph_client, tenant, "alice rao", "lives_in")
    assert old.fact_id == first.fact_id and new.fact_id == second.fact_id
    assert (old.valid_from, old.valid_to, old.recorded_at, old.expired_at) == (at(1), at(5), at(1), at(6))
    assert (new.valid_from, new.valid_to, new.recorded_at, new.expired_at) == (at(5), None, at(6), None)
    assert (old.state, new.state) == (FactState.SUPERSEDED, FactState.CURRENT)
    assert await labels_of(graph_client, tenant, first.fact_id) == {"Fact", "Superseded"}
    assert await labels_of(graph_client, tenant, second.fact_id) == {"Fact", "Current"}

    edges = await mirror_edges(graph_client, tenant)
    assert [(e["type"], e["object"]) for e in edges] == [("LIVES_IN", "Mumbai"), ("WAS", "Pune")]
    assert edges[0]["p"] == {"fact_id": second.fact_id}
    assert edges[1]["p"] == {"predicate": "lives_in", "fact_id": first.fact_id,
                             "valid_from_ms": facts.to_ms(at(1)), "valid_to_ms": facts.to_ms(at(5))}
    sup = await raw(graph_client, tenant, "MATCH (n:Fact {fact_id: $id})-[:SUPERSEDES]->(o:Fact) RETURN o.fact_id AS id",
                    id=second.fact_id)
    assert sup == [{"id": first.fact_id}]
    (current,) = await facts.read_facts(graph_client, tenant, "alice rao", "lives_in")
    assert (current.object, current.subject, current.asserted_by) == ("Mumbai", "alice rao", "intake")


async def test_a_repeat_corroborates_without_a_second_node(graph_client, tenant):
    a = await facts.write_fact(graph_client, tenant, fact(obj="Pune", rec=at(1)))
    b = await facts.write_fact(graph_client, tenant, fact(subject="Alice  RAO", obj="pune", agent="resolver", rec=at(2)))
    c = await facts.write_fact(graph_client, tenant, fact(subject="alice rao.", obj="Pune", rec=at(3)))
    assert a.outcome is Outcome.CREATED
    assert (b.outcome, c.outcome) == (Outcome.CORROBORATED, Outcome.CORROBORATED)
    assert a.fact_id == b.fact_id == c.fact_id
    rows = await raw(graph_client, tenant, "MATCH (f:Fact) RETURN count(f) AS n, collect(f.corroborations) AS c")
    assert rows == [{"n": 1, "c": [3]}]
    customers = await raw(graph_client, tenant, "MATCH (e:Entity:Customer) RETURN count(e) AS n")
    assert customers == [{"n": 1}]
    # one letter apart is another person: a new customer with a fact of their own
    d = await facts.write_fact(graph_client, tenant, fact(subject="alcie rao", obj="Pune", rec=at(4)))
    assert d.outcome is Outcome.CREATED and d.fact_id != a.fact_id
    customers = await raw(graph_client, tenant, "MATCH (e:Entity:Customer) RETURN count(e) AS n")
    assert customers == [{"n": 2}]


async def test_retire_ends_the_current_fact(graph_client, tenant):
    w = await facts.write_fact(graph_client, tenant, fact(predicate="has_router", obj="Fritz 7530", vf=at(1), rec=at(1)))
    retired = await facts.retire_fact(graph_client, tenant, RetireInput(
        subject="alice rao", predicate="has_router", agent="resolver", valid_to=at(4), recorded_at=at(5)))
    assert retired == [w.fact_id]
    (h,) = await facts.history(graph_client, tenant, "alice rao", "has_router")
    assert (h.state, h.valid_to, h.expired_at) == (FactState.RETIRED, at(4), at(5))
    assert await labels_of(graph_client, tenant, w.fact_id) == {"Fact", "Retired"}
    assert [e["type"] for e in await mirror_edges(graph_client, tenant)] == ["WAS"]
    assert await facts.read_facts(graph_client, tenant, "alice rao", "has_router") == []
    again = RetireInput(subject="alice rao", predicate="has_router", agent="resolver")
    assert await facts.retire_fact(graph_client, tenant, again) == []
    nobody = RetireInput(subject="nobody here", predicate="has_router", agent="resolver")
    assert await facts.retire_fact(graph_client, tenant, nobody) == []


async def test_retire_one_value_of_a_multi_valued_predicate(graph_client, tenant):
    iphone = await facts.write_fact(graph_client, tenant, fact(predicate="owns_device", obj="iPhone 15"))
    pixel = await facts.write_fact(graph_client, tenant, fact(predicate="owns_device", obj="Pixel 8", agent="resolver"))
    assert pixel.outcome is Outcome.CREATED and pixel.fact_id != iphone.fact_id
    gone = await facts.retire_fact(graph_client, tenant, RetireInput(
        subject="alice rao", predicate="owns_device", object="iphone 15", agent="intake"))
    assert gone == [iphone.fact_id]
    assert [f.object for f in await facts.read_facts(graph_client, tenant, "alice rao", "owns_device")] == ["Pixel 8"]
    assert await facts.retire_fact(graph_client, tenant, RetireInput(
        subject="alice rao", predicate="owns_device", object="Galaxy S9", agent="intake")) == []


async def test_a_late_fact_takes_its_place_in_history(graph_client, tenant):
    pune = await facts.write_fact(graph_client, tenant, fact(obj="Pune", vf=at(1), rec=at(1)))
    mumbai = await facts.write_fact(graph_client, tenant, fact(obj="Mumbai", vf=at(10), rec=at(10)))
    # on the 12th we learn she lived in Delhi from the 5th to the move to Mumbai
    delhi = await facts.write_fact(graph_client, tenant, fact(obj="Delhi", agent="resolver", vf=at(5), rec=at(12)))
    assert delhi.outcome is Outcome.CREATED and delhi.superseded == []

    h = await facts.history(graph_client, tenant, "alice rao", "lives_in")
    assert [(f.object, f.state, f.valid_from, f.valid_to, f.recorded_at, f.expired_at) for f in h] == [
        ("Pune", FactState.SUPERSEDED, at(1), at(5), at(1), at(10)),  # its valid_to moved from the 10th
        ("Delhi", FactState.SUPERSEDED, at(5), at(10), at(12), at(12)),  # never our answer
        ("Mumbai", FactState.CURRENT, at(10), None, at(10), None),
    ]
    assert [f.fact_id for f in h] == [pune.fact_id, delhi.fact_id, mumbai.fact_id]
    (now,) = await facts.read_facts(graph_client, tenant, "alice rao", "lives_in")
    assert now.object == "Mumbai"
    (then,) = await facts.read_facts(graph_client, tenant, "alice rao", "lives_in", as_of=at(7))
    assert then.object == "Delhi"
    was = {e["p"]["fact_id"]: e["p"] for e in await mirror_edges(graph_client, tenant) if e["type"] == "WAS"}
    assert was[pune.fact_id]["valid_to_ms"] == facts.to_ms(at(5))  # the mirror follows the history
    assert was[delhi.fact_id]["valid_from_ms"] == facts.to_ms(at(5))

    # a late repeat of the next value reaches it back instead of adding a node
    again = await facts.write_fact(graph_client, tenant, fact(obj="mumbai", vf=at(8), rec=at(13)))
    assert again.outcome is Outcome.CORROBORATED and again.fact_id == mumbai.fact_id
    h = await facts.history(graph_client, tenant, "alice rao", "lives_in")
    assert [(f.object, f.valid_from, f.valid_to) for f in h] == [
        ("Pune", at(1), at(5)), ("Delhi", at(5), at(8)), ("Mumbai", at(8), None)]


async def test_world_and_belief_clocks_answer_differently_when_we_learnt_late(graph_client, tenant):
    await facts.write_fact(graph_client, tenant, fact(obj="Pune", vf=at(1, 0), rec=at(1, 0)))
    # she moved on the 1st (noon); we only learnt it on the 10th
    await facts.write_fact(graph_client, tenant, fact(obj="Mumbai", vf=at(1, 12), rec=at(10)))

    async def where(t, clock):
        return [f.object for f in await facts.read_facts(graph_client, tenant, "alice rao", "lives_in", as_of=t,
                                                          clock=clock)]

    assert await where(at(5), Clock.WORLD) == ["Mumbai"]
    assert await where(at(5), Clock.BELIEF) == ["Pune"]
    assert await where(at(11), Clock.BELIEF) == ["Mumbai"]
    assert await where(at(1, 6), Clock.WORLD) == ["Pune"]
    assert await where(datetime(2026, 8, 1, tzinfo=timezone.utc), Clock.WORLD) == []


async def test_a_same_day_correction_drops_out_of_the_world_clock(graph_client, tenant):
    wrong = await facts.write_fact(graph_client, tenant, fact(obj="Pune", vf=at(3), rec=at(3)))
    right = await facts.write_fact(graph_client, tenant, fact(obj="Puri", vf=at(3), rec=at(4)))
    assert right.superseded == [wrong.fact_id]
    assert [f.object for f in await facts.read_facts(graph_client, tenant, "alice rao", "lives_in", as_of=at(3))] == \
        ["Puri"]
    assert [f.object for f in await facts.read_facts(graph_client, tenant, "alice rao", "lives_in", as_of=at(3, 12),
                                                      clock=Clock.BELIEF)] == ["Pune"]


async def test_source_episode_links_and_consulted_counts(graph_client, tenant):
    await raw(graph_client, tenant, "CREATE (:Episode {episode_id: 'ep-1'})")
    w = await facts.write_fact(graph_client, tenant, fact(obj="Pune", source="ep-1"))
    await facts.write_fact(graph_client, tenant, fact(obj="Pune", agent="resolver", source="ep-404"))  # no such episode
    derived = await raw(graph_client, tenant, "MATCH (e:Episode)-[:DERIVED]->(f:Fact) RETURN e.episode_id AS e, f.fact_id AS f")
    assert derived == [{"e": "ep-1", "f": w.fact_id}]
    assert await raw(graph_client, tenant, "MATCH (e:Episode) RETURN count(e) AS n") == [{"n": 1}]
    await raw(graph_client, tenant, "CREATE (:Episode {episode_id: 'ep-2'})")
    await facts.retire_fact(graph_client, tenant, RetireInput(subject="alice rao", predicate="lives_in", agent="intake",
                                                              source="ep-2"))
    assert await raw(graph_client, tenant, "MATCH (:Episode {episode_id: 'ep-2'})-[:RETIRED]->(f) RETURN f.fact_id AS f") == \
        [{"f": w.fact_id}]

    await facts.write_fact(graph_client, tenant, fact(predicate="has_router", obj="Fritz 7530"))
    for _ in range(2):
        await facts.read_facts(graph_client, tenant, "alice rao", reader="netops")
    await facts.claims(graph_client, tenant, "alice rao", "has_router", reader="netops")
    rows = await raw(graph_client, tenant, "MATCH (:Agent {name: 'netops'})-[c:CONSULTED]->(f:Fact) "
                                           "RETURN f.predicate AS p, c.count AS n")
    assert rows == [{"p": "has_router", "n": 3}]
    # read now, recorded later (what intake does beside its next step): the same edge, counted on
    router = [f.fact_id for f in await facts.read_facts(graph_client, tenant, "alice rao", "has_router")]
    await facts.record_consulted(graph_client, tenant, "netops", router)
    await facts.record_consulted(graph_client, tenant, "netops", [])  # nothing read: nothing recorded
    rows = await raw(graph_client, tenant, "MATCH (:Agent {name: 'netops'})-[c:CONSULTED]->(f:Fact) "
                                           "RETURN f.predicate AS p, c.count AS n")
    assert rows == [{"p": "has_router", "n": 4}]


# ---------------------------------------------------------------------------------------------
# disagreement and trust


async def test_conflict_flow(graph_client, tenant):
    pune = await facts.write_fact(graph_client, tenant, fact(obj="Pune", rec=at(1)))
    mumbai = await facts.write_fact(graph_client, tenant, fact(obj="Mumbai", agent="resolver", rec=at(2)))
    assert mumbai.outcome is Outcome.CONFLICT and mumbai.conflict_id
    delhi = await facts.write_fact(graph_client, tenant, fact(obj="Delhi", agent="netops", rec=at(3)))
    assert (delhi.outcome, delhi.conflict_id) == (Outcome.CONFLICT, mumbai.conflict_id)
    repeat = await facts.write_fact(graph_client, tenant, fact(obj="mumbai", agent="netops", rec=at(4)))
    assert (repeat.outcome, repeat.fact_id, repeat.conflict_id) == \
        (Outcome.CORROBORATED, mumbai.fact_id, mumbai.conflict_id)

    # reads show the current value only; claims show every contender, and never two Current facts
    (cur,) = await facts.read_facts(graph_client, tenant, "alice rao", "lives_in")
    assert (cur.object, cur.conflict_id) == ("Pune", mumbai.conflict_id)
    view = await facts.claims(graph_client, tenant, "alice rao", "lives_in")
    assert view.conflict_id == mumbai.conflict_id
    assert [c.object for c in view.claims] == ["Delhi", "Mumbai", "Pune"]  # all at 0.5: newest first
    assert await raw(graph_client, tenant, "MATCH (f:Fact:Current) RETURN count(f) AS n") == [{"n": 1}]
    between = await raw(graph_client, tenant, "MATCH (:Conflict {conflict_id: $c})-[:BETWEEN]->(f) RETURN count(f) AS n",
                        c=mumbai.conflict_id)
    assert between == [{"n": 3}]

    with pytest.raises(NotFound):
        await facts.settle(graph_client, tenant, "no-such-conflict", mumbai.fact_id, "maria")
    other = await facts.write_fact(graph_client, tenant, fact(subject="bob", obj="Goa"))
    with pytest.raises(InvalidInput):
        await facts.settle(graph_client, tenant, mumbai.conflict_id, other.fact_id, "maria")

    settled = await facts.settle(graph_client, tenant, mumbai.conflict_id, mumbai.fact_id, "maria")
    assert settled.winner == mumbai.fact_id and sorted(settled.losers) == sorted([pune.fact_id, delhi.fact_id])
    assert settled.trust == pytest.approx({"resolver": 2 / 3, "intake": 1 / 3, "netops": 1 / 3})
    (cur,) = await facts.read_facts(graph_client, tenant, "alice rao", "lives_in")
    assert (cur.fact_id, cur.object, cur.conflict_id) == (mumbai.fact_id, "Mumbai", None)
    assert [(e["type"], e["object"]) for e in await mirror_edges(graph_client, tenant)] == \
        [("LIVES_IN", "Mumbai"), ("WAS", "Pune")]
    c = await raw(graph_client, tenant, "MATCH (c:Conflict {conflict_id: $c})-[:SETTLED_FOR]->(w) "
                                        "RETURN c.open AS open, c.settled_by AS by, w.fact_id AS w", c=mumbai.conflict_id)
    assert c == [{"open": False, "by": "maria", "w": mumbai.fact_id}]
    view = await facts.claims(graph_client, tenant, "alice rao", "lives_in")
    assert view.conflict_id is None and [c.object for c in view.claims] == ["Mumbai"]
    with pytest.raises(AlreadyExists):
        await facts.settle(graph_client, tenant, mumbai.conflict_id, pune.fact_id, "maria")
    # the losing claim never was true nor our answer; the old value was, until the winner began
    by_id = {f.fact_id: f for f in await facts.history(graph_client, tenant, "alice rao", "lives_in")}
    assert by_id[delhi.fact_id].valid_from == by_id[delhi.fact_id].valid_to
    assert by_id[pune.fact_id].valid_to == at(2) and by_id[pune.fact_id].state is FactState.SUPERSEDED
    assert [f.object for f in await facts.read_facts(graph_client, tenant, "alice rao", "lives_in", as_of=at(3, 12),
                                                      clock=Clock.BELIEF)] == ["Pune"]


async def test_trust_ranks_claims_and_learns_from_settlements(graph_client, tenant):
    await facts.write_fact(graph_client, tenant, fact(subject="carol", predicate="on_plan", obj="Fiber 300", rec=at(1)))
    rival = await facts.write_fact(graph_client, tenant, fact(subject="carol", predicate="on_plan", obj="Fiber 500",
                                                              agent="resolver", rec=at(2)))
    view = await facts.claims(graph_client, tenant, "carol", "on_plan")
    assert [(c.object, c.trust) for c in view.claims] == [("Fiber 500", 0.5), ("Fiber 300", 0.5)]  # recency
    right = view.claims[1].fact_id  # intake was right
    result = await facts.settle(graph_client, tenant, rival.conflict_id, right, "maria")
    assert result.trust == pytest.approx({"intake": 2 / 3, "resolver": 1 / 3})

    # next disagreement: intake's older claim now ranks first
    await facts.write_fact(graph_client, tenant, fact(subject="dave", predicate="on_plan", obj="Fiber 100", rec=at(3)))
    later = await facts.write_fact(graph_client, tenant, fact(subject="dave", predicate="on_plan", obj="Fiber 1000",
                                                              agent="resolver", rec=at(4)))
    view = await facts.claims(graph_client, tenant, "dave", "on_plan")
    assert [(c.object, c.asserted_by) for c in view.claims] == [("Fiber 100", "intake"), ("Fiber 1000", "resolver")]
    assert [c.trust for c in view.claims] == pytest.approx([2 / 3, 1 / 3])
    # trust is per predicate: another kind of fact starts even
    await facts.write_fact(graph_client, tenant, fact(subject="dave", predicate="has_router", obj="Fritz 7530"))
    await facts.write_fact(graph_client, tenant, fact(subject="dave", predicate="has_router", obj="TP-Link AX55",
                                                      agent="resolver"))
    assert {c.trust for c in (await facts.claims(graph_client, tenant, "dave", "has_router")).claims} == {0.5}
    second = await facts.settle(graph_client, tenant, later.conflict_id, later.fact_id, "maria")
    assert second.trust == pytest.approx({"resolver": 2 / 4, "intake": 2 / 4})


# ---------------------------------------------------------------------------------------------
# names


async def test_names_resolve_by_case_spacing_and_punctuation_never_by_misspelling(graph_client, tenant):
    assert await entity_refs.resolve_entity(graph_client, tenant, "Alice Rao", "Customer") is None
    made = await entity_refs.resolve_entity(graph_client, tenant, "Alice Rao", "Customer", create=True)
    assert made is not None and (made.uid, made.name) == ("Customer|alice rao", "Alice Rao")
    for spelling in ("alice rao", "ALICE   Rao", "alice rao."):
        found = await entity_refs.resolve_entity(graph_client, tenant, spelling, "Customer")
        assert found is not None and found.uid == made.uid, spelling
    for spelling in ("alcie rao", "alice raoo"):  # spelt alike is someone else
        assert await entity_refs.resolve_entity(graph_client, tenant, spelling, "Customer") is None, spelling
    assert await entity_refs.resolve_entity(graph_client, tenant, "alice rao", "City") is None  # another type
    assert await entity_refs.resolve_entity(graph_client, tenant, "bob rao", "Customer") is None
    twelve = await entity_refs.resolve_entity(graph_client, tenant, "customer 12", "Customer", create=True)
    assert (await entity_refs.resolve_entity(graph_client, tenant, "customer 123", "Customer")) is None
    assert twelve is not None and twelve.uid == "Customer|customer 12"
    with pytest.raises(InvalidInput):
        await entity_refs.resolve_entity(graph_client, tenant, "alice", "Spaceship")


@pytest.mark.parametrize("name", ["José Núñez", "the who", "O'Neil", "李小龙", "x-y_z", "Dr. A. B.", "1 2 3"])
async def test_unusual_names_are_written_and_found(graph_client, tenant, name):
    w = await facts.write_fact(graph_client, tenant, fact(subject=name, obj="Pune"))
    again = await facts.write_fact(graph_client, tenant, fact(subject=name.upper(), obj="pune", agent="resolver"))
    assert again.fact_id == w.fact_id
    assert [f.subject for f in await facts.read_facts(graph_client, tenant, name)] == [name]


async def test_objects_are_checked_and_stored_as_checked(graph_client, tenant):
    await facts.write_fact(graph_client, tenant, fact(predicate="phone", obj="+91 (98) 765-43210"))
    await facts.write_fact(graph_client, tenant, fact(predicate="email", obj="Alice.Rao@Example.in"))
    got = {f.predicate: f.object for f in await facts.read_facts(graph_client, tenant, "alice rao")}
    assert got == {"phone": "+919876543210", "email": "alice.rao@example.in"}


# ---------------------------------------------------------------------------------------------
# isolation


async def test_a_secret_in_one_tenant_is_invisible_from_another(graph_client, tenant):
    other = tenant + "-b"
    await register(graph_client.redis, other)
    w = await facts.write_fact(graph_client, tenant, fact(subject="secret sam", predicate="phone", obj="+15550001111"))
    await facts.write_fact(graph_client, tenant, fact(subject="secret sam", obj="Atlantis"))
    await facts.write_fact(graph_client, tenant, fact(subject="secret sam", obj="Lemuria", agent="resolver"))
    await facts.write_fact(graph_client, other, fact(subject="someone else", obj="Pune"))

    assert await facts.read_facts(graph_client, other, "secret sam") == []
    assert await facts.read_facts(graph_client, other, "secret sam", as_of=at(1)) == []
    assert await facts.history(graph_client, other, "secret sam") == []
    assert await facts.claims(graph_client, other, "secret sam", "lives_in") == ClaimsView(claims=[], conflict_id=None)
    assert await entity_refs.resolve_entity(graph_client, other, "secret sam", "Customer") is None
    assert await entity_refs.resolve_entity(graph_client, other, "Atlantis", "City") is None
    assert await facts.retire_fact(graph_client, other, RetireInput(subject="secret sam", predicate="phone",
                                                                    agent="intake")) == []
    view = await facts.claims(graph_client, tenant, "secret sam", "lives_in")
    with pytest.raises(NotFound):
        await facts.settle(graph_client, other, view.conflict_id, view.claims[0].fact_id, "mallory")
    hits = await raw(graph_client, other, "MATCH (n) WHERE n.name CONTAINS 'secret' OR n.fact_id = $id RETURN count(n) AS n",
                     id=w.fact_id)
    assert hits == [{"n": 0}]
    assert [f.object for f in await facts.read_facts(graph_client, tenant, "secret sam", "phone")] == ["+15550001111"]


# ---------------------------------------------------------------------------------------------
# bad input: a typed error and an unchanged graph


def bad(**overrides) -> FactInput:
    values = dict(subject="alice rao", predicate="lives_in", object="Pune", agent="intake")
    values.update(overrides)
    return FactInput.model_construct(**values)  # skips the model's own checks: the module must catch these


BAD_WRITES = [
    ("unknown predicate", bad(predicate="favourite_colour"), UnknownPredicate),
    ("predicate not text", bad(predicate=7), UnknownPredicate),
    ("symptom as router", bad(predicate="has_router", object="internet keeps dropping"), InvalidValue),
    ("digits as a name", bad(predicate="name", object="R2D2"), InvalidValue),
    ("not a phone", bad(predicate="phone", object="call me maybe"), InvalidValue),
    ("contact method", bad(predicate="prefers_contact", object="pigeon"), InvalidValue),
    ("empty subject", bad(subject="   "), InvalidValue),
    ("punctuation subject", bad(subject="?!"), InvalidValue),
    ("oversized object", bad(object="x" * 201), InvalidValue),
    ("control characters", bad(object="Pu\x00ne"), InvalidValue),
    ("zero-width space", bad(subject="ali\u200bce"), InvalidValue),
    ("object not text", bad(object=None), InvalidValue),
    ("bad agent", bad(agent="intake; DROP"), InvalidInput),
    ("bad source", bad(source="ep\n1"), InvalidValue),
    ("bad time", bad(valid_from="yesterday"), InvalidInput),
]


@pytest.mark.parametrize("case, value, error", BAD_WRITES, ids=[c[0] for c in BAD_WRITES])
async def test_bad_writes_raise_typed_errors_and_change_nothing(graph_client, tenant, case, value, error):
    await facts.write_fact(graph_client, tenant, fact(obj="Pune"))
    before = await graph_size(graph_client, tenant)
    with pytest.raises(error):
        await facts.write_fact(graph_client, tenant, value)
    assert await graph_size(graph_client, tenant) == before


async def test_other_bad_calls_raise_typed_errors_and_change_nothing(graph_client, tenant):
    await facts.write_fact(graph_client, tenant, fact(obj="Pune"))
    before = await graph_size(graph_client, tenant)
    for call, error in [
        (facts.write_fact(graph_client, "Bad Tenant!", fact()), InvalidTenant),
        (facts.write_fact(graph_client, "x", fact()), InvalidTenant),
        (facts.retire_fact(graph_client, tenant, RetireInput.model_construct(
            subject="alice rao", predicate="nope", agent="intake", object=None, valid_to=None, recorded_at=None)),
         UnknownPredicate),
        (facts.retire_fact(graph_client, tenant, RetireInput.model_construct(
            subject="alice rao", predicate="phone", agent="intake", object="no digits", valid_to=None,
            recorded_at=None)), InvalidValue),
        (facts.read_facts(graph_client, tenant, "alice rao", "nope"), UnknownPredicate),
        (facts.read_facts(graph_client, tenant, "alice rao", reader="bad reader!"), InvalidInput),
        (facts.record_consulted(graph_client, tenant, "bad reader!", ["f"]), InvalidInput),
        (facts.read_facts(graph_client, tenant, "\x07"), InvalidValue),
        (facts.read_facts(graph_client, tenant, "alice rao", as_of=at(1), clock="sideways"), InvalidInput),
        (facts.read_facts(graph_client, tenant, "alice rao", as_of="tuesday"), InvalidInput),
        (facts.claims(graph_client, tenant, "alice rao", "nope"), UnknownPredicate),
        (facts.history(graph_client, "../etc", "alice rao"), InvalidTenant),
        (facts.settle(graph_client, tenant, "", "f", "maria"), InvalidValue),
        (facts.settle(graph_client, tenant, "c 1", "f", "maria"), InvalidInput),
        (facts.settle(graph_client, tenant, "c1", "f", "\x00"), InvalidValue),
    ]:
        with pytest.raises(error):
            await call
    assert await graph_size(graph_client, tenant) == before


async def test_cypher_looking_text_is_stored_as_text(graph_client, tenant):
    evil = "x'}) MATCH (n) DETACH DELETE n //"
    w = await facts.write_fact(graph_client, tenant, fact(subject=evil, predicate="owns_device", obj="a\" RETURN 1 //"))
    assert w.outcome is Outcome.CREATED
    (f,) = await facts.read_facts(graph_client, tenant, evil)
    assert (f.subject, f.object) == (evil, "a\" RETURN 1 //")
    nodes, _ = await graph_size(graph_client, tenant)
    assert nodes >= 5  # slot, subject, object, agent, fact: nothing was deleted


# ---------------------------------------------------------------------------------------------
# concurrency


CITIES = ["Pune", "Mumbai", "Delhi", "Chennai", "Kolkata", "Jaipur", "Lucknow", "Kanpur", "Nagpur", "Indore", "Bhopal",
          "Patna", "Vadodara", "Ludhiana", "Agra", "Nashik", "Faridabad", "Meerut", "Rajkot", "Varanasi", "Srinagar",
          "Amritsar", "Ranchi", "Howrah", "Jabalpur", "Gwalior", "Coimbatore", "Madurai", "Jodhpur", "Kota", "Guwahati",
          "Chandigarh"]


def _racing_clients(graph_client):
    """The shared pool plus three more clients (other processes, in real life)."""
    extra = [GraphClient(graph_client.settings) for _ in range(3)]
    return [graph_client, *extra], extra


async def test_concurrent_writers_of_a_single_valued_fact(graph_client, tenant):
    clients, extra = _racing_clients(graph_client)
    cities = CITIES
    try:
        results = await asyncio.gather(*(
            facts.write_fact(clients[i % len(clients)], tenant, fact(obj=cities[i], agent=f"agent-{i}"))
            for i in range(32)
        ))
        # a SUPERSEDE-policy predicate racing too: every write replaces, late ones become history
        names = [f"name {chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(32)]
        await asyncio.gather(*(
            facts.write_fact(clients[i % len(clients)], tenant, fact(predicate="name", obj=names[i], agent=f"a{i}"))
            for i in range(32)
        ))
    finally:
        for c in extra:
            await c.close()
    outcomes = Counter(r.outcome for r in results)
    assert outcomes[Outcome.CREATED] == 1 and outcomes[Outcome.CREATED] + outcomes[Outcome.CONFLICT] == 32
    assert len({r.conflict_id for r in results if r.conflict_id}) == 1
    rows = await raw(graph_client, tenant, "MATCH (f:Fact) RETURN f.slot AS slot, f.object_name AS o, labels(f) AS l")
    assert len(rows) == 64
    per_state = Counter((r["slot"], r["o"], tuple(sorted(r["l"]))) for r in rows)
    assert max(per_state.values()) == 1  # zero duplicates per (slot, object, state)
    current = Counter(r["slot"] for r in rows if "Current" in r["l"])
    assert sorted(current.values()) == [1, 1]  # never two current values of a single-valued predicate
    assert await raw(graph_client, tenant, "MATCH (s:Slot) RETURN collect(s.version) AS v") == [{"v": [32, 32]}]
    assert await raw(graph_client, tenant, "MATCH (:Entity:Customer)-[r:LIVES_IN|NAMED]->() RETURN count(r) AS n") == \
        [{"n": 2}]
    claims = await facts.claims(graph_client, tenant, "alice rao", "lives_in")
    assert len(claims.claims) == 32


async def test_concurrent_writers_of_a_multi_valued_fact_with_repeats(graph_client, tenant):
    clients, extra = _racing_clients(graph_client)
    devices = ["iPhone 15", "Pixel 8", "Galaxy S24", "Kindle", "iPad Air", "Echo Dot", "Roku", "Switch"]
    try:
        results = await asyncio.gather(*(
            facts.write_fact(clients[i % len(clients)], tenant,
                             fact(predicate="owns_device", obj=devices[i % 8], agent=f"agent-{i}"))
            for i in range(32)
        ))
    finally:
        for c in extra:
            await c.close()
    assert Counter(r.outcome for r in results) == {Outcome.CREATED: 8, Outcome.CORROBORATED: 24}
    rows = await raw(graph_client, tenant, "MATCH (f:Fact) RETURN f.object_name AS o, labels(f) AS l, "
                                           "f.corroborations AS c")
    assert sorted(r["o"] for r in rows) == sorted(devices)
    assert all(set(r["l"]) == {"Fact", "Current"} and r["c"] == 4 for r in rows)
    by_device = {d: {r.fact_id for r, i in zip(results, itertools.count()) if devices[i % 8] == d} for d in devices}
    assert all(len(ids) == 1 for ids in by_device.values())
    assert await raw(graph_client, tenant, "MATCH ()-[r:OWNS_DEVICE]->() RETURN count(r) AS n") == [{"n": 8}]


# ---------------------------------------------------------------------------------------------
# plans


def _plan_starts_from_an_index(plan: str) -> bool:
    return "Index Scan" in plan and "All Node Scan" not in plan


# What the hot paths run: the reads, and the writes of one predicate.
HOT_READS = (q.SLOT_READ, q.ENTITY_LOOKUP, q.FACTS_CURRENT, q.FACTS_WORLD_AT, q.FACTS_BELIEF_AT, q.FACTS_HISTORY,
             q.CLAIMS, q.CONFLICT_READ)


def hot_writes(predicate: str) -> tuple[Query, ...]:
    return (q.CREATE_PLAIN[predicate], q.CREATE_CURRENT[predicate], q.CREATE_HISTORY[predicate],
            q.CREATE_CLAIM[predicate], q.CORROBORATE[predicate], q.RETIRE[predicate], q.SETTLE[predicate], q.CONSULTED)


async def test_hot_queries_start_from_an_index(graph_client, tenant):
    await facts.write_fact(graph_client, tenant, fact(obj="Pune"))
    given = {"s_uid": "Customer|alice rao", "s_search": "%%alice%% %rao%", "s_type": "Customer", "o_uid": "City|pune",
             "o_type": "City", "slot": "Customer|alice rao|lives_in", "slots": ["Customer|alice rao|lives_in"],
             "predicate": "lives_in", "fact_ids": ["f"], "changes": [{"fact_id": "f"}]}
    queries = [*HOT_READS, *hot_writes("lives_in"), *hot_writes("owns_device"), q.ENTITY_MERGE["Customer"]]
    for query in queries:
        names = set(re.findall(r"\$(\w+)", query.cypher))
        params = {n: given.get(n, ["x"] if n.endswith("s") or n.startswith("to_") or n == "unmirror" else 1)
                  for n in names}
        plan = await graph_client.explain(tenant, query, params)
        assert _plan_starts_from_an_index(plan), f"{query.name}:\n{plan}"
