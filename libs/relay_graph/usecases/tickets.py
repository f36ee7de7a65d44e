"""Every write to a ticket, through the ticket workflow (relay_graph.desk.tickets.workflow).

Each use case reads the ticket's state (`workflow.state_of` over the ticket, its work and its
visits), builds the typed event, asks `workflow.advance` and writes exactly the steps the
transition returns (the staff's and the customer's words), with the stage move and the working
state, in one statement (tickets.write_steps). A refused event raises StepRefused and nothing is
written. What a write owes (TicketChanged, FactChanged) is recorded on the Call (`call.owe`); the
one who made the Call flushes it. The actor is the call's agent.

`version`: the ticket's version the caller decided on; when the ticket moved on since (a stale
notification, the customer's answer, another replica) nothing is written and the ticket comes
back with changed=False. May use the desk's ticket modules and memory (close_issues)."""

from __future__ import annotations

from datetime import datetime, timezone, tzinfo
from typing import Awaitable, Callable, Sequence

from relay_graph.desk.tickets import store as tickets
from relay_graph.desk.tickets import workflow
from relay_graph.desk.tickets.issues import close_issues
from relay_graph.desk.tickets.models import Escalation, FixResult, TechVisit, Ticket, TicketStage
from relay_graph.desk.tickets.work import Work
from relay_graph.memory.models import FactView
from relay_graph.runtime.streams import TicketChanged
from relay_graph.usecases.context import Call, fact_changes

UTC: tzinfo = timezone.utc


async def state(call: Call, ticket_id: str) -> tuple[Ticket, Work, workflow.TicketState]:
    """The ticket, its work and the state the workflow's guards read."""
    t = await tickets.peek_ticket(call.client, call.tenant, ticket_id)
    work = await tickets.get_work(call.client, call.tenant, ticket_id)
    visits = await tickets.visits_of(call.client, call.tenant, ticket_id)
    return t, work, workflow.state_of(t, work, visits)


def _owe_stage(call: Call, t: Ticket, change: str = "stage") -> None:
    call.owe(TicketChanged(tenant=call.tenant, id=t.id, version=t.version, change=change, actor=call.agent))


async def record(call: Call, ticket_id: str, event: workflow.TicketEvent, *, version: int | None = None,
                 work: Work | None = None, zone: tzinfo = UTC,
                 before: Callable[[workflow.Transition], Awaitable[object]] | None = None) -> Ticket:
    """`event` on the ticket: the workflow's steps written (and `work`, the working state after it),
    the stage moved when the transition moves it (TicketChanged "stage" owed). `before` runs after
    the workflow accepted the event and before the steps are written (the write the steps tell
    of: a visit booked, a fix counted). Raises StepRefused (nothing written) when it does not fit.
    A ticket whose version is not `version` is left alone: returned with changed=False."""
    t, _, s = await state(call, ticket_id)
    if version is not None and t.version != version:
        return t.model_copy(update={"changed": False})
    tr = workflow.advance(s, event, zone=zone)
    if before is not None:
        await before(tr)
    steps = [(x.event, x.staff, x.customer) for x in tr.steps]
    if not tr.moved:
        return await tickets.write_steps(call.client, call.tenant, t.id, agent=call.agent, steps=steps,
                                         expected_version=t.version, work=work, at=call.now())
    new = await tickets.set_stage(call.client, call.tenant, t.id, stage=tr.stage, agent=call.agent, steps=steps,
                                  expected_version=t.version, work=work, at=call.now())
    if new.changed:
        _owe_stage(call, new)
    return new


# ---------------------------------------------------------------- claims and handoffs


async def claim(call: Call, ticket_id: str, *, replica: str, take_over: str | None = None,
                lease_ms: int | None = None) -> bool:
    """The call's agent picks the ticket up on `replica` (tickets.claim: exactly one racing replica
    wins). The `picked_up` step's words are the workflow's (PickedUp); a closed ticket is refused
    (False). TicketChanged "picked_up" is owed when the ticket was not this replica's already."""
    t, _, s = await state(call, ticket_id)
    event = workflow.PickedUp(at=call.now(), agent=call.agent, replica=replica)
    if workflow.refusal(s, event) is not None:
        return False
    (step,) = workflow.advance(s, event).steps
    won = await tickets.claim(call.client, call.tenant, t.id, agent=call.agent, replica=replica, take_over=take_over,
                              lease_ms=lease_ms, at=call.now(), detail=step.staff, customer_words=step.customer)
    if won and not (t.owner == call.agent and t.owner_replica == replica):
        _owe_stage(call, t, "picked_up")  # not for a redelivery to the replica that holds it already
    return won


