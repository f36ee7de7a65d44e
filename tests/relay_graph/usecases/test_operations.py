"""Operators' work on a real FalkorDB: snapshot -> change -> restore gives the graph back exactly,
reset / delete / forget leave no trace, and the server's figures are read."""

from __future__ import annotations

import asyncio
import hashlib
import json

import pytest

from relay_graph import lab
from relay_graph.desk.customers import regional_desks as regional_desks
from relay_graph.usecases import operations as ops, simulator_control
from relay_graph.usecases.context import Call
from relay_graph.memory import facts, recall
from relay_graph.runtime.db import GraphClient, telemetry_key
from relay_graph.runtime.errors import AlreadyExists, InvalidInput, NotFound, TenantNotFound
from relay_graph.memory.models import FactInput
from relay_graph.runtime import query_log, tenant_data
from relay_graph.runtime.outbox import PENDING_TENANTS
from relay_graph.runtime.queries import Query
from relay_graph.runtime.tenancy import TENANTS_KEY, TRUTH_PREFIX, graph_name, tenant_registered
from tests import sample_network
from tests.support import register

from tests.relay_graph.desk.test_case_move import CUSTOMER, build_case

NODES = Query("t_ops_nodes", "MATCH (n) RETURN id(n) AS id, labels(n) AS labels, properties(n) AS props",
              read_only=True)
EDGES = Query("t_ops_edges", "MATCH (a)-[r]->(b) RETURN id(a) AS a, type(r) AS type, id(b) AS b, "
              "properties(r) AS props", read_only=True)
INDEXES = Query("t_ops_idx", "CALL db.indexes() YIELD label, properties RETURN label, properties", read_only=True)
CHANGE = Query("t_ops_change", "MATCH (e:Episode) WITH e LIMIT 1 SET e.text = 'changed' "
               "CREATE (:Note {n: 1}) RETURN count(*) AS n")
SLOW = Query("t_ops_slow", "UNWIND range(1, 300000) AS i WITH i WHERE i % 7 = 0 RETURN count(i) AS n")
EVERYTHING = Query("t_ops_all", "MATCH (n) RETURN properties(n) AS props", read_only=True)


async def fingerprint(client, tenant) -> tuple[int, int, str]:
    """Node and edge counts and a hash of every label, type and property (ids included: a copy
    keeps them)."""
    nodes = await client.run(tenant, NODES)
    edges = await client.run(tenant, EDGES)
    text = json.dumps([sorted((n["id"], sorted(n["labels"]), n["props"]) for n in nodes),
                       sorted((e["a"], e["type"], e["b"], e["props"]) for e in edges)], sort_keys=True, default=str)
    return len(nodes), len(edges), hashlib.sha256(text.encode()).hexdigest()


async def graph_keys(client, tenant) -> list[str]:
    keys = [k async for k in client.redis.scan_iter(match=f"*{tenant}*")]
    return sorted(keys + [g for g in await ops.all_graphs(client) if tenant in g])


async def test_snapshot_change_restore_gives_the_graph_back(graph_client, embedder, tenant):
    await build_case(graph_client, embedder, tenant)
    before = await fingerprint(graph_client, tenant)
    assert before[0] > 10 and before[1] > 10
    snap = await ops.create_snapshot(graph_client, tenant, "before-change")
    with pytest.raises(AlreadyExists):
        await ops.create_snapshot(graph_client, tenant, "before-change")
    await graph_client.run(tenant, CHANGE)
    assert await fingerprint(graph_client, tenant) != before
    assert [s.name for s in await ops.list_snapshots(graph_client, tenant)] == ["before-change"]
    await ops.restore_snapshot(graph_client, tenant, "before-change")
    assert await fingerprint(graph_client, tenant) == before
    found = await recall.recall(graph_client, embedder, tenant, "red light on the fibre box", subject=CUSTOMER)
    assert found.items and found.facts  # the restored graph answers through its indexes
    await ops.delete_snapshot(graph_client, tenant, snap.name)
    assert await ops.list_snapshots(graph_client, tenant) == []
    for bad in ("Bad Name", "", "../x", "a" * 64):
        with pytest.raises(InvalidInput):
            await ops.create_snapshot(graph_client, tenant, bad)
    with pytest.raises(NotFound):
        await ops.restore_snapshot(graph_client, tenant, "missing")


