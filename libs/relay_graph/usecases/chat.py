"""A customer's turn in (POST /chat, the customer site's POST /me/chat), the desk's reply out.

`take_turn` stores the turn in its session, announces what it owes (a FactChanged for a fact the
turn wrote, a new customer's name; the turn's own TurnReceived, which the statement that numbers
the turn keeps in the outbox, is published here and taken out), and with `wait` waits for the
desk's reply. When the streams refuse the TurnReceived the turn is stored all the same and the
outbox relay publishes it shortly: `TurnNotAnnounced` says so and carries the turn."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import ContextManager, Protocol

from relay_graph.desk.conversation import turns as chat
from relay_graph.runtime.errors import Unavailable
from relay_graph.runtime.metrics import catalogue as metrics
from relay_graph.runtime.outbox import Outbox
from relay_graph.runtime.streams import NotificationBase, ReplyWritten
from relay_graph.usecases.context import Call, fact_changes


class Replies(Protocol):
    """Where a process sees the desk's replies (the gateway's stream tail): started before a turn
    that waits is written; `expect` registered before the turn is announced."""

    async def start(self) -> None: ...

    def expect(self, tenant: str, episode_id: str) -> ContextManager[asyncio.Future[ReplyWritten]]: ...


@dataclass(frozen=True)
class TakenTurn:
    """The stored turn and, when the desk replied within the wait, its reply and the ticket it
    concerns (`reply` None: not yet, the reply comes on the live feed and in the session)."""

    turn: chat.RecordedTurn
    waited: bool = False
    reply: chat.ReplyView | None = None
    ticket: chat.ReplyTicket | None = None


class TurnNotAnnounced(Unavailable):
    """The turn is stored and reaches the desk shortly (the outbox relay announces it); the streams
    refused its announcement now."""

    def __init__(self, message: str, turn: chat.RecordedTurn) -> None:
        super().__init__(message)
        self.turn = turn


async def record_turn(call: Call, *, customer: str | None, text: str, session: str | None,
                      name: str | None = None) -> tuple[chat.RecordedTurn, list[NotificationBase]]:
    turn = await chat.record_turn(call.memory, call.tenant, customer=customer, name=name, text=text, session=session)
    return turn, fact_changes(call.tenant, chat.AGENT, turn.facts)


async def take_turn(call: Call, replies: Replies | None, *, customer: str | None, text: str, session: str | None,
                    wait: float = 0, name: str | None = None) -> TakenTurn:
    """A turn in, as `call`'s agent (desk.chat.AGENT), announced through the call's outbox; with
    `wait` > 0, the desk's reply if it is written within `wait` seconds."""
    outbox = call.announcer
    if not isinstance(outbox, Outbox):
        raise RuntimeError("a turn is announced through the process's outbox; this call has none")
    if wait > 0:
        if replies is None:
            raise RuntimeError("waiting for a reply needs where replies are seen")
        await replies.start()  # before anything is written: a process that cannot see replies refuses to wait
    await outbox.mark(call.tenant)  # the turn's statement keeps its announcement: the relay looks here
    turn, owed = await record_turn(call, customer=customer, name=name, text=text, session=session)
    stored = time.perf_counter()  # the turn's episode is written: its latency through the streams starts
    await call.notify(*owed)
    if wait <= 0:
        await _announce(outbox, call.tenant, turn)
        metrics.CHAT_TURNS.add(1, {"outcome": "not_waited"})
        return TakenTurn(turn)
    assert replies is not None
    with replies.expect(call.tenant, turn.episode_id) as replied:  # registered before the turn is announced
        await _announce(outbox, call.tenant, turn)
        try:
            written = await asyncio.wait_for(asyncio.shield(replied), wait)
        except asyncio.TimeoutError:
            metrics.CHAT_TURNS.add(1, {"outcome": "timed_out"})
            return TakenTurn(turn, waited=True)
    metrics.CHAT_TURN_DURATION.record(time.perf_counter() - stored)
    metrics.CHAT_TURNS.add(1, {"outcome": "replied"})
    # the reply and its ticket's stage in one read (a reply announced but not readable stays None)
    reply, ticket = await chat.get_reply_and_ticket(call.client, call.tenant, written.id, written.ticket_id)
    return TakenTurn(turn, waited=True, reply=reply, ticket=ticket if reply is not None else None)


async def _announce(outbox: Outbox, tenant: str, turn: chat.RecordedTurn) -> None:
    announced = chat.announcement(tenant, turn)
    try:
        await outbox.publish_kept(tenant, announced)
    except Unavailable as exc:
        raise TurnNotAnnounced(f"turn {announced.id} of session {announced.session} is stored and will reach the "
                               "desk shortly (its reply appears in the session); the notification streams are not "
                               "taking entries right now", turn) from exc
