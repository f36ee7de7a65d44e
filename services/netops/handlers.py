"""Netops' handlers: one per notification kind it consumes. Plain async functions of
(deps, notification), so tests call them without a broker."""

from __future__ import annotations

import logging

from relay_graph.usecases.context import Deps
from relay_graph.runtime.streams import NetworkChanged

from . import agent

log = logging.getLogger("services.netops")


async def handle_network_changed(deps: Deps, notification: NetworkChanged) -> None:
    """down: declare the outage and warn who it reaches; up: resolve it and tell them."""
    if notification.change == "down":
        await agent.node_down(deps, notification)
    elif notification.change == "up":
        await agent.node_up(deps, notification)
    else:
        log.debug("node %s %s: not handled yet", notification.node_id, notification.change)


HANDLERS = {
    "network_changed": handle_network_changed,
}
