"""The episodic write path against a real FalkorDB and the real embedding model."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from relay_graph.memory import episodes
from relay_graph.runtime.embeddings import Embedder
from relay_graph.runtime.errors import InvalidInput, InvalidValue
from relay_graph.memory.entity_refs import resolve_entity
from relay_graph.memory.models import EpisodeInput
from relay_graph.runtime.queries import Query
from relay_graph.memory.queries import episodes as q
from tests import reads

T0 = datetime(2026, 9, 1, 10, 0, tzinfo=timezone.utc)

COUNTS = Query(
    "test_counts",
    "MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n) AS nodes, count(r) AS edges",
    read_only=True,
)
EPISODE_PROPS = Query(
    "test_episode_props",
    "MATCH (e:Episode) RETURN e.episode_id AS id, e.recorded_at_ms AS rec, e.text AS text ORDER BY id",
    read_only=True,
)
SESSION_PROPS = Query(
    "test_session_props",
    "MATCH (s:Session) RETURN s.session_id AS id, s.first_at_ms AS first, s.last_at_ms AS last ORDER BY id",
    read_only=True,
)


def ep(session: str, text: str, minutes: float = 0, **kw) -> EpisodeInput:
    kw.setdefault("speaker", "alice")
    return EpisodeInput(session=session, text=text, at=T0 + timedelta(minutes=minutes), **kw)


async def snapshot(client, tenant):
    return (await client.run(tenant, COUNTS), await client.run(tenant, EPISODE_PROPS),
            await client.run(tenant, SESSION_PROPS))


async def test_replayed_batch_writes_nothing_new(graph_client, embedder, tenant):
    batch = [
        ep("s1", "My internet keeps dropping every evening.", 0, customer="Alice Rao", kind="CustomerMessage"),
        ep("s1", "Sorry to hear that. Which router do you have?", 1, speaker="intake", agent="intake",
           kind="AgentReply", customer="Alice Rao"),
        ep("s1", "A TP-Link Archer C6.", 2, customer="Alice Rao", id="given-id-1"),
    ]
    ids = await episodes.write_episodes(graph_client, embedder, tenant, batch)
    assert len(set(ids)) == 3 and ids[2] == "given-id-1"
    assert all(i.startswith("ep_") for i in ids[:2])
    before = await snapshot(graph_client, tenant)

    again = await episodes.write_episodes(graph_client, embedder, tenant, batch)
    assert again == ids
    assert await snapshot(graph_client, tenant) == before  # same nodes, edges, timestamps

    # the same turns in a fresh process (new embedder, no cache) still write nothing and embed nothing
    fresh = Embedder(graph_client.settings.model_dir)
    assert await episodes.write_episodes(graph_client, fresh, tenant, batch) == ids
    assert fresh.texts_embedded == 0
    assert await snapshot(graph_client, tenant) == before


async def test_kind_label_writer_and_session(graph_client, embedder, tenant):
    [eid] = await episodes.write_episodes(graph_client, embedder, tenant, [
        ep("s9", "Rebooted the ONT remotely; the line is back up.", speaker="resolver", agent="resolver",
           kind="ToolResult"),
    ])
    got = await reads.get_episode(graph_client, tenant, eid)
    assert set(got["labels"]) == {"Episode", "ToolResult"}
    assert got["session"] == "s9" and got["speaker"] == "resolver" and got["kind"] == "ToolResult"
    rows = await graph_client.run(tenant, Query(
        "t", "MATCH (a:Agent)-[:WROTE]->(e:Episode)-[:IN]->(s:Session) RETURN a.name AS a, s.session_id AS s", True))
    assert rows == [{"a": "resolver", "s": "s9"}]


async def test_mentions_come_from_customer_explicit_names_and_text(graph_client, embedder, tenant):
    await resolve_entity(graph_client, tenant, "Pune", "City", create=True)
    await resolve_entity(graph_client, tenant, "TP-Link Archer C6", "Router", create=True)
    await resolve_entity(graph_client, tenant, "Mumbai", "City", create=True)
    [eid] = await episodes.write_episodes(graph_client, embedder, tenant, [
        ep("s1", "I moved to PUNE last week. My tp-link archer c6 came with me.", customer="alice rao",
           mentions=["Fibre 300 promo"]),
    ])
    got = await reads.get_episode(graph_client, tenant, eid)
    assert set(got["mentions"]) == {
        "Customer|alice rao",            # the customer
        "City|pune",                     # a known entity named in the text (case-insensitive)
        "Router|tp-link archer c6",      # a known three-word name with a dash in it
        "Topic|fibre 300 promo",         # an explicit mention nobody knew: kept as a topic
    }
    assert "City|mumbai" not in got["mentions"]


async def test_speakers_who_spoke_and_who_is_named_and_arrival_order(graph_client, embedder, tenant):
    ids = await episodes.write_episodes(graph_client, embedder, tenant, [
        ep("d1", "Hey Melanie, how was the weekend?", speaker="Caroline", id="D1:1"),
        ep("d1", "Great! I painted a sunset.", speaker="Melanie", id="D1:2"),  # same time as D1:1
    ])
    assert ids == ["D1:1", "D1:2"]
    await episodes.write_episodes(graph_client, embedder, tenant, [
        ep("d1", "Caroline, you should see it.", speaker="Melanie", id="D1:3")])
    rows = await graph_client.run(tenant, Query(
        "t", "MATCH (ep:Episode) OPTIONAL MATCH (ep)-[:SPOKEN_BY]->(s:Speaker) "
             "OPTIONAL MATCH (ep)-[:NAMES]->(n:Speaker) "
             "RETURN ep.episode_id AS id, ep.pos AS pos, s.name AS by, collect(n.key) AS names ORDER BY id", True))
    assert [(r["id"], r["pos"], r["by"], r["names"]) for r in rows] == [
        ("D1:1", 0, "Caroline", ["melanie"]), ("D1:2", 1, "Melanie", []), ("D1:3", 2, "Melanie", ["caroline"])]


def test_word_ngrams_are_entity_keys():
    keys = episodes.word_ngrams("Moved to Pune. Router: TP-Link Archer C6!")
    assert {"pune", "tp-link archer c6", "tp-link", "moved to pune"} <= keys
    assert "to" not in keys  # stopwords alone are never looked up
    assert "pune." not in keys


async def links(graph_client, tenant, customer: str) -> list[tuple[str, list[str]]]:
    """A customer's session chain as (session, the sessions it leads to)."""
    return [(r["session"], r["next"]) for r in await reads.session_chain(graph_client, tenant, customer)]


