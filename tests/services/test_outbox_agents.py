"""An agent's announcements through the outbox, on the real FalkorDB and streams: with XADD refused
(a real ACL change on the server) intake still handles a turn to the end (facts, ticket, handoff,
reply written), nothing of it reaches the streams, and the outbox relay publishes every one of its
announcements once the streams take entries again; the turn is not handled a second time."""

from __future__ import annotations

import uuid

import pytest
import redis.asyncio as aioredis

from relay_graph.desk import agent_reads as desk
from relay_graph.runtime.queries import outbox as q
from relay_graph.runtime.streams import STREAM_FACTS, STREAM_REPLIES, STREAM_TICKETS, Publisher
from services.intake.bootstrap import bootstrap
from services.intake.handlers import handle_turn_received
from services.intake.settings import IntakeSettings
from tests import reads

from .conftest import Gateway, _settings, published


@pytest.fixture
async def refusable(stream_redis, falkordb_server):
    """A streams client of its own user, whose XADD the test takes away and gives back."""
    name, password = f"ag-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    await stream_redis.execute_command("ACL", "SETUSER", name, "on", f">{password}", "~*", "&*", "+@all")
    client = aioredis.Redis(host=falkordb_server.host, port=falkordb_server.port, username=name,
                            password=password, decode_responses=False)
    yield client, name
    await client.aclose()
    await stream_redis.execute_command("ACL", "DELUSER", name)


async def test_a_turn_handled_while_the_streams_refuse_entries_is_announced_by_the_relay(
        refusable, graph_settings, memory, graph_client, stream_redis, tenant):
    user, name = refusable
    deps = await bootstrap(_settings(IntakeSettings, graph_settings), memory=memory, redis=user,
                           consumer_name=f"intake-test-{uuid.uuid4().hex[:6]}")
    n = await Gateway(memory, Publisher(stream_redis), tenant).write_turn(
        "Ola Berg", "Hi, I'm Ola Berg. My wifi keeps dropping. My router is a TP-Link Archer C6.")
    await stream_redis.execute_command("ACL", "SETUSER", name, "-xadd")
    try:
        await handle_turn_received(deps, n)  # does not fail: what it announces is kept
    finally:
        await stream_redis.execute_command("ACL", "SETUSER", name, "+xadd")
    tid = desk.ticket_id_for(n.episode_id)
    reply_id = desk.reply_id_for(n.episode_id)
    assert await reads.get_turn(graph_client, tenant, reply_id) is not None
    kept = await graph_client.run(tenant, q.PENDING, {"before_ms": 2**62, "limit": 100})
    assert len(kept) >= 4  # the handoff, the reply and the facts (router, issue)
    assert await published(stream_redis, STREAM_REPLIES, tenant) == []
    assert await published(stream_redis, STREAM_TICKETS, tenant) == []

    assert await deps.outbox.publish_pending(tenant, older_than_s=0) == (len(kept), 0)
    assert [w.id for w in await published(stream_redis, STREAM_REPLIES, tenant)] == [reply_id]
    assert [(c.id, c.change) for c in await published(stream_redis, STREAM_TICKETS, tenant)] == [(tid, "handed_off")]
    facts = {f.fact_id for f in await memory.facts(tenant, "Ola Berg")}
    assert {f.id for f in await published(stream_redis, STREAM_FACTS, tenant)} == facts
    assert await graph_client.run(tenant, q.PENDING, {"before_ms": 2**62, "limit": 100}) == []
    assert await deps.outbox.publish_pending(tenant, older_than_s=0) == (0, 0)
    await deps.aclose()
