"""What the ticket workflow works on and hands back: the state it reads from the store (TicketState,
Visit, Waiting), the steps it writes (Step, Transition), why it refuses an event (Refusal,
StepRefused), and how times are worded for a customer (`when`). Pure: the standard library,
pydantic, the desk's ticket models, the runtime's typed errors."""

from __future__ import annotations

from datetime import datetime, timezone, tzinfo
from enum import Enum
from typing import Any
from pydantic import AwareDatetime, BaseModel, ConfigDict
from relay_graph.desk.tickets.models import TicketStage
from relay_graph.desk.tickets.work import Check
from relay_graph.runtime.errors import StateConflict

R, CL, FX, FD, TD, C, RO = (TicketStage.REPORTED, TicketStage.CHECKING_LINE, TicketStage.FIXING, TicketStage.FIXED,
                            TicketStage.TECHNICIAN_DISPATCHED, TicketStage.CLOSED, TicketStage.REOPENED)
OPEN_STAGES: tuple[TicketStage, ...] = (R, CL, FX, FD, TD, RO)
FROZEN = ConfigDict(frozen=True)


class Waiting(str, Enum):
    """What a round waits for (the values of ticket_work.Work.needs)."""

    ADDRESS = "address"
    NETWORK = "waiting_on_network"


class VisitStatus(str, Enum):
    SCHEDULED = "scheduled"
    DONE = "done"
    CANCELLED = "cancelled"


class Visit(BaseModel):
    model_config = FROZEN
    visit_id: str
    technician: str
    at: AwareDatetime  # when the technician goes
    status: VisitStatus = VisitStatus.SCHEDULED


class TicketState(BaseModel):
    """What the guards read: stage and round, what the round waits for, its latest check and last
    action, and the ticket's visit (the pending one, else the latest)."""

    model_config = FROZEN
    stage: TicketStage
    round: int = 0
    waiting: Waiting | None = None
    last_check: Check | None = None
    last_action_at: AwareDatetime | None = None
    visit: Visit | None = None

    @property
    def pending_visit(self) -> Visit | None:
        return self.visit if self.visit is not None and self.visit.status is VisitStatus.SCHEDULED else None

    def proven(self) -> bool:
        """A passing check of this round, taken at or after the round's last action."""
        c = self.last_check
        return (c is not None and c.round == self.round and c.passed
                and (self.last_action_at is None or c.at >= self.last_action_at))


class Step(BaseModel):
    """One timeline entry: its event name, the staff's words, the customer's."""

    model_config = FROZEN
    event: str
    staff: str
    customer: str


class Transition(BaseModel):
    model_config = FROZEN
    before: TicketStage | None  # None: the ticket is new
    state: TicketState
    steps: tuple[Step, ...]

    @property
    def stage(self) -> TicketStage:
        return self.state.stage

    @property
    def moved(self) -> bool:
        return self.before is not self.state.stage


class Refusal(str, Enum):
    """Why an event was refused; the error's code is the member's name in lower case."""

    NO_TICKET = "there is no ticket yet; only a report opens one"
    STEP_NOT_ALLOWED = "this step does not happen in this stage"
    TICKET_CLOSED = "a closed ticket accepts only a reopen"
    STALE_ROUND = "the check belongs to another round"
    UNPROVEN = "no passing check taken at or after the round's last action"
    VISIT_PENDING = "a booked technician visit is not done"
    NO_VISIT = "that visit is not booked (or is done or cancelled already)"
    VISIT_NOT_DUE = "a visit is done only at or after its booked time"
    VISIT_IN_PAST = "a visit is booked for a time not yet past"
    VISIT_ALREADY_BOOKED = "a visit is booked already"
    VISIT_IS_NOT_AN_ACTION = "a technician's work is recorded as the visit done, not as a remote step"
    ALREADY_WAITING = "the round waits for that already"
    NOT_WAITING = "the round is not waiting for an address"
    DUE_IN_PAST = "a promise is due at a time not yet past"

    @property
    def code(self) -> str:
        return self.name.lower()


class StepRefused(StateConflict):
    """The event does not fit the ticket's state; `reason` says why (its code is the error's)."""

    code = "step_refused"

    def __init__(self, reason: Refusal, stage: TicketStage | None, kind: str) -> None:
        super().__init__(f"{kind} refused ({stage.value if stage else 'no ticket'}): {reason.value}", code=reason.code)
        self.reason, self.stage, self.kind = reason, stage, kind


def when(at: datetime, zone: tzinfo = timezone.utc) -> str:
    local = at.astimezone(zone)
    return f"{local:%a} {local.day} {local:%b %Y, %H:%M} {local.tzname()}"


def plain_words(name: str) -> str:
    return name.replace("_", " ")


def team_name(role: str) -> str:
    return {"resolver": "line support", "intake": "front desk", "netops": "network"}.get(role, plain_words(role))


def latest_of(*times: datetime | None) -> datetime:
    return max(t for t in times if t is not None)


def next_round(s: TicketState) -> dict[str, Any]:
    return {"round": s.round + 1, "waiting": None, "last_check": None, "last_action_at": None}


def closing(s: TicketState) -> dict[str, Any]:
    v = s.pending_visit
    return {"waiting": None, **({"visit": v.model_copy(update={"status": VisitStatus.CANCELLED})} if v else {})}


def cancel_steps(v: Visit | None, z: tzinfo, why: str) -> tuple[Step, ...]:
    if v is None:
        return ()
    return (Step(event="visit_cancelled", staff=f"visit {v.visit_id} ({v.technician}, {when(v.at)}) cancelled: {why}",
                 customer=f"The technician visit booked for {when(v.at, z)} is cancelled."),)


