"""The intake agent: a customer's turn in; facts, a ticket and its handoff, and a reply out.

For each turn (re-read from the graph, never from the notification):

0. Guardrails (relay_graph.desk.conversation.guardrails) first: a prompt injection, a request for someone else's
   data, abuse or an off-topic request alone gets its fixed reply and nothing else runs (nothing is
   read, nothing written but the reply); a mixed-language message is worked in its English rewrite.
1. If the turn already has its reply (a redelivery after the reply was written), announce it again,
   re-announce any of the customer's tickets still waiting for the resolver, and stop.
2. Read what the graph holds about the customer (as reader "intake": CONSULTED), extract what the
   message says, retire what it says has ended and file what it says is true (source = the turn,
   valid_from = when it became true by the customer's words, else the turn's time).
3. Tickets, by what the customer said:
   - "it works now" / "still broken" (or a bare yes/no) while a ticket waits for their
     confirmation: tickets.confirm, TicketChanged(closed | reopened);
   - a problem: a known open outage reaching them is mentioned (and linked to the ticket); if
     they already have an open ticket for that kind of problem they hear where it stands; else a
     ticket opens (id derived from the turn: a redelivery never opens a second one) and is handed
     to the resolver as graph state (HANDED_OFF), then TicketChanged(handed_off);
   - "what is happening with my ticket?": where each open ticket stands.
4. What else the turn asks, each answered from the graph (relay_graph.desk.conversation): plans,
   prices, add-ons and coverage from the catalogue of the customer's country, a recommendation, a
   product we do not sell, an FAQ; for the open ticket a safe tip, a reading ("a bit better"), the
   stage and last step ("any update?"), a callback promise kept on the ticket. A session's first
   turn of a returning customer starts with a welcome back (the last ticket, an open promise).
5. Ask only for what is not on file ("Tell us once"): what a problem needs (NEEDED) minus what the
   graph already holds, whatever session it was learnt in, and only once per session (again only
   when this turn's new ticket needs it).
6. The reply is an AgentReply episode (id "r-" + turn id, reply_to the turn, the ticket, how I
   know, and `answers`: the kinds of answer it is made of), then ReplyWritten(version = the turn's
   sequence number).

Nothing here addresses the resolver: the handoff is graph state plus a thin notification.

The turn is one unit of work (`Deps.work`): everything it writes goes through the use cases on its
call (facts, usecases.ticket_opening, usecases.customers, usecases.replies), which record what they
owe; the call is flushed when the reply is stored, so the customer hears of the ticket's change and
then of the reply. The turn's and the reply's vectors are made after, in a second unit of work.
The module holds the orchestration; what it decides is in deciding.py (pure), the extraction in
extracting.py, the facts in filing.py, the tickets in ticketing.py, the home in placing.py, the
reply in replying.py.

A turn's latency is mostly its graph round trips one after another, so what does not depend on
something else runs at once: the facts on file, the open tickets and the extraction; then the
turn's facts (one batch, `Memory.write_facts`) beside its ticket work (a confirmation, which may
retire a fact, waits for the facts instead). The reply is still the last write.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from relay_graph.desk import agent_reads as desk
from relay_graph.desk import conversation
from relay_graph.desk.conversation import GUARD_KINDS, PLACEMENT_KINDS, AskKind, Part, ReplyKind
from relay_graph.desk.catalogue.brand import OWN_ROUTER_MAKER
from relay_graph.desk.conversation import compose, guardrails, reads as talk_reads, understood
from relay_graph.desk.conversation.reads import Returning
from relay_graph.desk.extraction import Extraction
from relay_graph.desk.tickets import store as tickets
from relay_graph.desk.tickets.status import ticket_status
from relay_graph.desk.tickets.models import TicketSummary
from relay_graph.memory import facts
from relay_graph.memory.models import FactView
from relay_graph.runtime.errors import NotFound
from relay_graph.runtime.stages import stage
from relay_graph.runtime.streams import TurnReceived
from relay_graph.usecases import customers as customer_cases, ticket_opening
from relay_graph.usecases.context import Call, Deps

from . import deciding, erasing, placing, ticketing
from .deciding import AGENT, HANDOFF_TO, NEEDED, Plan, Words
from .extracting import CONTEXT_TTL_S, extract, extraction_contexts
from .filing import Filed, file_facts
from .replying import IntakeActs, Turn, TurnResult, answer_again, reply
from .ticketing import TicketWork, confirm, ticket_work, together

log = logging.getLogger("services.intake")


async def answer_turn(deps: Deps, n: TurnReceived) -> TurnResult:
    """Answer one turn (see the module doc): its work in one unit of work, flushed once the reply is
    stored; then the vectors the turn and the reply lack."""
    with stage("intake.read_turn"):
        turn, done = await desk.get_turn_and_reply(deps.client, n.tenant, n.episode_id)
    if turn is None or not turn.text:
        # The gateway writes the turn before announcing it: retry, then the dead letters.
        raise NotFound(f"turn {n.episode_id!r} is not in the graph")
    this = Turn(n, turn, turn.customer or n.customer, turn.session or n.session, desk.reply_id_for(turn.episode_id))
    async with deps.work(n.tenant, AGENT) as call:
        result = await answer_again(call, this, done) if done is not None else await _answer(deps, call, this)
    # After the announcement (the customer waits for the reply, not for the model), before the turn
    # is acknowledged: a crash in between leaves them to the redelivery.
    with stage("intake.embed"):
        async with deps.work(n.tenant, AGENT) as call:
            await customer_cases.embed_turn(call, [turn.episode_id, result.reply.id])
    return result


@dataclass
class _Read:
    """What the turn's answer rests on, read at once (none depends on another)."""

    on_file: list[FactView]
    open_tickets: list[TicketSummary]
    extraction: Extraction
    said_before: talk_reads.SaidBefore  # this session's replies' answer labels (and the last reply's)
    before: Returning | None  # a session's first turn: what happened last time
    overdue: list  # (ticket id, stage, promise) past due on an open ticket, not owned up to yet