async def test_a_restored_graph_is_migrated_again_by_the_process_that_restored_it(graph_client, tenant):
    """The snapshot may predate a migration or an index: the restore forgets what the process knew
    of the graph it replaced."""
    from relay_graph.runtime.queries import schema

    ran: list[str] = []

    async def migrate(run, t):
        ran.append(t)

    one = Query("t_restore_one", "RETURN 1 AS one", read_only=True)
    await graph_client.run(tenant, one)  # a graph this client made: nothing to migrate
    schema.declare_migration("tests.restore.recorder", migrate)
    try:
        await ops.create_snapshot(graph_client, tenant, "old-graph")
        await graph_client.run(tenant, one)
        assert ran == [tenant]  # a package declared more: the graph it knew is migrated once
        await graph_client.run(tenant, one)
        assert ran == [tenant]
        await ops.restore_snapshot(graph_client, tenant, "old-graph")
        assert ran == [tenant, tenant]  # the graph put back is migrated at once, by the restore
        await graph_client.run(tenant, one)
        assert ran == [tenant, tenant]  # and once
    finally:
        schema._migrations.pop("tests.restore.recorder", None)


def index_pairs(rows) -> set[tuple[str, str]]:
    return {(r["label"], p) for r in rows for p in r["properties"]}


async def test_reset_needs_confirmation_keeps_a_snapshot_and_leaves_an_empty_indexed_graph(
        graph_client, embedder, tenant):
    await build_case(graph_client, embedder, tenant)
    before = await fingerprint(graph_client, tenant)
    indexes = index_pairs(await graph_client.run(tenant, INDEXES))
    with pytest.raises(InvalidInput, match="confirm"):
        await ops.reset_tenant(graph_client, tenant, confirm="yes")
    assert await fingerprint(graph_client, tenant) == before  # refused: nothing changed
    snap = await ops.reset_tenant(graph_client, tenant, confirm=tenant)
    assert snap is not None and snap.name.startswith("pre-reset-")
    assert (await fingerprint(graph_client, tenant))[:2] == (0, 0)
    # every declared index at once (a tenant's first statements make only theirs)
    assert index_pairs(await graph_client.run(tenant, INDEXES)) >= indexes
    await ops.restore_snapshot(graph_client, tenant, snap.name)  # the reset can be undone
    assert await fingerprint(graph_client, tenant) == before


async def test_delete_leaves_no_trace(graph_client, embedder, tenant):
    await build_case(graph_client, embedder, tenant)
    await ops.create_snapshot(graph_client, tenant, "one")
    await sample_network.build_sample_network(graph_client, tenant, customers=["Lab Customer"])
    await lab.inject(graph_client, tenant, kind=lab.FaultKind.ROUTER_FROZEN, customer="Lab Customer")  # its truth
    await simulator_control.set_control(Call.of(graph_client, tenant, "test"), running=False, speed=2.0, by="test")
    await graph_client.redis.zadd(PENDING_TENANTS, {tenant: 1})  # the outbox's mark
    operator = "op-" + tenant
    await regional_desks.register_desk(graph_client, tenant, operator, "india")
    with pytest.raises(InvalidInput):
        await ops.delete_tenant(graph_client, tenant, confirm=None)
    await graph_client.shared_log.flush()  # the tenant's query log is on the server
    assert await graph_client.redis.exists(query_log.key(tenant))
    # FalkorDB keeps a telemetry stream of each graph's queries (their parameters too) unless it runs
    # with CMD_INFO off, as Relay starts it (embedded.MODULE_ARGS): one a server with it on wrote.
    await graph_client.redis.xadd(telemetry_key(graph_name(tenant)), {"query": "MATCH (n) RETURN n"})
    done = await ops.delete_tenant(graph_client, tenant, confirm=tenant)
    assert done.registered and done.kept == []
    # (the outbox's mark may already be gone: a relay pass of the session drops an empty tenant's mark;
    # that it is gone after the delete is asserted below)
    assert {graph_name(tenant), TRUTH_PREFIX + tenant, ops.snapshot_key(tenant, "one"), query_log.key(tenant),
            simulator_control.key(tenant), f"{TENANTS_KEY}#{tenant}"} <= set(done.removed)
    assert await graph_keys(graph_client, tenant) == []
    assert not await tenant_registered(graph_client.redis, tenant)
    assert await graph_client.redis.zscore(PENDING_TENANTS, tenant) is None
    assert await regional_desks.region_desk(graph_client, operator, "india") is None  # the region is free again
    stats = await ops.graph_stats(graph_client, tenant)
    assert not stats.exists and stats.nodes == {}
    # Nothing makes the graph again: not a write, not the lab.
    with pytest.raises(TenantNotFound):
        await build_case(graph_client, embedder, tenant)
    with pytest.raises(TenantNotFound):
        await lab.inject(graph_client, tenant, kind=lab.FaultKind.ROUTER_FROZEN, customer="Lab Customer")
    await graph_client.shared_log.flush()
    assert await graph_keys(graph_client, tenant) == []


