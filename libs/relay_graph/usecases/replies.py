"""What the desk says goes into the graph first, then onto the stream.

A reply is an `AgentReply` episode in a customer's session, with the turn it answers
(`reply_to`), the ticket it concerns and the graph rows its words rest on (`how_i_know`). Its id
is deterministic (see relay_graph.desk.agent_reads), so a redelivered notification finds the reply it wrote
the first time. `ReplyWritten` is published only after the episode is stored; it carries ids,
never the text.

`reply_to` is the customer turn a reply answers. Status updates nobody asked for (the resolver's
progress, netops' outage notices) answer no turn: their `reply_to` is the ticket id or the outage
id they are about, which can never equal a turn's episode id, so a client waiting for the answer
to its turn is never handed one of them by mistake.

Every function takes the call first: the writer is the call's agent (speaker and WRITTEN_BY), the
reply writer the call's (`Call.writer`: templates without one), and what a write owes is recorded
on the call (`Call.owe`), announced when the call is flushed (an agent's unit of work, a route's
dependency). Nothing here announces.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from relay_graph.desk.agent_reads import existing_episodes
from relay_graph.memory.episodes import iter_batches
from relay_graph.desk.conversation.templates import Reply
from relay_graph.desk.llm.wording import TemplateWriter
from relay_graph.memory.models import EpisodeInput
from relay_graph.desk.conversation.reply_check import allowed_from, honest_reply
from relay_graph.runtime.streams import ReplyWritten
from relay_graph.usecases.context import Call

log = logging.getLogger("relay_graph.runtime.agents")

MAX_TEXT = 8_000


@dataclass(frozen=True)
class ReplyDraft:
    id: str
    session: str
    customer: str
    text: str
    reply_to: str
    version: int
    at: datetime
    ticket_id: str | None = None
    how_i_know: list[str] = field(default_factory=list)
    # What the templated text was built from: the graph rows of this turn (tickets, outages, facts,
    # visits). The ids and values in them are all a reworded reply may name besides the draft's own.
    rows: tuple[Any, ...] = ()
    customer_text: str | None = None  # the message answered, for the writer's tone; data only
    reword: bool = True  # False for fixed wording (guardrail refusals): sent exactly as drafted
    answers: tuple[str, ...] = ()  # the reply's answer kinds (relay_graph.desk.conversation.kinds)


async def honest_words(call: Call, draft: Reply, *, rows: Sequence[Any] = (),
                       customer_text: str | None = None) -> Reply:
    """The one way an agent's reply gets its words. `draft` is the template built from the graph
    rows of this turn; the call's writer (templates without a key, Groq with one) may reword it, and its
    wording is kept only if it names no ticket, invoice, outage, fact or other id (and no price)
    that is not in `rows` or the draft. Anything else, a writer error included, sends the draft.
    The how-I-know lines are always the draft's."""
    writer = call.writer if call.writer is not None else TemplateWriter()
    try:
        worded = await writer.word(draft, rows=list(rows), customer_text=customer_text)
    except Exception as exc:  # a writer's failure costs style, never the reply
        log.warning("reply writer failed, sending the template: %r", exc)
        return draft
    candidate = worded.text if isinstance(worded, Reply) else worded
    if isinstance(candidate, str) and candidate == draft.text and candidate.strip() == candidate and candidate:
        # The draft's own words (the templates, without a key): the check below would pass them
        # as they are, and reading every row for it costs a few ms of a turn.
        return draft
    ids, values = allowed_from(draft, list(rows))
    reply = honest_reply(candidate if isinstance(candidate, str) else None, draft, ids, values)
    if reply is draft and candidate != draft.text:
        log.info("reply wording dropped: it named what the graph did not return")
    return reply


async def _worded(call: Call, d: ReplyDraft) -> ReplyDraft:
    if not d.reword or not d.text.strip():
        return d
    reply = await honest_words(call, Reply(d.text, list(d.how_i_know)), rows=d.rows, customer_text=d.customer_text)
    if reply.text == d.text:
        return d
    return replace(d, text=reply.text, how_i_know=list(reply.how_i_know))


def after(at: datetime, earlier: datetime | None) -> datetime:
    """A reply never predates what it answers, even with skewed clocks."""
    if earlier is not None and at <= earlier:
        return earlier + timedelta(milliseconds=1)
    return at


def reply_episode(call: Call, d: ReplyDraft) -> EpisodeInput:
    text = d.text if len(d.text) <= MAX_TEXT else d.text[: MAX_TEXT - 1] + "…"
    return EpisodeInput(
        session=d.session,
        speaker=call.agent,
        text=text,
        at=d.at,
        id=d.id,
        kind="AgentReply",
        agent=call.agent,
        customer=d.customer,
        reply_to=d.reply_to,
        ticket_id=d.ticket_id,
        how_i_know=list(d.how_i_know),
        answers=list(d.answers),
    )


def reply_written(call: Call, d: ReplyDraft) -> ReplyWritten:
    return ReplyWritten(tenant=call.tenant, id=d.id, version=max(0, int(d.version)), actor=call.agent,
                        session=d.session, reply_to=d.reply_to, ticket_id=d.ticket_id)


def announce_again(call: Call, d: ReplyDraft) -> None:
    """A reply stored before (a redelivered turn's) owes its ReplyWritten again: the first
    announcement may be what was lost. Writes nothing."""
    call.owe(reply_written(call, d))


async def store_replies(call: Call, drafts: list[ReplyDraft], *,
                        skip_existing: bool = True, embed: bool = True) -> list[ReplyDraft]:
    """Store the replies (those not stored yet, with skip_existing) in batches; owes nothing (see
    `write_replies` for the ones that are announced). Every reply is worded through `honest_words`
    first (replies already stored are not worded again). `embed=False` defers their vectors (the
    caller makes them once the reply is announced). Returns the ones written now, as written."""
    if not drafts:
        return []
    fresh = list(drafts)
    if skip_existing:
        have = await existing_episodes(call.client, call.tenant, [d.id for d in drafts])
        fresh = [d for d in drafts if d.id not in have]
    fresh = [await _worded(call, d) for d in fresh]
    for batch in iter_batches(fresh):
        await call.memory.write_episodes(call.tenant, [reply_episode(call, d) for d in batch], embed=embed)
    return fresh


async def write_replies(call: Call, drafts: list[ReplyDraft], *, skip_existing: bool = True,
                        embed: bool = True) -> list[ReplyDraft]:
    """Store the replies not stored yet (in batches); each owes its ReplyWritten on the call, in
    order, after whatever the call owed before (a ticket's change is announced before the reply
    about it). Returns the ones written now; replies already in the graph are neither written nor
    owed again."""
    fresh = await store_replies(call, drafts, skip_existing=skip_existing, embed=embed)
    call.owe(*(reply_written(call, d) for d in fresh))
    return fresh


async def write_reply(call: Call, draft: ReplyDraft) -> bool:
    """One reply; True if it was written now (False: it was there already)."""
    return bool(await write_replies(call, [draft]))