async def _read(deps: Deps, call: Call, this: Turn, text: str) -> _Read:
    first_turn = this.n.seq == 1
    on_file, open_tickets, extraction, said_before, before, overdue = await together(
        call.memory.facts(call.tenant, this.customer),
        tickets.open_tickets_for(call.client, call.tenant, this.customer),
        extract(deps, call.tenant, text),
        talk_reads.session_answers(call.client, call.tenant, this.session, this.reply_id),
        talk_reads.returning(call.client, call.tenant, this.customer, this.session) if first_turn else _nothing(),
        talk_reads.overdue_promises(call.client, call.tenant, this.customer, call.now()),
    )
    if overdue and before is not None:  # the welcome back does not repeat a promise said below as missed
        before = before._replace(promise=None, promise_due=None)
    return _Read(on_file, open_tickets, extraction, said_before, before, overdue)


async def _own_up(call: Call, read: _Read, tw: TicketWork) -> list[Part]:
    """The promises past due on a ticket still open after this turn: said honestly, once, and
    chased (usecases.ticket_opening.chase_promise)."""
    closed = tw.ticket.id if tw.ticket is not None and tw.ticket.closed_at is not None else None
    parts = []
    for ticket_id, ticket_stage, p in read.overdue:
        if ticket_id != closed and await ticket_opening.chase_promise(call, ticket_id, ticket_stage, p):
            parts.append(compose.promise_overdue(p.promise_id, p.text, p.due_at, p.due_zone, ticket_id))
    return parts


async def _answer(deps: Deps, call: Call, this: Turn) -> TurnResult:
    """A turn not answered yet: guardrails, what is read, the facts and the tickets, the home, the
    asks, the reply."""
    turn = this.episode
    # the customer's own names are not "another person": their id, and the names on file for them
    guard = guardrails.assess(turn.text, customer=[this.customer, *turn.customer_names])
    fixed = guardrails.fixed_reply(guard)
    if fixed is not None:  # refused or steered back: no tool runs, nothing is read or written
        words = Words([Part(GUARD_KINDS.get(guard.kind, ReplyKind.OFF_TOPIC), fixed)])
        return await reply(call, this, words, None, None, fixed=True)
    with stage("intake.read"):
        read = await _read(deps, call, this, guard.text)
    asks = deciding.merged_asks(conversation.recognise(guard.text), conversation.recognise(turn.text))
    asked = understood.asked_last(read.said_before.last)
    if "erase" in asked and (verdict := deciding.yes_or_no(guard.text)) is not None:
        return await erasing.answer(call, this, verdict)  # the answer to "shall I delete it?"
    read.extraction = _with_answers(read, asked, guard.text, asks)
    plan = deciding.plan(desk.ticket_id_for(turn.episode_id), read.extraction, guard.text, asks, read.open_tickets)
    words = deciding.opening_words(read.before, read.on_file, guard, read.extraction)
    with stage("intake.write"):
        filed, tw = await _work(call, this, read, plan)
        placed = await placing.place_home(deps, call, this.customer, turn, guard.text, filed.learnt,
                                          elsewhere=deciding.about_elsewhere(asks, read.extraction, guard.text))
        if placed is not None and read.extraction.problem is not None:  # a line placed this turn: its faults
            await ticketing.faults_after_placing(call, this.customer, tw, read.extraction.problem.kind.value)
        words.extend(tw.first)  # a known fault on their line is said first, before any troubleshooting
        words.extend(await _own_up(call, read, tw))
    if placed is not None:
        for part in placed.words:
            words.add(PLACEMENT_KINDS.get(placed.status, ReplyKind.PLACED), part)
    words.extend(tw.words)
    # a case that moved desk in this turn is answered from the desk it moved to (its catalogue, its prices)
    with stage("intake.talk"):
        talk = await _talk(deps, call, this, read, plan, tw, filed, asks,
                           placed.moved_to if placed is not None else None)
    words.extend(talk.parts)
    words.labels += talk.answers
    asked = deciding.to_ask(filed.current, tw.needed, read.open_tickets, read.said_before,
                            handed_off=tw.change == "handed_off")
    deciding.closing_words(words, learnt=filed.learnt, ended=filed.ended, current=filed.current, asked=asked,
                           extraction=read.extraction, asks=asks, open_tickets=read.open_tickets, text=guard.text)
    with stage("intake.reply"):
        now = await _stages_now(call, words)
        rows = (tw.ticket, *read.open_tickets, *tw.outages, *filed.learnt, *filed.ended, *filed.current,
                *talk.rows, *tw.rows, *now)
        result = await reply(call, this, words, tw.ticket, tw.change, rows=rows, customer_text=guard.text)
    result.learnt, result.ended, result.asked, result.outages = filed.learnt, filed.ended, asked, tw.outages
    return result


