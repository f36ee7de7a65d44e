"""Retention run by its agent: a real netops process (`python -m services.netops`) compacts the old
episodes of a tenant with `retention_days` set, on its own, and leaves a tenant without it alone;
on the same maintenance loop it computes every tenant's entity communities; it still stops cleanly."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest

from relay_graph.memory import episodes, facts, retention
from relay_graph.memory.models import EpisodeInput, FactInput
from relay_graph.runtime.queries import Query

from tests.support import register, wipe_stream_keys

from .conftest import eventually
from .processes import Desk

pytestmark = pytest.mark.processes


async def episode_count(client, tenant) -> int:
    return (await client.run(tenant, Query("test_retention", "MATCH (e:Episode) RETURN count(e) AS n", True)))[0]["n"]


async def seed(client, embedder, tenant) -> None:
    now = datetime.now(timezone.utc)
    items = [EpisodeInput(session=f"s-{i}", speaker="Asha Verma", customer="Asha Verma", id=f"ep-{i}",
                          text=f"I moved to Pune, note {i}", at=now - timedelta(days=days))
             for i, days in enumerate([200, 100, 1])]
    await episodes.write_episodes(client, embedder, tenant, items)
    await facts.write_fact(client, tenant, FactInput(subject="Asha Verma", predicate="lives_in", object="Pune",
                                                     agent="intake", source="ep-0"))


async def test_netops_compacts_the_old_episodes_of_tenants_that_ask_for_it(
        falkordb_server, graph_settings, graph_client, embedder, stream_redis, tmp_path):
    kept, compacted = f"t-{uuid.uuid4().hex[:10]}", f"t-{uuid.uuid4().hex[:10]}"
    await register(graph_client.redis, kept, compacted)
    await seed(graph_client, embedder, kept)
    await seed(graph_client, embedder, compacted)
    await retention.set_retention(graph_client, compacted, 30)
    for t in (kept, compacted):  # a neighbour in Pune: an entity graph with a community to find
        await facts.write_fact(graph_client, t, FactInput(subject="Ravi Iyer", predicate="lives_in", object="Pune",
                                                          agent="intake"))

    await wipe_stream_keys(stream_redis)
    procs = Desk(falkordb_server.host, falkordb_server.port, graph_settings.model_dir, tmp_path)
    procs.start("netops", 1, {"RELAY_RETENTION_EVERY_S": "0.2", "RELAY_COMMUNITIES_EVERY_S": "0.2"})
    try:
        await procs.ready(stream_redis)
        await eventually(lambda: _is(graph_client, compacted, 1), timeout=30, what="the old episodes compacted")
        # Asha Verma and Ravi Iyer -LIVES_IN-> Pune: one community, in both tenants
        for t in (kept, compacted):
            await eventually(lambda t=t: _communities(graph_client, t), timeout=30, what=f"{t}'s communities")
    finally:
        codes = procs.stop()
    assert set(codes.values()) == {0}, procs.logs()
    assert await episode_count(graph_client, kept) == 3
    (fact,) = await facts.read_facts(graph_client, compacted, "Asha Verma")
    row = (await graph_client.run(compacted, Query("t", "MATCH (f:Fact {fact_id: $id}) RETURN f.source_summary AS s",
                                                   True), {"id": fact.fact_id}))[0]
    assert row["s"] == "Asha Verma: I moved to Pune, note 0"


async def _communities(client, tenant) -> bool:
    rows = await client.run(tenant, Query("t_communities", "MATCH (e:Entity)-[:IN_COMMUNITY]->(c:Community) "
                                          "RETURN c.size AS size, count(e) AS members", True))
    return len(rows) == 1 and rows[0]["size"] == rows[0]["members"] >= 2


async def _is(client, tenant, n) -> bool:
    return await episode_count(client, tenant) == n
