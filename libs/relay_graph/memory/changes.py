"""Which tenants the background work owes something, so that it follows the changes and never the
number of tenants: a tenant nobody writes to costs the maintenance loops nothing.

- Communities (entity_graph.py) are computed again only for a tenant whose facts changed since its
  last run: every fact write marks its tenant first (`fact_written`: a Redis sorted set, tenant ->
  when it first changed since its last run), and a round takes up to `batch` tenants marked at
  least `settle_s` ago (a tenant being written to is computed once its burst is over, not after
  every write).
- Retention (retention.py) is due by time, not by change: a tenant with a setting is in a sorted set
  scored by when its next compaction is due (`set_retention` puts it there or takes it out); a round
  compacts up to `batch` tenants that are due and moves each one `every_s` later. A tenant without a
  setting is never read.

A round claims each tenant it takes with a compare-and-set on its score (a Lua script), so replicas
running the same loop spread the tenants between them and none computes a tenant twice. A tenant
that changes while its communities are computed is marked again and comes back in a later round.

The first round on a server that has never had these sets (`seed`, once per server: a flag set with
NX) puts every tenant already there into both, so that nothing made before is left out."""

from __future__ import annotations

import logging
from typing import Awaitable, Callable

from redis.exceptions import RedisError

from relay_graph.runtime import tenant_data
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.tenancy import GRAPH_PREFIX, validate_tenant
from relay_graph.runtime.times import now_ms

log = logging.getLogger(__name__)

COMMUNITIES = "relay:changed:communities"  # tenant -> when its facts first changed since its last run
RETENTION = "relay:retention:due"  # tenant -> when its retention is next due (tenants with a setting)
SEEDED = "relay:changed:seeded"  # set once: every tenant there was went into both sets
tenant_data.declare(tenant_data.Member("communities owed", COMMUNITIES),
                    tenant_data.Member("retention schedule", RETENTION))

# Move a member from the score it was read with to a new one (ARGV[3]; "" takes it out); 0 when
# another replica moved it first.
_CLAIM = """local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not s or tonumber(s) ~= tonumber(ARGV[2]) then return 0 end
if ARGV[3] == '' then redis.call('ZREM', KEYS[1], ARGV[1]) else redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1]) end
return 1"""


async def fact_written(client: GraphClient, tenant: str) -> None:
    """A fact of the tenant is about to change: its communities are owed a run (the earliest
    unhandled change's time is kept). Best effort: the set is one key on one shard, and a write must
    not wait for that shard (a failover elsewhere); a mark lost then waits for the tenant's next write."""
    try:
        await client.redis.zadd(COMMUNITIES, {tenant: now_ms()}, nx=True)
    except RedisError as exc:
        log.info("communities of %s not marked as owed (%r); its next write marks them", tenant, exc)


async def schedule_retention(client: GraphClient, tenant: str, due_ms: int | None) -> None:
    """The tenant's next retention run at `due_ms`, or none (it has no setting)."""
    if due_ms is None:
        await client.redis.zrem(RETENTION, tenant)
    else:
        await client.redis.zadd(RETENTION, {tenant: due_ms})


async def _claim(client: GraphClient, key: str, tenant: str, score: int, to: int | None) -> bool:
    return bool(await client.redis.eval(_CLAIM, 1, key, tenant, score, "" if to is None else to))


async def seed(client: GraphClient, tenants: Callable[[], Awaitable[list[str]]]) -> int:
    """Once per server: every tenant that has a graph owes a communities run and a retention check.
    Returns how many were put in (0 when it was done before)."""
    if not await client.redis.set(SEEDED, "1", nx=True):
        return 0
    names = await tenants()
    if names:
        now = now_ms()
        await client.redis.zadd(COMMUNITIES, dict.fromkeys(names, now), nx=True)
        await client.redis.zadd(RETENTION, dict.fromkeys(names, now), nx=True)
    log.info("maintenance: %d tenant(s) there before change tracking will be looked at once", len(names))
    return len(names)


async def take(client: GraphClient, key: str, *, until_ms: int, batch: int,
               then_ms: int | None = None) -> list[str]:
    """Up to `batch` tenants of `key` scored at or before `until_ms`, each claimed by this caller:
    taken out (then_ms None) or moved to `then_ms`."""
    rows = await client.redis.zrangebyscore(key, "-inf", until_ms, start=0, num=batch, withscores=True)
    out = []
    for member, score in rows:
        tenant = member.decode() if isinstance(member, bytes) else str(member)
        if await _claim(client, key, tenant, int(score), then_ms):
            out.append(tenant)
    return out


async def give_back(client: GraphClient, key: str, tenant: str, score_ms: int) -> None:
    """A claimed tenant whose run failed: owed again (unless marked again meanwhile)."""
    await client.redis.zadd(key, {tenant: score_ms}, nx=True)


async def graph_tenants(client: GraphClient) -> list[str]:
    """Every tenant that has a graph (what `seed` puts in)."""
    out = []
    for name in sorted(n[len(GRAPH_PREFIX):] for n in await client.all_graphs() if n.startswith(GRAPH_PREFIX)):
        try:
            out.append(validate_tenant(name))
        except Exception:  # noqa: BLE001 - a graph under the prefix that is not a tenant's
            continue
    return out
