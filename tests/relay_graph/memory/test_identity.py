"""One customer is never another (real FalkorDB): 2,000 customers whose names differ by one edit,
share a first or a last name, or are equal, written through every write path (facts in batches,
retire, conflicts, episodes, chat, tickets, the tools), and nothing lands on a customer it was not
written for; equal names stay two customers by id. Reads by a misspelt name find the one close
customer, and answer ambiguous, with both, when two are close.

The whole population goes through the batched engine path (`facts.write_facts`); the per-path
cases use slices of it that keep the hard neighbours (one edit apart, namesakes) side by side."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timezone

import pytest

from relay_graph.desk.conversation import turns as chat

from relay_graph.desk.customers import store as customers

from relay_graph.desk.tickets import store as tickets
from relay_graph.memory import facts, names
from relay_graph.memory.entities import close_names, name_key, new_customer_id
from relay_graph.memory.facade import Memory
from relay_graph.memory.models import EpisodeInput, FactInput, RetireInput
from relay_graph.runtime.queries import Query
from relay_graph.tools import Shape, Call, call_tool

FIRST = """asha priya john mary ravi anil sunita kavya rohan meera arjun divya vikram neha sanjay pooja rahul
    anita kiran deepa zubin farah imran nadia tariq leela gopal hema naveen swati omkar jaya manoj ritu
    suresh geeta harish lata vinod usha""".split()
# a one-edit variant of each of the first 20 first names (none of them is a name above)
VARIANT = """esha preya jon marya ravu anel sunitha kavia rohen mira arjan divia vickram nehu sanjai puja rahal
    anitha kirin depa""".split()
LAST = """rao raman smith iyer khan verma menon shah nair das gupta bose joshi patel reddy kumar singh
    mehta pillai dutta naidu bhat kapoor malhotra sethi""".split()
T0 = datetime(2026, 9, 1, tzinfo=timezone.utc)


def population() -> list[tuple[str, str]]:
    """2,000 (id, name): every first x last name (1,000); the variant first name with each last name
    for the first 20 first names (500, one edit from a name above); and a second customer of the
    same name for the other 500 names (namesakes). Ids are Relay's."""
    base = [f"{f} {l}" for f in FIRST for l in LAST]
    variants = [f"{v} {l}" for v in VARIANT for l in LAST]
    namesakes = [f"{f} {l}" for f in FIRST[20:] for l in LAST]
    people = [(new_customer_id(), n.title()) for n in base + variants + namesakes]
    assert len(people) == 2000 and len({i for i, _ in people}) == 2000
    return people


def variant_pairs() -> list[tuple[str, str]]:
    return [(f"{f} {l}".title(), f"{v} {l}".title()) for f, v in zip(FIRST, VARIANT) for l in LAST]


def doubled(name: str) -> list[str]:
    return [name[:k] + name[k] + name[k:] for k in range(1, len(name)) if name[k] != " "]


def one_edit(name: str) -> list[str]:
    """Deletions and vowel substitutions of the first name's letters."""
    first, last = name.split(" ", 1)
    out = [first[:k] + first[k + 1:] for k in range(len(first))]
    out += [first[:k] + v + first[k + 1:] for k in range(len(first)) for v in "aeiouh" if v != first[k].lower()]
    return [f"{f} {last}" for f in out if len(f) >= 2]


def close_among(asked: str, candidates: list[str]) -> list[str]:
    return [n for _, n, _ in close_names(asked, [(c, c) for c in candidates])]


def phone(i: int) -> str:
    return f"+9198{i:08d}"


async def raw(client, tenant, cypher: str, **params) -> list[dict]:
    return await client.run(tenant, Query("test", cypher), params)


async def facts_by_customer(client, tenant) -> dict[str, set[tuple[str, str, str]]]:
    rows = await raw(client, tenant, "MATCH (f:Fact)-[:ABOUT {role: 'subject'}]->(c:Customer) "
                                     "RETURN c.name AS c, f.predicate AS p, f.object_name AS o, f.fact_id AS id, "
                                     "f.subject_uid AS s")
    out: dict[str, set] = defaultdict(set)
    for r in rows:
        assert r["s"] == "Customer|" + name_key(r["c"])  # the fact's slot is the customer it is ABOUT
        out[r["c"]].add((r["p"], r["o"]))
    return out


@pytest.fixture
async def written(graph_client, tenant):
    """The population, written in batches: each customer's name, city and phone."""
    people = population()
    items = []
    for i, (cid, name) in enumerate(people):
        items += [FactInput(subject=cid, predicate="name", object=name, agent="intake", recorded_at=T0),
                  FactInput(subject=cid, predicate="lives_in", object=LAST[i % len(LAST)] + "pur", agent="intake",
                            recorded_at=T0),
                  FactInput(subject=cid, predicate="phone", object=phone(i), agent="intake", recorded_at=T0)]
    for start in range(0, len(items), facts.MAX_BATCH):
        results = await facts.write_facts(graph_client, tenant, items[start:start + facts.MAX_BATCH])
        assert {r.outcome.value for r in results} == {"created"}
    return people


