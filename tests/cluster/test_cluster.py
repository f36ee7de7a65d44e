"""Relay on an embedded cluster of three primaries and three replicas: tenants' graphs spread over
the shards by slot, what changes together shares a slot, the streams runtime works unchanged,
reads may go to replicas, and a canary in one tenant is found from no other on any shard."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timezone

import pytest
from redis.crc import key_slot

from relay_graph.runtime import cluster
from relay_graph.usecases import operations
from relay_graph.memory.facade import Memory
from relay_graph.memory.models import EpisodeInput, FactInput
from relay_graph.runtime.queries import Query
from relay_graph.runtime.streams import STREAMS, FactChanged, Publisher, StreamApp, connect
from relay_graph.runtime.streams.keys import DEAD_LETTER_STREAMS, error_key, seen_key
from relay_graph.runtime.tenancy import ADMIN_PREFIX, REGISTRY_GRAPH, TENANTS_KEY, graph_name
from tests import support

COUNT = Query("test_cluster_count", "MATCH (f:Fact) RETURN count(f) AS n", read_only=True)
NODES = Query("test_cluster_nodes", "MATCH (n) RETURN count(n) AS n", read_only=True)


def _slot(key: str) -> int:
    return key_slot(key.encode())


def test_what_changes_together_shares_a_slot():
    nid = uuid.uuid4()
    for stream in STREAMS:
        # the XACK and its dedupe mark (one MULTI); the dead letter's XADD, XACK and DEL (one MULTI)
        together = {stream, DEAD_LETTER_STREAMS[stream], seen_key("intake", nid, stream), error_key("intake", stream, "1-0")}
        assert len({_slot(k) for k in together}) == 1, together
    # the tenant registry and the key indexes the same script changes; the registry graph with them
    admin = [TENANTS_KEY, ADMIN_PREFIX + "tenant-keys", ADMIN_PREFIX + "agents", ADMIN_PREFIX + "agent-keys", REGISTRY_GRAPH]
    assert len({_slot(k) for k in admin}) == 1
    # a snapshot is copied within the graph's slot (GRAPH.COPY of one key to another)
    assert _slot(operations.snapshot_key("acme", "one")) == _slot(graph_name("acme"))
    # and the streams themselves spread: not all on one shard
    assert len({_slot(s) for s in STREAMS}) > 1


def test_a_seed_list_is_checked():
    assert cluster.parse_seeds(" 127.0.0.1:7000, h:7001 ") == [("127.0.0.1", 7000), ("h", 7001)]
    assert cluster.parse_seeds("") == []
    for bad in ("127.0.0.1", "h:port", ":7000", "h:70000"):
        with pytest.raises(ValueError):
            cluster.parse_seeds(bad)


async def test_thirty_tenants_spread_over_all_three_primaries(cluster3, cluster_client):
    memory = Memory(cluster_client)
    tenants = [f"spread-{i:02d}-{uuid.uuid4().hex[:6]}" for i in range(30)]
    await support.register(cluster_client.redis, *tenants)
    for t in tenants:
        await memory.write_fact(t, FactInput(subject="ann lee", predicate="lives_in", object="oslo", agent="api"))
    where: dict[int, list[str]] = {}
    layout = cluster.nodes(cluster3.addresses[0])
    primaries = [n for n in layout if n["primary"] and not n["failed"]]
    assert len(primaries) == 3
    for node in primaries:
        listed = set(await cluster_client.redis.execute_command(
            "GRAPH.LIST", target_nodes=cluster_client.redis.get_node(node["host"], node["port"])))
        where[node["port"]] = [t for t in tenants if graph_name(t) in listed]
    # every tenant's graph on exactly one primary, and every primary holds some
    assert sorted(t for ts in where.values() for t in ts) == sorted(tenants)
    assert all(where.values()), where
    for t in tenants:  # each answers its own read, routed by its key
        assert (await cluster_client.run(t, COUNT))[0]["n"] == 1


async def test_a_replica_answers_reads_and_has_every_acknowledged_write(replica_client, tenant):
    before = replica_client.replica_reads
    memory = Memory(replica_client)
    for i in range(20):
        await memory.write_fact(tenant, FactInput(subject=f"bo {chr(97 + i)}", predicate="lives_in", object="pune", agent="api"))
        # the write waited for the replica (WAIT), so the replica's answer already has it
        assert (await replica_client.run(tenant, COUNT))[0]["n"] == i + 1
    assert replica_client.replica_reads >= before + 20
    assert replica_client.unreplicated == 0


async def test_snapshot_and_restore_stay_in_the_tenant_slot(cluster_client, tenant):
    memory = Memory(cluster_client)
    await memory.write_fact(tenant, FactInput(subject="cy dee", predicate="lives_in", object="lima", agent="api"))
    snap = await operations.create_snapshot(cluster_client, tenant, "one")
    assert [s.name for s in await operations.list_snapshots(cluster_client, tenant)] == ["one"]
    await memory.write_fact(tenant, FactInput(subject="cy dee", predicate="email", object="cy@example.com", agent="api"))
    await operations.restore_snapshot(cluster_client, tenant, "one")
    assert (await cluster_client.run(tenant, COUNT))[0]["n"] == 1
    done = await operations.delete_tenant(cluster_client, tenant, tenant)
    # the graph and its snapshot (each in the graph's slot), the registry's entry, the query log (when the
    # client had flushed it yet) and FalkorDB's telemetry (when it had written it): found on every shard
    assert {graph_name(tenant), snap.key, f"{TENANTS_KEY}#{tenant}"} <= set(done.removed)
    assert not [k async for k in cluster_client.redis.scan_iter(match=f"*{tenant}*")]
    assert not await cluster_client.graph_exists(tenant)


FAST = support.FAST.model_copy(update={"max_deliveries": 2})  # a poison entry dead-letters on its second try


async def test_the_streams_runtime_delivers_dedupes_and_dead_letters_on_the_cluster(cluster_settings):
    redis = connect(cluster_settings)
    await redis.delete(FactChanged.stream)
    tenant = "streams-" + uuid.uuid4().hex[:6]
    seen: list[str] = []

    async def handle(n: FactChanged) -> None:
        if n.id == "poison":
            raise ValueError("this one always fails")
        seen.append(n.id)

    app = StreamApp(redis, group="cluster-test", handlers={FactChanged: handle}, settings=FAST)
    task = asyncio.create_task(app.run())
    try:
        await asyncio.wait_for(app.ready.wait(), 30)
        publisher = Publisher(redis)
        twice = FactChanged(tenant=tenant, id="f-twice", version=1, change="created", actor="api")
        for n in [FactChanged(tenant=tenant, id=f"f-{i}", version=1, change="created", actor="api") for i in range(10)]:
            await publisher.publish(n)
        await publisher.publish(twice)
        await publisher.publish(twice)  # the same notification again: handled once
        await publisher.publish_many([FactChanged(tenant=tenant, id=f"m-{i}", version=1, change="created",
                                                  actor="api") for i in range(3)])
        await publisher.publish(FactChanged(tenant=tenant, id="poison", version=1, change="created", actor="api"))
        await support.eventually(lambda: len(seen) >= 14 and app.stats.dead_lettered == 1, timeout=30,
                                 what="every entry handled and the poison dead-lettered")
        assert sorted(seen) == sorted([f"f-{i}" for i in range(10)] + ["f-twice"] + [f"m-{i}" for i in range(3)])
        assert app.stats.duplicates == 1
        dead = await redis.xrange(DEAD_LETTER_STREAMS[FactChanged.stream])
        assert any(b"poison" in fields.get(b"payload", b"") for _, fields in dead)
        pending = await redis.xpending(FactChanged.stream, "cluster-test")
        assert pending["pending"] == 0
    finally:
        app.stop()
        await asyncio.wait_for(task, 30)
        await redis.aclose()


@pytest.mark.model
async def test_a_canary_in_one_tenant_is_found_from_no_other_on_any_shard(cluster3, cluster_client):
    memory = Memory(cluster_client)
    tenants = [f"canary-{i:02d}-{uuid.uuid4().hex[:6]}" for i in range(30)]
    await support.register(cluster_client.redis, *tenants)
    secrets = {t: "canary" + uuid.uuid4().hex[:8] for t in tenants}
    for t in tenants:
        await memory.write_fact(t, FactInput(subject=f"zara {t[7:9]}", predicate="email",
                                             object=f"{secrets[t]}@example.com", agent="api"))
        await memory.write_episodes(t, [EpisodeInput(session="s-1", speaker=f"zara {t[7:9]}", agent="api", at=datetime.now(timezone.utc),
                                                     text=f"my secret word is {secrets[t]}")])
    shards = {cluster_client.redis.nodes_manager.get_node_from_slot(_slot(graph_name(t))).name for t in tenants}
    assert len(shards) == 3  # the canaries sit on every shard
    for t in tenants:
        others = set(secrets.values()) - {secrets[t]}
        found = await memory.recall(t, "what is the secret word?", k=10)
        text = found.model_dump_json()
        assert secrets[t] in text  # its own canary is there to be found
        assert not [s for s in others if s in text], t
        for other in tenants[:5]:  # another tenant's customer by name: unknown here
            if other != t:
                assert await memory.facts(t, f"zara {other[7:9]}") == [] or other[7:9] == t[7:9]
