"""The memory engine's typed inputs and outputs, shared by the agents, the gateway and MCP."""

from __future__ import annotations

from datetime import datetime, timezone
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from relay_graph.memory.inputs import Identifier, Name, Text, Time, name_type
from relay_graph.runtime.times import aware, utcnow  # noqa: F401  (re-exported: the engine's callers use them)


AGENT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,63}$"
# A sub-label under the writing agent (`planner` writing as `night-shift`): it names who inside the
# agent wrote a fact, and never changes whose trust ranks it.
LABEL_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@/-]{0,63}$"


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
    label: str | None = Field(default=None, pattern=LABEL_PATTERN)  # a sub-label under `agent`
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
    matched: str | None = Field(default=None, description="the subject was a name exactly one customer holds: "
                                "the fact is about that customer, this id")


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
    label: str | None = None
    state: FactState
    corroborations: int = 1
    conflict_id: str | None = None


class Claim(BaseModel):
    fact_id: str
    object: str
    asserted_by: str
    trust: float
    recorded_at: datetime


# Reads by name (names.py): what a name that is not a key on file was read as, or that it is
# ambiguous. Writes never match names: they address the exact key.
class Matched(BaseModel):
    """A read answered for a name other than the one asked: which one, and how it matched."""

    asked: str = Field(description="the name the read was given")
    id: str | None = Field(default=None, description="the subject the answer is about (a customer's id); null when "
                                                     "the answer lists several customers of that name")
    name: str = Field(description="the name on file that matched")
    how: Literal["name", "fuzzy"] = Field(
        description="`name`: a customer whose name fact is exactly the one asked; `fuzzy`: a name spelt alike")


class Candidate(BaseModel):
    id: str = Field(description="the subject's id (a customer's id)")
    name: str = Field(description="the name on file that is close to the one asked")


class Ambiguous(BaseModel):
    """A name that stands for two or more subjects: nothing was read; ask which one."""

    asked: str
    message: str = Field(examples=["did you mean asha rao (c-1f0e...) or esha rao (c-9a2b...)?"])
    candidates: list[Candidate]


class ClaimsView(BaseModel):
    claims: list[Claim]
    conflict_id: str | None
    matched: Matched | None = Field(default=None, description="the subject was read as this (a name, not its key)")
    ambiguous: Ambiguous | None = Field(default=None, description="the subject names two or more; nothing was read")


class FactsAnswer(BaseModel):
    facts: list[FactView]
    matched: Matched | None = None
    ambiguous: Ambiguous | None = None


class SettleResult(BaseModel):
    conflict_id: str
    winner: str  # fact_id
    losers: list[str]
    trust: dict[str, float]  # agent -> new trust for that predicate


class EpisodeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session: Identifier
    speaker: name_type(128)  # type: ignore[valid-type]
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
    # What kinds of answer a desk reply is made of ("plans", "ticket_opened", "ask:has_router"):
    # relay_graph.desk.conversation.kinds.
    answers: list[Identifier] = []

    @field_validator("at")
    @classmethod
    def _aware(cls, v: datetime) -> datetime:
        return aware(v)


TURN_KINDS = Literal["Message", "InternalNote", "CustomerMessage", "AgentReply", "ToolResult"]


class TurnInput(BaseModel):
    """One turn or note of any conversation as a writer outside the engine gives it: the one body of
    `POST /episodes`, the `remember` tool and MCP."""

    model_config = ConfigDict(extra="forbid")

    session: Identifier = Field(description="the conversation it belongs to")
    speaker: name_type(128) = Field(description="who said it")  # type: ignore[valid-type]
    text: Text = Field(description="exactly as said (line breaks, tabs, emoji kept)")
    at: Time | None = Field(default=None, description="when it was said; default now")
    id: Identifier | None = Field(default=None, description="your id for it; the same id again writes nothing new")
    kind: TURN_KINDS = "Message"
    customer: Name | None = Field(default=None, description="the id of the customer the conversation is with, if "
                                  "any: exactly this key, never another customer spelt alike (an unknown one is new)")
    mentions: list[Name] = Field(default=[], max_length=50,
                                 description="names it is about, beyond those the text names")

    def to_episode(self, agent: str, now: datetime, **desk: Any) -> EpisodeInput:
        """The engine's episode, written down by `agent` (the caller's, whatever the body said)."""
        return EpisodeInput(**self.model_dump(exclude={"at"}), at=self.at or now, agent=agent, **desk)


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
    AMBIGUOUS = "ambiguous"


class RecallResult(BaseModel):
    shape: RecallShape
    items: list[RecallItem]
    facts: list[FactView]
    matched: Matched | None = None
    ambiguous: Ambiguous | None = None