async def _stages_now(call: Call, words: Words) -> list:
    """The tickets whose stage the reply words, read again just before it is stored: the resolver
    may have moved one on while this turn was answered, and a reply says where a ticket stands
    when it is sent. A status part whose ticket moved is worded again from the fresh read."""
    ids = list(dict.fromkeys(p.ticket for p in words.parts if p.kind is ReplyKind.TICKET_STATUS and p.ticket))
    if not ids:
        return []
    fresh = {t.id: t for t in await together(*(tickets.peek_ticket(call.client, call.tenant, i) for i in ids))}
    for i, p in enumerate(words.parts):
        t = fresh.get(p.ticket) if p.kind is ReplyKind.TICKET_STATUS else None
        if t is not None:
            words.parts[i] = p._replace(reply=ticket_status(t.id, t.stage, t.updated_at, owner=t.owner))
    return list(fresh.values())


def _with_answers(read: _Read, asked: list[str], text: str, asks: list) -> Extraction:
    """The turn read as the answer to what the desk asked last (understood.py): what it answers
    beyond the extractor's facts, else, with no other business in it, the raw answer kept."""
    more = understood.understand(asked, text, read.extraction, own_router=f"{OWN_ROUTER_MAKER} router")
    if not more:
        raw = understood.raw_answer(asked, text, read.extraction, other_business=bool(asks))
        more = [raw] if raw is not None else []
    return understood.with_facts(read.extraction, more)


async def _work(call: Call, this: Turn, read: _Read, plan: Plan) -> tuple[Filed, TicketWork]:
    """The turn's facts and its ticket work. A confirmation may retire has_issue: it waits for the
    turn's own facts (one writer per slot); otherwise both chains touch different things and run
    at once. What was read is recorded as read by intake (CONSULTED) beside them."""
    seen = [f.fact_id for f in read.on_file]
    filing = file_facts(call, this.customer, this.episode, read.extraction, read.on_file)
    consulted = facts.record_consulted(call.client, call.tenant, AGENT, seen)
    if plan.verdict is not None:
        filed, _ = await together(filing, consulted)
        return filed, await confirm(call, this.episode, plan.awaiting[0], plan.verdict, filed.current)
    filed, tw, _ = await together(
        filing,
        ticket_work(call, this.customer, this.session, this.episode, read.extraction.problem, read.open_tickets, plan),
        consulted,
    )
    return filed, tw


async def _talk(deps: Deps, call: Call, this: Turn, read: _Read, plan: Plan, tw: TicketWork, filed: Filed,
                asks: list, moved_to: str | None) -> conversation.Answered:
    """What else the turn asks (plans, a tip, "it's a bit better"...), answered from the graph once
    the facts are filed and the ticket work is done. A case that moved desk in this turn is answered
    from the desk it moved to (its catalogue, its prices; a reading noted on its copy of the ticket),
    in a unit of work of that desk."""
    about = tw.ticket if tw.ticket is not None and tw.ticket.closed_at is None else None
    if about is None and plan.verdict is None and read.open_tickets:
        about = read.open_tickets[0]
    # "yes, it's better now" answered the confirmation: no reading on the ticket it just closed
    skip = {AskKind.UPDATE} | ({AskKind.READING} if plan.verdict is not None else set())
    ref = conversation.TicketRef(about.id, about.issue, getattr(about, "summary", "") or "",
                                 stage=about.stage.value) if about else None
    on_file_text = " ".join(f.object for f in filed.current if f.predicate == "has_issue")
    asks = deciding.follow_ups(asks, filed.learnt, filed.current)

    async def answer(c: Call) -> conversation.Answered:
        return await conversation.answer_asks(
            c.client, c.tenant, customer=this.customer, asks=[a for a in asks if a.kind not in skip],
            turn_id=this.episode.episode_id, at=call.now(), acts=IntakeActs(c, this.customer),
            said_before=read.said_before, open_ticket=ref, on_file_text=on_file_text,
            open_tickets=[t for t in read.open_tickets if tw.ticket is None or t.id != tw.ticket.id or
                          tw.ticket.closed_at is None])

    if not moved_to:
        return await answer(call)
    async with deps.work(moved_to, AGENT) as there:
        return await answer(there)


async def _nothing():
    return None


__all__ = ["AGENT", "CONTEXT_TTL_S", "HANDOFF_TO", "NEEDED", "TurnResult", "answer_turn", "extraction_contexts"]
