"""The memory engine's typed inputs and outputs, shared by the agents, the gateway and MCP."""

from __future__ import annotations

from datetime import datetime, timezone
from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .inputs import Identifier, Name, Text, Time


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def aware(value: datetime | None) -> datetime | None:
    """Times without an offset are refused upstream; here naive ones are taken as UTC."""
    if value is None:
        return None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


AGENT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,63}$"


class Outcome(str, Enum):
    CREATED = "created"
    CORROBORATED = "corroborated"
    SUPERSEDED = "superseded"
    CONFLICT = "conflict"


class FactState(str, Enum):
    CURRENT = "current"
    SUPERSEDED = "superseded"
    RETIRED = "retired"


class Clock(str, Enum):
    WORLD = "world"
    BELIEF = "belief"


class FactInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    subject: Name
    predicate: str = Field(min_length=1, max_length=64)
    object: Name
    agent: str = Field(pattern=AGENT_PATTERN)
    valid_from: Time | None = None  # event time; defaults to recorded_at
    source: Identifier | None = None  # the episode it came from (linked as DERIVED)
    recorded_at: Time | None = None  # learning time; defaults to now (tests and replays set it)

    @field_validator("valid_from", "recorded_at")
    @classmethod
    def _aware(cls, v: datetime | None) -> datetime | None:
        return aware(v)


class FactWriteResult(BaseModel):
    fact_id: str
    outcome: Outcome
    superseded: list[str] = []
    conflict_id: str | None = None


class RetireInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    subject: Name
    predicate: str = Field(min_length=1, max_length=64)
    object: Name | None = None
    agent: str = Field(pattern=AGENT_PATTERN)
    valid_to: Time | None = None
    recorded_at: Time | None = None
    source: Identifier | None = None  # the episode that said it ended

    @field_validator("valid_to", "recorded_at")
    @classmethod
    def _aware(cls, v: datetime | None) -> datetime | None:
        return aware(v)


class FactView(BaseModel):
    fact_id: str
    subject: str
    predicate: str
    object: str
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime
    expired_at: datetime | None
    asserted_by: str
    state: FactState
    corroborations: int = 1
    conflict_id: str | None = None


class Claim(BaseModel):
    fact_id: str
    object: str
    asserted_by: str
    trust: float
    recorded_at: datetime


class ClaimsView(BaseModel):
    claims: list[Claim]
    conflict_id: str | None


class SettleResult(BaseModel):
    conflict_id: str
    winner: str  # fact_id
    losers: list[str]
    trust: dict[str, float]  # agent -> new trust for that predicate


class EpisodeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session: Identifier
    speaker: Name = Field(max_length=128)
    text: Text  # kept exactly as written: newlines, tabs, emoji joiners, right-to-left marks
    at: Time
    id: Identifier | None = None
    kind: Literal["CustomerMessage", "AgentReply", "ToolResult", "InternalNote", "Message"] = "Message"
    agent: str | None = Field(default=None, pattern=AGENT_PATTERN)  # who wrote it down
    customer: Name | None = None
    mentions: list[Name] = []  # entity names the episode is about, when known
    # Desk replies: which customer turn this answers, the ticket it concerns, and the graph
    # rows the wording rests on ("how I know").
    reply_to: Identifier | None = None
    ticket_id: Identifier | None = None
    how_i_know: list[Text] = []

    @field_validator("at")
    @classmethod
    def _aware(cls, v: datetime) -> datetime:
        return aware(v)


class RecallItem(BaseModel):
    episode_id: str
    session: str
    speaker: str
    text: str
    at: datetime
    score: float
    path: list[str] = []


class RecallShape(str, Enum):
    PATH = "path"
    MEMORY = "memory"
    NOT_IN_GRAPH = "not_in_graph"
    UNKNOWN_NAME = "unknown_name"


class RecallResult(BaseModel):
    shape: RecallShape
    items: list[RecallItem]
    facts: list[FactView]
