"""Retention on a real FalkorDB: with `retention_days` set, episodes older than that go and the
facts they gave stay with a summary of their source; newer episodes and tenants without the
setting are untouched; the agent's loop applies it to every tenant that has one."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

import pytest

from relay_graph.memory import episodes, facts, retention
from relay_graph.runtime.errors import InvalidInput
from relay_graph.memory.models import EpisodeInput, FactInput
from relay_graph.runtime.queries import Query
from tests.support import eventually
from tests.support import register

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
NOW_MS = int(NOW.timestamp() * 1000)


async def count(client, tenant, cypher) -> int:
    return (await client.run(tenant, Query("test_retention", cypher, True)))[0]["n"]


async def seed(client, embedder, tenant, now: datetime = NOW) -> str:
    old = [EpisodeInput(session="s-old", speaker="Asha Verma", customer="Asha Verma", id=f"old-{i}",
                        text=f"I moved to Pune last month, message {i}", at=now - timedelta(days=90 + i))
           for i in range(3)]
    new = [EpisodeInput(session="s-new", speaker="Asha Verma", customer="Asha Verma", id="new-0",
                        text="my router blinks red since this morning", at=now - timedelta(days=2))]
    await episodes.write_episodes(client, embedder, tenant, old + new)
    await facts.write_fact(client, tenant, FactInput(subject="Asha Verma", predicate="lives_in", object="Pune",
                                                     agent="intake", source="old-0", valid_from=now - timedelta(days=90)))
    return "old-0"


async def test_old_episodes_are_compacted_and_their_facts_keep_a_summary(graph_client, embedder, tenant):
    await seed(graph_client, embedder, tenant)
    untouched = await retention.compact(graph_client, tenant, now_ms=NOW_MS)
    assert (untouched.retention_days, untouched.episodes) == (None, 0)  # no setting: nothing goes
    assert await count(graph_client, tenant, "MATCH (e:Episode) RETURN count(e) AS n") == 4

    assert await retention.set_retention(graph_client, tenant, 30) == 30
    receipt = await retention.compact(graph_client, tenant, now_ms=NOW_MS)
    assert (receipt.episodes, receipt.facts_summarised) == (3, 1)
    assert receipt.cutoff_ms == NOW_MS - 30 * retention.DAY_MS
    left = await graph_client.run(tenant, Query("t", "MATCH (e:Episode) RETURN e.episode_id AS id", True))
    assert [r["id"] for r in left] == ["new-0"]

    (fact,) = await facts.read_facts(graph_client, tenant, "Asha Verma")
    assert (fact.predicate, fact.object) == ("lives_in", "Pune")
    kept = (await graph_client.run(tenant, Query("t", "MATCH (f:Fact {fact_id: $id}) RETURN f.source AS source, "
                                                 "f.source_summary AS summary, f.source_at_ms AS at", True),
                                   {"id": fact.fact_id}))[0]
    assert kept["source"] == "old-0"
    assert kept["summary"] == "Asha Verma: I moved to Pune last month, message 0"
    assert kept["at"] == NOW_MS - 90 * retention.DAY_MS

    again = await retention.compact(graph_client, tenant, now_ms=NOW_MS)
    assert again.episodes == 0  # idempotent


async def test_the_setting_is_checked_and_can_be_cleared(graph_client, tenant):
    for bad in (0, -1, 40_000, 2.5, True):
        with pytest.raises(InvalidInput):
            await retention.set_retention(graph_client, tenant, bad)
    assert await retention.get_retention(graph_client, tenant) is None
    await retention.set_retention(graph_client, tenant, 7)
    assert await retention.get_retention(graph_client, tenant) == 7
    assert await retention.set_retention(graph_client, tenant, None) is None
    assert await retention.get_retention(graph_client, tenant) is None


async def test_the_agent_loop_applies_every_tenants_setting(graph_client, embedder, tenant):
    other = tenant + "-keep"
    await register(graph_client.redis, other)
    wall = datetime.now(timezone.utc)  # the loop compacts by the wall clock
    await seed(graph_client, embedder, tenant, wall)
    await seed(graph_client, embedder, other, wall)
    await retention.set_retention(graph_client, tenant, 30)
    stop = asyncio.Event()
    loop = asyncio.create_task(retention.retention_loop(graph_client, stop, every_s=0.05))
    try:
        async def compacted():
            return await count(graph_client, tenant, "MATCH (e:Episode) RETURN count(e) AS n") == 1

        await eventually(compacted, what="the tenant with a setting compacted")
    finally:
        stop.set()
        await asyncio.wait_for(loop, 5)
    assert await count(graph_client, tenant, "MATCH (e:Episode) RETURN count(e) AS n") == 1
    assert await count(graph_client, other, "MATCH (e:Episode) RETURN count(e) AS n") == 4  # no setting


async def test_compaction_starts_from_the_episode_time_index(graph_client, tenant):
    from relay_graph.memory.queries import retention as q

    plan = await graph_client.explain(tenant, q.COMPACT_EPISODES, {"cutoff": 1, "batch": 10, "chars": 10})
    assert "Node By Index Scan" in plan and "All Node Scan" not in plan, plan