async def test_a_deleted_tenant_is_refused_by_every_process_after_the_registration_check(graph_settings, graph_client,
                                                                                         embedder, tenant):
    """Another process (its own client) that wrote a moment ago trusts the registration only for
    `tenant_check_s`, which the delete waits out: after the delete it is refused too."""
    other = GraphClient(graph_settings)
    try:
        await build_case(other, embedder, tenant)
        await ops.delete_tenant(graph_client, tenant, confirm=tenant)
        with pytest.raises(TenantNotFound):
            await other.run(tenant, CHANGE)
        assert not await graph_client.graph_exists(tenant)
    finally:
        await other.close()


async def test_delete_keeps_the_snapshots_when_asked_and_only_a_restore_brings_them_back(graph_client, embedder,
                                                                                       stream_redis, tenant):
    await build_case(graph_client, embedder, tenant)
    before = await fingerprint(graph_client, tenant)
    await ops.create_snapshot(graph_client, tenant, "keep-me")
    done = await ops.delete_tenant(graph_client, tenant, confirm=tenant, keep_snapshots=True)
    assert done.kept == ["snapshots"] and ops.snapshot_key(tenant, "keep-me") not in done.removed
    assert not await graph_client.graph_exists(tenant)
    assert [s.name for s in await ops.list_snapshots(graph_client, tenant)] == ["keep-me"]
    with pytest.raises(TenantNotFound):  # a kept snapshot is no tenant: create it first
        await ops.restore_snapshot(graph_client, tenant, "keep-me")
    assert not await graph_client.graph_exists(tenant)
    await register(stream_redis, tenant)  # created again under the name: an empty tenant ...
    assert (await fingerprint(graph_client, tenant))[:2] == (0, 0)
    await ops.restore_snapshot(graph_client, tenant, "keep-me")  # ... until the operator restores
    assert await fingerprint(graph_client, tenant) == before
    await ops.delete_tenant(graph_client, tenant, confirm=tenant)  # not kept this time
    assert await ops.list_snapshots(graph_client, tenant) == []


async def test_every_declared_kind_is_removed_and_an_unknown_keep_is_refused(graph_client, tenant):
    with pytest.raises(ValueError, match="optional"):
        await tenant_data.remove_all(graph_client.redis, tenant, keep=["graph"])
    assert {"graph", "graph telemetry", "lab truth", "snapshots", "query log", "simulator control",
            "outbox pending mark", "tenant key", "regional desk"} <= {d.name for d in tenant_data.declared()}


