"""A customer's turn in (POST /chat, the customer site's POST /me/chat): stored in its session,
with what it owes: a FactChanged for a fact the turn wrote (a new customer's name). The turn's own
TurnReceived is kept in the outbox by the statement that numbers the turn and published by the
route (desk.chat.announcement), which answers 503 when the streams refuse it."""

from __future__ import annotations

from relay_graph.desk import chat
from relay_graph.runtime.streams import NotificationBase
from relay_graph.usecases.context import Call, fact_changes


async def record_turn(call: Call, *, customer: str | None, text: str, session: str | None,
                      name: str | None = None) -> tuple[chat.RecordedTurn, list[NotificationBase]]:
    turn = await chat.record_turn(call.memory, call.tenant, customer=customer, name=name, text=text, session=session)
    return turn, fact_changes(call.tenant, chat.AGENT, turn.facts)