def expected(people) -> dict[str, set[tuple[str, str, str]]]:
    return {cid: {("name", name), ("lives_in", LAST[i % len(LAST)] + "pur"), ("phone", phone(i))}
            for i, (cid, name) in enumerate(people)}


async def test_batched_facts_land_on_exactly_the_customer_named(graph_client, tenant, written):
    got = await facts_by_customer(graph_client, tenant)
    assert got == expected(written)  # 2,000 customers, each with its own three facts, no more
    assert await raw(graph_client, tenant, "MATCH (c:Customer) RETURN count(c) AS n") == [{"n": 2000}]
    assert await raw(graph_client, tenant, "MATCH (f:Fact) WHERE NOT f:Current RETURN count(f) AS n") == [{"n": 0}]
    assert await raw(graph_client, tenant, "MATCH (c:Conflict) RETURN count(c) AS n") == [{"n": 0}]
    # namesakes share a name entity, and stay two customers
    rows = await raw(graph_client, tenant, "MATCH (c:Customer)-[:NAMED]->(n:PersonName) WITH n, count(c) AS k "
                                           "RETURN k, count(n) AS names ORDER BY k")
    assert rows == [{"k": 1, "names": 1000}, {"k": 2, "names": 500}]


async def test_names_as_keys_one_edit_apart_never_merge(graph_client, tenant):
    # an older tenant's way: the name is the key. Exactly the failure of issue 13 ("esha rao"
    # superseding "asha rao"'s city), for 1,500 names one edit apart or sharing a first or last name
    distinct = sorted({name for _, name in population()})
    items = [FactInput(subject=n, predicate="lives_in", object=f"city {i}", agent="intake", recorded_at=T0)
             for i, n in enumerate(distinct)]
    for start in range(0, len(items), facts.MAX_BATCH):
        results = await facts.write_facts(graph_client, tenant, items[start:start + facts.MAX_BATCH])
        assert {r.outcome.value for r in results} == {"created"}
    got = await facts_by_customer(graph_client, tenant)
    assert got == {n: {("lives_in", f"city {i}")} for i, n in enumerate(distinct)}
    # one by one too (write_fact): a misspelt subject is a new customer, never a supersede
    one = await facts.write_fact(graph_client, tenant, FactInput(subject="Ashaa Rao", predicate="lives_in",
                                                                 object="delhi", agent="intake"))
    assert (one.outcome.value, one.superseded) == ("created", [])
    assert [f.object for f in await facts.read_facts(graph_client, tenant, "Asha Rao")] == \
        [f"city {distinct.index('Asha Rao')}"]


async def test_retire_and_conflicts_stay_on_their_customer(graph_client, tenant, written):
    # neighbours side by side: asha x (0..24), esha x (1000..1024), zubin x and its namesake
    idx = list(range(0, 25)) + list(range(1000, 1025)) + list(range(500, 525)) + list(range(1500, 1525))
    picked = [written[i] for i in idx]
    for n, (cid, _) in enumerate(picked[::2]):  # every other one: its neighbour keeps its phone
        i = idx[2 * n]
        assert await facts.retire_fact(graph_client, tenant, RetireInput(
            subject=cid, predicate="phone", object=phone(i), agent="resolver")) != []
    # another agent's city for every third: a conflict on that customer's slot only
    moved = {written[i][0] for i in idx[::3]}
    for cid in moved:
        r = await facts.write_fact(graph_client, tenant, FactInput(subject=cid, predicate="lives_in",
                                                                   object="elsewhere", agent="netops"))
        assert r.outcome.value == "conflict"
    retired = {written[i][0] for i in idx[::2]}
    rows = await raw(graph_client, tenant, "MATCH (f:Fact:Retired)-[:ABOUT {role: 'subject'}]->(c:Customer) "
                                           "RETURN c.name AS c, f.object_name AS o")
    assert {r["c"] for r in rows} == retired
    assert all(r["o"] == phone(next(i for i in idx if written[i][0] == r["c"])) for r in rows)
    rows = await raw(graph_client, tenant, "MATCH (k:Conflict)-[:BETWEEN]->(f:Fact) "
                                           "RETURN k.subject_uid AS s, collect(f.subject_uid) AS between")
    assert {r["s"] for r in rows} == {"Customer|" + c for c in moved}
    assert all(set(r["between"]) == {r["s"]} for r in rows)
    for cid in {c for c, _ in picked} - retired:
        assert [f.object for f in await facts.read_facts(graph_client, tenant, cid, "phone")] != []


