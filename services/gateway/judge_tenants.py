"""Judge mode's throwaway tenants are throwaway, and few: each is noted with its expiry when Judge
mode makes it (at most `judge_max_tenants` live at once, `claim`), and a sweep in every gateway
replica deletes the expired ones the way the admin's tenant delete does (usecases/operations:
everything kept for the tenant, this note included, runtime/tenant_data.py). Two replicas
sweeping at once delete the same tenant twice; the second finds nothing left."""

from __future__ import annotations

import asyncio
import logging
import math

from relay_graph.runtime import tenant_data, times
from relay_graph.runtime.errors import Unavailable
from relay_graph.runtime.tenancy import validate_tenant
from relay_graph.usecases import operations
from relay_graph.usecases.context import Deps

log = logging.getLogger("relay.gateway")

# tenant -> the time (ms) after which it is deleted
JUDGE_TENANTS_KEY = "relay:judge:tenants"
tenant_data.declare(tenant_data.Member("judge timer", JUDGE_TENANTS_KEY))

# Counting the live ones and noting a new one is one step, so two replicas at the limit cannot both
# add one. 0: noted; else the time (ms) the soonest live one expires.
_CLAIM = """
local live = redis.call('ZCOUNT', KEYS[1], '(' .. ARGV[1], '+inf')
if live >= tonumber(ARGV[3]) then
  local first = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  return first[2]
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
return 0
"""


class JudgeFull(Unavailable):
    code = "judge_mode_full"

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


async def claim(redis, tenant: str, ttl_s: float, max_tenants: int) -> None:
    """Notes a new Judge tenant with its expiry; JudgeFull (503, Retry-After) when `max_tenants`
    are live already."""
    now = times.now_ms()
    got = int(float(await redis.eval(_CLAIM, 1, JUDGE_TENANTS_KEY, now, int(now + ttl_s * 1000), max_tenants,
                                     validate_tenant(tenant))))
    if got:
        wait = max(1, math.ceil((got - now) / 1000))
        raise JudgeFull(f"Judge mode has {max_tenants} demos running, its most at once; the oldest ends in "
                        f"{wait}s, retry then (or run your own with `make up`)", retry_after=wait)


async def sweep(deps: Deps, now_ms: int | None = None) -> list[str]:
    """Deletes every Judge tenant whose time is up; returns them."""
    await deps.open()
    memory = await deps.http.operations() if deps.http.operations is not None else deps.memory  # DEL of a graph
    keys = await deps.http.keys()
    now_ms = times.now_ms() if now_ms is None else now_ms
    expired = [t.decode() if isinstance(t, bytes) else t
               for t in await keys.redis.zrangebyscore(JUDGE_TENANTS_KEY, "-inf", now_ms)]
    # At once: each delete waits out the other processes' registration caches.
    await asyncio.gather(*(operations.delete_tenant(memory.client, tenant, confirm=tenant) for tenant in expired))
    for tenant in expired:
        deps.http.forget_tenant(tenant)
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
