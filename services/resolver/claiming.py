"""Claiming a ticket for this replica (usecases.tickets.claim: of all replicas exactly one wins),
and taking over the ticket of a replica that died. May use the use cases, the desk's reads and the
heartbeat keys.

A fresh delivery never takes a held ticket (a duplicate notification while the holder works is
simply dropped). A reclaimed one does, when the holder's heartbeat key (relay_graph.runtime.heartbeat)
has lapsed, waiting at most one heartbeat TTL for it: the ticket is taken over by name (take_over=).
A holder that still beats keeps the ticket unless it has not touched it for `claim_lease_ms` (its
handler failed and left it): then lease_ms=. Either way the ticket's state is in the graph, so the
new holder continues where the old one was."""

from __future__ import annotations

import asyncio
import logging

from relay_graph.desk import agent_reads as desk
from relay_graph.desk.tickets.status import DONE_FOR_NOW
from relay_graph.runtime.heartbeat import heartbeat_key
from relay_graph.runtime.streams import Delivery
from relay_graph.usecases import tickets as ticket_cases
from relay_graph.usecases.context import Call, Deps

from .job import AGENT

log = logging.getLogger("services.resolver")


def replica_of(deps: Deps, delivery: Delivery | None) -> str:
    if delivery is not None:
        return delivery.consumer
    return deps.consumer_name or f"{AGENT}-{deps.settings.replica}"


async def claim(deps: Deps, call: Call, tid: str, replica: str, delivery: Delivery | None) -> bool:
    if await ticket_cases.claim(call, tid, replica=replica):
        return True
    if delivery is None or not delivery.reclaimed:
        return False  # another replica holds it; the notification it works from is its own
    # We reclaimed a notification its consumer stopped handling (it died, or its handler failed).
    now = await desk.ticket_routing(deps.client, call.tenant, tid)
    holder = now.owner_replica
    if now.owner != AGENT or not holder or now.stage in DONE_FOR_NOW:
        return False
    if await _gone(deps, holder):
        won = await ticket_cases.claim(call, tid, replica=replica, take_over=holder)
    else:  # alive: only a holder that has not touched the ticket for a whole lease lets go
        won = await ticket_cases.claim(call, tid, replica=replica, lease_ms=_lease_ms(deps))
    if won:
        log.info("%s took ticket %s over from %s", replica, tid, holder)
    return won


def _lease_ms(deps: Deps) -> int:
    return int(getattr(deps.settings, "claim_lease_ms", 60_000))


async def _gone(deps: Deps, holder: str) -> bool:
    """Whether the holder's heartbeat has lapsed, waiting at most one heartbeat TTL for it: a
    replica killed a moment ago still has its key until the TTL runs out."""
    key = heartbeat_key(AGENT, holder)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + deps.settings.heartbeat_ttl_s + 0.5
    while await deps.redis.exists(key):
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(0.1)
    return True
