"""recall against a real FalkorDB and the real embedding model: what it finds, how it says it
found it, its shapes, its filters, and that a tenant never sees another's memory."""

from __future__ import annotations

import asyncio

import uuid
from datetime import datetime, timedelta, timezone

import pytest

from relay_graph.memory import recall as recall_mod
from relay_graph.memory.recall import anchors
from relay_graph.runtime.embeddings import Embedder
from relay_graph.runtime.errors import InvalidInput, InvalidValue
from relay_graph.memory.fact_embeddings import claim_text, embed_facts
from relay_graph.memory.facts import resolve_entity
from relay_graph.memory.models import EpisodeInput, FactInput, RecallShape
from relay_graph.runtime.queries import Query
from relay_graph.memory.queries import recall as q
from tests.support import register

T0 = datetime(2026, 9, 1, 10, 0, tzinfo=timezone.utc)


def turn(session, speaker, text, minutes, customer=None, **kw):
    return EpisodeInput(session=session, speaker=speaker, text=text, at=T0 + timedelta(minutes=minutes),
                        customer=customer, **kw)


@pytest.fixture
async def world(memory, tenant):
    """Two customers with facts and conversations; returns the episode ids by a short name."""
    facts = [
        FactInput(subject="Alice Rao", predicate="lives_in", object="Pune", agent="intake", recorded_at=T0),
        FactInput(subject="Alice Rao", predicate="has_router", object="TP-Link Archer C6", agent="intake",
                  recorded_at=T0),
        FactInput(subject="Bob Shah", predicate="lives_in", object="Mumbai", agent="intake", recorded_at=T0),
        FactInput(subject="Bob Shah", predicate="on_plan", object="Fiber 300", agent="intake", recorded_at=T0),
    ]
    results = [await memory.write_fact(tenant, f) for f in facts]
    await embed_facts(memory.client, memory.embedder, tenant, results)
    day = 24 * 60
    ids = await memory.write_episodes(tenant, [
        turn("a1", "alice", "My internet keeps dropping every evening around eight.", 0, "Alice Rao"),
        turn("a1", "intake", "Sorry about that. Let me check your line.", 1, "Alice Rao", agent="intake",
             kind="AgentReply"),
        turn("a2", "alice", "I moved to Pune last week, please update my address.", 2 * day, "Alice Rao"),
        turn("b1", "bob", "My bill is far too high this month.", 3 * day, "Bob Shah"),
        turn("b1", "bob", "The neighbours in Mumbai also lost their connection.", 3 * day + 1, "Bob Shah"),
        turn("n1", "netops", "Scheduled maintenance on the Andheri backbone tonight.", 4 * day,
             agent="netops", kind="InternalNote"),
    ])
    names = ["drop", "reply", "moved", "bill", "neighbours", "maintenance"]
    return dict(zip(names, ids)) | {"facts": {f.object: r.fact_id for f, r in zip(facts, results)}}


def texts(result):
    return [i.text for i in result.items]


async def test_a_paraphrased_question_finds_its_episode_by_meaning(memory, tenant, world):
    r = await memory.recall(tenant, "when does the connection keep cutting out?", k=3)
    assert r.items[0].episode_id == world["drop"]
    assert r.shape is RecallShape.MEMORY  # no entity named: meaning alone found it
    assert r.items[0].path[-1].startswith("q ~ episode (vector ")
    assert r.items[0].score > r.items[-1].score


async def test_a_named_entity_connects_question_and_episode(memory, tenant, world):
    r = await memory.recall(tenant, "who moved to pune?", k=3)
    assert r.shape is RecallShape.PATH
    top = r.items[0]
    assert top.episode_id == world["moved"]
    assert top.path[:2] == ["q -> entity 'Pune'", "entity <-MENTIONS- episode"]
    # facts ABOUT the named entity, current, with their subject's name
    assert [(f.subject, f.predicate, f.object) for f in r.facts] == [("Alice Rao", "lives_in", "Pune")]


