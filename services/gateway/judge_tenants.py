"""Judge mode's throwaway tenants are throwaway: each is noted with its expiry when Judge mode makes
it, and a sweep in every gateway replica deletes the expired ones (graph, snapshots, key, site) the
way the admin's tenant delete does. Two replicas sweeping at once delete the same tenant twice;
the second finds nothing left and only clears the note."""

from __future__ import annotations

import asyncio
import logging
import time

from relay_graph.usecases import operations

from relay_graph.usecases.context import Deps

from .customer_sessions import CustomerSessions
from relay_graph.runtime import times

log = logging.getLogger("relay.gateway")

# tenant -> the time (ms) after which it is deleted
JUDGE_TENANTS_KEY = "relay:judge:tenants"


async def note(redis, tenant: str, ttl_s: float) -> None:
    await redis.zadd(JUDGE_TENANTS_KEY, {tenant: int((time.time() + ttl_s) * 1000)})


async def sweep(deps: Deps, now_ms: int | None = None) -> list[str]:
    """Deletes every Judge tenant whose time is up; returns them."""
    await deps.open()
    memory = await deps.http.operations() if deps.http.operations is not None else deps.memory  # DEL of a graph
    keys = await deps.http.keys()
    now_ms = times.now_ms() if now_ms is None else now_ms
    expired = [t.decode() if isinstance(t, bytes) else t
               for t in await keys.redis.zrangebyscore(JUDGE_TENANTS_KEY, "-inf", now_ms)]
    sessions = CustomerSessions(keys.redis)
    for tenant in expired:
        await sessions.set_site_open(tenant, False)
        await keys.remove(tenant)
        await operations.delete_tenant(memory.client, tenant, confirm=tenant)
        await keys.redis.zrem(JUDGE_TENANTS_KEY, tenant)
    if expired:
        log.info("deleted %d expired Judge mode tenant(s)", len(expired))
    return expired


async def sweep_loop(deps: Deps, stop: asyncio.Event, *, every_s: float) -> None:
    while not stop.is_set():
        try:
            await sweep(deps)
        except Exception as exc:  # noqa: BLE001 - FalkorDB not answering: next time
            log.debug("judge tenant sweep: %s", exc)
        try:
            await asyncio.wait_for(stop.wait(), every_s)
        except asyncio.TimeoutError:
            pass
