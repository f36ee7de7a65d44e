"""Helpers shared by test folders: bounded polling and wiping the streams' fixed keys."""

from __future__ import annotations

import asyncio
import inspect
from typing import Iterable


async def eventually(check, *, timeout: float = 20.0, interval: float = 0.02, what: str = "condition"):
    """Poll until `check()` is truthy; fail after `timeout` (a guard, not a speed assertion)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = check()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return result
        if loop.time() > deadline:
            raise AssertionError(f"{what} not reached within {timeout}s")
        await asyncio.sleep(interval)


async def wipe_keys(redis, patterns: Iterable[str]) -> None:
    """Delete every key matching the patterns (stream keys are constants shared by all tests)."""
    for pattern in patterns:
        keys = [k async for k in redis.scan_iter(match=pattern, count=500)]
        if keys:
            await redis.delete(*keys)


def start_cluster(data, shards: int, replicas: int):
    """An embedded FalkorDB cluster (relay_graph.runtime.cluster) on free ports, formed and healthy."""
    from relay_graph.runtime.cluster import EmbeddedCluster, free_ports

    return EmbeddedCluster(data, 0, shards=shards, replicas=replicas, log_dir=data / "logs",
                           ports=free_ports(shards * (1 + replicas))).start()


def stop_process(proc, timeout_s: float = 30.0) -> None:
    """SIGTERM, then SIGKILL if it has not gone within `timeout_s` (a process a test started)."""
    import signal
    import subprocess

    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