async def test_episodes_chat_tickets_and_tools_stay_on_their_customer(graph_client, embedder, tenant, written):
    memory = Memory(graph_client, embedder)
    idx = list(range(0, 40)) + list(range(1000, 1040)) + list(range(500, 540)) + list(range(1500, 1540))
    picked = [written[i] for i in idx]
    # episodes (one batch), each naming its customer's name in the text
    await memory.write_episodes(tenant, [
        EpisodeInput(session=f"s-ep-{n}", speaker=name, text=f"hi, {name} here: my wifi drops", at=T0,
                     id=f"ep-{n}", kind="CustomerMessage", agent="intake", customer=cid)
        for n, (cid, name) in enumerate(picked)], embed=False)
    # chat turns, each customer by id
    sessions = {}
    for cid, name in picked[::4]:
        turn = await chat.record_turn(memory, tenant, customer=cid, text=f"{name}: still no internet")
        assert turn.customer == cid
        sessions[turn.session] = cid
    # tickets
    for cid, _ in picked[::5]:
        await tickets.open_ticket(graph_client, tenant, customer=cid, issue_kind="no internet", summary="down",
                                  agent="intake")
    # the tools' writes, by id
    ctx = Call.of(graph_client, tenant, "mcp:tester", embedder=embedder)
    for n, (cid, name) in enumerate(picked[1::6]):
        r = await call_tool(ctx, "remember_fact", {"subject": cid, "predicate": "owns_device",
                                                   "object": f"tv {n}"})
        assert r.shape is Shape.ANSWERED and r.data.subject == cid
        r = await call_tool(ctx, "remember", {"session": f"s-tool-{n}", "customer": cid,
                                              "turns": [{"speaker": name, "text": "the tv is back"}]})
        assert r.data.customer == cid
        sessions[f"s-tool-{n}"] = cid
    for n, (cid, _) in enumerate(picked[1::6]):
        r = await call_tool(ctx, "retire_fact", {"subject": cid, "predicate": "owns_device", "object": f"tv {n}"})
        assert r.shape is Shape.ANSWERED and len(r.data.retired) == 1

    # every session is its own customer's, every episode's customer link too
    rows = await raw(graph_client, tenant, "MATCH (c:Customer)-[:HAS_SESSION]->(s:Session) "
                                           "RETURN s.session_id AS s, collect(c.name) AS owners")
    owners = {r["s"]: r["owners"] for r in rows}
    for n, (cid, _) in enumerate(picked):
        assert owners[f"s-ep-{n}"] == [cid]
    for session, cid in sessions.items():
        assert owners[session] == [cid]
    # MENTIONS: the name entity spelt exactly as the text has it, never a neighbour's
    rows = await raw(graph_client, tenant, "MATCH (e:Episode)-[:MENTIONS]->(x:Entity) WHERE e.episode_id STARTS WITH "
                                           "'ep-' RETURN e.episode_id AS e, collect(x.uid) AS m")
    for r in rows:
        cid, name = picked[int(r["e"][3:])]
        assert {u for u in r["m"] if u.startswith("Customer|")} == {"Customer|" + cid}
        assert {u for u in r["m"] if u.startswith("PersonName|")} == {"PersonName|" + name_key(name)}
    rows = await raw(graph_client, tenant, "MATCH (c:Customer)-[:HAS_TICKET]->(t:Ticket) RETURN c.name AS c, "
                                           "count(t) AS n")
    assert {r["c"]: r["n"] for r in rows} == {cid: 1 for cid, _ in picked[::5]}
    # the tools' facts: on their customer, and nobody else gained or lost one
    want = expected(written)
    got = await facts_by_customer(graph_client, tenant)
    for n, (cid, _) in enumerate(picked[1::6]):
        want[cid].add(("owns_device", f"tv {n}"))
    assert got == want


