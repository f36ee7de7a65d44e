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

A turn's latency is mostly its graph round trips one after another, so what does not depend on
something else runs at once: the facts on file, the open tickets and the extraction; then the
turn's facts (one batch, `Memory.write_facts`) beside its ticket work (a confirmation, which may
retire a fact, waits for the facts instead). The reply is still the last write.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from relay_graph.desk import catalogue, conversation, agent_reads as desk

from relay_graph.desk.conversation import guardrails as guardrails

from relay_graph.desk.network import store as network

from relay_graph.desk.tickets import store as tickets
from relay_graph.memory import facts
from relay_graph.usecases import facts as fact_cases, tickets as ticket_cases
from relay_graph.usecases.context import Deps, announce
from relay_graph.usecases.replies import ReplyDraft, publish_reply, store_replies
from relay_graph.desk.tickets.status import OUTAGE_SYMPTOMS, ticket_status
from relay_graph.usecases.replies import after
from relay_graph.desk.conversation import (
    ASKED_PREFIX,
    GUARD_KINDS,
    PLACEMENT_KINDS,
    AskKind,
    Part,
    ReplyKind,
)
from relay_graph.desk.conversation import compose, reads as talk_reads
from relay_graph.desk.agent_reads import EpisodeView
from relay_graph.runtime.errors import NotFound
from relay_graph.desk.tickets.issues import issue_kind, issue_name
from relay_graph.desk.extraction import (
    ExtractionContext,
    Extraction,
    Intent,
    IssueKind,
    ProblemReport,
    resolve_hint,
)
from relay_graph.desk.conversation import templates as replies
from relay_graph.memory.models import FactInput, FactState, FactView, RetireInput
from relay_graph.desk.network.models import Outage
from relay_graph.runtime.streams import TicketChanged, TurnReceived
from relay_graph.desk.tickets.models import Ticket, TicketStage, TicketSummary

from . import placing

log = logging.getLogger("services.intake")

AGENT = "intake"
HANDOFF_TO = "resolver"
CUSTOMER = "customer"  # who confirms a fix, on the ticket's timeline

# What the desk needs on file before it can work a kind of problem (registry predicates).
NEEDED: dict[str, tuple[str, ...]] = {
    IssueKind.NO_CONNECTION.value: ("phone",),
    IssueKind.NO_SIGNAL_LIGHT.value: ("phone",),
    IssueKind.SLOW_SPEED.value: ("has_router",),
    IssueKind.WIFI_DROPS.value: ("has_router",),
    IssueKind.INTERMITTENT.value: ("has_router",),
    IssueKind.ROUTER_FROZEN.value: ("has_router",),
}

_YES = re.compile(r"^\W*(yes|yeah|yep|yup|sure|it does|all good|works)\b", re.I)
_NO = re.compile(r"^\W*(no|nope|nah|not really|still no)\b", re.I)


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


@dataclass
class _Words:
    """The reply's parts in order, each with its answer kind (recorded on the reply)."""

    parts: list[Part] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # extra answer labels: "ask:has_router", "tip:slow-wifi"

    def add(self, kind: ReplyKind, reply: replies.Reply | None) -> None:
        if reply is not None and reply.text:
            self.parts.append(Part(kind, reply))

    def extend(self, parts: list[Part]) -> None:
        for p in parts:
            self.add(p.kind, p.reply)

    @property
    def text(self) -> str:
        return " ".join(p.reply.text for p in self.parts)

    @property
    def how(self) -> list[str]:
        out: list[str] = []
        for p in self.parts:
            out += [h for h in p.reply.how_i_know if h not in out]
        return out

    @property
    def answers(self) -> tuple[str, ...]:
        kinds = list(dict.fromkeys(p.kind.value for p in self.parts))
        return tuple(kinds + [x for x in self.labels if x not in kinds])


# ---------------------------------------------------------------- the turn


