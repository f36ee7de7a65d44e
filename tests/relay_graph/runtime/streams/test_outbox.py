"""The outbox (relay_graph.runtime.outbox) on the real FalkorDB and real streams: an announcement is kept in
the tenant's graph until it is on its stream; with XADD refused (a real ACL change on the server)
it stays kept and a relay pass publishes it once the stream takes entries again, under the same
notification id; a relay pass with nothing marked reads no graph."""

from __future__ import annotations

import functools
import uuid

import pytest
import redis.asyncio as aioredis

from relay_graph.runtime import outbox as ob
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import Unavailable
from relay_graph.runtime.queries import outbox as q
from relay_graph.runtime.streams import STREAM_FACTS, STREAM_TICKETS, FactChanged, Publisher, TicketChanged
from relay_graph.runtime.streams.wire import from_fields, text_fields
from relay_graph.runtime.tenancy import graph_name


@pytest.fixture
async def acl_redis(redis, falkordb_server):
    """A client of a user of its own, whose XADD the test can take away."""
    name, password = f"ob-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    await redis.execute_command("ACL", "SETUSER", name, "on", f">{password}", "~*", "&*", "+@all")
    client = aioredis.Redis(host=falkordb_server.host, port=falkordb_server.port, username=name,
                            password=password, decode_responses=False)
    yield client, name
    await client.aclose()
    await redis.execute_command("ACL", "DELUSER", name)


async def _entries(redis, stream: str, tenant: str) -> list:
    out = []
    for _, fields in await redis.xrange(stream):
        n = from_fields(text_fields(fields))
        if n.tenant == tenant:
            out.append(n)
    return out


async def _kept(client: GraphClient, tenant: str) -> list[dict]:
    return await client.run(tenant, q.PENDING, {"before_ms": 2**62, "limit": 100})


def _box(client, redis, publish_redis=None) -> ob.Outbox:
    return ob.Outbox(client, redis, functools.partial(ob.publish_all, Publisher(publish_redis or redis)))


async def test_an_announcement_is_published_and_leaves_the_outbox(graph_client, redis, tenant):
    await graph_client.run(tenant, q.PENDING, {"before_ms": 0, "limit": 1})  # the tenant's graph exists
    box = _box(graph_client, redis)
    t = TicketChanged(tenant=tenant, id="T-1", version=3, change="stage", actor="resolver")
    f = FactChanged(tenant=tenant, id="f-1", version=0, change="created", actor="intake")
    assert await box.announce(tenant, [t, f]) is True
    assert [n.notification_id for n in await _entries(redis, STREAM_TICKETS, tenant)] == [t.notification_id]
    assert [n.notification_id for n in await _entries(redis, STREAM_FACTS, tenant)] == [f.notification_id]
    assert await redis.zscore(ob.PENDING_TENANTS, tenant) is not None  # marked while it was kept
    # published: taken out by the next write to the tenant (no graph write of its own) ...
    assert len(await _kept(graph_client, tenant)) == 2
    g = FactChanged(tenant=tenant, id="f-2", version=0, change="created", actor="intake")
    assert await box.announce(tenant, [g])
    assert [r["notification_id"] for r in await _kept(graph_client, tenant)] == [str(g.notification_id)]
    # ... or by the relay's flush
    await box.flush()
    assert await _kept(graph_client, tenant) == []
    assert len(await _entries(redis, STREAM_TICKETS, tenant)) == 1  # nothing published twice


async def test_a_refused_publish_is_kept_and_relayed_once_the_stream_takes_entries(graph_client, redis, tenant,
                                                                                  acl_redis):
    user, name = acl_redis
    await redis.delete(ob.PENDING_TENANTS)  # other tests' tenants: their relays' business, not this pass's
    await graph_client.run(tenant, q.PENDING, {"before_ms": 0, "limit": 1})
    box = _box(graph_client, redis, publish_redis=user)
    notes = [TicketChanged(tenant=tenant, id=f"T-{i}", version=i + 1, change="stage", actor="resolver")
             for i in range(3)]
    await redis.execute_command("ACL", "SETUSER", name, "-xadd")
    try:
        assert await box.announce(tenant, notes[:1]) is False  # kept: the handler carries on
        with pytest.raises(Unavailable):
            await box.announce(tenant, notes[1:], strict=True)  # kept too; the caller answers 503
        assert len(await _kept(graph_client, tenant)) == 3
        assert await box.relay_pass(older_than_s=0) == 0  # still refused: nothing lost, still kept
        assert len(await _kept(graph_client, tenant)) == 3
    finally:
        await redis.execute_command("ACL", "SETUSER", name, "+xadd")
    assert await _entries(redis, STREAM_TICKETS, tenant) == []
    assert await box.relay_pass(older_than_s=60) == 0  # too fresh: the process that kept them goes first
    assert await box.relay_pass(older_than_s=0) == 3
    published = await _entries(redis, STREAM_TICKETS, tenant)
    assert sorted(str(n.notification_id) for n in published) == sorted(str(n.notification_id) for n in notes)
    assert await _kept(graph_client, tenant) == []
    assert await box.relay_pass(older_than_s=0) == 0  # published once


