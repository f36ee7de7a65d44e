"""The events that move a ticket (one class each: what it carries, its guard, the steps it writes
and the words of each, for staff and for the customer). Pure, as the workflow is."""

from __future__ import annotations

from datetime import tzinfo
from enum import Enum
from typing import Annotated, Any, ClassVar, Literal, Union
from pydantic import AwareDatetime, BaseModel, Field
from relay_graph.desk.network.models import place_in_words
from relay_graph.desk.tickets.work import Check
from relay_graph.desk.tickets.steps import (
    CL, FROZEN, Refusal, Step, TicketState, Visit, VisitStatus, Waiting, cancel_steps, closing, latest_of,
    next_round, plain_words, team_name, when,
)

# ---------------------------------------------------------------- events


class TicketEvent(BaseModel):
    """An event says when it happened (`at`: the lab's clock for work on the line). `step` is its
    timeline name when that is not its kind."""

    model_config = FROZEN
    kind: str
    step: ClassVar[str | None] = None
    at: AwareDatetime

    def _refusal(self, s: TicketState) -> Refusal | None:
        return None

    def _effect(self, s: TicketState) -> dict[str, Any]:
        return {}

    def _words(self, s: TicketState, z: tzinfo) -> tuple[str, str]:
        raise NotImplementedError

    def _steps(self, s: TicketState, z: tzinfo) -> tuple[Step, ...]:
        staff, customer = self._words(s, z)
        return (Step(event=self.step or self.kind, staff=staff, customer=customer),)


class Reported(TicketEvent):
    kind: Literal["reported"] = "reported"
    step: ClassVar[str] = "opened"
    issue: str
    summary: str  # the customer's problem in their words

    def _words(self, s, z):
        return f"opened for {self.issue}: {self.summary}", f"We opened a ticket for your problem: {self.summary}"


class HandedOff(TicketEvent):
    kind: Literal["handed_off"] = "handed_off"
    from_agent: str
    to_role: str

    def _words(self, s, z):
        return f"handed from {self.from_agent} to {self.to_role}", f"Our {team_name(self.to_role)} team has your ticket."


class PickedUp(TicketEvent):
    kind: Literal["picked_up"] = "picked_up"
    agent: str
    replica: str

    def _words(self, s, z):
        return f"picked up by {self.agent} on {self.replica}", f"Our {team_name(self.agent)} team is working on it."


class Released(TicketEvent):
    kind: Literal["released"] = "released"
    agent: str

    def _words(self, s, z):
        return f"released by {self.agent}", "Your ticket waits for the next free person on our team."


class LineCheckStarted(TicketEvent):
    kind: Literal["line_check_started"] = "line_check_started"
    step: ClassVar[str] = CL.value

    def _words(self, s, z):
        return "measuring the line", "We are testing your line."


class ReadingNote(BaseModel):
    """One reading of a check: its test (the step's name), its id, its values for the staff
    (`says`) and for the customer (`plain`: no ids, no field names)."""

    model_config = FROZEN
    test: str = Field(pattern=r"^[a-z][a-z0-9_]{0,47}$")
    reading_id: str
    says: str
    plain: str = ""


class Measured(TicketEvent):
    """Every test on the line taken together (one check of the work); a step per reading."""

    kind: Literal["measured"] = "measured"
    check: Check
    readings: tuple[ReadingNote, ...] = Field(min_length=1)

    def _refusal(self, s):
        return Refusal.STALE_ROUND if self.check.round != s.round else None

    def _effect(self, s):
        return {"last_check": self.check} if s.last_check is None or self.check.at >= s.last_check.at else {}

    def _steps(self, s, z):
        return tuple(Step(event=r.test, staff=f"{r.says} ({r.reading_id}, measured {when(self.check.at)})",
                          customer=f"We measured your line ({plain_words(r.test)}) on {when(self.check.at, z)}"
                                   + (f": {r.plain}." if r.plain else ".")) for r in self.readings)