async def answer_turn(deps: Deps, n: TurnReceived) -> TurnResult:
    tenant = n.tenant
    turn, done = await desk.get_turn_and_reply(deps.client, tenant, n.episode_id)
    if turn is None or not turn.text:
        # The gateway writes the turn before announcing it: retry, then the dead letters.
        raise NotFound(f"turn {n.episode_id!r} is not in the graph")
    customer = turn.customer or n.customer
    session = turn.session or n.session
    reply_id = desk.reply_id_for(turn.episode_id)

    if done is not None:
        return await _announce_again(deps, n, turn, done, customer)

    # the customer's own names are not "another person": their id, and the names on file for them
    guard = guardrails.assess(turn.text, customer=[customer, *turn.customer_names])
    fixed = guardrails.fixed_reply(guard)
    if fixed is not None:  # refused or steered back: no tool runs, nothing is read or written
        words = _Words([Part(GUARD_KINDS.get(guard.kind, ReplyKind.OFF_TOPIC), fixed)])
        return await _answer(deps, n, turn, customer, session, reply_id, words, None, None, fixed=True)

    # What is on file, the customer's open tickets, what the message says and what this session's
    # replies already asked, at once: none depends on another (a turn's latency is mostly its round
    # trips, one after another). A session's first turn also reads what happened last time.
    first_turn = n.seq == 1
    on_file, open_tickets, extraction, said_before, before = await _together(
        deps.memory.facts(tenant, customer),
        tickets.open_tickets_for(deps.client, tenant, customer),
        _extract(deps, tenant, guard.text),
        talk_reads.session_answers(deps.client, tenant, session, reply_id),
        talk_reads.returning(deps.client, tenant, customer, session) if first_turn else _nothing(),
    )
    asks = conversation.recognise(guard.text)
    seen = [f.fact_id for f in on_file]  # read as reader "intake": recorded beside the next step

    words = _Words()
    if before is not None and before.sessions_before > 0:
        name = next((f.object for f in on_file if f.predicate == "name" and f.state is FactState.CURRENT), None)
        words.extend([compose.welcome_back(name, before.ticket_id, before.summary, before.stage, before.updated_at,
                                           before.promise, before.promise_due)])
    if guard.kind is guardrails.GuardKind.ABUSE:  # an insult beside a real request: sorry, then help
        words.add(ReplyKind.APOLOGY, replies.Reply("I am sorry for the trouble; let me sort it out.", []))
    if extraction.about_someone_else:
        words.add(ReplyKind.REFUSED_OTHER_CUSTOMER, replies.refuse_other_customer())

    mine_id = desk.ticket_id_for(turn.episode_id)
    mine = next((t for t in open_tickets if t.id == mine_id), None)
    awaiting = [t for t in open_tickets if t.stage is TicketStage.FIXED and t.id != mine_id]
    verdict = _verdict(extraction, guard.text, awaiting) if mine is None else None
    problem = extraction.problem
    on_problem = verdict is None and problem is not None and (mine is not None or extraction.intent in (
        Intent.REPORT_PROBLEM, Intent.CONFIRM_NOT_FIXED) or problem.kind is not IssueKind.OTHER)
    if any(a.kind is AskKind.READING for a in asks) and problem is not None and problem.kind is IssueKind.OTHER:
        on_problem = False  # "it's a bit better now" is a reading on the open ticket, not a new problem
    wants_update = extraction.intent is Intent.ASK_STATUS or any(a.kind is AskKind.UPDATE for a in asks)

    if verdict is not None:
        # The confirmation may retire has_issue: after the turn's own facts, one writer per slot.
        filed, _ = await _together(_file_facts(deps, tenant, customer, turn, extraction, on_file),
                                   facts.record_consulted(deps.client, tenant, AGENT, seen))
        tw = await _confirm(deps, tenant, customer, turn, awaiting[0], verdict, filed[2])
    else:
        # The turn's facts and its ticket work touch different things: both chains run at once.
        filed, tw, _ = await _together(
            _file_facts(deps, tenant, customer, turn, extraction, on_file),
            _ticket_work(deps, tenant, customer, session, turn, extraction, open_tickets, mine, on_problem,
                         wants_update),
            facts.record_consulted(deps.client, tenant, AGENT, seen),
        )
    learnt, ended, current = filed
    placed = await placing.place_home(deps, tenant, customer, turn, guard.text, learnt)
    if placed is not None:
        for part in placed.words:
            words.add(PLACEMENT_KINDS.get(placed.status, ReplyKind.PLACED), part)
    words.extend(tw.words)
    result_ticket, change, outages, needed = tw.ticket, tw.change, tw.outages, tw.needed
    known = {f.predicate: f.object for f in current if f.state is FactState.CURRENT and f.valid_to is None}

    # What else the turn asks (plans, a tip, "it's a bit better"...), answered from the graph once
    # the facts are filed and the ticket work is done.
    about = result_ticket if result_ticket is not None and result_ticket.closed_at is None else None
    if about is None and verdict is None and open_tickets:
        about = open_tickets[0]
    # "yes, it's better now" answered the confirmation: no reading on the ticket it just closed
    skip = {AskKind.UPDATE} | ({AskKind.READING} if verdict is not None else set())
    # a case that moved desk in this turn is answered from the desk it moved to (its catalogue, its prices)
    talk_tenant = placed.moved_to if placed is not None and placed.moved_to else tenant
    talk = await conversation.answer_asks(
        deps.client, talk_tenant, customer=customer, asks=[a for a in asks if a.kind not in skip],
        turn_id=turn.episode_id, at=deps.now(), agent=AGENT, said_before=said_before,
        open_ticket=conversation.TicketRef(about.id, about.issue, getattr(about, "summary", "") or "") if about else None,
        on_file_text=" ".join(f.object for f in current if f.predicate == "has_issue"))
    words.extend(talk.parts)
    words.labels += talk.answers

    if not needed:
        # what the customer's open tickets still need, so a later turn can fill the gaps
        for t in open_tickets:
            needed += tuple(p for p in NEEDED.get(t.issue, ()) if p not in needed)
    missing = replies.missing_info(known, needed)
    # Ask once per session; again only when this turn's new ticket needs it for its next step.
    asked = [m for m in missing if ASKED_PREFIX + m not in said_before or tw.change == "handed_off"]
    if learnt or ended:
        words.add(ReplyKind.NOTED, replies.acknowledge(learnt, ended, on_file=current))
    if asked:
        words.add(ReplyKind.ASK, replies.Reply(replies.ask_for(asked), []))
        words.labels += [ASKED_PREFIX + m for m in asked]
    if not words.parts:
        if extraction.intent is Intent.GREETING:
            words.add(ReplyKind.GREETING, replies.greeting(current))
        elif extraction.intent is Intent.OFF_TOPIC:
            words.add(ReplyKind.OFF_TOPIC, replies.refuse_off_topic())
        elif extraction.intent in (Intent.CONFIRM_FIXED, Intent.CONFIRM_NOT_FIXED) and open_tickets:
            for t in open_tickets:
                words.add(ReplyKind.TICKET_STATUS, ticket_status(t.id, t.stage, t.updated_at, owner=t.owner))
        elif any(a.kind is AskKind.FAQ for a in asks):  # a question no help article of ours answers
            words.add(ReplyKind.CLARIFY, replies.Reply(
                "I'm sorry, I have no answer to that in our help articles. I can help with your connection and "
                "its tickets, and with our plans, prices and coverage: tell me what you need.", []))
        else:
            words.add(ReplyKind.CLARIFY, replies.Reply(
                "Thanks for your message. Could you tell me a little more about what you need help with?", []))

    rows = (result_ticket, *open_tickets, *outages, *learnt, *ended, *current, *talk.rows, *tw.rows)
    result = await _answer(deps, n, turn, customer, session, reply_id, words, result_ticket, change,
                           rows=rows, customer_text=guard.text, owed=tw.owed)
    result.learnt, result.ended, result.asked, result.outages = learnt, ended, asked, outages
    return result


