"""The ticket workflow as a state machine: the stages, the events that move a ticket between them
(TABLE), the guard on each event, and the timeline's words made from the events.

Pure: it may use the standard library, pydantic, the desk's ticket models (models, work), its
state and steps (steps) and events (events), and the runtime's typed errors; no I/O, no graph, no Cypher. A use case reads the
ticket (`state_of`), asks `advance(state, event)` before it writes and records the steps returned;
a refused event raises StepRefused (a 409, `code` the Refusal's name) and nothing is to be written.

Why: stages and steps were strings written from agent code, so a step could claim what had not
happened ("a technician visited" at booking time). Here a step's words are made from its event,
and an event is accepted only when its guard holds: `fixed` rests on a passing check of the round
taken at or after its last action, never while a booked visit is pending; a visit is done only at
or after its booked time; a closed ticket accepts only a reopen; any pair outside TABLE is refused.

Step.event is the timeline name the store writes today (a stage move is a step named after the
stage), so timeline readers and tickets.unproven_fixes keep working. Customer words carry no ids and
give times in the customer's zone; staff words keep the ids, in UTC."""

from __future__ import annotations

from datetime import timezone, tzinfo
from typing import Sequence

from relay_graph.desk.tickets.models import TechVisit, Ticket, TicketStage
from relay_graph.desk.tickets.work import Work, for_round, last_action_at
from relay_graph.desk.tickets.steps import (
    C, CL, FD, FX, OPEN_STAGES, R, RO, TD, Refusal, Step, StepRefused, TicketState, Transition, Visit,
    VisitStatus, Waiting, when,
)
from relay_graph.desk.tickets.events import (
    EVENTS, AddressPlaced, AddressRequested, Closed, ConfirmedFixed, ConfirmedNotFixed, CustomerReading,
    Diagnosed, Escalated, FixAttempted, FixFailed, FixPlanned, FixProven, HandedOff, LineCheckStarted,
    Measured, MovedDesk, OutageLinked, PickedUp, Promised, PromiseChased, Released, Reopened, Reported, TicketEvent,
    Event, ReadingNote, VisitBooked, VisitCancelled, VisitDone, VisitReason, WaitingOnNetwork, WaitingOnOutage,
)

# ---------------------------------------------------------------- the table

# Notes: in every open stage, the stage stays.
NOTES = (HandedOff, PickedUp, Released, OutageLinked, MovedDesk, CustomerReading, Promised, PromiseChased)
# (event, the stages it happens in, the stage it moves to; None: the stage stays)
RULES: tuple[tuple[type[TicketEvent], tuple[TicketStage, ...], TicketStage | None], ...] = (
    *((e, OPEN_STAGES, None) for e in NOTES),
    (LineCheckStarted, (R, RO, FX), CL),
    (Measured, (R, RO, CL, FX, TD), None),
    (Diagnosed, (CL, FX), None),
    (FixPlanned, (CL, FX), FX),
    (FixAttempted, (FX,), None),
    (FixFailed, (FX,), None),
    (FixProven, (R, RO, CL, FX, TD), FD),
    (VisitBooked, (CL, FX), TD),
    (VisitDone, (TD,), None),
    (VisitCancelled, (TD,), CL),
    (Escalated, (R, RO, CL, FX), CL),
    (WaitingOnNetwork, (CL, FX), CL),
    (WaitingOnOutage, (CL,), None),
    (AddressRequested, (R, RO, CL), CL),
    (AddressPlaced, (CL,), None),
    (ConfirmedFixed, OPEN_STAGES, C),
    (Closed, OPEN_STAGES, C),
    (ConfirmedNotFixed, (FD, C), RO),
    (Reopened, (C,), RO),
)
TABLE: dict[tuple[TicketStage | None, type[TicketEvent]], TicketStage] = {
    (None, Reported): R, **{(s, e): to or s for e, froms, to in RULES for s in froms}}
# Events that are the stage move's own step (the store writes one timeline entry for both).
OWN_STAGE_STEP = frozenset({LineCheckStarted, ConfirmedFixed, ConfirmedNotFixed, Closed, Reopened})


# ---------------------------------------------------------------- the machine


