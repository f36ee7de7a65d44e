"""bench.tenant_bytes: the statements that take each kind of index away, read from db.indexes, and
a small run end to end: every variant is a copy of the grown tenant with one more part away (its
indexes and vectors really gone, its nodes all there). The bytes are not asserted (that is what the
benchmark is for)."""

from __future__ import annotations

import argparse

import pytest
from rich.console import Console

from bench import tenant_bytes as tb

INDEXES = [["Episode", ["episode_id", "text", "embedding"],
            {"episode_id": ["RANGE"], "text": ["FULLTEXT"], "embedding": ["VECTOR"]}],
           ["Entity", ["uid", "name"], {"uid": ["RANGE"], "name": ["FULLTEXT", "RANGE"]}]]


def test_each_kind_of_index_has_its_drop():
    drops = tb.index_drops(INDEXES)
    assert drops["vector"] == ["DROP VECTOR INDEX FOR (n:Episode) ON (n.embedding)"]
    assert drops["fulltext"] == ["CALL db.idx.fulltext.drop('Entity')", "CALL db.idx.fulltext.drop('Episode')"]
    assert drops["range"] == ["DROP INDEX FOR (n:Episode) ON (n.episode_id)", "DROP INDEX FOR (n:Entity) ON (n.uid)",
                              "DROP INDEX FOR (n:Entity) ON (n.name)"]
    steps = tb.variants(drops)
    assert [len(s) for _, s in steps] == [0, 1, 3, 6, 7]  # one more part away each row


@pytest.mark.falkordb
@pytest.mark.model
async def test_a_small_run_copies_the_tenant_and_takes_each_part_away(monkeypatch):
    seen: dict[str, tuple] = {}
    real = tb.copies

    async def copies(redis, source, n, prefix):
        nodes = (await redis.execute_command("GRAPH.RO_QUERY", source, "MATCH (n) RETURN count(n)"))[1][0][0]
        vectors = (await redis.execute_command("GRAPH.RO_QUERY", source,
                                               "MATCH (n) WHERE n.embedding IS NOT NULL RETURN count(n)"))[1][0][0]
        indexed = (await redis.execute_command("GRAPH.RO_QUERY", source, "CALL db.indexes() YIELD types "
                                               "RETURN types"))[1]
        seen[source] = (nodes, vectors, str(indexed))
        return await real(redis, source, n, prefix)

    monkeypatch.setattr(tb, "copies", copies)
    data = await tb.run(argparse.Namespace(graphs=2, desk=False), Console(record=True))
    rows = data["memory_only"]
    assert [r["what"] for r in rows][:2] == ["as it lives (grown: its kept plans too)",
                                             "copied: the same data and indexes (its kept plans away)"]
    assert rows[0]["part_mb"] is None and all(isinstance(r["part_mb"], float) for r in rows[1:])
    first, *_, last = seen.values()
    assert first[0] == last[0] > 0  # every node is in every variant
    assert first[1] > 0 and last[1] == 0  # the last has no vector
    assert "RANGE" in first[2] and "VECTOR" in first[2] and "RANGE" not in last[2] and "FULLTEXT" not in last[2]
