"""Moving a tenant from one server to the 3+3 cluster: graph, snapshots and admin entries go,
are checked, and leave the source; a tenant the target has is refused and nothing changes."""

from __future__ import annotations

import pytest

from relay_graph.usecases import operations
from relay_graph.runtime.errors import AlreadyExists, InvalidInput
from relay_graph.memory.facade import Memory
from relay_graph.memory.models import FactInput
from relay_graph.runtime.tenancy import ADMIN_PREFIX, TENANTS_KEY, graph_name, tenant_registered
from tests.support import register


async def test_a_tenant_moves_from_one_server_to_the_cluster(graph_client, cluster_client, tenant):
    source = Memory(graph_client)
    await source.write_fact(tenant, FactInput(subject="dee ray", predicate="lives_in", object="oslo", agent="api"))
    await operations.create_snapshot(graph_client, tenant, "before")
    await source.write_fact(tenant, FactInput(subject="dee ray", predicate="email", object="dee@example.com", agent="api"))
    r = graph_client.redis
    await r.hset(TENANTS_KEY, tenant, "digest-" + tenant)
    await r.hset(ADMIN_PREFIX + "tenant-keys", "digest-" + tenant, tenant)
    await r.hset(ADMIN_PREFIX + "agents", f"{tenant}/bot", "agent-digest-" + tenant)
    await r.hset(ADMIN_PREFIX + "agent-keys", "agent-digest-" + tenant, f"{tenant}/bot")
    await r.sadd(ADMIN_PREFIX + "site-tenants", tenant)

    with pytest.raises(InvalidInput):
        await operations.move_tenant(graph_client, cluster_client, tenant, "not-the-tenant")
    receipt = await operations.move_tenant(graph_client, cluster_client, tenant, tenant)

    assert receipt.graphs == [graph_name(tenant), operations.snapshot_key(tenant, "before")]
    assert receipt.admin_entries == 5 and receipt.removed_from_source and receipt.nodes > 0
    target = Memory(cluster_client)
    assert {f.predicate for f in await target.facts(tenant, "dee ray")} == {"lives_in", "email"}
    assert [s.name for s in await operations.list_snapshots(cluster_client, tenant)] == ["before"]
    c = cluster_client.redis
    assert await tenant_registered(c, tenant)
    assert await c.hget(ADMIN_PREFIX + "tenant-keys", "digest-" + tenant) == tenant
    assert await c.hget(ADMIN_PREFIX + "agent-keys", "agent-digest-" + tenant) == f"{tenant}/bot"
    assert await c.sismember(ADMIN_PREFIX + "site-tenants", tenant)
    # gone from the source
    assert not await graph_client.graph_exists(tenant) and not await tenant_registered(r, tenant)
    assert await operations.list_snapshots(graph_client, tenant) == []
    assert await r.hget(ADMIN_PREFIX + "agents", f"{tenant}/bot") is None

    # back again is refused while the target (now the source) still has it... and moving it twice too
    await register(r, tenant)  # made again at the source
    await source.write_fact(tenant, FactInput(subject="eve", predicate="lives_in", object="rome", agent="api"))
    with pytest.raises(AlreadyExists):
        await operations.move_tenant(graph_client, cluster_client, tenant, tenant)
    assert await graph_client.graph_exists(tenant)  # nothing changed at the source


async def test_relay_move_tenant_moves_one_from_the_command_line(graph_client, cluster_client, cluster3, tenant, tmp_path):
    import asyncio
    import json
    import os
    import sys

    await Memory(graph_client).write_fact(tenant, FactInput(subject="fay", predicate="lives_in", object="lima", agent="api"))
    server = graph_client.pool.connection_kwargs
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("RELAY_")},
           "RELAY_FALKORDB_HOST": server["host"], "RELAY_FALKORDB_PORT": str(server["port"]),
           "RELAY_DATA_DIR": str(tmp_path)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "relay_cli.main", "move-tenant", tenant, "--to", cluster3.seeds, "--cluster",
        "--confirm", tenant, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    receipt = json.loads(out)
    assert receipt["tenant"] == tenant and receipt["removed_from_source"] is True
    assert [f.object for f in await Memory(cluster_client).facts(tenant, "fay")] == ["lima"]
    assert not await graph_client.graph_exists(tenant)