async def test_a_relay_pass_reads_only_marked_tenants_and_forgets_old_marks(graph_client, redis, tenant):
    await redis.delete(ob.PENDING_TENANTS)
    box = _box(graph_client, redis)
    graph_client.recent.clear()
    assert await box.relay_pass(older_than_s=0) == 0
    assert list(graph_client.recent) == []  # nothing marked: no graph read at all
    await box.mark(tenant)
    graph_client.recent.clear()
    await box.relay_pass(older_than_s=0)
    assert [r["query"] for r in graph_client.recent if r["tenant"] == tenant] == []  # no graph: not read, not made
    assert not await graph_client.graph_exists(tenant)
    await redis.zadd(ob.PENDING_TENANTS, {tenant: 1})  # marked long ago
    await box.relay_pass(older_than_s=0, keep_s=60)
    assert await redis.zscore(ob.PENDING_TENANTS, tenant) is None


async def test_the_sweep_finds_what_a_lost_mark_left_behind(graph_client, redis, tenant):
    box = _box(graph_client, redis)
    t = TicketChanged(tenant=tenant, id="T-9", version=1, change="opened", actor="intake")
    await graph_client.run(tenant, q.KEEP, {"at_ms": 1, "done": [], "items": [
        {"notification_id": str(t.notification_id), "payload": t.model_dump_json()}]})
    await redis.delete(ob.PENDING_TENANTS)
    assert await box.relay_pass(older_than_s=0) == 0
    assert await box.relay_pass(older_than_s=0, sweep=True, sweep_batch=1_000_000) >= 1
    assert [n.notification_id for n in await _entries(redis, STREAM_TICKETS, tenant)] == [t.notification_id]
    assert await redis.exists(graph_name(tenant))


async def test_with_the_outbox_off_nothing_is_kept(graph_client, redis, tenant):
    box = _box(graph_client, redis)
    box.enabled = False
    t = TicketChanged(tenant=tenant, id="T-2", version=1, change="opened", actor="intake")
    assert await box.announce(tenant, [t])
    assert not await graph_client.graph_exists(tenant)  # not even read
    assert [n.notification_id for n in await _entries(redis, STREAM_TICKETS, tenant)] == [t.notification_id]


async def test_a_tenant_leaves_the_relay_as_soon_as_its_outbox_is_empty(graph_client, redis, tenant):
    box = _box(graph_client, redis)
    t = TicketChanged(tenant=tenant, id="T-7", version=1, change="opened", actor="intake")
    assert await box.announce(tenant, [t])
    await box.flush()  # published and taken out: nothing is kept
    assert await redis.zscore(ob.PENDING_TENANTS, tenant) is not None
    await box.relay_pass(older_than_s=0)  # finds the outbox empty: the mark goes at once, no tail
    assert await redis.zscore(ob.PENDING_TENANTS, tenant) is None
    graph_client.recent.clear()
    for _ in range(3):
        await box.relay_pass(older_than_s=0)
    assert [r["query"] for r in graph_client.recent if r["tenant"] == tenant] == []  # idle: never read


async def test_a_mark_made_while_the_relay_looked_stays(graph_client, redis, tenant):
    await graph_client.run(tenant, q.PENDING, {"before_ms": 0, "limit": 1})
    box = _box(graph_client, redis)
    await redis.zadd(ob.PENDING_TENANTS, {tenant: 1000})
    await redis.zadd(ob.PENDING_TENANTS, {tenant: 2000})  # a writer marked it again
    await box._unmark(tenant, 1000)  # what a relay that read the first mark does
    assert await redis.zscore(ob.PENDING_TENANTS, tenant) == 2000
