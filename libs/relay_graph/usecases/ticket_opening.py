"""The writes the intake agent does on tickets: opening a customer's ticket and handing it to the
resolver, linking it to a known outage, a customer's reading and a callback promise on their open
ticket, and putting tickets back to the resolver once an address is placed or a case moved desk.

Each event goes through the ticket workflow (desk/tickets/workflow.py) before it is written:
`Reported` for an opening, `HandedOff`, `OutageLinked`, `MovedDesk` (usecases.customers.move_case),
`CustomerReading` and `Promised`. An event the workflow refuses (a closed ticket handed off, a
promise due in the past) writes nothing and owes nothing. Where the store writes a timeline step
from words given to it (a reading, a promise), the words are the workflow's step.

What each owes, recorded on the call (`Call.owe`; none announces): a handoff its TicketChanged
(handed_off), also for a repeat when `again` (a redelivered turn, a case that moved desk: the first
announcement may be what was lost); `remind_waiting` the TicketChanged of each of the customer's
tickets still waiting for the resolver. Linking an outage, a reading and a promise owe nothing (no
notification says them; the resolver re-reads the ticket).

May use: relay_graph.desk, relay_graph.runtime, relay_graph.usecases.tickets."""

from __future__ import annotations

from datetime import datetime, timezone, tzinfo

from relay_graph.desk import agent_reads
from relay_graph.desk.conversation import reads as talk_reads
from relay_graph.desk.conversation.reads import PromiseView
from relay_graph.desk.customers.zone import zone_named
from relay_graph.desk.network import store as network
from relay_graph.desk.network.models import Outage
from relay_graph.desk.tickets import store as tickets, work as ticket_work, workflow
from relay_graph.desk.tickets.models import Ticket, TicketStage
from relay_graph.runtime.errors import NotFound
from relay_graph.runtime.streams import TicketChanged
from relay_graph.usecases import tickets as ticket_cases
from relay_graph.usecases.context import Call

RESOLVER = "resolver"


def _allows(stage: TicketStage | str | None, event: workflow.TicketEvent) -> bool:
    """Whether the workflow takes `event` on a ticket in `stage` (None: no ticket yet). The guards
    used here read only the stage (and the event's own times)."""
    state = workflow.TicketState(stage=TicketStage(stage)) if stage is not None else None
    return workflow.refusal(state, event) is None


async def _add_step(call: Call, ticket_id: str, stage: TicketStage | str, event: workflow.TicketEvent,
                    at: datetime, zone: tzinfo | None = timezone.utc) -> None:
    """The workflow's step for `event` at `stage`, written on the ticket's timeline with its staff and
    customer words (`zone`: the clock the customer words are on). NotFound when the ticket is not here."""
    [step] = workflow.advance(workflow.TicketState(stage=TicketStage(stage)), event, zone=zone).steps
    await tickets.add_event(call.client, call.tenant, ticket_id, agent=call.agent, event=step.event,
                            detail=step.staff, at=at, customer_words=step.customer)


async def _hand_off(call: Call, ticket_id: str, stage: TicketStage | str, *, to_role: str, at: datetime | None,
                    detail: str | None, again: bool = False) -> Ticket | None:
    """usecases.tickets.hand_off behind the workflow's HandedOff: a ticket it refuses (closed) is
    neither handed nor announced (None). `at` None: the store's clock, as before."""
    if not _allows(stage, workflow.HandedOff(from_agent=call.agent, to_role=to_role, at=at or call.now())):
        return None
    return await ticket_cases.hand_off(call, ticket_id, to_role=to_role, at=at, detail=detail, again=again)


async def open_and_hand_off(call: Call, *, customer: str, issue_kind: str, summary: str, ticket_id: str,
                            session: str | None, detail: str, to_role: str = RESOLVER) -> Ticket:
    """Open the customer's ticket (`ticket_id`, derived from their turn: a redelivery opens no second
    one) and hand it to `to_role` as graph state (HANDED_OFF). A redelivered turn opens and hands
    nothing anew but owes the announcement all the same: it may be what was lost."""
    at = call.now()
    workflow.advance(None, workflow.Reported(issue=tickets.issue_key(issue_kind), summary=summary, at=at))
    ticket = await tickets.open_ticket(call.client, call.tenant, customer=customer, issue_kind=issue_kind,
                                       summary=summary, agent=call.agent, session=session, ticket_id=ticket_id,
                                       at=at)
    handed = await _hand_off(call, ticket.id, ticket.stage, to_role=to_role, at=at, detail=detail, again=True)
    return handed or ticket


async def link_outages(call: Call, stage: TicketStage | str, outages: list[Outage],
                       ticket_id: str | None = None) -> None:
    """Point the open tickets of the customers each outage reaches (the one the turn is about among
    them, in `stage`) at it (CAUSED_BY); `ticket_id` too, when its customer's line crosses the
    outage's node but they were placed after it opened. Owes nothing."""
    at = call.now()
    for o in outages:
        if _allows(stage, workflow.OutageLinked(outage_id=o.outage_id, node_name=o.node_name or o.node_id,
                                                since=o.opened_at, at=at)):
            await network.link_tickets_to_outage(call.client, call.tenant, o.outage_id)
            if ticket_id is not None:
                await network.link_ticket_to_outage(call.client, call.tenant, ticket_id, o.outage_id)