async def _nothing():
    return None


@dataclass
class _TicketWork:
    """What the turn did about tickets, and its words about them."""

    ticket: Ticket | None = None
    change: str | None = None
    owed: list = field(default_factory=list)  # the notifications it owes: announced once the reply is stored
    outages: list[Outage] = field(default_factory=list)
    needed: tuple[str, ...] = ()
    words: list[Part] = field(default_factory=list)
    rows: list = field(default_factory=list)


async def _confirm(deps: Deps, tenant: str, customer: str, turn: EpisodeView, target: TicketSummary,
                   verdict: bool, current: list[FactView]) -> _TicketWork:
    """The customer's answer to "is it working now?" for the ticket waiting for it (`current`: the
    customer's current facts after this turn's were filed)."""
    call = deps.call(tenant, AGENT)
    ticket = await ticket_cases.confirm_fix(
        call, target.id, fixed=verdict, by=CUSTOMER,
        detail=f"the customer's message {turn.episode_id}", at=deps.now(), issues_at=turn.at, current=current,
    )
    owed = call.owed  # recorded on the call; announced once the reply is stored
    words = [Part(ReplyKind.CONFIRMATION,
                  replies.confirmation_received(ticket.id, verdict, ticket.stage.value, ticket.updated_at))]
    return _TicketWork(ticket=ticket, change="closed" if verdict else "reopened", words=words, owed=owed)


