"""The turn's reply: stored as the turn's last graph write (once it exists a redelivery only
announces again) and owed on the call after what the ticket work owes, so the ticket's change goes
out before the reply about it. Also what the turn answered before says again (a redelivery), and
the ticket asks' writes (`IntakeActs`: a reading, a promise) through the use cases."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from relay_graph.desk.agent_reads import EpisodeView
from relay_graph.desk.conversation import TicketRef
from relay_graph.desk.conversation.reads import PromiseView
from relay_graph.desk.network.models import Outage
from relay_graph.desk.tickets.models import Ticket
from relay_graph.memory.models import FactView
from relay_graph.runtime.streams import TurnReceived
from relay_graph.usecases import replies as reply_cases, ticket_opening
from relay_graph.usecases.context import Call
from relay_graph.usecases.replies import ReplyDraft, after

from .deciding import HANDOFF_TO, Words

log = logging.getLogger("services.intake")


@dataclass
class TurnResult:
    """What answering one turn did (handlers ignore it; tests read it)."""

    reply: ReplyDraft
    ticket: Ticket | None = None
    change: str | None = None  # the TicketChanged change announced, if any
    learnt: list[FactView] = field(default_factory=list)
    ended: list[FactView] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    outages: list[Outage] = field(default_factory=list)
    redelivered: bool = False
    answers: list[str] = field(default_factory=list)  # the reply's answer kinds


@dataclass(frozen=True)
class Turn:
    """The turn being answered: its notification, its episode, whose it is, where the reply goes."""

    n: TurnReceived
    episode: EpisodeView
    customer: str
    session: str
    reply_id: str


async def reply(call: Call, turn: Turn, words: Words, ticket: Ticket | None, change: str | None, *,
                rows: tuple = (), customer_text: str | None = None, fixed: bool = False) -> TurnResult:
    """Store the reply and owe its ReplyWritten (after what the turn's work owed). The templated
    words are reworded (or not) by usecases.replies.honest_words, held to the graph rows of this
    turn; a guardrail's fixed reply is sent as it is. Its vector and the turn's are made after the
    call is flushed (the customer waits for the reply, not for the model)."""
    draft = ReplyDraft(
        id=turn.reply_id, session=turn.session, customer=turn.customer, text=words.text,
        reply_to=turn.episode.episode_id, version=turn.n.seq, at=after(call.now(), turn.episode.at),
        ticket_id=ticket.id if ticket else None, how_i_know=words.how, rows=tuple(r for r in rows if r is not None),
        customer_text=customer_text, reword=not fixed, answers=words.answers,
    )
    [draft] = await reply_cases.write_replies(call, [draft], skip_existing=False, embed=False)
    return TurnResult(reply=draft, ticket=ticket, change=change, answers=list(words.answers))


async def answer_again(call: Call, turn: Turn, done: EpisodeView) -> TurnResult:
    """The turn was answered before (the notification came again, or the first delivery died after
    writing the reply). Its reply, and any of the customer's tickets still waiting for the resolver,
    are owed again in case that announcement was what got lost. Nothing is written (but the
    vectors, after: agent.answer_turn)."""
    await ticket_opening.remind_waiting(call, turn.customer, HANDOFF_TO)
    draft = ReplyDraft(
        id=done.episode_id, session=done.session or turn.session, customer=turn.customer, text=done.text or "",
        reply_to=turn.episode.episode_id, version=turn.n.seq, at=done.at or call.now(), ticket_id=done.ticket_id,
        how_i_know=done.how_i_know,
    )
    reply_cases.announce_again(call, draft)
    log.info("turn %s was answered before (%s); announced again", turn.episode.episode_id, done.episode_id)
    return TurnResult(reply=draft, redelivered=True)


@dataclass(frozen=True)
class IntakeActs:
    """The ticket asks that are writes (conversation.TicketActs), as the use cases on the turn's call."""

    call: Call

    async def reading(self, ticket: TicketRef, direction: str, at: datetime) -> bool:
        return await ticket_opening.note_reading(self.call, ticket.id, ticket.stage, direction, at=at)

    async def promise(self, ticket: TicketRef, text: str, due: datetime, source: str,
                      at: datetime) -> PromiseView | None:
        return await ticket_opening.promise_callback(self.call, ticket.id, ticket.stage, text, due, source=source,
                                                     at=at)
