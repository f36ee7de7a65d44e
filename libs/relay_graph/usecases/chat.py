"""A customer's turn in (POST /chat, the customer site's POST /me/chat), the desk's reply out.

Two steps, which the route calls in order:

1. `take_turn` stores the turn in its session and records on the call what it owes: a FactChanged
   for a fact the turn wrote (a new customer's name; best effort, as before) and the turn's own
   TurnReceived, which the statement that numbers the turn keeps in the outbox (`Call.owe_kept`).
   It announces nothing.
2. `await_reply` announces the turn and, with `wait`, waits for the desk's reply. A reply can come
   back before the announcement call returns, so the reply's expectation is registered first, then
   the call is flushed, then the wait starts. This is the one place a use case flushes its own call:
   the route's dependency flushes only after the route returned, which is too late for a caller that
   waits for the reply, and too late to answer TurnNotAnnounced (the turn is stored; the streams
   refused its announcement; the outbox relay publishes it shortly) while the route can still keep
   its 202 for an idempotent retry.

May use: relay_graph.desk (the turn's store), relay_graph.runtime."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import ContextManager, Protocol

from relay_graph.desk.conversation import turns as chat
from relay_graph.runtime.errors import Unavailable
from relay_graph.runtime.metrics import catalogue as metrics
from relay_graph.runtime.outbox import Outbox
from relay_graph.runtime.stages import stage
from relay_graph.runtime.streams import ReplyWritten
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


def _outbox(call: Call) -> Outbox:
    if not isinstance(call.announcer, Outbox):
        raise RuntimeError("a turn is announced through the process's outbox; this call has none")
    return call.announcer


async def take_turn(call: Call, *, customer: str | None, text: str, session: str | None, name: str | None = None,
                    replies: Replies | None = None, wait: float = 0) -> chat.RecordedTurn:
    """A turn in, as `call`'s agent (desk.chat.AGENT): stored, its announcements owed on the call
    (see the module doc). With `wait` > 0, `replies` must see the desk's replies: it is started
    before anything is written, so a process that cannot wait refuses before storing the turn."""
    outbox = _outbox(call)
    if wait > 0:
        if replies is None:
            raise RuntimeError("waiting for a reply needs where replies are seen")
        await replies.start()
    with stage("chat.store"):
        await outbox.mark(call.tenant)  # the turn's statement keeps its announcement: the relay looks here
        turn = await chat.record_turn(call.memory, call.tenant, customer=customer, name=name, text=text,
                                      session=session)
    call.owe(*fact_changes(call.tenant, chat.AGENT, turn.facts), best_effort=True)
    call.owe_kept(chat.announcement(call.tenant, turn))
    return turn


async def await_reply(call: Call, turn: chat.RecordedTurn, replies: Replies | None = None,
                      wait: float = 0) -> TakenTurn:
    """Announce the turn `take_turn` stored (flushing the call: see the module doc for why here)
    and, with `wait` > 0, the desk's reply if it is written within `wait` seconds. Raises
    TurnNotAnnounced when the streams refuse the turn's announcement (it stays kept)."""
    if wait <= 0:
        with stage("chat.announce"):
            await _flush(call, turn)
        metrics.CHAT_TURNS.add(1, {"outcome": "not_waited"})
        return TakenTurn(turn)
    if replies is None:
        raise RuntimeError("waiting for a reply needs where replies are seen")
    stored = time.perf_counter()  # the turn is written: its latency through the streams starts
    with replies.expect(call.tenant, turn.episode_id) as replied:  # registered before the turn is announced
        with stage("chat.announce"):
            await _flush(call, turn)
        try:
            with stage("chat.wait"):
                written = await asyncio.wait_for(asyncio.shield(replied), wait)
        except asyncio.TimeoutError:
            metrics.CHAT_TURNS.add(1, {"outcome": "timed_out"})
            return TakenTurn(turn, waited=True)
    metrics.CHAT_TURN_DURATION.record(time.perf_counter() - stored)
    metrics.CHAT_TURNS.add(1, {"outcome": "replied"})
    # the reply and its ticket's stage in one read (a reply announced but not readable stays None)
    with stage("chat.read_reply"):
        reply, ticket = await chat.get_reply_and_ticket(call.client, call.tenant, written.id, written.ticket_id)
    return TakenTurn(turn, waited=True, reply=reply, ticket=ticket if reply is not None else None)


async def _flush(call: Call, turn: chat.RecordedTurn) -> None:
    try:
        await call.flush()
    except Unavailable as exc:
        raise TurnNotAnnounced(f"turn {turn.episode_id} of session {turn.session} is stored and will reach the "
                               "desk shortly (its reply appears in the session); the notification streams are not "
                               "taking entries right now", turn) from exc
