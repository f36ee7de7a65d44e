"""Helpers of the desk and live-feed tests: the app served by a real uvicorn on the test's own
event loop (for WebSockets), and what a tenant published on a stream (tests.support.published)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import AsyncIterator

import uvicorn

from relay_graph.runtime.embedded import free_port
from tests.support import published  # noqa: F401 (the gateway's tests import it from here)


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
