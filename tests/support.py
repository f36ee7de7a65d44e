"""Helpers shared by test folders: bounded polling, the streams' fast settings and wiping the
streams' fixed keys."""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import Iterable

from relay_graph.runtime.streams import InvalidNotification, NotificationBase, StreamSettings
from relay_graph.runtime.streams.wire import from_fields, text_fields

# Small timeouts so reclaiming and dead-lettering happen within a test. A folder that needs other
# timings derives its own from this one (FAST.model_copy(update=...)) and says why.
FAST = StreamSettings(
    min_idle_ms=1_000,
    heartbeat_ms=200,
    reclaim_interval_ms=100,
    block_ms=100,
    order_poll_ms=10,
    backoff_initial_ms=20,
    backoff_max_ms=200,
    max_deliveries=3,
    transient_retry_s=0,
)

# For tests where reclaiming is not the subject: a stalled event loop must not look like a dead replica.
STEADY = FAST.model_copy(update={"min_idle_ms": 10_000})

# The streams' fixed keys (shared by every test of a session): entries, dead letters, dedupe marks,
# last errors, the replicas' heartbeats.
STREAM_KEY_PATTERNS = ("relay:stream:*", "relay:dlq:*", "relay:seen:*", "relay:lasterr:*", "relay:heartbeat:*")


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


async def register(redis, *tenants: str) -> None:
    """Registers tenants the way POST /v1/tenants does, without a key (none authenticates): the
    graph client makes a graph only for a registered tenant (db.GraphClient.check_tenant)."""
    from relay_graph.runtime.tenancy import TENANTS_KEY

    for tenant in tenants:
        await redis.hset(TENANTS_KEY, tenant, "test")


# The fixtures of a gateway a test talks to over HTTP (its app in process, or its process).
HTTP_FIXTURES = frozenset({"app", "client", "running_gateway"})


def register_test_tenant(request) -> None:
    """Registers the test's `tenant` where the test's graph is: the session's server, or the
    cluster (a test on both, tests/cluster/test_move.py, has it on the server only). Synchronous: a
    session that runs Playwright's sync API has its own event loop running in this thread."""
    names = set(request.fixturenames)
    if "tenant" not in names or names & HTTP_FIXTURES or request.node.get_closest_marker("creates_tenant"):
        return
    where = ("graph_settings" if {"graph_settings", "falkordb_server"} & names
             else "cluster_settings" if "cluster_settings" in names else None)
    if where is None:
        return
    import redis
    from redis.cluster import ClusterNode, RedisCluster

    from relay_graph.runtime.config import parse_seeds
    from relay_graph.runtime.tenancy import TENANTS_KEY

    settings = request.getfixturevalue(where)
    auth = {"username": settings.falkordb_user or None, "password": settings.falkordb_password or None}
    client = (RedisCluster(startup_nodes=[ClusterNode(h, p) for h, p in parse_seeds(settings.falkordb_cluster)],
                           **auth) if settings.falkordb_cluster
              else redis.Redis(settings.falkordb_host, settings.falkordb_port, **auth))
    try:
        client.hset(TENANTS_KEY, request.getfixturevalue("tenant"), "test")
    finally:
        client.close()


async def wipe_keys(redis, patterns: Iterable[str]) -> None:
    """Delete every key matching the patterns (stream keys are constants shared by all tests)."""
    for pattern in patterns:
        keys = [k async for k in redis.scan_iter(match=pattern, count=500)]
        if keys:
            await redis.delete(*keys)


async def wipe_stream_keys(redis) -> None:
    await wipe_keys(redis, STREAM_KEY_PATTERNS)


async def published(redis, stream: str, tenant: str, **match) -> list[NotificationBase]:
    """Every notification of `tenant` on `stream`, oldest first, optionally only those whose fields
    have the values in `match` (the tenant is unique per test). The streams are shared by the
    session's tests: another test's poison entry is not ours."""
    out = []
    for _id, fields in await redis.xrange(stream):
        try:
            n = from_fields(text_fields(fields))  # our fields, or a FastStream envelope (the gateway's)
        except InvalidNotification:
            continue
        if n.tenant == tenant and all(getattr(n, k) == v for k, v in match.items()):
            out.append(n)
    return out


def start_cluster(data, shards: int, replicas: int):
    """An embedded FalkorDB cluster (relay_graph.runtime.cluster) on free ports, formed and healthy."""
    from relay_graph.runtime.cluster import EmbeddedCluster, free_ports

    return EmbeddedCluster(data, 0, shards=shards, replicas=replicas, log_dir=data / "logs",
                           ports=free_ports(shards * (1 + replicas))).start()


def wait_until(check, *, timeout: float = 30.0, interval: float = 0.05, what: str = "condition"):
    """`eventually` for code without an event loop (processes, threads): poll until `check()` is
    truthy; fail after `timeout`, naming what was awaited (a guard, not a speed assertion)."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout}s")
        time.sleep(interval)


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


def screens_dir():
    """Where the browser tests put their screenshots: `.relay/screens` (untracked), so a test run never
    rewrites a tracked file; `make screens` points RELAY_SCREENS_DIR at docs/screens to refresh the
    pictures the docs show."""
    import os
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    return Path(os.environ.get("RELAY_SCREENS_DIR") or repo / ".relay" / "screens").resolve()


def span_inside(spans):
    """`inside(span, ancestor_id)`: whether a finished span is within the span `ancestor_id`, however
    many spans between (a stage's span, runtime.stages, sits between a request and its publish)."""
    by_id = {s.context.span_id: s for s in spans}

    def inside(span, ancestor: int) -> bool:
        while span is not None and span.parent is not None:
            if span.parent.span_id == ancestor:
                return True
            span = by_id.get(span.parent.span_id)
        return False

    return inside