class Diagnosed(TicketEvent):
    kind: Literal["diagnosed"] = "diagnosed"
    step: ClassVar[str] = "diagnosis"
    diagnosis: str | None  # a fault kind; None: healthy
    meaning: str  # in plain words
    readings: tuple[str, ...] = ()

    def _words(self, s, z):
        return (f"{self.diagnosis or 'healthy'}: {self.meaning} (readings {', '.join(self.readings) or 'none'})",
                f"What our tests show: {self.meaning}.")


class FixPlanned(TicketEvent):
    kind: Literal["fix_planned"] = "fix_planned"
    step: ClassVar[str] = "plan"
    procedure_id: str
    steps: tuple[str, ...] = Field(min_length=1)
    diagnosis: str
    source: Literal["learnt", "manual"]

    def _words(self, s, z):
        return (f"{self.procedure_id}: {' > '.join(self.steps)} ({self.source}, for {self.diagnosis})",
                "We are trying a fix: " + ", then ".join(plain_words(a) for a in self.steps) + ".")


class FixAttempted(TicketEvent):
    """A remote step carried out on the line (a technician's work is VisitDone)."""

    kind: Literal["fix_attempted"] = "fix_attempted"
    step: ClassVar[str] = "fix_step"
    action: str
    action_id: str

    def _refusal(self, s):
        return Refusal.VISIT_IS_NOT_AN_ACTION if self.action == "dispatch_technician" else None

    def _effect(self, s):
        return {"last_action_at": latest_of(s.last_action_at, self.at)}

    def _words(self, s, z):
        return (f"{self.action} carried out ({self.action_id}, at {when(self.at)})",
                f"We did this on your line: {plain_words(self.action)}.")


class FixFailed(TicketEvent):
    kind: Literal["fix_failed"] = "fix_failed"
    procedure_id: str
    steps: tuple[str, ...] = Field(min_length=1)

    def _words(self, s, z):
        return (f"{self.procedure_id} did not clear the fault: {' > '.join(self.steps)}",
                "That fix did not clear the fault; we are trying the next one.")


class FixProven(TicketEvent):
    """The line measures healthy after the last action: after a procedure's steps (recorded as
    `fix_verified`), or with no procedure when the outages it waited on are over."""

    kind: Literal["fix_proven"] = "fix_proven"
    procedure_id: str | None = None
    steps: tuple[str, ...] = ()
    outage_ids: tuple[str, ...] = ()

    def _refusal(self, s):
        if s.pending_visit is not None:
            return Refusal.VISIT_PENDING
        return None if s.proven() else Refusal.UNPROVEN

    def _effect(self, s):
        return {"waiting": None}

    def _steps(self, s, z):
        if self.procedure_id is None:
            if not self.outage_ids:
                return ()
            return (Step(event="outage_over", staff=f"outage {', '.join(self.outage_ids)} is over",
                         customer="The network fault that affected your line is repaired."),)
        return (Step(event="fix_verified", staff=f"{self.procedure_id}: {' > '.join(self.steps)}",
                     customer="The fix we tried cleared the fault."),)


class VisitReason(str, Enum):
    HEALTHY_LINE = "every test on your line measures healthy, so a technician checks your home in person"
    IN_HOME_FIBRE = "the readings point at the fibre inside your home"
    NO_REMOTE_FIX = "no remote fix cleared the fault"
    BOX_DOWN = "your home box does not answer"


class VisitBooked(TicketEvent):
    """`at` is when it was booked, `visit_at` when the technician goes."""

    kind: Literal["visit_booked"] = "visit_booked"
    step: ClassVar[str] = "visit_scheduled"
    visit_id: str
    technician: str
    visit_at: AwareDatetime
    reason: VisitReason

    def _refusal(self, s):
        if s.pending_visit is not None:
            return Refusal.VISIT_ALREADY_BOOKED
        return Refusal.VISIT_IN_PAST if self.visit_at < self.at else None

    def _effect(self, s):
        return {"visit": Visit(visit_id=self.visit_id, technician=self.technician, at=self.visit_at)}

    def _words(self, s, z):
        return (f"technician {self.technician} booked for {when(self.visit_at)} (visit {self.visit_id}): "
                f"{self.reason.value}", f"A technician, {self.technician}, is booked to visit you on "
                f"{when(self.visit_at, z)}. Why: {self.reason.value}.")


