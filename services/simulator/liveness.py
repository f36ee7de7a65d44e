"""The simulator's heartbeat, so docker compose can tell a live simulator from a hung one
(`python -m relay_graph.runtime.heartbeat simulator --this-host`, as for every agent).

This is the only place the simulator talks to the FalkorDB server, and all it does there is
refresh one key with a TTL (`relay:heartbeat:simulator:<name>`): liveness, not memory. It never
opens a graph, reads a stream or writes anything an agent reads."""

from __future__ import annotations

import asyncio
import logging
import os
import secrets

from relay_graph.runtime.heartbeat import heartbeat_loop, this_host_prefix

from .settings import SERVICE, SimulatorSettings

log = logging.getLogger("services.simulator.liveness")


def beat_name() -> str:
    """Named like an agent's consumer (service, host, pid, random), so `--this-host` finds it."""
    return f"{this_host_prefix(SERVICE)}{os.getpid()}-{secrets.token_hex(3)}"


async def beat_until(settings: SimulatorSettings, stop: asyncio.Event) -> None:
    """Beat until `stop` is set, then remove the key. A broker that is away is logged, not fatal:
    the key then expires, which is the truth."""
    import redis.asyncio as aioredis
    from redis.asyncio.cluster import ClusterNode, RedisCluster

    password = settings.falkordb_password.get_secret_value() if settings.falkordb_password else None
    username = settings.falkordb_user or None
    # The simulator reaches no part of relay_graph (a customer's outside view): the seeds are
    # read here, as relay_graph.runtime.cluster reads them for everyone else.
    seeds = [part.strip().rpartition(":") for part in settings.falkordb_cluster.split(",") if part.strip()]
    if seeds:
        client = RedisCluster(startup_nodes=[ClusterNode(h, int(p)) for h, _, p in seeds], username=username,
                              password=password, require_full_coverage=False, socket_timeout=3, socket_connect_timeout=3)
    else:
        client = aioredis.Redis(host=settings.falkordb_host, port=settings.falkordb_port, username=username,
                                password=password,
                                socket_timeout=3, socket_connect_timeout=3)
    try:
        await heartbeat_loop(client, SERVICE, beat_name(), stop, every_s=settings.heartbeat_every_s,
                             ttl_s=settings.heartbeat_ttl_s)
    finally:
        await client.aclose()