async def hand_off(call: Call, ticket_id: str, *, to_role: str, at: datetime | None = None,
                   detail: str | None = None, again: bool = False) -> Ticket:
    """The call's agent hands the ticket to `to_role` (tickets.hand_off; the step's words are the
    workflow's HandedOff; `detail`, the caller's reason, in the staff's words' place). A repeat writes nothing and owes
    nothing, unless `again`: the work is being redone (a redelivery, a case that moved desk) and the
    announcement may be what was lost."""
    t, _, s = await state(call, ticket_id)
    event = workflow.HandedOff(at=at or call.now(), from_agent=call.agent, to_role=to_role)
    words = workflow.advance(s, event).steps[0] if workflow.refusal(s, event) is None else None
    staff = detail or (words.staff if words else None)  # the caller's reason, else the workflow's words
    new = await tickets.hand_off(call.client, call.tenant, t.id, from_agent=call.agent, to_role=to_role, at=at,
                                 detail=staff, customer_words=words.customer if words else None)
    if new.changed or again:
        _owe_stage(call, new, "handed_off")
    return new


# ---------------------------------------------------------------- the customer's word


async def confirm_fix(call: Call, ticket_id: str, *, fixed: bool, by: str | None = None, detail: str | None = None,
                      at: datetime | None = None, issues_at: datetime | None = None,
                      current: list[FactView] | None = None) -> Ticket:
    """`by`'s word on the ticket (default: the call's agent): fixed closes it (a booked visit is
    cancelled with it) and the customer's current issues of its kind end (at `issues_at`;
    `current`: their facts when just read), not fixed reopens it. Confirming into the stage it is
    in already writes and owes nothing."""
    t = await tickets.confirm(call.client, call.tenant, ticket_id, fixed=fixed, by=by or call.agent,
                              detail=detail, at=at)
    if not t.changed:
        return t
    if t.stage is TicketStage.CLOSED:
        for v in await tickets.visits_of(call.client, call.tenant, t.id):
            if v.status == workflow.VisitStatus.SCHEDULED.value:  # nobody needs to come any more
                await tickets.settle_visit(call.client, call.tenant, t.id, v.visit_id, done=False, agent=call.agent,
                                           at=at)
        if t.customer:  # the problem is over: off their file
            retired = await close_issues(call.memory, call.tenant, t.customer, t.issue, agent=call.agent,
                                         at=issues_at, current=current)
            call.owe(*fact_changes(call.tenant, call.agent, retired=retired))
    _owe_stage(call, t, "closed" if t.stage is TicketStage.CLOSED else "reopened")
    return t


# ---------------------------------------------------------------- fixes and procedures


async def fix_failed(call: Call, ticket_id: str, *, issue_kind: str, steps: Sequence[str],
                     version: int | None = None) -> FixResult | None:
    """The plan did not clear the fault: a failure counted for its procedure (once per round) and
    the FixFailed step. None when the ticket moved on."""
    pid = tickets.procedure_id(issue_kind, list(steps))
    counted: list[FixResult] = []

    async def count(_: workflow.Transition) -> None:
        counted.append(await tickets.record_fix(call.client, call.tenant, ticket_id, issue_kind=issue_kind,
                                                steps=list(steps), verified=False, agent=call.agent,
                                                at=call.now(), note=False))

    new = await record(call, ticket_id, workflow.FixFailed(at=call.now(), procedure_id=pid, steps=tuple(steps)),
                       version=version, before=count)
    return counted[0] if counted and new.changed else None


async def fix_proven(call: Call, ticket_id: str, *, work: Work, issue_kind: str | None = None,
                     steps: Sequence[str] = (), outage_ids: Sequence[str] = (), version: int | None = None) -> Ticket:
    """The line measures healthy after the last action (the work's latest check; `work` carries
    the proof): to `fixed`. With `steps` the procedure is counted verified (FIXED_BY) and the
    `fix_verified` step written; without, the outages the ticket waited on are over. The workflow
    refuses it (StepRefused: unproven, visit_pending) unless the stored check proves it."""
    pid = tickets.procedure_id(issue_kind, list(steps)) if steps and issue_kind else None

    async def count(_: workflow.Transition) -> None:
        if pid is not None:
            await tickets.record_fix(call.client, call.tenant, ticket_id, issue_kind=issue_kind, steps=list(steps),
                                     verified=True, agent=call.agent, at=call.now(), note=False)

    event = workflow.FixProven(at=call.now(), procedure_id=pid, steps=tuple(steps), outage_ids=tuple(outage_ids))
    return await record(call, ticket_id, event, version=version, work=work, before=count)