async def _ticket_work(deps: Deps, tenant: str, customer: str, session: str, turn: EpisodeView,
                       extraction: Extraction, open_tickets: list[TicketSummary], mine: TicketSummary | None,
                       on_problem: bool, wants_update: bool = False) -> _TicketWork:
    """A problem: a known open outage reaching them is mentioned (and linked to the ticket); the
    open ticket for that kind of problem is where it stands, else a ticket opens and is handed
    off. "Any update?": where each open ticket stands and its last step. Otherwise, with one open
    ticket, that ticket (read for the reply's rows)."""
    mine_id = desk.ticket_id_for(turn.episode_id)
    out = _TicketWork()
    problem = extraction.problem
    if on_problem:
        assert problem is not None
        kind = problem.kind.value
        out.needed = NEEDED.get(kind, ())
        same = mine or next((t for t in open_tickets if t.issue == tickets.issue_key(kind)), None)
        if same is None and problem.kind is IssueKind.OTHER and open_tickets:
            same = open_tickets[0]  # "still not working": about the ticket they already have
        reached = _open_outages(deps, tenant, customer) if kind in OUTAGE_SYMPTOMS else _no_outages()
        if same is not None and same.id != mine_id:
            out.outages, out.ticket = await _together(reached, tickets.peek_ticket(deps.client, tenant, same.id))
            for o in out.outages:
                await network.link_tickets_to_outage(deps.client, tenant, o.outage_id)
                out.words.append(Part(ReplyKind.OUTAGE, replies.outage_notice(
                    o.outage_id, o.node_name, o.opened_at, cause=o.cause, ticket_id=same.id)))
            if wants_update:
                parts, rows = await conversation.update_parts(deps.client, tenant, [same.id])
                out.words += parts
                out.rows += rows
            else:
                out.words.append(Part(ReplyKind.TICKET_STATUS,
                                      ticket_status(same.id, same.stage, same.updated_at, owner=same.owner)))
        else:
            out.outages, (out.ticket, out.owed) = await _together(
                reached, _open_and_hand_off(deps, tenant, customer, session, turn, problem, mine_id))
            out.change = "handed_off"
            for o in out.outages:
                await network.link_tickets_to_outage(deps.client, tenant, o.outage_id)
                out.words.append(Part(ReplyKind.OUTAGE, replies.outage_notice(
                    o.outage_id, o.node_name, o.opened_at, cause=o.cause, ticket_id=out.ticket.id)))
            out.words.append(Part(ReplyKind.TICKET_OPENED, replies.ticket_opened(
                out.ticket.id, out.ticket.opened_at, AGENT, problem.summary, handed_to=HANDOFF_TO,
                handed_at=out.ticket.updated_at)))
        return out
    if wants_update:
        parts, rows = await conversation.update_parts(deps.client, tenant, [t.id for t in open_tickets])
        out.words += parts
        out.rows += rows
        if not open_tickets:
            out.words.append(compose.no_open_ticket(ReplyKind.UPDATE))
    if len(open_tickets) == 1:
        out.ticket = await tickets.peek_ticket(deps.client, tenant, open_tickets[0].id)
    return out


async def _answer(deps: Deps, n: TurnReceived, turn: EpisodeView, customer: str, session: str, reply_id: str,
                  words: _Words, ticket: Ticket | None, change: str | None, *, rows: tuple = (),
                  customer_text: str | None = None, fixed: bool = False, owed: list = ()) -> TurnResult:
    """Store the reply (the turn's last graph write: once it exists a redelivery only announces
    again), announce what the ticket work owes (`owed`: its change), then the reply. The templated
    words are reworded (or not) by agents.replies.honest_words, held to the graph rows of this
    turn; a guardrail's fixed reply is sent as it is."""
    tenant = n.tenant
    draft = ReplyDraft(
        id=reply_id, session=session, customer=customer, text=words.text, reply_to=turn.episode_id,
        version=n.seq, at=after(deps.now(), turn.at), ticket_id=ticket.id if ticket else None,
        how_i_know=words.how, rows=tuple(r for r in rows if r is not None), customer_text=customer_text,
        reword=not fixed, answers=words.answers,
    )
    # The reply is stored and announced before its vector and the turn's are made (the customer
    # waits for the reply, not for the model); the vectors follow before the turn is acknowledged,
    # so a crash in between leaves them to the redelivery (_announce_again).
    draft = (await store_replies(deps, tenant, [draft], skip_existing=False, embed=False))[0]
    await announce(deps, *owed)
    await publish_reply(deps, tenant, draft)
    await deps.memory.embed_missing(tenant, [turn.episode_id, draft.id])
    return TurnResult(reply=draft, ticket=ticket, change=change, answers=list(words.answers))


