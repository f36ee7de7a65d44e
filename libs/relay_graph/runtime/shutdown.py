"""A process stops within its grace period whatever its connections are doing.

After SIGTERM a service stops cleanly (the entry or request in flight finishes, connections
close), each step bounded. What a dead or frozen FalkorDB can still hold up is outside asyncio:
a thread blocked in a synchronous client call (`asyncio.to_thread`), which `asyncio.run` and the
interpreter's exit wait for without a limit. So entry points run their loop with `run` (no
unbounded wait for the executor) and end with `leave` (no wait for such threads, nor for the
interpreter's finalisation), and `arm(seconds)`
starts a daemon timer that ends the
process at the deadline if it is still there: logs flushed, exit code 0, because what it
abandons is safe by design (unacknowledged entries are handled by another replica, an
unanswered request is retried by its client).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading

log = logging.getLogger("relay_graph.runtime.shutdown")

_armed = threading.Event()


def arm(seconds: float, *, code: int = 0) -> None:
    """End the process `seconds` from now unless it ended by itself; only the first call counts."""
    if _armed.is_set():
        return
    _armed.set()

    def fire() -> None:
        log.warning("still stopping after %.1fs (a connection to a dead server?); exiting now", seconds)
        _flush_and_exit(code)

    timer = threading.Timer(max(0.0, seconds), fire)
    timer.daemon = True
    timer.start()


def _flush_and_exit(code: int) -> None:
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - exiting anyway
            pass
    os._exit(code)


def run(coro) -> object:  # type: ignore[no-untyped-def]
    """`asyncio.run` without its unbounded wait for the default executor's threads (a thread in
    a call to a dead server would hold the process); leftover tasks get half a second."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        return loop.run_until_complete(coro)
    finally:
        try:
            tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for t in tasks:
                t.cancel()
            if tasks:
                loop.run_until_complete(asyncio.wait(tasks, timeout=0.5))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            asyncio.set_event_loop(None)
            loop.close()  # shuts the executor down without waiting for its threads


def leave(code: int = 0) -> None:
    """The end of a service process, once it stopped: logs flushed, then out at once. Neither a
    thread still in a call to a dead server nor the interpreter's slow finalisation (the
    embedding model's runtime, thousands of modules) is waited for."""
    _flush_and_exit(code)