async def test_sessions_of_a_customer_are_chained_by_first_turn(graph_client, embedder, tenant):
    day = 24 * 60
    await episodes.write_episodes(graph_client, embedder, tenant, [
        ep("b", "second visit", 2 * day, customer="Alice Rao"),
        ep("c", "third visit", 3 * day, customer="Alice Rao"),
        ep("x", "someone else", 2.5 * day, customer="Bob Shah"),
    ])
    assert await links(graph_client, tenant, "alice rao") == [("b", ["c"]), ("c", [])]

    # an older session arriving late slots in before them; links are re-cut, none duplicated
    await episodes.write_episodes(graph_client, embedder, tenant, [ep("a", "first visit", 1 * day,
                                                                       customer="alice rao")])
    assert await links(graph_client, tenant, "Alice Rao") == [("a", ["b"]), ("b", ["c"]), ("c", [])]

    # an earlier turn in session c moves c before b
    await episodes.write_episodes(graph_client, embedder, tenant, [ep("c", "an early note", 1.5 * day,
                                                                       customer="Alice Rao")])
    assert await links(graph_client, tenant, "Alice Rao") == [("a", ["c"]), ("c", ["b"]), ("b", [])]
    assert [r["session"] for r in await reads.session_chain(graph_client, tenant, "bob shah")] == ["x"]


async def test_a_later_turn_keeps_the_chain_and_a_session_claimed_later_joins_it(graph_client, embedder, tenant):
    day = 24 * 60
    await episodes.write_episodes(graph_client, embedder, tenant, [
        ep("a", "first visit", 1 * day, customer="Alice Rao"), ep("c", "third visit", 3 * day, customer="Alice Rao"),
        ep("b", "a note nobody signed", 2 * day)])
    # a later turn of a session already in place: nothing to re-order, nothing changes
    await episodes.write_episodes(graph_client, embedder, tenant, [ep("a", "still there", 4 * day,
                                                                       customer="Alice Rao")])
    assert await links(graph_client, tenant, "Alice Rao") == [("a", ["c"]), ("c", [])]
    # a session written without a customer, later turned to by her: it joins her chain in its place
    await episodes.write_episodes(graph_client, embedder, tenant, [ep("b", "it was me", 5 * day,
                                                                       customer="Alice Rao")])
    assert await links(graph_client, tenant, "Alice Rao") == [("a", ["b"]), ("b", ["c"]), ("c", [])]