# ---------------------------------------------------------------- steps


CONTEXT_TTL_S = 30.0  # a region seeded meanwhile is known to the extractor this much later at most
_CONTEXT_TENANTS = 256


def extraction_contexts(deps: Deps) -> "OrderedDict[str, tuple[float, ExtractionContext]]":
    """The extraction contexts read lately, by tenant, kept with the process's graph client."""
    return deps.client.kept("intake.extraction_contexts", OrderedDict)


async def _extraction_context(deps: Deps, tenant: str) -> ExtractionContext:
    """The tenant catalogue's cities, plans and routers for the extractor, read at most once per
    CONTEXT_TTL_S per tenant (empty when the tenant has no catalogue: the extractor's own lists)."""
    cache = extraction_contexts(deps)
    now = time.monotonic()
    hit = cache.get(tenant)
    if hit is not None and now - hit[0] < CONTEXT_TTL_S:
        return hit[1]
    ctx = await catalogue.extraction_context(deps.client, tenant)
    cache[tenant] = (now, ctx)
    cache.move_to_end(tenant)
    while len(cache) > _CONTEXT_TENANTS:
        cache.popitem(last=False)
    return ctx


async def _extract(deps: Deps, tenant: str, text: str) -> Extraction:
    return await deps.extractor.extract(text, await _extraction_context(deps, tenant))


async def _together(*steps):
    """Run independent steps at once; their results in order. If one fails, the others are still
    awaited (no write left running behind the handler's back), then the first error is raised."""
    results = await asyncio.gather(*steps, return_exceptions=True)
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results


async def _no_outages() -> list[Outage]:
    return []


async def _file_facts(deps: Deps, tenant: str, customer: str, turn: EpisodeView, extraction: Extraction,
                      on_file: list[FactView]) -> tuple[list[FactView], list[FactView], list[FactView]]:
    """Retire what ended, write what is true (in one batch: `Memory.write_facts`). Returns
    (learnt, ended, everything current after)."""
    at = turn.at
    by_id = {f.fact_id: f for f in on_file}
    ended: list[FactView] = []
    call = deps.call(tenant, AGENT)
    changes = []
    for f in extraction.facts:
        if not f.ended:
            continue
        valid_to = _when(f.valid_from_hint, at)
        retired, retiring = await fact_cases.retire_fact(call, RetireInput(
            subject=customer, predicate=f.predicate, object=f.object, agent=AGENT, valid_to=valid_to))
        changes += retiring
        ended += [by_id[fid] for fid in retired if fid in by_id]
    items = [FactInput(subject=customer, predicate=f.predicate, object=f.object, agent=AGENT,
                       valid_from=_when(f.valid_from_hint, at), source=turn.episode_id)
             for f in extraction.facts if not f.ended]
    problem = extraction.problem
    if problem is not None and problem.kind is not IssueKind.OTHER and extraction.intent is not Intent.CONFIRM_FIXED:
        items.append(FactInput(subject=customer, predicate="has_issue", object=_issue(problem, at, on_file),
                               agent=AGENT, valid_from=_when(problem.time, at), source=turn.episode_id))
    results, writing = await fact_cases.write_facts(call, items)
    await call.announce(changes + writing)
    written = {r.fact_id for r in results}
    if not written and not ended:
        return [], [], on_file
    current = await deps.memory.facts(tenant, customer)
    learnt = [f for f in current if f.fact_id in written and f.predicate != "has_issue"]
    return learnt, ended, current