class VisitDone(TicketEvent):
    """The visit's outcome reported (the lab's, or a technician's report); `at`: when it was done.
    The technician's work is the round's latest action, so a proof must follow it."""

    kind: Literal["visit_done"] = "visit_done"
    visit_id: str

    def _refusal(self, s):
        v = s.pending_visit
        if v is None or v.visit_id != self.visit_id:
            return Refusal.NO_VISIT
        return Refusal.VISIT_NOT_DUE if self.at < v.at else None

    def _effect(self, s):
        return {"visit": s.visit.model_copy(update={"status": VisitStatus.DONE}),
                "last_action_at": latest_of(s.last_action_at, self.at)}

    def _words(self, s, z):
        v = s.visit
        return (f"technician {v.technician} visited at {when(self.at)} (visit {v.visit_id}, booked for {when(v.at)})",
                f"Our technician {v.technician} visited your home on {when(self.at, z)}.")


class VisitCancelled(TicketEvent):
    kind: Literal["visit_cancelled"] = "visit_cancelled"
    visit_id: str

    def _refusal(self, s):
        v = s.pending_visit
        return None if v is not None and v.visit_id == self.visit_id else Refusal.NO_VISIT

    def _effect(self, s):
        return closing(s)

    def _steps(self, s, z):
        return cancel_steps(s.pending_visit, z, "by the desk")


class Escalated(TicketEvent):
    kind: Literal["escalated"] = "escalated"
    to: str
    reason: str

    def _words(self, s, z):
        return f"escalated to {self.to}: {self.reason}", f"Our {team_name(self.to)} team has your ticket, with priority."


class WaitingOnNetwork(TicketEvent):
    kind: Literal["waiting_on_network"] = "waiting_on_network"
    diagnosis: str
    outage_ids: tuple[str, ...] = ()

    def _refusal(self, s):
        return Refusal.ALREADY_WAITING if s.waiting is Waiting.NETWORK else None

    def _effect(self, s):
        return {"waiting": Waiting.NETWORK}

    def _words(self, s, z):
        where = ", ".join(f"outage {o}" for o in self.outage_ids) or "a fault above the home"
        return (f"{self.diagnosis}: waiting on the network team ({where})",
                "Our measurements show a fault in the network, not in your home; our network team is repairing it.")


class WaitingOnOutage(TicketEvent):
    """The line measures healthy while an outage it was linked to is still open."""

    kind: Literal["waiting_on_outage"] = "waiting_on_outage"
    outage_ids: tuple[str, ...] = Field(min_length=1)

    def _refusal(self, s):
        return None if s.proven() else Refusal.UNPROVEN

    def _words(self, s, z):
        return (f"the line measures healthy; outage {', '.join(self.outage_ids)} is still open",
                "Your line tests healthy now; we will tell you once the network team has closed the fault.")


class OutageLinked(TicketEvent):
    kind: Literal["outage_linked"] = "outage_linked"
    outage_id: str
    node_name: str
    since: AwareDatetime

    def _words(self, s, z):
        return (f"outage {self.outage_id} at {self.node_name} since {when(self.since)}",
                f"There is a known fault at {place_in_words(self.node_name)} since {when(self.since, z)}; we are on it.")


class AddressRequested(TicketEvent):
    kind: Literal["address_requested"] = "address_requested"

    def _refusal(self, s):
        return Refusal.ALREADY_WAITING if s.waiting is Waiting.ADDRESS else None

    def _effect(self, s):
        return {"waiting": Waiting.ADDRESS}

    def _words(self, s, z):
        return ("no line on file for this customer; intake to get the address",
                "We have no line on file for you yet: could you tell us your address (the area and the city)?")


