"""Request and response bodies of the HTTP API (docs/API.md is generated from them). Shapes that match the
engine's models are those models; request bodies refuse unknown fields and times without an offset."""

from __future__ import annotations

import re
from datetime import datetime
from enum import Enum
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt

from relay_graph.inputs import AwareTime, Identifier, Name, Text

from relay_graph.models import (
    AGENT_PATTERN,
    ClaimsView,
    EpisodeInput,
    FactInput,
    FactView,
    FactWriteResult,
    RecallResult,
    RetireInput,
    SettleResult,
)
from relay_graph.lab import FaultKind, Injection, Scoreboard
from relay_graph.network_models import NODE_ID_PATTERN, Capacity, CriticalNode, LineHop, SpanningForest
from relay_graph.world import HomeLine, WorldSummary

__all__ = [
    "ApiTime", "ClaimsView", "EpisodesBody", "EpisodesResult", "FactBody", "FactView", "FactWriteResult",
    "FactsResult", "RecallResult", "RetireBody", "RetiredResult", "SettleBody", "SettleResult", "TenantBody",
    "TenantCreated", "to_json",
    # the desk and the network
    "AffectedResult", "AffectedView", "ChatAccepted", "ChatAnswered", "ChatBody", "ChatReplyView", "ChatTicketView",
    "ConfirmBody", "ConfirmResult", "LineHop", "LineResult", "NodeStatusBody", "NodeStatusResult", "TicketListItem",
    "TicketView", "TicketsResult",
]

_SPACE_OFFSET = re.compile(r"(T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?) (\d{2}(?::?\d{2})?)$")


def _plus_from_query(value: Any) -> Any:
    # An unencoded "+00:00" in a query string arrives as " 00:00"; read it as the "+" it was.
    if isinstance(value, str):
        return _SPACE_OFFSET.sub(r"\1+\2", value.strip())
    return value


# ISO 8601 with an offset, in the documented years (relay_graph.inputs); a time without an offset
# is refused (422), never guessed.
ApiTime = Annotated[AwareTime, BeforeValidator(_plus_from_query)]

Agent = Annotated[str, Field(pattern=AGENT_PATTERN, description="the writing agent's id", examples=["intake"])]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TenantBody(Strict):
    tenant: str = Field(max_length=63, description="^[a-z0-9][a-z0-9-]{1,62}$", examples=["acme"])


class TenantCreated(BaseModel):
    tenant: str
    api_key: str = Field(description="shown once; send it as `Authorization: Bearer <key>`")


class FactBody(Strict):
    subject: Name = Field(examples=["alice rao"])
    predicate: str = Field(min_length=1, max_length=64, examples=["lives_in"])
    object: Name = Field(examples=["pune"])
    agent: Agent
    valid_from: ApiTime | None = Field(default=None, description="when it became true; default now")
    source: Identifier | None = Field(default=None, description="the id of the episode it came from")

    def to_input(self) -> FactInput:
        # recorded_at is always the server's now at the API: the belief clock is not client-settable.
        return FactInput(**self.model_dump())


class RetireBody(Strict):
    subject: Name
    predicate: str = Field(min_length=1, max_length=64)
    object: Name | None = Field(default=None, description="one value of a multi-valued predicate; default all")
    agent: Agent
    valid_to: ApiTime | None = Field(default=None, description="when it stopped being true; default now")

    def to_input(self) -> RetireInput:
        return RetireInput(**self.model_dump())


class RetiredResult(BaseModel):
    retired: list[str]


class FactsResult(BaseModel):
    facts: list[FactView]


class SettleBody(Strict):
    fact_id: Identifier = Field(description="the claim that is right")
    by: Name = Field(max_length=128, description="the person settling it")


class EpisodeBody(EpisodeInput):
    """One turn of any conversation."""

    at: ApiTime  # type: ignore[assignment]


class EpisodesBody(Strict):
    episodes: list[EpisodeBody] = Field(min_length=1, max_length=500)


class EpisodesResult(BaseModel):
    episode_ids: list[str]


def to_json(value: Any) -> Any:
    """JSON-ready data with every time as ISO 8601 with a numeric offset ("+00:00", not "Z")."""
    if isinstance(value, BaseModel):
        return to_json(value.model_dump(mode="python"))
    if isinstance(value, datetime):
        return value.isoformat() if value.tzinfo else value.isoformat() + "+00:00"
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return value


# ---------------------------------------------------------------- the desk


class ChatBody(Strict):
    customer: Name = Field(description="the customer's name", examples=["alice rao"])
    text: Text = Field(description="the turn exactly as written (line breaks, tabs, emoji kept)",
                       examples=["my internet keeps dropping since yesterday"])
    session: Identifier | None = Field(default=None, description="the conversation to continue; default a new one")


