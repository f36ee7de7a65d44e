"""Fixtures for the streams runtime: a bytes Redis client on the session's FalkorDB server with
the streams' keys wiped before each test, fast settings, and polling helpers (bounded waits)."""

from __future__ import annotations

import asyncio
import uuid
from contextlib import asynccontextmanager

import pytest

from relay_graph.runtime.streams import connect
from tests import support
from tests.support import wipe_stream_keys

# The shared fast settings, a step quicker: the runtime's own tests reclaim and dead-letter many
# times each, and the heartbeat (a tenth of min_idle) keeps a live replica's entries fresh even
# when the machine is busy.
FAST = support.FAST.model_copy(update={"heartbeat_ms": 100, "reclaim_interval_ms": 50, "block_ms": 50})
# For tests where reclaiming is not the subject: a stalled event loop must not look like a dead replica.
STEADY = FAST.model_copy(update={"min_idle_ms": 10_000})


@pytest.fixture
async def redis(falkordb_server):
    client = connect(host=falkordb_server.host, port=falkordb_server.port)
    await wipe_stream_keys(client)
    yield client
    await client.aclose()


@pytest.fixture
def group() -> str:
    return "g-" + uuid.uuid4().hex[:10]


async def eventually(check, *, timeout: float = 20.0, interval: float = 0.02, what: str = "condition"):
    return await support.eventually(check, timeout=timeout, interval=interval, what=what)


@asynccontextmanager
async def running(*consumers):
    """Run consumers in the background; stop them gracefully on exit and surface crashes."""
    tasks = [asyncio.create_task(c.run()) for c in consumers]
    try:
        await eventually(
            lambda: all(c.ready.is_set() for c in consumers) or any(t.done() for t in tasks),
            what="consumers ready",
        )
        for t in tasks:
            if t.done():
                t.result()
        yield tasks
    finally:
        for c in consumers:
            c.stop()
        results = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 30)
    for r in results:
        if isinstance(r, BaseException):
            raise r


async def pending_count(redis, stream: str, group: str) -> int:
    return int((await redis.xpending(stream, group))["pending"])


async def all_acknowledged(redis, stream: str, group: str) -> None:
    """Wait until nothing is pending (a handler's side effect is visible just before its ack)."""
    async def none_pending():
        return await pending_count(redis, stream, group) == 0

    await eventually(none_pending, what=f"no pending entries in {stream}/{group}")
