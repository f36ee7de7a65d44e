"""A turn's ticket work: the customer's word on a fix, a problem (a known outage reaching them, the
ticket they already have for it, else a new ticket handed to the resolver), "any update?". Reads
the tickets and writes through the use cases (usecases.tickets, usecases.ticket_opening) on the
turn's call; returns the words the reply says about them."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from relay_graph.desk import agent_reads as desk
from relay_graph.desk import conversation
from relay_graph.desk.agent_reads import EpisodeView
from relay_graph.desk.conversation import Part, ReplyKind, compose
from relay_graph.desk.conversation import templates as replies
from relay_graph.desk.extraction import IssueKind, ProblemReport
from relay_graph.desk.network import store as network
from relay_graph.desk.network.models import Outage, PathFault
from relay_graph.desk.tickets import store as tickets
from relay_graph.desk.tickets.models import Ticket, TicketSummary
from relay_graph.desk.tickets.status import OUTAGE_SYMPTOMS, ticket_status
from relay_graph.memory.models import FactView
from relay_graph.runtime.errors import NotFound
from relay_graph.usecases import ticket_opening, tickets as ticket_cases
from relay_graph.usecases.context import Call

from .deciding import AGENT, CUSTOMER, HANDOFF_TO, NEEDED, Plan


@dataclass
class TicketWork:
    """What the turn did about tickets, and its words about them."""

    ticket: Ticket | None = None
    change: str | None = None  # the TicketChanged change it owes, if any
    outages: list[Outage] = field(default_factory=list)
    faults: list[PathFault] = field(default_factory=list)  # nodes on their line not up, no outage open yet
    first: list[Part] = field(default_factory=list)  # said before anything else: a known fault on their line
    needed: tuple[str, ...] = ()
    words: list[Part] = field(default_factory=list)
    rows: list = field(default_factory=list)


async def together(*steps):
    """Run independent steps at once; their results in order. If one fails, the others are still
    awaited (no write left running behind the handler's back), then the first error is raised."""
    results = await asyncio.gather(*steps, return_exceptions=True)
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results


async def confirm(call: Call, turn: EpisodeView, target: TicketSummary, verdict: bool,
                  current: list[FactView]) -> TicketWork:
    """The customer's answer to "is it working now?" for the ticket waiting for it (`current`: the
    customer's current facts after this turn's were filed)."""
    booked = [v for v in await tickets.visits_of(call.client, call.tenant, target.id) if v.status == "scheduled"]
    ticket = await ticket_cases.confirm_fix(
        call, target.id, fixed=verdict, by=CUSTOMER, detail=f"the customer's message {turn.episode_id}",
        at=call.now(), issues_at=turn.at, current=current)  # what it owes is on the call (a booked visit goes)
    said = replies.confirmation_received(ticket.id, verdict, ticket.stage.value, ticket.updated_at)
    if verdict and ticket.closed_at is not None and booked:
        after = {v.visit_id: v.status for v in await tickets.visits_of(call.client, call.tenant, target.id)}
        gone = [v for v in booked if after.get(v.visit_id) != "scheduled"]
        if gone:  # said only when the visit really is off the books
            said = replies.Reply(said.text + " The technician visit that was booked is cancelled: nobody needs "
                                 "to come.", said.how_i_know + [f"visit {v.visit_id}: {after.get(v.visit_id)}"
                                                                for v in gone])
    return TicketWork(ticket=ticket, change="closed" if verdict else "reopened",
                      words=[Part(ReplyKind.CONFIRMATION, said)])


async def ticket_work(call: Call, customer: str, session: str, turn: EpisodeView, problem: ProblemReport | None,
                      open_tickets: list[TicketSummary], plan: Plan) -> TicketWork:
    """A problem (see `_on_problem`). "Any update?": where each open ticket stands and its last
    step. Otherwise, with one open ticket, that ticket (read for the reply's rows)."""
    if plan.on_problem:
        assert problem is not None
        return await _on_problem(call, customer, session, turn, problem, open_tickets, plan)
    out = TicketWork()
    if plan.wants_update:
        parts, rows = await conversation.update_parts(call.client, call.tenant, [t.id for t in open_tickets],
                                                        now=call.now())
        out.words += parts
        out.rows += rows
        if not open_tickets:
            out.words.append(compose.no_open_ticket(ReplyKind.UPDATE))
    if len(open_tickets) == 1:
        out.ticket = await tickets.peek_ticket(call.client, call.tenant, open_tickets[0].id)
    return out


async def _on_problem(call: Call, customer: str, session: str, turn: EpisodeView, problem: ProblemReport,
                      open_tickets: list[TicketSummary], plan: Plan) -> TicketWork:
    """A known open outage reaching them is mentioned (and linked to the ticket); the open ticket
    for that kind of problem is where it stands, else a ticket opens and is handed off."""
    mine_id = desk.ticket_id_for(turn.episode_id)
    kind = problem.kind.value
    out = TicketWork(needed=NEEDED.get(kind, ()))
    same = plan.mine or next((t for t in open_tickets if t.issue == tickets.issue_key(kind)), None)
    if same is None and problem.kind is IssueKind.OTHER and open_tickets:
        same = open_tickets[0]  # "still not working": about the ticket they already have
    reached = _known_faults(call, customer) if kind in OUTAGE_SYMPTOMS else _no_faults()
    if same is not None and same.id != mine_id:
        (out.outages, out.faults), out.ticket = await together(reached, tickets.peek_ticket(call.client, call.tenant,
                                                                                            same.id))
        await _outage_words(call, out, same.id)
        if plan.wants_update:
            parts, rows = await conversation.update_parts(call.client, call.tenant, [same.id], now=call.now())
            out.words += parts
            out.rows += rows
        else:
            out.words.append(Part(ReplyKind.TICKET_STATUS,
                                  ticket_status(same.id, same.stage, same.updated_at, owner=same.owner), same.id))
        return out
    (out.outages, out.faults), out.ticket = await together(reached, ticket_opening.open_and_hand_off(
        call, customer=customer, issue_kind=kind, summary=problem.summary, ticket_id=mine_id, session=session,
        to_role=HANDOFF_TO, detail=f"{problem.summary} (from the customer's message {turn.episode_id})"))
    out.change = "handed_off"
    await _outage_words(call, out, out.ticket.id)
    out.words.append(Part(ReplyKind.TICKET_OPENED, replies.ticket_opened(
        out.ticket.id, out.ticket.opened_at, AGENT, problem.summary, handed_to=HANDOFF_TO,
        handed_at=out.ticket.updated_at)))
    return out


async def faults_after_placing(call: Call, customer: str, out: TicketWork, issue: str) -> None:
    """A customer whose line was placed in this turn (after its ticket work): the faults on the line
    they now have, said first and linked to the ticket the turn opened."""
    if out.ticket is None or out.change != "handed_off" or out.outages or out.faults or issue not in OUTAGE_SYMPTOMS:
        return
    out.outages, out.faults = await _known_faults(call, customer)
    await _outage_words(call, out, out.ticket.id)


async def _outage_words(call: Call, out: TicketWork, ticket_id: str) -> None:
    """The outages (and faults not yet an outage) on the customer's line, linked to their open
    tickets and said first in the reply."""
    assert out.ticket is not None
    await ticket_opening.link_outages(call, out.ticket.stage, out.outages, ticket_id=ticket_id)
    for o in out.outages:
        out.first.append(Part(ReplyKind.OUTAGE, replies.outage_notice(
            o.outage_id, o.node_name, o.opened_at, cause=o.cause, ticket_id=ticket_id)))
    for f in out.faults:
        out.first.append(Part(ReplyKind.OUTAGE, replies.fault_notice(f.node_id, f.node_name, f.status, f.since,
                                                                     ticket_id=ticket_id)))
    out.rows += out.faults


async def _known_faults(call: Call, customer: str) -> tuple[list[Outage], list[PathFault]]:
    """The open outages reaching the customer (those that list them, and those on a node of their
    line, the path the network uses now) and the nodes of that line down or degraded with no
    outage open yet."""
    affecting, faults = await together(_open_outages(call, customer),
                                       network.path_faults(call.client, call.tenant, customer))
    seen = {o.outage_id for o in affecting}
    more = [f.outage for f in faults if f.outage is not None and f.outage.outage_id not in seen]
    return affecting + more, [f for f in faults if f.outage is None]


async def _open_outages(call: Call, customer: str) -> list[Outage]:
    try:
        return await network.open_outages_for_customer(call.client, call.tenant, customer)
    except NotFound:
        return []


async def _no_faults() -> tuple[list[Outage], list[PathFault]]:
    return [], []
