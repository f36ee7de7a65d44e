"""BrokerPublisher (the gateway's publishes through a FastStream broker) on the real streams: the
entry is FastStream's envelope, with the kind and the publish span's trace context as headers; a
service's StreamApp (delivery middleware and all) handles it, in the order of a session, and drops
a second copy; the live feed's reader opens it too."""

from __future__ import annotations

import asyncio

import pytest
from faststream.redis import RedisBroker
from faststream.redis.parser.binary import BinaryMessageFormatV1
from opentelemetry.sdk.trace import TracerProvider

from relay_graph.runtime.streams import (
    STREAM_TICKETS,
    STREAM_TURNS,
    BrokerPublisher,
    StreamApp,
    TicketChanged,
    TurnReceived,
)
from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port
from relay_graph.runtime.streams import connect
from relay_graph.runtime.streams.wire import from_fields, text_fields

from .conftest import STEADY, eventually, pending_count, running

pytestmark = pytest.mark.falkordb


@pytest.fixture
async def broker(falkordb_server):
    b = RedisBroker(host=falkordb_server.host, port=falkordb_server.port, logger=None)
    yield b
    await b.stop()


async def test_an_envelope_carries_the_kind_and_the_trace_and_reads_as_the_notification(redis, broker, tenant):
    n = TicketChanged(tenant=tenant, ticket_id="T-1", version=2, change="stage", actor="gateway")
    provider = TracerProvider()
    with provider.get_tracer("test").start_as_current_span("request"):
        entry_id = await BrokerPublisher(broker).publish(n)
    [(got_id, fields)] = await redis.xrange(STREAM_TICKETS, entry_id, entry_id)
    assert set(fields) == {b"__data__"}
    body, headers = BinaryMessageFormatV1.parse(fields[b"__data__"])
    assert headers["kind"] == "ticket_changed" and headers["traceparent"].startswith("00-")
    assert from_fields(text_fields(fields)) == n
    many = [TicketChanged(tenant=tenant, ticket_id=f"T-{i}", version=1, change="opened", actor="gateway")
            for i in range(3)]
    with provider.get_tracer("test").start_as_current_span("batch"):
        ids = await BrokerPublisher(broker).publish_many(many)
    assert len(ids) == 3 and ids == sorted(ids)
    # the same envelope as the broker's own publish, each with a correlation id of its own
    entries = [(await redis.xrange(STREAM_TICKETS, i, i))[0][1] for i in ids]
    opened = [BinaryMessageFormatV1.parse(f[b"__data__"]) for f in entries]
    assert all(set(f) == {b"__data__"} for f in entries)
    assert [from_fields(text_fields(f)) for f in entries] == many
    assert all(h["kind"] == "ticket_changed" and h["traceparent"].startswith("00-") for _, h in opened)
    assert len({h["correlation_id"] for _, h in opened}) == 3
    assert set(opened[0][1]) == set(headers)


async def test_a_service_handles_envelopes_in_session_order_once(redis, broker, group, tenant):
    seen: list[int] = []

    async def handler(n):
        await asyncio.sleep(0.01)
        seen.append(n.seq)

    app = StreamApp(redis, group=group, handlers={TurnReceived: handler}, settings=STEADY)
    turns = [TurnReceived(tenant=tenant, episode_id=f"e{i}", seq=i, session="s-1", customer="c") for i in range(1, 6)]
    async with running(app):
        publisher = BrokerPublisher(broker)
        for t in turns:
            await publisher.publish(t)
        await publisher.publish(turns[0])  # a copy (a relay's): dropped by notification id
        # the counts move when a handler returns, the XACK follows it: wait for both
        async def settled():
            return (app.stats.handled == 5 and app.stats.duplicates == 1
                    and await pending_count(redis, STREAM_TURNS, group) == 0)

        await eventually(settled, what="five handled, the copy dropped, and every entry acknowledged")
    assert seen == [1, 2, 3, 4, 5]



async def test_a_publish_after_a_server_restart_goes_through(tmp_path, tenant):
    # its own server, restarted for real: the broker's pooled connections die with it
    server = EmbeddedFalkorDB(tmp_path / "data", free_port(), log_file=tmp_path / "server.log")
    await asyncio.to_thread(server.start)
    broker = RedisBroker(host=server.host, port=server.port, logger=None)
    reader = connect(host=server.host, port=server.port)
    try:
        publisher = BrokerPublisher(broker)
        # more than one connection in the broker's pool, as a busy gateway has
        await asyncio.gather(*(publisher.publish(TicketChanged(tenant=tenant, ticket_id=f"T-P{i}", version=1,
                                                               change="opened", actor="gw")) for i in range(4)))
        await asyncio.to_thread(server.stop)
        await asyncio.to_thread(server.start)  # same port, same data
        one = await publisher.publish(TicketChanged(tenant=tenant, ticket_id="T-R1", version=1, change="opened",
                                                    actor="gw"))
        await asyncio.to_thread(server.stop)
        await asyncio.to_thread(server.start)
        many = await publisher.publish_many([TicketChanged(tenant=tenant, ticket_id=f"T-R{i}", version=1,
                                                           change="opened", actor="gw") for i in (2, 3)])
        got = {from_fields(text_fields(f)).id for _, f in await reader.xrange(STREAM_TICKETS, one, "+")}
        assert {"T-R1", "T-R2", "T-R3"} <= got and len(many) == 2
    finally:
        await reader.aclose()
        await broker.stop()
        await asyncio.to_thread(server.stop)