async def test_a_misspelt_customer_name_still_finds_their_turns(memory, tenant, world):
    r = await memory.recall(tenant, "what did alcie rao tell us?", k=3)
    assert r.shape is RecallShape.PATH
    # her three turns, each reached through her (found in both sources, they outrank the rest)
    assert {i.episode_id for i in r.items} == {world["drop"], world["reply"], world["moved"]}
    for item in r.items:
        assert item.path[:2] == ["q -> entity 'Alice Rao'", "entity -HAS_SESSION-> session <-IN- episode"]
    assert {(f.subject, f.predicate) for f in r.facts} == {("Alice Rao", "lives_in"), ("Alice Rao", "has_router")}


async def test_a_misspelt_name_found_after_the_vector_gives_the_same_answer(memory, tenant, world, monkeypatch):
    """Round trip 2 starts on the names found exactly when the misspelt-name lookup is still
    running; a lookup that adds an entity makes it run again, on every entity."""
    question = "what did alcie rao tell us?"
    settled = await memory.recall(tenant, question, k=3)
    run = memory.client.run
    started = []
    round_trip_2 = asyncio.Event()

    async def slow_fuzzy(t, query, params=None):
        started.append(query.name)
        if query.name.startswith("recall_signals"):
            round_trip_2.set()
        if query is recall_mod.q.ENTITIES_FUZZY:
            # answers only once round trip 2 has started on the names found exactly
            await asyncio.wait_for(round_trip_2.wait(), 10)
        return await run(t, query, params)

    monkeypatch.setattr(memory.client, "run", slow_fuzzy)
    late = await memory.recall(tenant, question, k=3)
    assert late.model_dump() == settled.model_dump()
    signals = [n for n in started if n.startswith("recall_signals")]
    assert len(signals) == 2 and "entities" not in signals[0] and "entities" in signals[1]  # on no entity, then on Alice
    assert all(i.path[0] == "q -> entity 'Alice Rao'" for i in late.items)


def test_fuzzy_queries_cover_only_words_no_name_matched():
    queries = anchors.fuzzy_queries("what did alcie rao say about pune?", covered={"pune"})
    assert "%%alcie%% rao" in queries and "%%alcie%%" in queries
    assert not any("pune" in x for x in queries)  # found exactly already
    assert not any(x == "rao" for x in queries)  # a short word alone would list every "rao"
    assert all(set(x) <= set("abcdefghijklmnopqrstuvwxyz0123456789% ") for x in queries)


def test_misspelt_names_are_looked_for_only_among_words_the_model_does_not_know(memory):
    knows = memory.embedder.knows_word
    assert anchors.fuzzy_queries("what did she say about the garden?", set(), knows) == []  # no name to look for
    assert anchors.fuzzy_queries("what did alcie rao say about the garden?", set(), knows) == [
        "%%alcie%% rao", "%%alcie%%"]  # "alcie" is no word: it and the pair around it
    # a capitalised name is looked for even when it is a word, unless a speaker holds it exactly
    assert "%%melanie%%" in anchors.fuzzy_queries("what did Melanie paint?", set(), knows)
    assert anchors.fuzzy_queries("what did Melanie paint?", {"melanie"}, knows) == []


async def test_misspelt_names_are_found_beside_words_that_match_nothing(memory, tenant, world):
    # "qwertzuiop" finds nothing, so the pairs holding it are skipped; the other misspelt names still count
    found = await recall_mod.find_entities(memory.client, tenant, "did alcie rao or bbo shah qwertzuiop about it?")
    assert {a.name for a in found} == {"Alice Rao", "Bob Shah"}
    assert {a.how for a in found} == {"fuzzy"}
    params = anchors.fuzzy_params(["%%alcie%% rao", "%%qwertzuiop%% %%about%%", "%%alcie%%"])
    assert params["words"] == ["%%about%%", "%%alcie%%", "%%qwertzuiop%%"]
    assert params["queries"][0] == {"ft": "%%alcie%% rao", "parts": ["%%alcie%%"]}


