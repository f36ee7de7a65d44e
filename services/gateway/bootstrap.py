"""Composition root of the gateway: the process context every process runs on
(relay_graph.usecases.context.Deps: the memory, the streams' Redis and publisher, the outbox, the
clock), with the gateway's HTTP-only part on it (deps.Http: auth, the limiters, the limits store,
readiness, the live feed). Nothing connects here: the memory opens on first need, so a gateway
started before FalkorDB (or cut off from it) serves /healthz and answers 503 elsewhere until the
server is back (/readyz says which check fails). Tests pass any part in."""

from __future__ import annotations

import asyncio
from typing import Sequence

import redis.asyncio as aioredis

from relay_graph.memory.facade import Memory
from relay_graph.runtime.cluster import is_cluster
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import Unavailable
from relay_graph.runtime.streams import BrokerPublisher, Publisher, connect
from relay_graph.usecases.context import Deps, make_deps

from .auth import Authenticator, TenantKeys
from .deps import Http
from .feed import Feed
from .limits import AddressLimiter, Limits, LimitStore, RateLimiter
from .readiness import ReadinessCheck, falkordb_check, full_readiness
from .settings import GatewaySettings

SERVICE = "gateway"


class _Registry:
    """The tenant registry on the memory's pool, made again when the pool is (after `aclose`)."""

    def __init__(self, deps: Deps, given: TenantKeys | None) -> None:
        self.deps, self.given, self.keys = deps, given, None

    async def __call__(self) -> TenantKeys:
        if self.given is not None:
            return self.given
        redis = (await self.deps.open()).client.redis
        if self.keys is None or self.keys.redis is not redis:
            self.keys = TenantKeys(redis)
        return self.keys


class _Operations:
    """The memory the admin routes work through: on a connection of its own, signed in as the
    operations user (GRAPH.COPY, DEL of a graph, GRAPH.MEMORY ...: what the connection of every
    other route may not run), opened on first need; the process's memory when no such user is set."""

    def __init__(self, deps: Deps, settings: GatewaySettings) -> None:
        self.deps, self.settings, self.memory = deps, settings.operations_settings(), None
        self._lock = asyncio.Lock()

    async def __call__(self) -> Memory:
        if self.settings is None:
            return await self.deps.open()
        async with self._lock:
            if self.memory is None:
                try:  # building the client does a blocking round trip
                    client = await asyncio.to_thread(GraphClient, self.settings)
                except Exception as exc:  # refused, unreachable, loading, bad password ...
                    raise Unavailable("FalkorDB is not answering the operations connection; retry shortly") from exc
                self.memory = Memory(client, self.deps.embedder)
        return self.memory

    async def aclose(self) -> None:
        if self.memory is not None:
            memory, self.memory = self.memory, None
            await memory.client.close()


def bootstrap(
    settings: GatewaySettings | None = None,
    *,
    memory: Memory | None = None,
    redis: aioredis.Redis | None = None,
    keys: TenantKeys | None = None,
    limiter: RateLimiter | None = None,
    address_limiter: RateLimiter | None = None,
    readiness: Sequence[ReadinessCheck] | None = None,
    ready_agents: Sequence[str] | None = None,
) -> Deps:
    """`memory`, `redis` given: the caller owns (and closes) them; otherwise the gateway opens them
    (the memory on first need) and `aclose()` closes them. `readiness`: the checks /readyz runs;
    without it, `ready_agents` given: FalkorDB, the streams and those agents' groups with a live
    replica (what `python -m services.gateway` uses); neither: FalkorDB only. `limiter` given: its
    rate and burst are every tenant's default limits (the settings' otherwise)."""
    settings = settings or GatewaySettings()
    owned_redis = redis is None
    redis = redis if redis is not None else connect(settings)  # connects on use
    feed = Feed(redis, live_queue_size=settings.live_queue_size)
    # The gateway publishes through the broker of FastStream's router. On a cluster an acknowledged
    # announcement must be on a replica of its shard too (WAIT), which FastStream's cluster producer
    # does not do: the streams' own Publisher publishes there, through the same client.
    publisher = Publisher(redis) if is_cluster(redis) else BrokerPublisher(feed.router.broker)
    deps = make_deps(SERVICE, settings, memory=memory, redis=redis, publisher=publisher)
    if owned_redis:
        deps.owns(redis.aclose)
    deps.owns(feed.close)  # after the ones above: the tail stops before its client closes
    if readiness is None:
        readiness = [falkordb_check(deps)] if ready_agents is None else full_readiness(deps, ready_agents)
    registry = _Registry(deps, keys)
    operations = _Operations(deps, settings)
    deps.owns(operations.aclose)
    admin_key = settings.admin_key.get_secret_value() if settings.admin_key else None
    deps.http = Http(
        settings=settings,
        keys=registry,
        auth=Authenticator(registry, admin_key),
        limiter=limiter or RateLimiter(settings.rate_limit_per_second, settings.rate_limit_burst),
        limits=LimitStore(Limits(rate_per_second=limiter.rate if limiter else settings.rate_limit_per_second,
                                 burst=limiter.burst if limiter else settings.rate_limit_burst,
                                 batch_max_facts=settings.batch_max_facts),
                          lambda: _registry_redis(registry)),
        feed=feed,
        address_limiter=address_limiter or AddressLimiter(settings.keyless_rate_per_second, settings.keyless_burst),
        readiness=list(readiness),
        site_limiter=RateLimiter(settings.site_sessions_per_second, settings.site_sessions_burst, name="site_sessions"),
        judge_limiter=RateLimiter(settings.judge_runs_per_second, settings.judge_runs_burst, name="judge_runs"),
        operations=operations,
    )
    deps.owns(deps.http.stop_background)  # closed first: the requests' leftover work uses the clients
    return deps


async def _registry_redis(registry: _Registry):
    return (await registry()).redis