async def test_a_text_in_the_graph_is_not_embedded_again_by_another_process(graph_client, embedder, tenant):
    text = "The fibre cable outside my house was cut by road works."
    await episodes.write_episodes(graph_client, embedder, tenant, [ep("s1", text, customer="Carol Das")])

    other = Embedder(graph_client.settings.model_dir)  # another process: its own empty cache
    ids = await episodes.write_episodes(graph_client, other, tenant, [
        ep("s2", text, 60, customer="Carol Das"),             # same text, new episode: vector reused
        ep("s2", "And now the whole street is offline.", 61),   # new text: embedded
        ep("s2", "And now the whole street is offline.", 62),   # the same new text twice: once
    ])
    assert len(set(ids)) == 3
    assert other.texts_embedded == 1

    # the reused vector is the vector: the new episode is the nearest neighbour of its own text
    rows = await graph_client.run(tenant, Query(
        "t", "CALL db.idx.vector.queryNodes('Episode', 'embedding', 2, vecf32($v)) YIELD node, score "
             "RETURN node.episode_id AS id, score", True), {"v": embedder.embed_one(text)})
    assert ids[0] in {r["id"] for r in rows}
    assert all(r["score"] < 1e-4 for r in rows)


async def test_vector_index_answers_k_rows_after_replays(graph_client, embedder, tenant):
    """FalkorDB keeps stale vector-index entries for nodes updated after their vector was set;
    episodes are never updated, so a k-query returns k rows however often a batch is replayed."""
    batch = [ep("s1", f"turn number {i} about the weather", i) for i in range(12)]
    for _ in range(3):
        await episodes.write_episodes(graph_client, embedder, tenant, batch)
    rows = await graph_client.run(tenant, Query(
        "t", "CALL db.idx.vector.queryNodes('Episode', 'embedding', 12, vecf32($v)) YIELD node "
             "RETURN node.episode_id AS id", True), {"v": embedder.embed_one("weather")})
    assert len(rows) == 12 and len({r["id"] for r in rows}) == 12


NEAREST = Query("t", "CALL db.idx.vector.queryNodes('Episode', 'embedding', 20, vecf32($v)) YIELD node "
                     "RETURN node.episode_id AS id", True)
POS = Query("t", "MATCH (e:Episode) RETURN e.episode_id AS id, e.pos AS pos, e.recorded_at_ms AS rec ORDER BY id", True)


async def test_deferred_vectors_are_made_once_later(graph_client, embedder, tenant):
    first = [ep("s1", "the router in the hallway blinks orange", 0, id="a"),
             ep("s1", "a brand new sentence nobody embedded before, about kites", 1, id="b")]
    before = embedder.texts_embedded
    assert await episodes.write_episodes(graph_client, embedder, tenant, first, embed=False) == ["a", "b"]
    assert embedder.texts_embedded == before  # the model was not run
    v = embedder.embed_one("kites")
    assert await graph_client.run(tenant, NEAREST, {"v": v}) == []  # not found by meaning yet
    stored = await graph_client.run(tenant, POS)
    # a replay before the vectors came changes nothing (no second pos, no new timestamp)
    await episodes.write_episodes(graph_client, embedder, tenant, first, embed=False)
    assert await graph_client.run(tenant, POS) == stored

    assert await episodes.embed_missing(graph_client, embedder, tenant, ["b", "a", "no-such-id"]) == 2
    assert await episodes.embed_missing(graph_client, embedder, tenant, ["a", "b"]) == 0  # once only
    assert {r["id"] for r in await graph_client.run(tenant, NEAREST, {"v": v})} == {"a", "b"}
    # a vector set later is indexed like one set at creation: replays and queries keep k rows
    await episodes.write_episodes(graph_client, embedder, tenant, first)
    assert len(await graph_client.run(tenant, NEAREST, {"v": v})) == 2
    assert await graph_client.run(tenant, POS) == stored
    # a text already embedded is reused at once even when vectors are deferred
    await episodes.write_episodes(graph_client, embedder, tenant,
                                  [ep("s2", "the router in the hallway blinks orange", 5, id="c")], embed=False)
    assert "c" in {r["id"] for r in await graph_client.run(tenant, NEAREST, {"v": v})}