def _issue(problem: ProblemReport, at, on_file: list[FactView]) -> str:
    """The Issue the problem is (issues.issue_name): its kind with the device, place and time named,
    a time they said resolved to its day. "Still dropping", with no detail, is the issue of that
    kind already on file (the newest), not a second one."""
    kind = problem.kind.value
    if not (problem.device or problem.place or problem.time):
        known = [f for f in on_file if f.predicate == "has_issue" and issue_kind(f.object) == kind]
        if known:
            return max(known, key=lambda f: f.recorded_at).object
    day = _when(problem.time, at) if problem.time else None
    when = day if day is not None and day != at else problem.time
    return issue_name(kind, device=problem.device, place=problem.place, time=when)


def _when(hint: str | None, at):
    """The customer's words for a time, else the turn's time; never after the turn (what is
    planned for later is not a fact yet)."""
    if at is None:
        return None
    try:
        resolved = resolve_hint(hint, at) if hint else None
    except Exception:  # a hint we cannot place is no reason to lose the fact
        resolved = None
    return resolved if resolved is not None and resolved <= at else at


def _verdict(extraction: Extraction, text: str, awaiting: list[TicketSummary]) -> bool | None:
    """The customer's answer to "is it working now?", when a ticket is waiting for it."""
    if not awaiting:
        return None
    if extraction.intent is Intent.CONFIRM_FIXED:
        return True
    if extraction.intent is Intent.CONFIRM_NOT_FIXED:
        return False
    problem = extraction.problem
    if problem is not None and (problem.kind is IssueKind.OTHER
                                or tickets.issue_key(problem.kind.value) == awaiting[0].issue):
        return False  # the same problem again: the fix did not hold
    if problem is None and extraction.intent in (Intent.OTHER, Intent.GREETING):
        if _NO.match(text):
            return False
        if _YES.match(text):
            return True
    return None


async def _open_outages(deps: Deps, tenant: str, customer: str) -> list[Outage]:
    try:
        return await network.open_outages_for_customer(deps.client, tenant, customer)
    except NotFound:
        return []


async def _open_and_hand_off(deps: Deps, tenant: str, customer: str, session: str, turn: EpisodeView,
                             problem, ticket_id: str) -> tuple[Ticket, list]:
    """Opens the turn's ticket and hands it to the resolver. A redelivered turn opens and hands
    nothing anew but owes the announcement all the same: it may be what was lost."""
    now = deps.now()
    ticket = await tickets.open_ticket(
        deps.client, tenant, customer=customer, issue_kind=problem.kind.value, summary=problem.summary,
        agent=AGENT, session=session, ticket_id=ticket_id, at=now,
    )
    call = deps.call(tenant, AGENT)
    handed = await ticket_cases.hand_off(
        call, ticket.id, to_role=HANDOFF_TO, at=now, again=True,
        detail=f"{problem.summary} (from the customer's message {turn.episode_id})",
    )
    return handed, call.owed


async def _announce_ticket(deps: Deps, tenant: str, ticket_id: str, change: str, version: int) -> None:
    await announce(deps, TicketChanged(tenant=tenant, id=ticket_id, version=version, change=change,
                                               actor=AGENT))


async def _announce_again(deps: Deps, n: TurnReceived, turn: EpisodeView, done: EpisodeView,
                          customer: str) -> TurnResult:
    """The turn was answered before (the notification came again, or the first delivery died after
    writing the reply). Announce the reply again, and any of the customer's tickets still waiting
    for the resolver in case that announcement was what got lost. Nothing is written but the
    turn's and the reply's vectors, if the first delivery died before making them."""
    tenant = n.tenant
    for t in await tickets.open_tickets_for(deps.client, tenant, customer):
        routing = await desk.ticket_routing(deps.client, tenant, t.id)
        if routing.owner is None and routing.stage == TicketStage.REOPENED.value:
            await _announce_ticket(deps, tenant, t.id, "reopened", routing.version)
        elif routing.owner is None and routing.waiting_for == HANDOFF_TO:
            await _announce_ticket(deps, tenant, t.id, "handed_off", routing.version)
    draft = ReplyDraft(
        id=done.episode_id, session=done.session or turn.session or n.session, customer=customer,
        text=done.text or "", reply_to=turn.episode_id, version=n.seq, at=done.at or deps.now(),
        ticket_id=done.ticket_id, how_i_know=done.how_i_know,
    )
    await publish_reply(deps, tenant, draft)
    await deps.memory.embed_missing(tenant, [turn.episode_id, done.episode_id])
    log.info("turn %s was answered before (%s); announced again", turn.episode_id, done.episode_id)
    return TurnResult(reply=draft, redelivered=True)
