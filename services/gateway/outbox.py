"""The outbox relay of one gateway replica: every `every_s`, publish the chat turns whose
announcement is still in the graph (the request that wrote it could not publish it, or died
before it could) for every registered tenant. Every replica runs one; two publishing the same
announcement send the same notification id, and consumers drop the copy."""

from __future__ import annotations

import asyncio
import logging

from relay_graph import chat

from .backend import Backend
from .bus import Bus

log = logging.getLogger("relay.gateway")


async def relay_pass(backend: Backend, bus: Bus, *, older_than_s: float) -> int:
    memory = await backend.memory()
    keys = await backend.keys()
    published = 0
    for tenant in await keys.tenants():
        try:
            # A tenant with no graph has no outbox; reading one would make its graph (the schema
            # is set up on a graph's first query).
            if not await memory.client.graph_exists(tenant):
                continue
            published += await chat.announce_pending(memory.client, tenant, bus.publish, older_than_s=older_than_s)
        except Exception as exc:  # noqa: BLE001 - the next pass tries again; other tenants go on
            log.warning("outbox of %s: %s", tenant, exc)
    if published:
        log.info("outbox relay published %d pending turn announcement(s)", published)
    return published


async def relay_loop(backend: Backend, bus: Bus, stop: asyncio.Event, *, every_s: float = 1.0,
                     older_than_s: float = 2.0) -> None:
    while not stop.is_set():
        try:
            await relay_pass(backend, bus, older_than_s=older_than_s)
        except Exception as exc:  # noqa: BLE001 - FalkorDB not answering: next time
            log.debug("outbox relay: %s", exc)
        try:
            await asyncio.wait_for(stop.wait(), every_s)
        except asyncio.TimeoutError:
            pass
