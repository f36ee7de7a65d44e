"""What Relay answers, as pydantic models. Each names the server's schema it mirrors
(`__schema__`, a component of the gateway's /openapi.json); a test checks them against it. Fields
the server adds later are kept (`extra="allow"`), so a newer server does not break an older client."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field


class Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    __schema__: ClassVar[str] = ""


class TenantCreated(Model):
    __schema__ = "TenantCreated"
    tenant: str
    api_key: str


class AgentCreated(Model):
    __schema__ = "AgentCreated"
    tenant: str
    agent: str
    api_key: str


class Written(Model):
    """One fact written: what happened to it and to what it replaced."""

    __schema__ = "FactWriteResult"
    fact_id: str
    outcome: Literal["created", "corroborated", "superseded", "conflict"]
    superseded: list[str] = []
    conflict_id: str | None = None
    matched: str | None = None  # the subject was a customer's exact name: this is their id


class ItemError(Model):
    __schema__ = "ItemError"
    error: dict[str, Any]


class BatchWritten(Model):
    __schema__ = "FactsBatchResult"
    results: list[Written | ItemError]
    written: int
    failed: int


class Retired(Model):
    __schema__ = "RetiredResult"
    retired: list[str]


class Matched(Model):
    __schema__ = "Matched"
    asked: str
    id: str | None = None
    name: str
    how: str


class Candidate(Model):
    __schema__ = "Candidate"
    id: str
    name: str


class Ambiguous(Model):
    __schema__ = "Ambiguous"
    asked: str
    message: str
    candidates: list[Candidate]


class Fact(Model):
    """A fact on both clocks: true in the world from `valid_from` to `valid_to`, on file from
    `recorded_at` to `expired_at`."""

    __schema__ = "FactView"
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
    state: Literal["current", "superseded", "retired"]
    corroborations: int = 1
    conflict_id: str | None = None


class Facts(Model):
    __schema__ = "FactsResult"
    facts: list[Fact]
    matched: Matched | None = None
    ambiguous: Ambiguous | None = None


class Claim(Model):
    __schema__ = "Claim"
    fact_id: str
    object: str
    asserted_by: str
    trust: float
    recorded_at: datetime


class Claims(Model):
    """Every agent's value of a single-valued predicate, best first (trust, then recency)."""

    __schema__ = "ClaimsView"
    claims: list[Claim]
    conflict_id: str | None
    matched: Matched | None = None
    ambiguous: Ambiguous | None = None


class Settled(Model):
    __schema__ = "SettleResult"
    conflict_id: str
    winner: str
    losers: list[str]
    trust: dict[str, float]


class Remembered(Model):
    __schema__ = "EpisodesResult"
    episode_ids: list[str]


class RecallItem(Model):
    """A remembered turn and the path through the graph that led to it."""

    __schema__ = "RecallItem"
    episode_id: str
    session: str
    speaker: str
    text: str
    at: datetime
    score: float
    path: list[str] = []


class Episode(Model):
    """A turn as it was written: said at `at` (the world's clock), on file since `recorded_at`."""

    __schema__ = "EpisodeView"
    episode_id: str
    session: str
    speaker: str
    text: str
    kind: str
    at: datetime
    recorded_at: datetime | None = None
    agent: str | None = None


class Episodes(Model):
    """A page of turns in order of arrival; `next` is the `after` of the following page."""

    __schema__ = "EpisodeList"
    episodes: list[Episode]
    next: str | None = None


class Recalled(Model):
    __schema__ = "RecallResult"
    shape: str
    items: list[RecallItem]
    facts: list[Fact]
    matched: Matched | None = None
    ambiguous: Ambiguous | None = None


class Agents(Model):
    __schema__ = "AgentList"
    agents: list[str]


class TaskStep(Model):
    __schema__ = "TaskStep"
    kind: Literal["opened", "handed_off", "picked_up"]
    agent: str
    at: datetime
    to: str | None = None
    replica: str | None = None


class Task(Model):
    """Work one agent hands another: `open`, `claimed` by exactly one, or `done`."""

    __schema__ = "Task"
    task_id: str
    title: str
    about: str | None
    about_id: str | None
    state: Literal["open", "claimed", "done"]
    owner: str | None
    waiting_for: str | None
    opened_by: str
    opened_at: datetime
    updated_at: datetime
    done_at: datetime | None = None
    version: int
    trail: list[TaskStep] = []


class Claimed(Model):
    __schema__ = "Claimed"
    won: bool
    task: Task


class Tasks(Model):
    __schema__ = "TaskList"
    tasks: list[Task]


class Predicate(Model):
    """A predicate the tenant may write: built in, or its own (`define_predicate`)."""

    __schema__ = "PredicateView"
    name: str
    builtin: bool
    cardinality: Literal["single", "multi"]
    object: str
    object_type: str
    conflict: Literal["supersede", "keep_both"]
    edge: str | None
    description: str | None = None
    retired: bool = False


class Predicates(Model):
    __schema__ = "PredicateList"
    predicates: list[Predicate]
    version: int


class Turn(Model):
    """One turn of any conversation, as `remember_turns` sends it."""

    model_config = ConfigDict(extra="forbid")
    __schema__ = "EpisodeBody"
    session: str
    speaker: str
    text: str
    at: datetime | None = None  # default: the server's clock when it is written
    id: str | None = None
    mentions: list[str] = Field(default_factory=list)


ALL: tuple[type[Model], ...] = (TenantCreated, AgentCreated, Written, ItemError, BatchWritten, Retired, Matched,
                                Candidate, Ambiguous, Fact, Facts, Claim, Claims, Settled, Remembered, RecallItem,
                                Episode, Episodes, Recalled, Agents, Turn, TaskStep, Task, Claimed, Tasks, Predicate, Predicates)
