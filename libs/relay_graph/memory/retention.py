"""Retention: a tenant setting (`retention_days`) under which episodes older than that many days
are compacted. The facts they gave stay, each with its source kept as a summary (`source_summary`:
"<speaker>: <the first SUMMARY_CHARS characters>", `source_at_ms`); the episodes themselves, their
vectors and edges go. `retention_loop` is what an agent runs to apply the settings: it reads only
the tenants that have one and are due (changes.py), a bounded number per round."""

from __future__ import annotations

import asyncio
import logging

from pydantic import BaseModel

from relay_graph.memory import changes
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import InvalidInput
from relay_graph.memory.queries import retention as q
from relay_graph.runtime.tenancy import GRAPH_PREFIX, validate_tenant
from relay_graph.runtime import times

log = logging.getLogger(__name__)

SETTING = "retention_days"
SUMMARY_CHARS = 200
BATCH = 500
DAY_MS = 86_400_000


class CompactReceipt(BaseModel):
    tenant: str
    retention_days: int | None
    cutoff_ms: int | None
    episodes: int = 0
    facts_summarised: int = 0


async def set_retention(client: GraphClient, tenant: str, days: int | None) -> int | None:
    """Keep `days` days of episodes (None: keep them all, the default)."""
    tenant = validate_tenant(tenant)
    if days is None:
        await client.run(tenant, q.CLEAR_SETTING, {"name": SETTING})
        await changes.schedule_retention(client, tenant, None)
        return None
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= 36_500:
        raise InvalidInput("retention_days must be a whole number of days from 1 to 36500", code="invalid_retention")
    await client.run(tenant, q.SET_SETTING, {"name": SETTING, "value": days})
    await changes.schedule_retention(client, tenant, times.now_ms())  # due at once
    return days


async def get_retention(client: GraphClient, tenant: str) -> int | None:
    rows = await client.run(validate_tenant(tenant), q.GET_SETTING, {"name": SETTING})
    return int(rows[0]["value"]) if rows else None


async def compact(client: GraphClient, tenant: str, *, now_ms: int | None = None) -> CompactReceipt:
    """Compact the tenant's episodes older than its setting (nothing without one). Idempotent."""
    tenant = validate_tenant(tenant)
    days = await get_retention(client, tenant)
    if days is None:
        return CompactReceipt(tenant=tenant, retention_days=None, cutoff_ms=None)
    now_ms = times.now_ms() if now_ms is None else now_ms
    receipt = CompactReceipt(tenant=tenant, retention_days=days, cutoff_ms=now_ms - days * DAY_MS)
    while True:
        row = (await client.run(tenant, q.COMPACT_EPISODES,
                                {"cutoff": receipt.cutoff_ms, "batch": BATCH, "chars": SUMMARY_CHARS}))[0]
        receipt.episodes += row["episodes"]
        receipt.facts_summarised += row["facts"] or 0
        if row["episodes"] < BATCH:
            return receipt


async def tenants(client: GraphClient) -> list[str]:
    """Every tenant that has a graph (graphs under the prefix that are not a tenant's left out)."""
    return await changes.graph_tenants(client)


async def periodic(name: str, work, stop: asyncio.Event, *, every_s: float) -> None:
    """`await work()` now and then every `every_s` seconds until `stop` is set; a failed round is
    logged and retried on the next (the agent keeps handling events)."""
    while not stop.is_set():
        try:
            await work()
        except Exception:
            log.exception("%s round failed", name)
        try:
            await asyncio.wait_for(stop.wait(), timeout=every_s)
        except asyncio.TimeoutError:
            pass


async def compact_all(client: GraphClient, *, now_ms: int | None = None) -> list[CompactReceipt]:
    """Every tenant with a retention setting, compacted."""
    out = []
    for tenant in await tenants(client):
        receipt = await compact(client, tenant, now_ms=now_ms)
        if receipt.retention_days is not None:
            out.append(receipt)
    return out


async def compact_due(client: GraphClient, *, every_s: float, batch: int = 100,
                      now_ms: int | None = None) -> list[CompactReceipt]:
    """Up to `batch` tenants whose retention is due, compacted, each due again `every_s` later (a
    tenant found without a setting leaves the schedule). Tenants without a setting are not read."""
    await changes.seed(client, lambda: tenants(client))
    now = times.now_ms() if now_ms is None else now_ms
    out = []
    for tenant in await changes.take(client, changes.RETENTION, until_ms=now, batch=batch,
                                     then_ms=now + int(every_s * 1000)):
        receipt = await compact(client, tenant, now_ms=now)
        if receipt.retention_days is None:
            await changes.schedule_retention(client, tenant, None)
        else:
            out.append(receipt)
    return out


async def retention_loop(client: GraphClient, stop: asyncio.Event, *, every_s: float, batch: int = 100,
                         tick_s: float = 60.0) -> None:
    """Until `stop` is set, every `tick_s` (at most `every_s`): the tenants whose retention is due
    (each compacted every `every_s`), `batch` at most per round."""
    async def round_() -> None:
        for r in await compact_due(client, every_s=every_s, batch=batch):
            if r.episodes:
                log.info("retention: %s compacted %d episodes older than %d days (%d facts keep a summary)",
                         r.tenant, r.episodes, r.retention_days, r.facts_summarised)

    await periodic("retention", round_, stop, every_s=min(tick_s, every_s))