async def test_forget_removes_everything_about_the_customer_and_nothing_else(graph_client, embedder, tenant):
    await build_case(graph_client, embedder, tenant)
    await facts.write_fact(graph_client, tenant, FactInput(subject="Bilal", agent="intake", predicate="on_plan",
                                                           object="Fiber 300"))  # shared: stays
    other = f"{tenant}-other"  # the same case in another tenant stays whole
    await register(graph_client.redis, other)
    await build_case(graph_client, embedder, other)
    other_before = await fingerprint(graph_client, other)
    await graph_client.shared_log.flush()  # runs whose kept parameters name her are on the server
    assert "asha" in json.dumps([q.params for q in await query_log.read(graph_client.redis, tenant, 200)]).lower()
    receipt = await ops.forget_customer(graph_client, tenant, CUSTOMER)
    assert not await graph_client.redis.exists(query_log.key(tenant))  # the query log went with her
    assert (receipt.episodes, receipt.sessions, receipt.tickets, receipt.entity) == (2, 2, 1, 1)
    assert receipt.facts >= 5 and receipt.slots >= 3 and receipt.ticket_parts >= 1 and receipt.entity_edges >= 1
    assert receipt.named_entities >= 3  # the phone number, Pune, Berlin (the plan is Bilal's too)
    words = ("asha", "verma", "98200", "red light", "relocating", "berlin", "pune")
    left = json.dumps([r["props"] for r in await graph_client.run(tenant, EVERYTHING)], default=str).lower()
    for w in words:
        assert w not in left, w
    found = await recall.recall(graph_client, embedder, tenant, "red light on the fibre box", subject=CUSTOMER)
    assert (found.items, found.facts) == ([], [])
    found = await recall.recall(graph_client, embedder, tenant, "red light on the fibre box")
    assert found.items == []
    again = await ops.forget_customer(graph_client, tenant, CUSTOMER)
    assert again.model_dump(exclude={"customer"}) == dict.fromkeys(again.model_dump(exclude={"customer"}), 0)
    assert await fingerprint(graph_client, other) == other_before
    plan = await facts.read_facts(graph_client, tenant, "Bilal")
    assert [f.object for f in plan] == ["Fiber 300"]


async def test_stats_read_counts_memory_and_slowlog(graph_client, embedder, tenant):
    await build_case(graph_client, embedder, tenant)
    stats = await ops.graph_stats(graph_client, tenant)
    assert stats.exists and stats.nodes["Episode"] == 2 and stats.nodes["Ticket"] == 1
    assert stats.edges["HAS_TICKET"] == 1 and stats.memory_mb is not None and stats.memory_mb >= 0
    await graph_client.run(tenant, SLOW)  # the slowlog keeps only queries slower than its threshold
    stats = await ops.graph_stats(graph_client, tenant)
    assert any("range(1, 300000)" in e["query"] and e["ms"] > 0 for e in stats.slowlog), stats.slowlog
    assert [e["ms"] for e in stats.slowlog] == sorted((e["ms"] for e in stats.slowlog), reverse=True)


async def test_a_snapshot_waits_out_a_background_save_and_says_503_when_it_outlasts_the_wait(graph_client, tenant,
                                                                                            monkeypatch):
    # GRAPH.COPY forks, and a server with a child of its own (a background save) refuses the fork.
    # rdb-key-save-delay slows the save's child down, per key, so it is still running when we copy.
    from redis.exceptions import ResponseError

    from relay_graph.runtime.errors import Unavailable

    await facts.write_fact(graph_client, tenant, FactInput(subject="alice rao", predicate="lives_in",
                                                           object="Pune", agent="ops"))
    redis = graph_client.redis
    keys = max(1, await redis.dbsize())
    await redis.config_set("rdb-key-save-delay", str(int(1_500_000 / keys)))  # microseconds per key: ~1.5 s
    try:
        await redis.bgsave()
        with pytest.raises(ResponseError, match="could not fork"):
            await redis.execute_command("GRAPH.COPY", graph_name(tenant), graph_name(tenant) + "-raw-copy")
        snap = await ops.create_snapshot(graph_client, tenant, "during-a-save")  # waits until the save ends
        assert snap.name == "during-a-save" and await redis.exists(snap.key)

        monkeypatch.setattr(ops, "COPY_PATIENCE_S", 0.2)
        await redis.bgsave()
        with pytest.raises(Unavailable, match="retry shortly"):
            await ops.create_snapshot(graph_client, tenant, "too-long")
        assert not await redis.exists(ops.snapshot_key(tenant, "too-long"))  # nothing half made
    finally:
        await redis.config_set("rdb-key-save-delay", "0")
        while (await redis.info("persistence"))["rdb_bgsave_in_progress"]:
            await asyncio.sleep(0.1)