class ChatAccepted(BaseModel):
    """The turn is stored and announced; the desk answers it in the background."""

    session: str
    episode_id: str = Field(description="the turn's episode id")
    note: str | None = Field(default=None, description="set when `wait` ran out before the reply came")


class ChatReplyView(BaseModel):
    text: str
    how_i_know: list[str] = Field(description="the graph rows (fact, ticket, outage ids ...) the reply rests on")


class ChatTicketView(BaseModel):
    id: str
    stage: str


class ChatAnswered(BaseModel):
    session: str
    episode_id: str
    reply: ChatReplyView
    ticket: ChatTicketView | None


class TicketListItem(BaseModel):
    id: str
    stage: str
    owner: str | None
    customer: str
    opened_at: datetime
    issue: str
    version: int
    updated_at: datetime


class TicketsResult(BaseModel):
    tickets: list[TicketListItem]


class TimelineView(BaseModel):
    at: datetime
    agent: str
    event: str
    detail: str | None


class HandoffView(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    from_: str = Field(alias="from")
    to: str
    at: datetime


class VisitView(BaseModel):
    visit_id: str
    technician: str
    at: datetime
    scheduled_at: datetime
    status: str


class TicketView(BaseModel):
    """A ticket as the API shows it: its state, timeline and handoffs (the engine's bookkeeping,
    such as which replica holds it, stays inside)."""

    id: str
    stage: str
    owner: str | None
    customer: str
    issue: str
    summary: str
    version: int
    round: int
    session: str | None
    opened_at: datetime
    updated_at: datetime
    closed_at: datetime | None
    timeline: list[TimelineView] = []
    handoffs: list[HandoffView] = []
    visits: list[VisitView] = []
    fixed_by: list[str] = []


class ConfirmBody(Strict):
    fixed: StrictBool = Field(description="true: it works now (the ticket closes); false: it does not (it reopens)")
    by: str = Field(default="customer", pattern=AGENT_PATTERN, description="who confirms; default `customer`")


class ConfirmResult(BaseModel):
    id: str
    stage: str
    version: int
    changed: bool = Field(description="false when the ticket was already in that stage (nothing written)")


# ---------------------------------------------------------------- the network


class LineResult(BaseModel):
    customer: str
    line: list[LineHop] = Field(
        description="hops from the home (ONT) to the core, each with its status and capacity and the link "
        "towards the core (null on the last hop); empty when the customer is known but not connected")


class AffectedView(BaseModel):
    customer: str
    path: list[str] = Field(description="node ids from the customer's access node up to the queried node")


class AffectedResult(BaseModel):
    node: str
    customers: list[AffectedView]


class NodeStatusBody(Strict):
    up: StrictBool = Field(description="true: working; false: down")
    by: str = Field(default="staff", pattern=AGENT_PATTERN, description="who changed it; default `staff`")


class NodeStatusResult(BaseModel):
    node_id: str
    up: bool
    changed: bool = Field(description="false when the node already had that status (nothing announced)")
    version: int


# ---------------------------------------------------------------- the provider's world and the fault lab

__all__ += ["CapacityResult", "CriticalResult", "FaultBody", "FaultInjected", "HomeBody", "HomeLine",
            "ScoreboardResult", "SpanningForest", "WorldBody", "WorldCustomer", "WorldSummary"]

CapacityResult = Capacity

# A whole number (not a boolean) or a short string.
Seed = StrictInt | Identifier
ScoreboardResult = Scoreboard
FaultInjected = Injection


class CriticalResult(BaseModel):
    nodes: list[CriticalNode]


class FaultBody(Strict):
    kind: FaultKind | None = Field(default=None, description="the fault to inject; none: a blind random one "
                                   "among those the target can suffer")
    customer: Name | None = Field(default=None,
                                  description="aim at this customer's line (refused if they already have a fault)")
    node: str | None = Field(default=None, pattern=NODE_ID_PATTERN, description="aim at this network node")
    seed: Seed | None = Field(default=None, description="makes a blind draw repeatable")


class WorldCustomer(Strict):
    customer: Name = Field(examples=["asha verma"])
    address: Name = Field(description="where they live: an area and/or city", examples=["Andheri, Mumbai"])


class WorldBody(Strict):
    region: str = Field(default="india", description="india, europe, north-america, asia-pacific, "
                        "middle-east-africa or latin-america", examples=["india"])
    seed: Seed | None = Field(default=None, description="the network's seed; default the region's code. A "
                              "region's network is seeded once: another seed later is refused (409)")
    max_cities: int | None = Field(default=None, ge=1, le=500, description="only the region's N largest cities")
    customers: list[WorldCustomer] = Field(default_factory=list, max_length=2000,
                                           description="customers to connect to a home box in their area")


class HomeBody(Strict):
    address: Name = Field(examples=["Koramangala, Bengaluru"])
    region: str | None = Field(default=None, description="the desk the customer talks to; default the tenant's "
                               "only seeded region")