class AddressPlaced(TicketEvent):
    kind: Literal["address_placed"] = "address_placed"

    def _refusal(self, s):
        return None if s.waiting is Waiting.ADDRESS else Refusal.NOT_WAITING

    def _effect(self, s):
        return {"waiting": None}

    def _words(self, s, z):
        return "a line is on file now", "Thanks: we found your line and can test it now."


class ConfirmedFixed(TicketEvent):
    """The customer's (or staff's) word that it works: the ticket closes, a pending visit is cancelled."""

    kind: Literal["confirmed_fixed"] = "confirmed_fixed"
    by: str

    def _effect(self, s):
        return closing(s)

    def _steps(self, s, z):
        return (*cancel_steps(s.pending_visit, z, f"{self.by} says it works"), Step(
            event=self.kind, staff=f"{self.by} confirmed it works", customer="You told us it works now: ticket closed."))


class ConfirmedNotFixed(TicketEvent):
    kind: Literal["confirmed_not_fixed"] = "confirmed_not_fixed"
    by: str

    def _effect(self, s):
        return next_round(s)

    def _words(self, s, z):
        return (f"{self.by} says it is not fixed; round {s.round + 1} starts",
                "You told us it still does not work: we are looking at it again.")


class Closed(TicketEvent):
    kind: Literal["closed"] = "closed"
    by: str

    def _effect(self, s):
        return closing(s)

    def _steps(self, s, z):
        return (*cancel_steps(s.pending_visit, z, "the ticket was closed"),
                Step(event=self.kind, staff=f"closed by {self.by}", customer="Your ticket is closed."))


class Reopened(TicketEvent):
    kind: Literal["reopened"] = "reopened"
    by: str

    def _effect(self, s):
        return next_round(s)

    def _words(self, s, z):
        return f"reopened by {self.by}; round {s.round + 1} starts", "We reopened your ticket and are on it again."


class MovedDesk(TicketEvent):
    kind: Literal["moved_desk"] = "moved_desk"
    region: str

    def _words(self, s, z):
        return f"moved to the {self.region} desk", f"Your case moved to our {self.region} desk."


class CustomerReading(TicketEvent):
    kind: Literal["customer_reading"] = "customer_reading"
    direction: Literal["better", "worse"]

    def _words(self, s, z):
        return f"the customer says it is {self.direction} now", f"You told us it is {self.direction} now."


class Promised(TicketEvent):
    kind: Literal["promised"] = "promised"
    promise_id: str
    text: str  # what is promised ("A technician will call you")
    due: AwareDatetime

    def _refusal(self, s):
        return Refusal.DUE_IN_PAST if self.due < self.at else None

    def _words(self, s, z):
        return f"{self.text} before {when(self.due)} (promise {self.promise_id})", f"{self.text} before {when(self.due, z)}."


class PromiseChased(TicketEvent):
    """A promise past its due time, the ticket still open: owned up to in a reply and chased."""

    kind: Literal["promise_chased"] = "promise_chased"
    promise_id: str
    text: str
    due: AwareDatetime

    def _words(self, s, z):
        return (f"{self.text} was due {when(self.due)} and is not kept: owned up to and chased "
                f"(promise {self.promise_id})",
                f"We did not keep our promise on time ({self.text} before {when(self.due, z)}); we have chased it.")


EVENTS: tuple[type[TicketEvent], ...] = (
    Reported, HandedOff, PickedUp, Released, LineCheckStarted, Measured, Diagnosed, FixPlanned, FixAttempted,
    FixFailed, FixProven, VisitBooked, VisitDone, VisitCancelled, Escalated, WaitingOnNetwork, WaitingOnOutage,
    OutageLinked, AddressRequested, AddressPlaced, ConfirmedFixed, ConfirmedNotFixed, Closed, Reopened, MovedDesk,
    CustomerReading, Promised, PromiseChased)
Event = Annotated[Union[EVENTS], Field(discriminator="kind")]  # parses any event from its JSON