async def test_reads_by_a_misspelt_name_find_the_one_close_customer_or_ask(graph_client, tenant, written):
    by_name: dict[str, list[str]] = defaultdict(list)
    for cid, name in written:
        by_name[name].append(cid)
    all_names = [(n, n) for n in by_name]

    def close(asked: str) -> list[str]:
        return [n for _, n, _ in close_names(asked, all_names)]

    # a misspelling (a letter doubled) close to one name of one customer
    one = next(m for n, ids in by_name.items() if len(ids) == 1 for m in doubled(n) if close(m) == [n])
    target = close(one)[0]
    answer = await facts.facts_about(graph_client, tenant, one)
    assert answer.ambiguous is None and answer.matched is not None
    assert (answer.matched.id, answer.matched.name, answer.matched.how) == (by_name[target][0], target, "fuzzy")
    assert {f.subject for f in answer.facts} == {by_name[target][0]}
    claims = await facts.claims(graph_client, tenant, one, "lives_in")
    assert claims.matched is not None and claims.matched.id == by_name[target][0] and claims.claims

    # a misspelling close to exactly two names one edit apart, one customer each ("jhn x": john x, jon x)
    two = next(m for a, b in variant_pairs() for m in one_edit(a)
               if sorted(close_among(m, [a, b])) == sorted([a, b]) and sorted(close(m)) == sorted([a, b]))
    pair = sorted(cid for n in close(two) for cid in by_name[n])
    answer = await facts.facts_about(graph_client, tenant, two)
    assert answer.facts == [] and answer.matched is None
    assert sorted(c.id for c in answer.ambiguous.candidates) == pair
    assert answer.ambiguous.message.startswith("did you mean ")
    found = await customers.find(graph_client, tenant, two)
    assert found.customers == [] and sorted(c.id for c in found.ambiguous.candidates) == pair

    # namesakes: the name itself stands for two customers; a read by it asks which, a find lists both
    shared = next(n for n, ids in by_name.items() if len(ids) == 2)
    answer = await facts.facts_about(graph_client, tenant, shared.lower())
    assert answer.facts == [] and sorted(c.id for c in answer.ambiguous.candidates) == sorted(by_name[shared])
    found = await customers.find(graph_client, tenant, shared)
    assert sorted(c.id for c in found.customers) == sorted(by_name[shared]) and found.ambiguous is None
    assert all(c.names == [shared] for c in found.customers)

    # by id: exact, no note; an id spelt alike is never matched
    cid = by_name[target][0]
    answer = await facts.facts_about(graph_client, tenant, cid)
    assert answer.matched is None and len(answer.facts) == 3
    near = cid[:-1] + ("0" if cid[-1] != "0" else "1")
    assert (await names.match(graph_client, tenant, near)).hits == ()


async def test_recall_by_a_misspelt_subject_says_what_it_matched_or_asks(graph_client, embedder, tenant):
    memory = Memory(graph_client, embedder)
    for cid, name in (("c-00000000000000a1", "Asha Rao"), ("c-00000000000000b1", "Esha Rao"),
                      ("c-00000000000000c1", "Zubin Mistry")):
        await facts.write_fact(graph_client, tenant, FactInput(subject=cid, predicate="name", object=name,
                                                               agent="intake"))
        await memory.write_episodes(tenant, [EpisodeInput(session=f"s-{cid}", speaker=name, at=T0,
                                                          text="my router keeps rebooting", customer=cid)])
    one = await memory.recall(tenant, "what is wrong with the router?", subject="zubin mistri")
    assert one.matched is not None and (one.matched.id, one.matched.how) == ("c-00000000000000c1", "fuzzy")
    assert {i.session for i in one.items} == {"s-c-00000000000000c1"}
    both = await memory.recall(tenant, "what is wrong with the router?", subject="isha rao")
    assert both.shape.value == "ambiguous" and both.items == []
    assert sorted(c.id for c in both.ambiguous.candidates) == ["c-00000000000000a1", "c-00000000000000b1"]


async def test_reading_by_name_starts_from_an_index(graph_client, tenant):
    from relay_graph.memory.queries import names as nq

    await facts.write_fact(graph_client, tenant, FactInput(subject="c-00000000000000a1", predicate="name",
                                                           object="Asha Rao", agent="intake"))
    for query, params in (
        (nq.NAME_MATCH, {"own_uid": "Customer|isha rao", "name_uid": "PersonName|isha rao",
                         "search": "%isha% %rao%", "types": ["Customer", "PersonName"]}),
        (nq.CUSTOMER_NAMES, {"uids": ["Customer|c-00000000000000a1"]}),
    ):
        plan = await graph_client.explain(tenant, query, params)
        assert "Index Scan" in plan and "All Node Scan" not in plan and "Label Scan" not in plan, plan


async def test_a_read_by_a_customers_exact_name_says_it_was_read_by_name(graph_client, tenant):
    await facts.write_fact(graph_client, tenant, FactInput(subject="c-00000000000000a1", predicate="name",
                                                           object="Zoya Khan", agent="intake"))
    answer = await facts.facts_about(graph_client, tenant, "ZOYA  khan")
    assert answer.matched is not None
    assert (answer.matched.asked, answer.matched.id, answer.matched.name, answer.matched.how) == \
        ("ZOYA khan", "c-00000000000000a1", "Zoya Khan", "name")  # asked as cleaned: spaces collapsed
    assert [f.object for f in answer.facts] == ["Zoya Khan"]
