"""Salience and communities of a tenant's entities, computed in FalkorDB.

- salience: `algo.pageRank` over Entity nodes and the fact edges between them (damping 0.85). The
  server ranks over every node of the graph, the nodes of other labels taking part without edges
  (the random jump and a dead end's rank spread over all of them), so scores sum to less than one
  and rank entities as networkx's pagerank does on the entity graph plus that many isolated nodes:
  tests/relay_graph/memory/test_entity_graph.py checks them against exactly that.
- communities: `algo.labelPropagation` over the same graph, written back as `(:Community {size})`
  nodes with `(:Entity)-[:IN_COMMUNITY]->(:Community)` edges; each run replaces the last. It finds
  networkx's label propagation communities on dense groups whose links all point one way round; with
  links pointing either way at random it split groups networkx keeps whole, so link direction
  matters to it. Recall uses them as a signal (memory.recall.signals, "community"). They are a picture of the
  entity graph when they were computed: the netops agent refreshes every tenant's on its
  maintenance loop (`communities_loop`: at start, then every RELAY_COMMUNITIES_EVERY_S seconds,
  default 900), and `relay admin communities TENANT` at once; an entity made since the last run
  is in none until the next.

Both need FalkorDB 4.22 (`algo.labelPropagation` with a configuration map)."""

from __future__ import annotations

import asyncio
import logging

from pydantic import BaseModel
from redis.exceptions import ResponseError

from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import InvalidInput
from relay_graph.memory.queries import entity_graph as q
from relay_graph.memory import changes
from relay_graph.memory.retention import periodic, tenants
from relay_graph.runtime.tenancy import validate_tenant
from relay_graph.runtime.times import now_ms

log = logging.getLogger(__name__)

MAX_TOP = 1_000


class SalientEntity(BaseModel):
    uid: str
    name: str | None
    score: float


class CommunityReceipt(BaseModel):
    communities: int  # Community nodes written
    members: int  # IN_COMMUNITY edges written
    removed: int  # Community nodes of the previous run removed


async def entity_salience(client: GraphClient, tenant: str, top: int = 10) -> list[SalientEntity]:
    """The `top` entities by PageRank, ties by uid."""
    validate_tenant(tenant)
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= MAX_TOP:
        raise InvalidInput(f"top must be a whole number from 1 to {MAX_TOP}")
    rows = await client.run(tenant, q.ENTITY_SALIENCE, {"top": top})
    return [SalientEntity(uid=r["uid"], name=r["name"], score=float(r["score"])) for r in rows]


async def detect_communities(client: GraphClient, tenant: str, *, min_size: int = 2,
                             iterations: int = 20, at_ms: int | None = None) -> CommunityReceipt:
    """Replaces the tenant's communities with a fresh label propagation run."""
    validate_tenant(tenant)
    if min_size < 1 or iterations < 1:
        raise InvalidInput("min_size and iterations must be at least 1")
    try:
        found = await client.run(tenant, q.READ_COMMUNITIES, {"min_size": min_size, "iterations": iterations})
    except ResponseError as exc:  # a graph that never had an entity does not know the label
        if "unknown label" not in str(exc):
            raise
        found = []
    removed = await clear_communities(client, tenant)
    row = {"communities": 0, "members": 0}
    if found:
        rows = await client.run(tenant, q.WRITE_COMMUNITIES, {
            "communities": found, "at_ms": at_ms if at_ms is not None else now_ms()})
        row = rows[0] if rows else row
    return CommunityReceipt(communities=row["communities"], members=row["members"], removed=removed)


async def clear_communities(client: GraphClient, tenant: str) -> int:
    """Removes the tenant's communities (recall's community signal then finds nothing); how many."""
    return (await client.run(validate_tenant(tenant), q.CLEAR_COMMUNITIES))[0]["removed"]


async def refresh_all(client: GraphClient) -> dict[str, CommunityReceipt]:
    """Every tenant's communities computed again."""
    return {t: await detect_communities(client, t) for t in await tenants(client)}


async def refresh_changed(client: GraphClient, *, settle_s: float, batch: int = 50,
                          now_ms_: int | None = None) -> dict[str, CommunityReceipt]:
    """Communities computed again for up to `batch` tenants whose facts changed at least `settle_s`
    ago and not since their last run (changes.py); a tenant whose run fails is owed one still."""
    await changes.seed(client, lambda: tenants(client))
    now = now_ms() if now_ms_ is None else now_ms_
    out = {}
    for tenant in await changes.take(client, changes.COMMUNITIES, until_ms=now - int(settle_s * 1000), batch=batch):
        try:
            out[tenant] = await detect_communities(client, tenant)
        except Exception:  # noqa: BLE001 - owed still; the other tenants go on
            log.exception("communities of %s failed; tried again in a later round", tenant)
            await changes.give_back(client, changes.COMMUNITIES, tenant, now)
    return out


async def communities_loop(client: GraphClient, stop: asyncio.Event, *, every_s: float, batch: int = 50,
                           tick_s: float = 10.0) -> None:
    """Until `stop` is set, every `tick_s`: the communities of up to `batch` tenants whose facts
    changed at least `every_s` ago (so a tenant is computed at most that often, and only after a
    change)."""
    async def round_() -> None:
        for tenant, r in (await refresh_changed(client, settle_s=every_s, batch=batch)).items():
            log.debug("communities: %s has %d (%d members)", tenant, r.communities, r.members)

    await periodic("communities", round_, stop, every_s=min(tick_s, every_s))
