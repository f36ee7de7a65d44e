"""What the intake agent understood from one customer message: the strict schema that both the rules
extractor and (later) an LLM adapter fill. Nothing here is written to the graph as is: the caller
turns facts into FactInput writes and a problem into a ticket.

Every fact value has already passed the desk vocabulary's checks when it gets here, so a
model that invents "slow" as a router model is stopped at the schema, not at the database."""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from relay_graph.desk import vocabulary
from relay_graph.memory import registry
from relay_graph.runtime.errors import RelayError


class IssueKind(str, Enum):
    NO_CONNECTION = "no_connection"
    SLOW_SPEED = "slow_speed"
    WIFI_DROPS = "wifi_drops"
    INTERMITTENT = "intermittent"
    NO_SIGNAL_LIGHT = "no_signal_light"  # the red LOS light on the ONT
    BILLING_DOUBLE_CHARGE = "billing_double_charge"
    PAYMENT_FAILED = "payment_failed"
    ROUTER_FROZEN = "router_frozen"
    OTHER = "other"


class Intent(str, Enum):
    GREETING = "greeting"
    REPORT_PROBLEM = "report_problem"
    GIVE_INFO = "give_info"
    ASK_STATUS = "ask_status"
    CONFIRM_FIXED = "confirm_fixed"
    CONFIRM_NOT_FIXED = "confirm_not_fixed"
    MOVE = "move"
    PLAN_CHANGE = "plan_change"
    OFF_TOPIC = "off_topic"
    OTHER = "other"


class ExtractedFact(BaseModel):
    """One subject-less fact about the customer who wrote the message.

    `ended` means the customer says it is no longer (or never was) true: the caller retires it
    rather than asserting it. `valid_from_hint` is the customer's own words for when it became
    true ("last week", "since monday"); for an ended fact it says when it stopped. Turn it into a
    time with `timehints.resolve_hint`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    predicate: str
    object: str = Field(min_length=1, max_length=registry.MAX_VALUE_CHARS)
    valid_from_hint: str | None = Field(default=None, max_length=80)
    ended: bool = False

    @field_validator("predicate")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in vocabulary.NAMES:
            raise ValueError(f"unknown predicate {v!r}; known: {', '.join(vocabulary.NAMES)}")
        return v

    @model_validator(mode="before")
    @classmethod
    def _checked(cls, data: object) -> object:
        # the registry's own check normalises too (phone digits, lower-case email): keep its output
        if isinstance(data, dict) and data.get("predicate") in vocabulary.NAMES:
            try:
                value = registry.get(data["predicate"]).check(registry.clean_text(data.get("object"), "object"))
            except RelayError as e:
                raise ValueError(e.message) from None
            data = {**data, "object": value}
        return data


class ProblemReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: IssueKind
    also: list[IssueKind] = []  # further symptoms named in the same message, most specific first
    medium: Literal["wifi", "wired"] | None = None
    place: str | None = Field(default=None, max_length=80)  # "upstairs", "bedroom"
    time: str | None = Field(default=None, max_length=80)  # "since monday", "every evening"
    device: str | None = Field(default=None, max_length=80)  # "tv", "ps5"
    summary: str = Field(min_length=1, max_length=300)


class Extraction(BaseModel):
    model_config = ConfigDict(extra="forbid")

    facts: list[ExtractedFact] = []
    # What the customer wants or expects to become true (a move they are planning, a plan they ask
    # for). Not facts yet: the caller must not write them as current.
    planned: list[ExtractedFact] = []
    problem: ProblemReport | None = None
    intent: Intent = Intent.OTHER
    # The customer asks for someone else's data (another customer, a neighbour's account): refuse.
    about_someone_else: bool = False
    language_hint: str | None = Field(default=None, pattern=r"^[a-z]{2}$")


def checked_fact(predicate: str, obj: str, *, hint: str | None = None, ended: bool = False) -> ExtractedFact | None:
    """The fact if its value passes the registry, else None: candidates that fail are dropped,
    never raised, because a wrong guess must not cost the rest of the message."""
    try:
        return ExtractedFact(predicate=predicate, object=obj, valid_from_hint=hint, ended=ended)
    except ValidationError:
        return None


def keep_valid_facts(raw: list[dict]) -> list[ExtractedFact]:
    """For adapters that get facts from an untrusted model: keep those that validate."""
    out: list[ExtractedFact] = []
    for item in raw:
        if not isinstance(item, dict):
            continue
        try:
            out.append(ExtractedFact.model_validate(item))
        except ValidationError:
            continue
    return out