async def note_reading(call: Call, ticket_id: str, stage: TicketStage | str | None, direction: str, *,
                       at: datetime | None = None) -> bool:
    """The customer says it is better (or worse) now: a `customer_reading` step on their open ticket.
    False when the ticket is not here or the workflow refuses it (nothing written)."""
    at = at or call.now()
    event = workflow.CustomerReading(direction=direction, at=at)
    try:
        stage = stage if stage is not None else (await tickets.peek_ticket(call.client, call.tenant, ticket_id)).stage
    except NotFound:
        return False
    if not _allows(stage, event):
        return False
    try:
        await _add_step(call, ticket_id, stage, event, at)
    except NotFound:
        return False
    return True


async def promise_callback(call: Call, ticket_id: str, stage: TicketStage | str | None, text: str, due: datetime,
                           *, source: str, at: datetime | None = None) -> PromiseView | None:
    """Keep a promise on the customer's open ticket (once per source and wording) and its `promised`
    step. None when the ticket is not here or the workflow refuses it (a due time in the past)."""
    at = at or call.now()
    if stage is not None and not _allows(stage, workflow.Promised(promise_id="pr-0", text=text, due=due, at=at)):
        return None
    promise = await talk_reads.make_promise(call.client, call.tenant, ticket_id, text, due, agent=call.agent,
                                            source=source, at=at)
    if promise is None:
        return None
    event = workflow.Promised(promise_id=promise.promise_id, text=text, due=due, at=at)
    # the due time carries the customer's zone
    await _add_step(call, ticket_id, stage or TicketStage.REPORTED, event, at, zone=due.tzinfo)
    return promise


async def chase_promise(call: Call, ticket_id: str, stage: TicketStage | str, promise: PromiseView, *,
                        at: datetime | None = None) -> bool:
    """A promise past its due time on an open ticket, owned up to in a reply: marked chased (said
    once) and the workflow's `promise_chased` step on the ticket. False when the workflow refuses it
    or it was chased before (nothing written)."""
    at = at or call.now()
    event = workflow.PromiseChased(promise_id=promise.promise_id, text=promise.text, due=promise.due_at, at=at)
    if not _allows(stage, event):
        return False
    if not await talk_reads.chase_promise(call.client, call.tenant, ticket_id, promise.promise_id, at):
        return False
    try:
        await _add_step(call, ticket_id, stage, event, at, zone=zone_named(promise.due_zone) or timezone.utc)
    except NotFound:
        return False
    return True


async def tickets_back_after_address(call: Call, customer: str, to_role: str = RESOLVER) -> list[str]:
    """The customer's tickets the resolver handed back for want of an address go back to it now the
    address is placed (their work no longer needs it). Returns their ids."""
    back = []
    for s in await tickets.open_tickets_for(call.client, call.tenant, customer):
        work = await tickets.get_work(call.client, call.tenant, s.id)
        if work.needs != ticket_work.NEEDS_ADDRESS or s.owner is not None:
            continue
        await tickets.set_work(call.client, call.tenant, s.id, work.model_copy(update={"needs": None}))
        t = await _hand_off(call, s.id, s.stage, to_role=to_role, at=None,
                            detail="the address is placed: the line can be measured now")
        if t is not None and t.changed:
            back.append(t.id)
    return back


async def hand_moved_tickets(there: Call, customer: str, *, from_desk: str, to_role: str = RESOLVER) -> list[str]:
    """The customer's open tickets that arrived with their case at `there`'s desk go to its
    resolver. The copy keeps its handoff (a repeat writes nothing), so it is announced there anyway:
    that desk's resolver has never heard of it."""
    back = []
    for s in await tickets.open_tickets_for(there.client, there.tenant, customer):
        t = await _hand_off(there, s.id, s.stage, to_role=to_role, at=None, detail=f"moved from the {from_desk}",
                            again=True)
        if t is not None:
            back.append(t.id)
    return back


async def remind_waiting(call: Call, customer: str, to_role: str = RESOLVER) -> None:
    """A redelivered turn: each of the customer's open tickets no one holds that waits for `to_role`
    (handed off, or reopened) owes its TicketChanged again, in case that announcement was what got
    lost. Writes nothing."""
    for t in await tickets.open_tickets_for(call.client, call.tenant, customer):
        routing = await agent_reads.ticket_routing(call.client, call.tenant, t.id)
        if routing.owner is not None:
            continue
        if routing.stage == TicketStage.REOPENED.value:
            change = "reopened"
        elif routing.waiting_for == to_role:
            change = "handed_off"
        else:
            continue
        call.owe(TicketChanged(tenant=call.tenant, id=t.id, version=routing.version, change=change,
                               actor=call.agent))
