"""Intake's handlers: one per notification kind it consumes. Plain async functions of
(deps, notification), so tests call them without a broker."""

from __future__ import annotations

from relay_graph.usecases.context import Deps
from relay_graph.runtime.streams import TurnReceived

from . import agent


async def handle_turn_received(deps: Deps, notification: TurnReceived) -> None:
    """A customer's turn is in the graph: answer it (facts, maybe a ticket and its handoff, the reply)."""
    await agent.answer_turn(deps, notification)


HANDLERS = {
    "turn_received": handle_turn_received,
}
