"""Typed views of the desk aggregate: tickets, their timeline and handoffs, fixes, procedures and
technician visits. Field names follow the API reference (docs/api.md: `id`, `issue`, handoffs' `from`)."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class TicketStage(str, Enum):
    REPORTED = "reported"
    CHECKING_LINE = "checking_line"
    FIXING = "fixing"
    FIXED = "fixed"
    TECHNICIAN_DISPATCHED = "technician_dispatched"
    CLOSED = "closed"
    REOPENED = "reopened"


class Ticket(BaseModel):
    """A ticket's state. `version` moves on every stage change, handoff and confirmation (the
    things a notification announces); claims, timeline notes and fix records do not move it.
    `changed` says whether the call that returned this ticket wrote anything."""

    id: str
    stage: TicketStage
    version: int
    owner: str | None = None  # the agent role holding it
    owner_replica: str | None = None  # which replica of that role
    customer: str
    issue: str  # the issue kind, normalised
    summary: str
    session: str | None = None
    opened_at: datetime
    updated_at: datetime
    closed_at: datetime | None = None
    round: int = 0  # how many times it was reopened
    changed: bool = False


class TimelineEntry(BaseModel):
    """One step: `detail` in the staff's words, `customer` in the customer's (None for entries
    written before the workflow had words for them)."""

    at: datetime
    agent: str
    event: str
    detail: str | None = None
    customer: str | None = None


class Handoff(BaseModel):
    """Serialised with the key `from` (docs/api.md); in Python the attribute is `from_`."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    from_: str = Field(alias="from")
    to: str
    at: datetime


class TechVisit(BaseModel):
    visit_id: str
    ticket_id: str
    technician: str
    at: datetime  # when the technician goes
    scheduled_at: datetime  # when it was booked
    status: str = "scheduled"
    changed: bool = False


class TicketDetail(Ticket):
    """GET /tickets/{id}: the ticket with its whole timeline (in order) and its handoffs."""

    timeline: list[TimelineEntry] = []
    handoffs: list[Handoff] = []
    visits: list[TechVisit] = []
    fixed_by: list[str] = []  # procedures credited with the current round's fix


class TicketSummary(BaseModel):
    id: str
    stage: TicketStage
    version: int
    owner: str | None = None
    customer: str
    issue: str
    opened_at: datetime
    updated_at: datetime


class Procedure(BaseModel):
    procedure_id: str
    issue_kind: str
    steps: list[str]
    successes: int
    failures: int
    score: float  # (successes + 1) / (successes + failures + 2)


class FixResult(BaseModel):
    """What record_fix did: `counted` is False for a redelivered record (nothing changed)."""

    procedure_id: str
    issue_kind: str
    steps: list[str]
    outcome: Literal["verified", "failed"]
    counted: bool
    successes: int
    failures: int


class Escalation(BaseModel):
    """A ticket raised to people (a team) with the reason; the ticket's priority goes up with it."""

    escalation_id: str
    ticket_id: str
    round: int
    reason: str
    to: str  # the team or role it went to
    agent: str  # who raised it
    at: datetime
    priority: str
