"""The consumer survives its Redis (FalkorDB) server restarting, with or without its data."""

from __future__ import annotations

import asyncio
import shutil

from relay_graph.runtime.errors import Unavailable
from relay_graph.runtime.streams import STREAM_TICKETS, StreamApp, Publisher, TicketChanged, connect

from .conftest import FAST, all_acknowledged, eventually, running


def ticket(tenant: str, ref: str) -> TicketChanged:
    return TicketChanged(tenant=tenant, ticket_id=f"T-{ref}", version=1, change="opened", actor="test")


async def publish(pub: Publisher, notification) -> str:
    """Publish, retrying while the server is still coming back (the caller's job, by design)."""
    async def attempt():
        try:
            return await pub.publish(notification)
        except Unavailable:
            return None

    return await eventually(attempt, interval=0.1, what="publish after restart")


async def test_consumer_resumes_after_a_restart_and_nothing_is_lost(own_server, tenant):
    redis = connect(host=own_server.host, port=own_server.port)
    handled: list[str] = []
    failed_once: set[str] = set()

    async def handler(n):
        if n.id == "T-pending" and n.id not in failed_once:
            failed_once.add(n.id)
            raise RuntimeError("not yet")
        handled.append(n.id)

    consumer = StreamApp(redis, group="resolver", handlers={TicketChanged: handler}, settings=FAST)
    pub = Publisher(redis)
    try:
        async with running(consumer):
            for i in range(3):
                await pub.publish(ticket(tenant, str(i)))
            await eventually(lambda: len(handled) == 3, what="first three handled")
            await pub.publish(ticket(tenant, "pending"))
            await eventually(lambda: failed_once, what="one entry left pending")

            await asyncio.to_thread(own_server.stop)  # SIGTERM: the AOF is flushed
            await eventually(lambda: consumer.stats.reconnects > 0, what="consumer noticed")
            await asyncio.to_thread(own_server.start)  # same port, same data directory

            for i in range(3, 6):
                await publish(pub, ticket(tenant, str(i)))
            await eventually(lambda: len(handled) == 7, what="all handled after the restart")
            await all_acknowledged(redis, STREAM_TICKETS, "resolver")
        # Acknowledged entries stayed acknowledged (none came back), the pending one survived.
        assert sorted(handled) == sorted(["T-0", "T-1", "T-2", "T-pending", "T-3", "T-4", "T-5"])
        assert consumer.stats.groups_recreated == 0
    finally:
        await redis.aclose()


async def test_group_is_recreated_when_the_server_lost_its_data(own_server, tenant):
    redis = connect(host=own_server.host, port=own_server.port)
    handled: list[str] = []

    async def handler(n):
        handled.append(n.id)

    consumer = StreamApp(redis, group="resolver", handlers={TicketChanged: handler}, settings=FAST)
    pub = Publisher(redis)
    try:
        async with running(consumer):
            await pub.publish(ticket(tenant, "before"))
            await eventually(lambda: handled == ["T-before"], what="handled before")

            await asyncio.to_thread(own_server.stop)
            shutil.rmtree(own_server.data_dir)  # the data is gone: no stream, no group
            await asyncio.to_thread(own_server.start)

            await publish(pub, ticket(tenant, "after"))
            await eventually(lambda: "T-after" in handled, what="handled after data loss")
        assert consumer.stats.groups_recreated >= 1
        assert handled == ["T-before", "T-after"]
    finally:
        await redis.aclose()
