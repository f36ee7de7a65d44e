"""The resolver's handlers: one per notification kind it consumes. Plain async functions of
(deps, notification[, delivery]), so tests call them without a broker."""

from __future__ import annotations

import logging

from relay_graph.usecases.context import Deps
from relay_graph.runtime.streams import Delivery, TicketChanged

from . import agent

log = logging.getLogger("services.resolver")


async def handle_ticket_changed(deps: Deps, notification: TicketChanged, delivery: Delivery | None = None) -> None:
    """handed_off / reopened: claim and work the ticket; closed: learn from the fix. The other
    changes (opened, picked_up, stage) are the desk announcing its own progress: nothing to do."""
    if notification.change in ("handed_off", "reopened"):
        outcome = await agent.take_up(deps, notification, delivery)
        log.debug("ticket %s (%s v%d): %s", notification.ticket_id, notification.change, notification.version, outcome)
    elif notification.change == "closed":
        await agent.learn_from_closed(deps, notification)


HANDLERS = {
    "ticket_changed": handle_ticket_changed,
}
