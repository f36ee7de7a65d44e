"""kill -9 of a primary while notifications and fact writes run: the cluster promotes the dead
primary's replica, the clients carry on without a restart (in-flight writes go again on the
promoted replica), every notification published is handled, and every acknowledged fact is on
file afterwards. Prints the time to recover (kill to the first write acknowledged on that shard)."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from redis.crc import key_slot

from relay_graph.runtime import cluster
from relay_graph.runtime.db import GraphClient
import relay_graph.desk.vocabulary  # noqa: F401 (the desk's predicates: the failover writes lives_in)
from relay_graph.memory.facade import Memory
from relay_graph.memory.models import FactInput
from relay_graph.runtime.queries import Query
from relay_graph.runtime.streams import FactChanged, Publisher, StreamApp, StreamSettings, connect
from relay_graph.runtime.tenancy import graph_name
from tests import support
from tests.cluster.conftest import settings_for
from tests.markers import needs

FACT_IDS = Query("test_failover_fact_ids", "MATCH (f:Fact) RETURN f.fact_id AS id", read_only=True)
WRITES, NOTIFICATIONS, WRITERS = 2000, 200, 8
FAST = StreamSettings(min_idle_ms=2_000, heartbeat_ms=300, reclaim_interval_ms=200, block_ms=200,
                      backoff_initial_ms=20, backoff_max_ms=500, max_deliveries=20, transient_retry_s=60)


@pytest.fixture(scope="module")
@needs("cluster", "falkordb")
def doomed_cluster(tmp_path_factory):
    """A 3+3 cluster of its own: this module kills one of its primaries."""
    c = support.start_cluster(tmp_path_factory.mktemp("failover"), 3, 1)
    yield c
    c.stop()


def _tenants_on_every_shard(c, per_shard: int = 2) -> tuple[list[str], dict[str, int]]:
    """Tenant ids, `per_shard` on each primary, and the port of the primary each lives on."""
    ranges = {(lo, hi): node.port for (lo, hi), node in zip(cluster.slot_ranges(3), c.nodes[:3])}
    owner, chosen = {}, {port: [] for port in ranges.values()}
    while any(len(v) < per_shard for v in chosen.values()):
        t = "fo-" + uuid.uuid4().hex[:8]
        slot = key_slot(graph_name(t).encode())
        port = next(p for (lo, hi), p in ranges.items() if lo <= slot <= hi)
        if len(chosen[port]) < per_shard:
            chosen[port].append(t)
            owner[t] = port
    return [t for ts in chosen.values() for t in ts], owner


async def test_a_primary_killed_under_load_is_failed_over_and_nothing_acknowledged_is_lost(doomed_cluster, capsys):
    c = doomed_cluster
    tenants, owner = _tenants_on_every_shard(c)
    victim = c.nodes[0]  # the primary of slots 0-5460
    doomed = [t for t in tenants if owner[t] == victim.port]
    settings = settings_for(c)
    client = GraphClient(settings)
    memory = Memory(client)
    redis = connect(settings)
    acked: dict[str, set[str]] = {t: set() for t in tenants}
    handled: set[str] = set()
    published: set[str] = set()
    killed_at: float | None = None
    recovered_at: float | None = None

    async def on_fact(n: FactChanged) -> None:
        handled.add(n.id)

    app = StreamApp(redis, group="failover", handlers={FactChanged: on_fact}, settings=FAST)
    consumer = asyncio.create_task(app.run())
    await asyncio.wait_for(app.ready.wait(), 30)
    publisher = Publisher(redis)
    counter = iter(range(WRITES))

    async def writer() -> None:
        nonlocal recovered_at
        for n in counter:
            t = tenants[n % len(tenants)]
            started = time.monotonic()
            result = await memory.write_fact(t, FactInput(subject=f"cust {n}", predicate="lives_in",
                                                          object="oslo", agent="api"))
            acked[t].add(result.fact_id)
            if killed_at is not None and started > killed_at and recovered_at is None and t in doomed:
                recovered_at = time.monotonic()

    async def notifier() -> None:
        for i in range(NOTIFICATIONS):
            n = FactChanged(tenant=tenants[i % len(tenants)], id=f"n-{i}", version=1, change="created", actor="api")
            await publisher.publish(n)
            published.add(n.id)
            await asyncio.sleep(0.005)

    async def killer() -> None:
        nonlocal killed_at
        await support.eventually(lambda: sum(map(len, acked.values())) >= WRITES // 3, timeout=120,
                                 what="a third of the writes")
        victim.process.kill()  # SIGKILL: no AOF flush, no goodbye to the cluster
        victim.process.wait()
        killed_at = time.monotonic()

    try:
        await asyncio.wait_for(asyncio.gather(killer(), notifier(), *(writer() for _ in range(WRITERS))), 300)
        try:
            await support.eventually(lambda: handled >= published, timeout=90,
                                     what="every published notification handled")
        except AssertionError:
            raise AssertionError(f"not handled: {sorted(published - handled)[:20]} of {len(published)}; "
                                 f"stats {app.stats}; {cluster.nodes(c.addresses[1])}") from None
    finally:
        app.stop()
        await asyncio.wait_for(consumer, 30)
    assert killed_at is not None and recovered_at is not None
    # the dead primary's replica took its slots over
    layout = cluster.nodes(c.addresses[1])
    promoted = [n for n in layout if n["primary"] and not n["failed"] and "0-5460" in n["slots"]]
    assert promoted and promoted[0]["port"] != victim.port
    # every write that was acknowledged is there, on every shard
    for t in tenants:
        present = {r["id"] for r in await client.run(t, FACT_IDS)}
        assert acked[t] <= present, (t, len(acked[t] - present))
    assert sum(map(len, acked.values())) == WRITES
    with capsys.disabled():
        print(f"\nfailover: primary :{victim.port} killed; writes to its tenants acknowledged again after "
              f"{recovered_at - killed_at:.2f}s (a write started after the kill); {WRITES} facts and {NOTIFICATIONS} notifications all acknowledged "
              f"and on file ({client.unreplicated} writes, on the shard without a replica after the promotion, stood on its "
              "primary alone)")
    await client.close()
    await redis.aclose()