async def credit_fix(call: Call, ticket_id: str, *, issue_kind: str, steps: Sequence[str]) -> FixResult:
    """The customer confirmed: the round's procedure counts the fix (once per ticket and round).
    Procedural memory, not a step of the ticket (a closed ticket takes no more steps)."""
    return await tickets.record_fix(call.client, call.tenant, ticket_id, issue_kind=issue_kind, steps=list(steps),
                                    verified=True, agent=call.agent, at=call.now(), note=False)


# ---------------------------------------------------------------- escalations


async def escalate(call: Call, ticket_id: str, *, to: str, reason: str, version: int | None = None,
                   priority: str = "high") -> Escalation | None:
    """Raised to a team (an Escalation node per round, the ticket's priority raised) and the
    Escalated step. A repeat in the same round writes nothing and returns the first one; None when
    the ticket moved on past `version`."""
    t, _, _ = await state(call, ticket_id)
    done = await tickets.round_escalation(call.client, call.tenant, t.id, t.round)
    if done is not None:
        return done
    made: list[Escalation] = []

    async def raise_it(_: workflow.Transition) -> None:
        made.append(await tickets.escalate(call.client, call.tenant, t.id, reason=reason, to=to, agent=call.agent,
                                           priority=priority, at=call.now()))

    await record(call, t.id, workflow.Escalated(at=call.now(), to=to, reason=reason), version=version,
                 before=raise_it)
    return made[0] if made else None


# ---------------------------------------------------------------- technician visits


async def book_visit(call: Call, ticket_id: str, *, technician: str, visit_at: datetime,
                     reason: workflow.VisitReason, version: int | None = None) -> tuple[Ticket, TechVisit]:
    """A technician booked for `visit_at` (the VisitBooked step says so: booked for that time,
    never that anyone came) and the ticket to technician_dispatched. A visit already pending is
    returned as it is, nothing written."""
    t, _, s = await state(call, ticket_id)
    if s.pending_visit is not None:
        (v,) = [v for v in await tickets.visits_of(call.client, call.tenant, t.id) if v.visit_id == s.visit.visit_id]
        return t.model_copy(update={"changed": False}), v
    vid = tickets.visit_id(t.id, technician, visit_at)
    booked: list[TechVisit] = []

    async def book(_: workflow.Transition) -> None:
        booked.append(await tickets.schedule_visit(call.client, call.tenant, t.id, technician=technician, at=visit_at,
                                                   agent=call.agent, booked_at=call.now(), note=False))

    event = workflow.VisitBooked(at=call.now(), visit_id=vid, technician=technician, visit_at=visit_at, reason=reason)
    new = await record(call, t.id, event, version=version, before=book)
    return new, booked[0] if booked else (await tickets.visits_of(call.client, call.tenant, t.id))[-1]


async def visit_done(call: Call, ticket_id: str, visit_id: str, *, at: datetime, work: Work | None = None) -> Ticket:
    """The booked visit is done, at `at` (the lab's outcome of the technician's work, or their
    report); refused (visit_not_due) before the visit's booked time, and for a visit not pending.
    The technician's work is the round's latest action: a fix is proven only by a check after it."""

    async def mark(_: workflow.Transition) -> None:
        await tickets.settle_visit(call.client, call.tenant, ticket_id, visit_id, done=True, agent=call.agent, at=at)

    return await record(call, ticket_id, workflow.VisitDone(at=at, visit_id=visit_id), work=work, before=mark)


async def visit_cancelled(call: Call, ticket_id: str, visit_id: str) -> Ticket:
    """The booked visit is cancelled by the desk; the ticket goes back to checking_line."""

    async def mark(_: workflow.Transition) -> None:
        await tickets.settle_visit(call.client, call.tenant, ticket_id, visit_id, done=False, agent=call.agent,
                                   at=call.now())

    return await record(call, ticket_id, workflow.VisitCancelled(at=call.now(), visit_id=visit_id), before=mark)


async def save_work(call: Call, ticket_id: str, work: Work) -> None:
    """The working state alone (no step): only the ticket's holder writes it."""
    await tickets.set_work(call.client, call.tenant, ticket_id, work)
