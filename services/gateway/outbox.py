"""The outbox relay of one gateway replica (relay_graph.runtime.outbox): every `every_s`, publish the
announcements still kept in the graph of a tenant marked as having kept some (the request that
kept one could not publish it, or died before it could). Every gateway and agent replica runs
one; two publishing the same announcement send the same notification id, and consumers drop the
copy."""

from __future__ import annotations

import asyncio
import logging

from .bus import Bus

log = logging.getLogger("relay.gateway")


async def relay_loop(bus: Bus, stop: asyncio.Event, *, every_s: float = 1.0, older_than_s: float = 2.0) -> None:
    while not stop.is_set():
        try:
            box = await bus.outbox()
        except Exception as exc:  # noqa: BLE001 - FalkorDB not there yet: try again
            log.debug("outbox relay waiting for FalkorDB: %s", exc)
            try:
                await asyncio.wait_for(stop.wait(), every_s)
            except asyncio.TimeoutError:
                pass
            continue
        await box.relay_loop(stop, every_s=every_s, older_than_s=older_than_s)