async def test_unknown_subject_searches_nothing(memory, tenant, world):
    r = await memory.recall(tenant, "what router do they have?", subject="Zed Nobody")
    assert r.shape is RecallShape.UNKNOWN_NAME and r.items == [] and r.facts == []


async def test_known_names_with_nothing_between_them_are_not_in_graph(memory, tenant, world):
    await resolve_entity(memory.client, tenant, "Chennai", "City", create=True)  # known, connected to nothing
    r = await memory.recall(tenant, "any news from chennai?", k=3)
    assert r.shape is RecallShape.NOT_IN_GRAPH
    assert r.facts == []
    # whatever came back is only similar (or beside something similar): no entity led to it
    assert all(not h.startswith(("q -> entity", "q -> speaker")) for i in r.items for h in i.path), \
        [i.path for i in r.items]


async def test_an_empty_memory_is_not_in_graph(memory, tenant):
    r = await memory.recall(tenant, "where does alice live?")
    assert r.shape is RecallShape.NOT_IN_GRAPH and r.items == [] and r.facts == []


async def test_session_filter(memory, tenant, world):
    r = await memory.recall(tenant, "money problems", session="b1", k=5)
    assert set(texts(r)) == {"My bill is far too high this month.",
                             "The neighbours in Mumbai also lost their connection."}
    assert r.items[0].episode_id == world["bill"]
    assert all(i.session == "b1" for i in r.items)


async def test_subject_filter_keeps_to_that_customer(memory, tenant, world):
    r = await memory.recall(tenant, "connection problems in mumbai", subject="alice rao", k=10)
    assert r.shape is RecallShape.PATH
    assert {i.session for i in r.items} == {"a1", "a2"}
    assert r.items[0].path[:2] == ["subject -> entity 'Alice Rao'", "entity -HAS_SESSION-> session <-IN- episode"]
    # Mumbai is named, but Bob's facts are not Alice's: only facts about the subject come back
    assert {f.subject for f in r.facts} == {"Alice Rao"}

    both = await memory.recall(tenant, "where does she live", subject="Alice Rao", session="a2")
    assert [i.episode_id for i in both.items] == [world["moved"]]


async def test_subject_ranks_facts_by_meaning(memory, tenant, world):
    r = await memory.recall(tenant, "which router model?", subject="alice rao", k=1)
    assert [f.predicate for f in r.facts] == ["has_router"]


async def test_facts_derived_from_returned_episodes(memory, tenant, world):
    await memory.write_fact(tenant, FactInput(subject="Bob Shah", predicate="prefers_contact", object="email",
                                              agent="intake", source=world["bill"]))
    r = await memory.recall(tenant, "complaints about the bill amount", k=1)
    assert r.items[0].episode_id == world["bill"]
    assert ("Bob Shah", "prefers_contact", "email") in {(f.subject, f.predicate, f.object) for f in r.facts}


async def test_reader_leaves_consulted_edges(memory, tenant, world):
    r = await memory.recall(tenant, "who moved to pune?", reader="resolver")
    await memory.recall(tenant, "who moved to pune?", reader="resolver")
    rows = await memory.client.run(tenant, Query(
        "t", "MATCH (a:Agent {name: 'resolver'})-[c:CONSULTED]->(f:Fact) RETURN f.fact_id AS id, c.count AS n",
        True))
    assert {(row["id"], row["n"]) for row in rows} == {(f.fact_id, 2) for f in r.facts} != set()