async def test_missing_vector_statements_start_from_indexes(graph_client, tenant):
    await graph_client.ensure_schema(tenant)  # a tenant that has written has these indexes (they are made on first use)
    for query, params in ((q.UNEMBEDDED, {"ids": ["a"]}), (q.EMBED_MISSING, {"rows": [{"id": "a", "vec": [0.0] * 384}]})):
        plan = await graph_client.explain(tenant, query, params)
        assert "Node By Index Scan | (ep:Episode)" in plan and "Label Scan" not in plan, plan


@pytest.mark.parametrize("bad, error", [
    ([{"session": "s", "speaker": "a", "text": "   ", "at": T0}], InvalidValue),
    ([{"session": "s", "speaker": "a", "text": "hi\x00there", "at": T0}], InvalidValue),
    ([{"session": "s", "speaker": "a", "text": "hi", "at": T0, "nope": 1}], InvalidInput),
    ([{"session": "s", "speaker": "a", "text": "", "at": T0}], InvalidInput),
    ([{"session": "s", "speaker": "a", "text": "hi", "at": T0, "customer": "!!!"}], InvalidValue),
    ("not a list", InvalidInput),
])
async def test_bad_input_is_refused_and_nothing_is_written(graph_client, embedder, tenant, bad, error):
    good = {"session": "s", "speaker": "a", "text": "a fine turn", "at": T0}
    batch = [good, *bad] if isinstance(bad, list) else bad
    with pytest.raises(error):
        await episodes.write_episodes(graph_client, embedder, tenant, batch)
    assert not await graph_client.graph_exists(tenant)


async def test_oversize_batch_is_refused(graph_client, embedder, tenant):
    batch = [ep("s", f"turn {i}", i) for i in range(episodes.MAX_BATCH + 1)]
    with pytest.raises(InvalidInput) as err:
        await episodes.write_episodes(graph_client, embedder, tenant, batch)
    assert err.value.code == "batch_too_large"
    assert not await graph_client.graph_exists(tenant)


async def test_write_path_starts_from_indexes(graph_client, tenant):
    write = await graph_client.explain(tenant, q.WRITE, {
        "customers": [], "topics": [], "sessions": [], "chain": [], "speakers": [], "episodes": [], "spoken": [],
        "mentions": [], "names": [], "now": 0})
    lookup = await graph_client.explain(tenant, q.LOOKUP, {"text_keys": ["k"], "name_keys": ["n"],
                                                           "session_ids": ["s"]})
    for plan in (write, lookup):
        assert "Label Scan" not in plan and "All Node Scan" not in plan
    for start in ("(s:Session)", "(ep:Episode)", "(c:Entity)", "(m:Entity)", "(ag:Agent)", "(sp:Speaker)"):
        assert f"Node By Index Scan | {start}" in write
    for start in ("(e:Episode)", "(n:Entity)", "(sp:Speaker)", "(s:Session)"):
        assert f"Node By Index Scan | {start}" in lookup


def test_a_vector_parameter_is_sent_as_cypher_text_of_the_same_numbers_a_list_would_be():
    from falkordb.helpers import stringify_param_value

    raw = [0.123456789, -0.5, 1e-7, 0.0, 2.0 / 3.0]
    v = episodes.wire_vector(raw)
    rounded = [round(x, 6) for x in raw]
    text = stringify_param_value(v)
    assert text.startswith("[") and text.endswith("]")
    assert [float(x) for x in text[1:-1].split(",")] == rounded
    assert stringify_param_value({"rows": [{"vec": v}]}) == "{`rows`:[{`vec`:" + text + "}]}"
    assert list(v) == rounded and len(v) == 5 and v == rounded
    assert str(episodes.wire_vector([])) == "[]"


def test_a_time_stored_before_times_were_bounded_reads_back_at_the_bound():
    from relay_graph.memory.facts import from_ms
    from relay_graph.memory.inputs import TIME_MAX, TIME_MIN

    assert from_ms(253_402_300_799_999 + 13 * 3_600_000) == TIME_MAX  # 9999-12-31T23:00-14:00
    assert from_ms(-10**15) == TIME_MIN