def refusal(state: TicketState | None, event: TicketEvent) -> Refusal | None:
    """Why `event` cannot happen to a ticket in `state` (None: no ticket yet); None if it can."""
    before = state.stage if state is not None else None
    if (before, type(event)) not in TABLE:
        if state is None:
            return Refusal.NO_TICKET
        return Refusal.TICKET_CLOSED if before is C else Refusal.STEP_NOT_ALLOWED
    return event._refusal(state) if state is not None else None


def _stage_step(s: TicketState, z: tzinfo) -> Step:
    """The words of a move into `s.stage`, from the state the move leads to."""
    if s.stage is FD:
        return Step(event=FD.value, staff=f"re-measured healthy at {when(s.last_check.at)}, after the last action",
                    customer="We measured your line again and it tests healthy. Is it working for you now?")
    if s.stage is TD:
        return Step(event=TD.value, staff=f"technician {s.visit.technician} booked for {when(s.visit.at)} ({s.visit.visit_id})",
                    customer=f"A technician is booked for {when(s.visit.at, z)}.")
    staff, customer = {CL: ("checking the line", "We are looking into your line."),
                       FX: ("working on a fix", "We are working on a fix for your line.")}[s.stage]
    return Step(event=s.stage.value, staff=staff, customer=customer)


def advance(state: TicketState | None, event: TicketEvent, *, zone: tzinfo = timezone.utc) -> Transition:
    """The ticket after `event`: its new state and the steps to record, in order (a stage move is
    the step named after the stage, last). Raises StepRefused when the event does not fit."""
    before = state.stage if state is not None else None
    reason = refusal(state, event)
    if reason is not None:
        raise StepRefused(reason, before, event.kind)
    base = state if state is not None else TicketState(stage=R)
    after = base.model_copy(update={**event._effect(base), "stage": TABLE[(before, type(event))]})
    steps = event._steps(base, zone)
    if before is not None and after.stage is not before and type(event) not in OWN_STAGE_STEP:
        steps = (*steps, _stage_step(after, zone))
    return Transition(before=before, state=after, steps=steps)


def _visit_of(visits: Sequence[TechVisit]) -> Visit | None:
    """The pending visit (the earliest booked), else the latest."""
    if not visits:
        return None
    pending = [v for v in visits if v.status == VisitStatus.SCHEDULED.value]
    v = min(pending, key=lambda v: v.at) if pending else max(visits, key=lambda v: v.at)
    return Visit(visit_id=v.visit_id, technician=v.technician, at=v.at, status=VisitStatus(v.status))


def state_of(ticket: Ticket, work: Work | None, visits: Sequence[TechVisit] = ()) -> TicketState:
    """The state the guards read, from what the store holds: the ticket, its work, its visits."""
    w = for_round(work, ticket.round)
    checks = w.round_checks()
    return TicketState(stage=ticket.stage, round=ticket.round,
                       waiting=w.needs if w.needs in {x.value for x in Waiting} else None,
                       last_check=max(checks, key=lambda c: c.at) if checks else None,
                       last_action_at=last_action_at(w), visit=_visit_of(visits))


# The workflow's whole vocabulary, from here: its state, steps and refusals (steps), its events (events).
__all__ = [
    "EVENTS", "NOTES", "OPEN_STAGES", "OWN_STAGE_STEP", "RULES", "TABLE", "AddressPlaced", "AddressRequested", "Closed",
    "ConfirmedFixed", "ConfirmedNotFixed", "CustomerReading", "Diagnosed", "Escalated", "Event", "FixAttempted",
    "FixFailed", "FixPlanned", "FixProven", "HandedOff", "LineCheckStarted", "Measured", "MovedDesk", "OutageLinked",
    "PickedUp", "Promised", "PromiseChased", "ReadingNote", "Refusal", "Released", "Reopened", "Reported", "Step", "StepRefused",
    "TicketEvent", "TicketState", "Transition", "Visit", "VisitBooked", "VisitCancelled", "VisitDone", "VisitReason",
    "VisitStatus", "Waiting", "WaitingOnNetwork", "WaitingOnOutage", "advance", "refusal", "state_of", "when",
]
