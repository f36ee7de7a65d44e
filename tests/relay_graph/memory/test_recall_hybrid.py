"""Hybrid recall over an open-domain conversation, against a real FalkorDB and the real model:
each signal (full-text words, speakers, time expressions, neighbouring turns) finds a turn that
the others miss, and the weighted fusion orders what they found."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from relay_graph.memory import recall as recall_mod
from relay_graph.memory.recall import fusion, tuning
from relay_graph.memory.models import EpisodeInput, FactInput, RecallShape
from relay_graph.memory.episodes import wire_vector
from relay_graph.memory.queries import recall as q

C, M = "Caroline", "Melanie"
# Every turn of a session carries the session's time, as a LoCoMo-style loader gives them: the
# order of turns is their order of arrival.
SESSIONS = {
    "D1": (datetime(2023, 3, 14, 13, 56, tzinfo=timezone.utc), [
        (C, "Hey Melanie! How have you been?"),
        (M, "Good! We went to the beach with the kids on Sunday."),
        (C, "I love the beach, the sea always calms me down."),
        (M, "The garden is full of roses now, it looks like a painting."),
        (C, "The Quillfeather regatta got cancelled again, what a shame."),
        (M, "Beach days are the best days."),
    ]),
    "D2": (datetime(2023, 6, 9, 18, 5, tzinfo=timezone.utc), [
        (M, "Hi Caroline, long time no talk!"),
        (C, "I dug over the garden beds yesterday, my back is sore."),
        (M, "Did you finish that pottery piece you started?"),
        (C, "Yes! It's blue with little fish on it."),
        (M, "I'd love to see it sometime."),
        (C, "We drove up the coast to a quiet cove last weekend."),
    ]),
    "D3": (datetime(2023, 9, 2, 10, 30, tzinfo=timezone.utc), [
        (C, "Melanie, guess what, I'm going to the beach tomorrow!"),
        (M, "Lucky you, the seaside in September is the best."),
        (C, "Work has been really busy, I barely sleep."),
        (M, "We walked along the shore at sunset, so pretty."),
        (C, "The roses in my garden are finally blooming."),
        (M, "Have you read any good books lately?"),
    ]),
}


def turns() -> list[EpisodeInput]:
    out = []
    for session, (at, lines) in SESSIONS.items():
        for i, (speaker, text) in enumerate(lines, start=1):
            out.append(EpisodeInput(id=f"{session}:{i}", session=session, speaker=speaker, text=text, at=at))
    return out


@pytest.fixture
async def chat(memory, tenant):
    # two batches: arrival order carries across them
    items = turns()
    await memory.write_episodes(tenant, items[:9])
    await memory.write_episodes(tenant, items[9:])
    return tenant


async def ids(memory, tenant, question, k, monkeypatch=None, **weights) -> list[str]:
    if weights:  # in the fusion of either kind of question (question.Kind)
        for name, w in weights.items():
            monkeypatch.setitem(recall_mod.WEIGHTS, name, w)
            monkeypatch.setitem(tuning.MEANING_WEIGHTS, name, w)
            monkeypatch.setitem(tuning.WORDS_WEIGHTS, name, w)
    return [i.episode_id for i in (await memory.recall(tenant, question, k=k)).items]


async def test_client_ids_come_back_as_episode_ids(memory, chat):
    r = await memory.recall(chat, "what happened to the regatta?", k=3)
    assert r.items[0].episode_id == "D1:5"
    assert {i.episode_id for i in r.items} <= {t.id for t in turns()}


async def test_words_find_a_rare_name_meaning_cannot_read(memory, chat, monkeypatch):
    question = "any news about quillfeather?"
    r = await memory.recall(chat, question, k=2)
    assert r.items[0].episode_id == "D1:5"
    assert r.items[0].path[0] == "q -> words 'news quillfeather' (full-text)"
    assert r.shape is RecallShape.MEMORY  # no entity or speaker named: found by words and meaning
    for weights in (recall_mod.WEIGHTS, tuning.MEANING_WEIGHTS, tuning.WORDS_WEIGHTS):
        monkeypatch.setitem(weights, "words", 0.0)
    without = (await memory.recall(chat, question, k=2)).items
    found = next((i for i in without if i.episode_id == "D1:5"), None)
    # meaning alone may still rank it, on less: words are what made its score
    assert found is None or found.score < r.items[0].score


async def test_a_named_speaker_favours_their_turns(memory, chat, monkeypatch):
    question = "What did Caroline say about the garden?"
    r = await memory.recall(chat, question, k=1)
    assert r.items[0].speaker == C and r.items[0].episode_id in {"D2:2", "D3:5"}
    assert r.items[0].path[:2] == ["q -> speaker 'Caroline'", "speaker <-SPOKEN_BY- episode"]
    assert r.shape is RecallShape.PATH
    without = await ids(memory, chat, question, 1, monkeypatch, speakers=0.0)
    assert without == ["D1:4"]  # Melanie's roses, nearer in words and meaning


async def test_a_time_expression_finds_the_turns_of_that_month(memory, chat, monkeypatch):
    question = "Where did they go in June 2023?"
    r = await memory.recall(chat, question, k=3)
    assert "D2:6" in [i.episode_id for i in r.items]
    hit = next(i for i in r.items if i.episode_id == "D2:6")
    assert hit.path[0] == "q -> time 'June 2023' (2023-05-31 .. 2023-07-01)"
    assert "D2:6" not in await ids(memory, chat, question, 3, monkeypatch, time=0.0)


async def test_a_relative_time_is_read_against_the_newest_turn(memory, chat):
    # the newest turn is 2 September 2023: "last month" is August, "in June" is June 2023
    r = await memory.recall(chat, "who talked about pottery in June?", k=3)
    assert "D2:3" in [i.episode_id for i in r.items]
    assert any(p.startswith("q -> time 'in June' (2023-05-31") for i in r.items for p in i.path)


async def test_the_reply_after_a_strong_hit_joins_as_its_neighbour(memory, chat, monkeypatch):
    question = "Did the pottery piece get finished?"
    r = await memory.recall(chat, question, k=3)
    got = [i.episode_id for i in r.items]
    # the answer, then the turn that asked (a turn that only asks holds no fact: question.asks_only)
    assert got[:2] == ["D2:4", "D2:3"]
    reply = next(i for i in r.items if i.episode_id == "D2:4")
    assert "turn after 'D2:3' in its session" in reply.path
    # without the neighbour step the reply is only as near in meaning as it is: not first
    assert (await ids(memory, chat, question, 3, monkeypatch, neighbours=0.0, near_neighbours=0.0))[0] != "D2:4"


async def test_a_neighbour_brings_the_facts_it_derived(memory, chat):
    await memory.write_fact(chat, FactInput(subject="Caroline", predicate="owns_device", object="a blue fish vase",
                                            agent="reader", source="D2:4"))
    r = await memory.recall(chat, "Did the pottery piece get finished?", k=3)
    assert "D2:4" in [i.episode_id for i in r.items]
    assert [(f.subject, f.predicate, f.object) for f in r.facts] == [("Caroline", "owns_device", "a blue fish vase")]


async def neighbours_of(graph_client, memory, chat, turn: str, reach: int = 1) -> list[tuple[str, str, str]]:
    """The neighbours statement seeded with one turn: (id, side, seed) of its neighbours, in the
    order they rank."""
    v = wire_vector((await memory.embedder.aembed(["any question"]))[0])
    rows = await graph_client.run(chat, q.NEIGHBOURS_IN_FULL, {
        "v": v, "pre": [turn], "seeds": [turn], "reach": reach, "subject": None, "limit": 10})
    return [(nid, side, seed) for nid, seed, side in rows[0]["near"]]


async def test_neighbours_follow_arrival_order_when_times_are_equal(graph_client, memory, chat):
    # every turn of D2 has the session's time: before and after are the order of arrival, the reply first
    assert await neighbours_of(graph_client, memory, chat, "D2:3") == [("D2:4", "after", "D2:3"),
                                                                       ("D2:2", "before", "D2:3")]
    assert await neighbours_of(graph_client, memory, chat, "D2:1") == [("D2:2", "after", "D2:1")]


async def test_neighbours_reach_two_turns_each_side_the_nearer_first(graph_client, memory, chat):
    # the answer to a question is often two turns on (the other speaker asks back in between)
    assert await neighbours_of(graph_client, memory, chat, "D2:3", reach=2) == [
        ("D2:4", "after", "D2:3"), ("D2:2", "before", "D2:3"), ("D2:5", "after", "D2:3"), ("D2:1", "before", "D2:3")]


async def test_session_filter_holds_for_every_signal(memory, chat):
    r = await memory.recall(chat, "Quillfeather regatta beach in June 2023, Caroline?", k=10, session="D3")
    assert r.items and all(i.session == "D3" for i in r.items)


def test_fusion_weights_ranks():
    a = fusion.Candidate("a", 0.5, ranks=[("vector", 2), ("words", 2)])
    b = fusion.Candidate("b", 0.1, ranks=[("vector", 1)])
    c = fusion.Candidate("c", 0.9, ranks=[("neighbours", 1)])
    d = fusion.Candidate("d", 0.9, ranks=[("speakers", 1)])
    order = [x.id for x in sorted([c, b, a, d], key=fusion.order)]
    assert order == ["a", "b", "c", "d"] or order == ["a", "b", "d", "c"]
    w = recall_mod.WEIGHTS
    assert a.fused == pytest.approx((w["vector"] + w["words"]) / (tuning.RRF_K + 2))
    assert b.fused > c.fused  # a neighbour's first is worth less than meaning's first
    assert b.fused == pytest.approx(d.fused)  # who said it weighs as much as meaning (bench.locomo's dev half)


def test_fulltext_query_is_plain_words():
    assert recall_mod.fulltext_query('What did "Caroline" say about C++ -foo | @bar (in May)?',
                                     drop={"caroline"}) == "foo | bar | may"
    assert recall_mod.fulltext_query("what is it?") is None
    assert recall_mod.without_words("When did Caroline's sister visit, Caroline?", {"caroline"}) == \
        "When did sister visit,"


async def test_hybrid_reads_start_from_indexes(graph_client, tenant):
    v = [0.0] * 384
    plans = {
        "words": (q.EPISODES_BY_WORDS, {"ft": "a", "session": None, "n": 5, "v": v, "words_scan": 10}),
        "names": (q.NAMES, {"keys": ["a"], "speaker_keys": ["a"]}),
        "of_speakers": (q.EPISODES_OF_SPEAKERS, {"keys": ["a"], "session": None, "v": v, "n": 5, "speaker_cap": 5,
                                                 "cap_named": 5}),
        "windows": (q.EPISODES_IN_WINDOWS, {"windows": [[0, 10]], "session": None, "v": v, "n": 5, "time_scan": 5,
                                            "said_span": 10}),
        "dated": (q.EPISODES_DATED, {"keys": ["a"], "session": None, "v": v, "n": 5}),
        "joined": (q.EPISODES_JOINED, {"uids": ["a"], "join_uids": ["a"], "session": None, "v": v, "n": 5,
                                       "per_entity": 5, "cap": 5}),
        "distinct": (q.EPISODES_DISTINCT, {"v": v, "dv": v, "n": 5}),
        "spoken_then": (q.EPISODES_SPOKEN_THEN, {"keys": ["a"], "windows": [[0, 10]], "session": None, "v": v,
                                                 "n": 5, "speaker_cap": 5}),
        "community": (q.EPISODES_OF_COMMUNITY, {"uids": ["a"], "session": None, "v": v, "n": 5, "per_community": 5,
                                                "community_cap": 5}),
        "latest": (q.LATEST, {"session": None}),
        "terms": (q.TERMS_FOUND, {"v": v, "terms": ["a"], "df_scan": 5}),
        "signals": (q.signals(("vector", "distinct", "entities", "joined", "community", "speakers", "time",
                               "spoken_then", "dated", "words")), {
            "v": v, "dv": v, "n": 5, "session": None, "uids": ["a"], "entity_uids": ["a"], "join_uids": ["a"], "cap": 5, "keys": ["a"], "speaker_cap": 5,
            "cap_named": 5, "windows": [[0, 10]], "time_scan": 5, "said_span": 10, "ft": "a", "words_scan": 5,
            "per_entity": 5, "per_community": 5, "community_cap": 5}),
        "neighbours": (q.NEIGHBOURS_IN_FULL, {"v": v, "pre": ["a"], "seeds": ["a"], "reach": 2, "subject": None,
                                              "limit": 5}),
    }
    for name, (query, params) in plans.items():
        plan = await graph_client.explain(tenant, query, params)
        assert "Label Scan" not in plan and "All Node Scan" not in plan, (name, plan)
        assert "Node By Index Scan" in plan or "ProcedureCall" in plan, (name, plan)
    assert "Node By Index Scan | (ep:Episode)" in await graph_client.explain(
        tenant, q.EPISODES_IN_WINDOWS, plans["windows"][1])
    # the tenant's turns: the label's count, no scan (alone: inside a UNION it would scan)
    assert "Scan" not in await graph_client.explain(tenant, q.TURNS, None)
