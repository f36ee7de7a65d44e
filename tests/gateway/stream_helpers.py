"""Helpers of the desk and live-feed tests: what a tenant published on a stream, and the app
served by a real uvicorn on the test's own event loop (for WebSockets)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import AsyncIterator

import uvicorn

from relay_graph.runtime.embedded import free_port
from relay_graph.runtime.streams.wire import from_fields, text_fields
from relay_graph.runtime.streams import NotificationBase, decode
from relay_graph.runtime.streams.notifications import InvalidNotification


async def published(redis, stream: str, tenant: str) -> list[NotificationBase]:
    """Every notification of `tenant` on `stream`, oldest first (the tenant is unique per test).
    The streams are shared by the session's tests: another test's poison entry is not ours."""
    out = []
    for _id, fields in await redis.xrange(stream):
        try:
            n = from_fields(text_fields(fields))  # our fields, or a FastStream envelope (the gateway's)
        except InvalidNotification:
            continue
        if n.tenant == tenant:
            out.append(n)
    return out


@contextlib.asynccontextmanager
async def served(app) -> AsyncIterator[str]:
    """`host:port` of a real uvicorn serving `app` (HTTP and WebSockets) on this event loop."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="off",
                                           log_level="warning", ws="websockets-sansio"))
    task = asyncio.create_task(server.serve())
    try:
        for _ in range(500):  # until it listens (or gave up)
            if server.started or task.done():
                break
            await asyncio.sleep(0.01)
        assert server.started, "uvicorn did not start"
        yield f"127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 30)