async def test_tenants_never_see_each_other(memory, world, tenant):
    other = "t-" + uuid.uuid4().hex[:12]
    await register(memory.client.redis, other)
    secret = "The vault code is " + uuid.uuid4().hex[:8]
    await memory.write_episodes(tenant, [turn("v1", "alice", secret, 0, "Alice Rao", mentions=["vault"])])
    await memory.write_episodes(other, [turn("z1", "zoe", "Nothing to see here.", 0, "Zoe Li")])

    mine = await memory.recall(tenant, "what is the vault code?", k=3)
    assert secret in texts(mine)
    for question, kw in [("what is the vault code?", {}), ("vault", {}), ("where does alice rao live?", {}),
                         ("vault code", {"subject": "Zoe Li"}), ("pune", {"session": "v1"})]:
        theirs = await memory.recall(other, question, k=10, **kw)
        assert secret not in texts(theirs)
        assert all(f.subject != "Alice Rao" for f in theirs.facts)
        assert all(i.session == "z1" for i in theirs.items)
    assert (await memory.recall(other, "anything", subject="alice rao")).shape is RecallShape.UNKNOWN_NAME


async def test_facts_share_one_vector_per_claim(graph_client, tenant, memory, world):
    r1 = await memory.write_fact(tenant, FactInput(subject="Carol Das", predicate="lives_in", object="pune",
                                                   agent="intake"))
    fresh = Embedder(graph_client.settings.model_dir)  # another process, empty cache
    assert await embed_facts(graph_client, fresh, tenant, [r1]) == 0  # "lives in pune" has a vector already
    assert fresh.texts_embedded == 0
    r2 = await memory.write_fact(tenant, FactInput(subject="Carol Das", predicate="on_plan", object="Fiber 1000",
                                                   agent="intake"))
    assert await embed_facts(graph_client, fresh, tenant, [r2, r2.fact_id]) == 1
    assert await embed_facts(graph_client, fresh, tenant, [r2]) == 0  # once linked, never again
    rows = await graph_client.run(tenant, Query(
        "t", "MATCH (t:FactText) OPTIONAL MATCH (f:Fact)-[:PHRASED_AS]->(t) "
             "RETURN t.text AS text, count(f) AS facts ORDER BY text", True))
    assert {r["text"]: r["facts"] for r in rows} == {
        claim_text("lives_in", "Pune"): 2, "has router TP-Link Archer C6": 1, "lives in Mumbai": 1,
        "on plan Fiber 300": 1, "on plan Fiber 1000": 1}


async def test_identifier_claims_share_their_fixed_wording(graph_client, tenant, memory, world):
    written = [await memory.write_fact(tenant, FactInput(subject=s, predicate=p, object=o, agent="intake"))
               for s, p, o in [("Carol Das", "phone", "+91 98450 11111"), ("Dev Roy", "phone", "+91 98450 22222"),
                               ("Carol Das", "email", "carol@example.com")]]
    fresh = Embedder(graph_client.settings.model_dir)
    assert await embed_facts(graph_client, fresh, tenant, written) == 2  # "phone number", "email address"
    rows = await graph_client.run(tenant, Query(
        "t", "MATCH (f:Fact)-[:PHRASED_AS]->(t:FactText) WHERE f.predicate IN ['phone', 'email'] "
             "RETURN t.text AS text, count(f) AS facts ORDER BY text", True))
    assert rows == [{"text": "email address", "facts": 1}, {"text": "phone number", "facts": 2}]
    assert claim_text("phone", "+919845011111") == "phone number"
    found = await memory.recall(tenant, "what is carol das's phone number?", k=3)
    assert found.facts[0].predicate == "phone" and found.facts[0].object == "+919845011111"


async def test_an_episode_without_its_vector_yet_is_found_by_the_other_ways(graph_client, embedder, tenant, memory):
    await memory.write_episodes(tenant, [EpisodeInput(
        session="zq-1", speaker="Zed Quill", customer="Zed Quill", text="my zebra-striped router hums at night",
        at=T0, id="zq-turn")], embed=False)
    found = await memory.recall(tenant, "what does the router do at night?", k=5, subject="zed quill")
    assert [i.episode_id for i in found.items] == ["zq-turn"]
    by_words = await memory.recall(tenant, "zebra-striped router", k=5)
    assert "zq-turn" in [i.episode_id for i in by_words.items]


