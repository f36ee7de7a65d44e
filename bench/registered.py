"""Benchmarks that write a graph straight through the library, not over HTTP, register their
tenants first, as POST /v1/tenants does (without a key): the graph client makes a graph only for a
registered tenant (relay_graph.runtime.db.GraphClient.check_tenant)."""

from __future__ import annotations

from relay_graph.runtime.tenancy import TENANTS_KEY, validate_tenant


async def register(redis, *tenants: str) -> None:
    for tenant in tenants:
        await redis.hset(TENANTS_KEY, validate_tenant(tenant), "bench")