@pytest.mark.parametrize("kw, error", [
    ({"q_text": "   "}, InvalidValue),
    ({"q_text": "x" * 3000}, InvalidValue),
    ({"q_text": "ok", "k": 0}, InvalidInput),
    ({"q_text": "ok", "k": 1000}, InvalidInput),
    ({"q_text": "ok", "reader": "no spaces allowed"}, InvalidInput),
    ({"q_text": "ok", "session": ""}, InvalidValue),
])
async def test_bad_questions_are_refused(graph_client, embedder, tenant, kw, error):
    with pytest.raises(error):
        await recall_mod.recall(graph_client, embedder, tenant, **kw)
    assert not await graph_client.graph_exists(tenant)


async def test_hot_reads_start_from_indexes(graph_client, tenant):
    await graph_client.ensure_schema(tenant)  # a tenant that has written has these indexes (they are made on first use)
    v = [0.0] * 384
    plans = {
        "entities": (q.ENTITIES_EXACT, {"keys": ["a"]}),
        "fuzzy_entities": (q.ENTITIES_FUZZY, {"words": ["%%alcie%%"], "queries": [
            {"ft": "%%alcie%% rao", "parts": ["%%alcie%%"]}], "limit": 5}),
        "near": (q.EPISODES_NEAR, {"v": v, "n": 5}),
        "session": (q.EPISODES_IN_SESSION, {"session": "s", "v": v, "n": 5}),
        "of_entities": (q.EPISODES_OF_ENTITIES, {"entity_uids": ["a"], "session": None, "v": v, "n": 5, "cap": 5}),
        "of_subject": (q.EPISODES_OF_SUBJECT, {"subject": "a", "session": None, "uids": [], "v": v, "cap": 5, "n": 5}),
        "by_id": (q.EPISODES_BY_ID, {"ids": ["a"], "v": v}),
        "fact_candidates": (q.FACT_CANDIDATES, {"uids": ["a"], "per_entity": 5}),
        "facts_of_entities": (q.FACTS_OF_ENTITIES, {"fact_ids": ["f"], "uids": ["a"], "v": v, "limit": 5}),
        "facts_of_subject": (q.FACTS_OF_SUBJECT, {"subject": "a", "uids": [], "v": v, "per_entity": 5, "limit": 5}),
        "facts_derived": (q.FACTS_DERIVED, {"ids": ["a"], "subject": None, "limit": 5}),
    }
    for name, (query, params) in plans.items():
        plan = await graph_client.explain(tenant, query, params)
        assert "Label Scan" not in plan and "All Node Scan" not in plan, (name, plan)
        assert "Node By Index Scan" in plan or "ProcedureCall" in plan, (name, plan)
    assert "ProcedureCall" in await graph_client.explain(tenant, q.EPISODES_NEAR, {"v": v, "n": 5})
    assert "Node By Index Scan | (s:Session)" in await graph_client.explain(
        tenant, q.EPISODES_IN_SESSION, {"session": "s", "v": v, "n": 5})


async def test_fact_vector_statements_start_from_indexes(graph_client, tenant):
    await graph_client.ensure_schema(tenant)  # a tenant that has written has these indexes (they are made on first use)
    from relay_graph.memory.queries import fact_embeddings as fq

    unphrased = await graph_client.explain(tenant, fq.UNPHRASED, {"ids": ["a"], "fixed": {"phone": "phone number"}})
    write = await graph_client.explain(tenant, fq.WRITE, {"texts": [], "links": []})
    for plan in (unphrased, write):
        assert "Label Scan" not in plan and "All Node Scan" not in plan, plan
    assert "Node By Index Scan | (f:Fact)" in unphrased and "Node By Index Scan | (t:FactText)" in unphrased
    assert "Node By Index Scan | (t:FactText)" in write
