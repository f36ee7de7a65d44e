"""Request and response bodies of the HTTP API (docs/api.md is generated from them). Shapes that match the
engine's models are those models; request bodies refuse unknown fields and times without an offset."""

from __future__ import annotations

import re
from datetime import datetime
from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, SerializationInfo, StrictBool, StrictInt, WrapSerializer

from relay_graph.memory.inputs import AwareTime, Identifier, Name, Text, name_type
from relay_graph.memory.models import (
    AGENT_PATTERN,
    LABEL_PATTERN,
    Ambiguous,
    ClaimsView,
    EpisodeInput,
    FactInput,
    TurnInput,
    FactView,
    FactWriteResult,
    Matched,
    RecallResult,
    RetireInput,
    SettleResult,
)
from relay_graph.desk.catalogue import REGION_CODES
from relay_graph.lab import FaultKind, Injection, Scoreboard
from relay_graph.desk.network.models import NODE_ID_PATTERN, Capacity, CriticalNode, LineHop, SpanningForest
from relay_graph.memory.registry import NAME_PATTERN, predicates_described
from relay_graph.runtime.tenancy import TENANT_RE
from relay_graph.desk.network.homes import HomeLine
from relay_graph.lab.world import WorldSummary

from relay_graph.tools.types import whole

from .auth import AGENT_ID_PATTERN
from .errors import ErrorDetail

__all__ = [
    "ApiTime", "ClaimsView", "EpisodesBody", "EpisodesResult", "FactBody", "FactView", "FactWriteResult",
    "FactsResult", "RecallResult", "RetireBody", "RetiredResult", "SettleBody", "SettleResult", "TenantBody",
    "TenantCreated", "to_json", "Answer", "AgentBody", "AgentCreated", "AgentList", "FactsBatchBody", "FactsBatchResult",
    "ItemError", "LimitsBody", "LimitsView", "TenantLimits",
    # the desk and the network
    "AffectedResult", "AffectedView", "ChatAccepted", "ChatAnswered", "ChatBody", "ChatReplyView", "ChatTicketView",
    "ConfirmBody", "ConfirmResult", "LineHop", "LineResult", "NodeStatusBody", "NodeStatusResult", "TicketListItem",
    "PromiseItem", "TicketView", "TicketsResult",
]

_SPACE_OFFSET = re.compile(r"(T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?) (\d{2}(?::?\d{2})?)$")


def _plus_from_query(value: Any) -> Any:
    # An unencoded "+00:00" in a query string arrives as " 00:00"; read it as the "+" it was.
    if isinstance(value, str):
        return _SPACE_OFFSET.sub(r"\1+\2", value.strip())
    return value


# ISO 8601 with an offset, in the documented years (relay_graph.memory.inputs); a time without an offset
# is refused (422), never guessed.
ApiTime = Annotated[AwareTime, BeforeValidator(_plus_from_query)]

# Who writes is the key's agent (an agent key's, or `api` for the tenant key); a request's `agent`
# only names a sub-label under it (see FactView.label).
SubLabel = Annotated[str | None, Field(default=None, pattern=LABEL_PATTERN,
                                       description="a sub-label under the key's agent, e.g. `night-shift` (kept as "
                                       "the fact's `label`); the writer recorded (asserted_by) is always the key's "
                                       "agent: an agent key's agent, or `api` for the tenant key",
                                       examples=["night-shift"])]
# Where a write keeps no sub-label (retirements, episodes): accepted, and the key's agent is the writer.
IgnoredAgent = Annotated[str | None, Field(default=None, pattern=LABEL_PATTERN,
                                           description="ignored: the writer recorded is always the key's agent "
                                           "(an agent key's agent, or `api` for the tenant key)")]
# A built-in predicate (the desk's vocabulary, registered when this gateway imported the desk, and
# the engine's) or one of the tenant's own (PUT .../predicates/{name}); any other is 422
# `unknown_predicate`. A pattern, not an enum: a tenant's own are defined at run time.
PredicateName = Annotated[str, Field(pattern=NAME_PATTERN, min_length=2, max_length=48,
                                     json_schema_extra=predicates_described,
                                     examples=["lives_in"])]
Region = Literal[REGION_CODES]  # type: ignore[valid-type]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TenantBody(Strict):
    # The pattern is stated for clients; the engine's check (validate_tenant) refuses with `invalid_tenant`.
    tenant: str = Field(max_length=63, description="^[a-z0-9][a-z0-9-]{1,62}$", examples=["acme"],
                        json_schema_extra={"pattern": TENANT_RE.pattern})
    region: Region = Field(default="india", description="the region whose world (catalogue, prices, network) "
                           "the tenant is created with")
    world: StrictBool = Field(default=True, description="false: an empty tenant, no catalogue and no network "
                              "(seed one later with `POST /v1/tenants/{t}/world`)")
    operator: str | None = Field(default=None, max_length=63, pattern=r"^[a-z0-9][a-z0-9-]{1,62}$",
                                 description="the operator whose regional desk for `region` this tenant is: a "
                                 "customer placed in a city another of its desks serves is moved there, with "
                                 "their history (one desk per operator and region: 409 `desk_taken`)")


class TenantCreated(BaseModel):
    tenant: str
    api_key: str = Field(description="shown once; send it as `Authorization: Bearer <key>`")
    world: WorldSummary | None = Field(default=None, description="the world the tenant was created with; null "
                                       "when it was created empty (`world: false`)")


class AgentBody(Strict):
    agent: str = Field(pattern=AGENT_ID_PATTERN, examples=["planner"],
                       description="the agent's id; the desk's own agents (intake, resolver, netops, gateway, "
                       "simulator) and `api` are reserved")


class AgentCreated(BaseModel):
    tenant: str
    agent: str
    api_key: str = Field(description="shown once; whoever sends it writes and reads as this agent")


class AgentList(BaseModel):
    agents: list[str] = Field(description="the tenant's agents that have a key")


class LimitsBody(Strict):
    """The tenant's own limits; a field left out or null takes the gateway's default."""

    # strict: `true` is not the number 1
    rate_per_second: float | None = Field(default=None, gt=0, le=1_000_000, strict=True,
                                          description="requests a second, shared by all the tenant's keys")
    burst: Annotated[whole(1, 1_000_000), Field(strict=True)] | None = Field(
        default=None, description="requests at once beyond the rate")
    batch_max_facts: Annotated[whole(1, 100_000), Field(strict=True)] | None = Field(
        default=None, description="facts in one POST /facts/batch")


class LimitsView(BaseModel):
    rate_per_second: float
    burst: int
    batch_max_facts: int


class TenantLimits(BaseModel):
    tenant: str
    limits: LimitsView = Field(description="what the tenant runs with")
    overrides: dict[str, float | int] = Field(description="what the admin set for it (the rest: the defaults)")


class FactBody(Strict):
    subject: Name = Field(examples=["alice rao"])
    predicate: PredicateName
    object: Name = Field(examples=["pune"])
    agent: SubLabel = None
    valid_from: ApiTime | None = Field(default=None, description="when it became true; default now")
    source: Identifier | None = Field(default=None, description=(
        "where it came from: an episode id of the tenant (the fact is then linked to that episode: "
        "DERIVED), or an id of your own system, kept as given"))

    def to_input(self, writer: str, label: str | None) -> FactInput:
        # recorded_at is always the server's now at the API: the belief clock is not client-settable.
        return FactInput(**self.model_dump(exclude={"agent"}), agent=writer, label=label)


class FactsBatchBody(Strict):
    facts: list[Any] = Field(
        min_length=1,
        description="facts as POST /facts takes them (FactBody), each checked on its own: one that does not "
        "validate (not even an object) is answered in its slot and the others are written. At most the tenant's `batch_max_facts` "
        "(GET /v1/tenants/{t}/limits; default 1,000): more is 413 `batch_too_large`, nothing written.",
    )


class ItemError(BaseModel):
    """A batch item that was not written (nothing of it was)."""

    error: ErrorDetail


class FactsBatchResult(BaseModel):
    results: list[FactWriteResult | ItemError] = Field(
        description="one per fact, in order: what POST /facts answers, or the error of a fact not written")
    written: int
    failed: int


class RetireBody(Strict):
    subject: Name
    predicate: PredicateName
    object: Name | None = Field(default=None, description="one value of a multi-valued predicate; default all")
    agent: IgnoredAgent = None
    valid_to: ApiTime | None = Field(default=None, description="when it stopped being true, not in the future (422); default now. A time before the fact began ends it where it began")

    def to_input(self, writer: str) -> RetireInput:
        return RetireInput(**self.model_dump(exclude={"agent"}), agent=writer)


class RetiredResult(BaseModel):
    retired: list[str]


class FactsResult(BaseModel):
    """A subject's facts. A subject that is not a key on file is read as the name it matches, and
    `matched` says so; a name that stands for two or more customers reads nothing and answers
    `ambiguous` with the candidates ("did you mean ...?"). Writes never match names."""

    facts: list[FactView]
    matched: Matched | None = Field(default=None, description="the subject was read as this name on file "
                                                              "(a customer's name, or a name spelt alike)")
    ambiguous: Ambiguous | None = Field(default=None, description="the subject names two or more customers: "
                                                                  "nothing was read; ask which")


class SettleBody(Strict):
    fact_id: Identifier = Field(description="the claim that is right")
    by: name_type(128) = Field(description="the person settling it")  # type: ignore[valid-type]


class EpisodeBody(TurnInput):
    """One turn or note of any conversation: the same model as the `remember` tool's (and MCP's)."""

    at: ApiTime | None = Field(default=None, description="when it was said; default now")  # type: ignore[assignment]
    agent: IgnoredAgent = None
    # The desk's own reply fields, accepted here until v2 (deprecated: the desk's agents write replies
    # through the engine, never through this route).
    reply_to: Identifier | None = Field(default=None, deprecated=True)
    ticket_id: Identifier | None = Field(default=None, deprecated=True)
    how_i_know: list[Text] = Field(default=[], deprecated=True)
    answers: list[Identifier] = Field(default=[], deprecated=True)

    def to_episode(self, agent: str, now: datetime, **_: Any) -> EpisodeInput:  # type: ignore[override]
        desk = self.model_dump(include={"reply_to", "ticket_id", "how_i_know", "answers"})
        return TurnInput.model_validate(self.model_dump(exclude={"agent", *desk})).to_episode(agent, now, **desk)


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


def _times_with_offset(value: Any, handler: Any, info: SerializationInfo):  # no return type: keeps the schema
    # pydantic writes a UTC time with "Z" and a naive one with no offset; the API's times carry
    # "+00:00" (the contract), whatever model they come from.
    return to_json(value) if info.mode_is_json() else handler(value)


class Answer:
    """`Answer[Model]` is a route's `response_model`: FastAPI validates the handler's return against
    `Model` and publishes `Model`'s schema; the body is written by `to_json`."""

    def __class_getitem__(cls, model: Any) -> Any:
        return Annotated[model, WrapSerializer(_times_with_offset)]


# ---------------------------------------------------------------- the desk


class ChatBody(Strict):
    # "a new customer's name, or an existing customer's id, not both", stated in the schema as
    # chat.record_turn checks it
    model_config = ConfigDict(extra="forbid", json_schema_extra={"not": {
        "required": ["customer", "name"],
        "properties": {"customer": {"type": "string"}, "name": {"type": "string"}}}})

    customer: Name | None = Field(
        default=None,
        description="the customer's id (from the answer to their first turn). Leave it out on a first turn: a "
                    "new customer is made and their id comes back in `customer`. The id is taken exactly as "
                    "given (never matched to a customer spelt alike); an id Relay never gave is kept as given "
                    "(an older tenant's customers keep their name as their id)",
        examples=["c-1f0e4b2a9c3d5e6f"])
    name: Name | None = Field(default=None,
                              description="only without `customer`: the new customer's name, written as their "
                                          "`name` fact (a name is a fact about a customer, never their key)",
                              examples=["Priya Raman"])
    text: Text = Field(description="the turn exactly as written (line breaks, tabs, emoji kept)",
                       examples=["my internet keeps dropping since yesterday"])
    session: Identifier | None = Field(default=None, description="the conversation to continue; default a new one")


class ChatAccepted(BaseModel):
    """The turn is stored and announced; the desk answers it in the background."""

    session: str
    episode_id: str = Field(description="the turn's episode id")
    customer: str = Field(description="the customer's id: send it with their next turns")
    note: str | None = Field(default=None, exclude_if=lambda v: v is None,
                             description="set when `wait` ran out before the reply came")


class ChatReplyView(BaseModel):
    text: str
    how_i_know: list[str] = Field(description="the graph rows (fact, ticket, outage ids ...) the reply rests on")
    sources: list[str] = Field(default=[], description="the same rows in the customer's words, on their clock and "
                               "without ids (\"lives in: Pune (from your message on Sat 5 Dec)\"), for the site")
    answers: list[str] = Field(default=[], description="what kinds of answer the reply is made of, in order "
                               "(`ticket_opened`, `plans`, `recommendation`, `tip`, `off_topic`, ...; `ask:<detail>` "
                               "for a question put to the customer)")


class ChatTicketView(BaseModel):
    id: str
    stage: str


class ChatAnswered(BaseModel):
    session: str
    episode_id: str
    customer: str = Field(description="the customer's id")
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
    detail: str | None = Field(description="the step in the staff's words (ids, UTC)")
    customer: str | None = Field(default=None, description="the step in the customer's words: no ids, times in "
                                 "their zone (what the customer site shows); null for staff bookkeeping")


class HandoffView(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    from_: str = Field(alias="from")
    to: str
    at: datetime


class VisitView(BaseModel):
    visit_id: str
    technician: str
    at: datetime = Field(description="when the technician goes: the visit's own time")
    scheduled_at: datetime = Field(description="when the visit was booked")
    status: str = Field(examples=["scheduled"], description="scheduled, done or cancelled")


class PromiseItem(BaseModel):
    promise_id: str
    text: str = Field(examples=["A technician will call you"])
    due_at: datetime
    made_at: datetime
    made_by: str
    status: str = Field(examples=["open"])
    source: str | None = Field(default=None, description="the customer turn it answered")


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
    promises: list[PromiseItem] = Field(default=[], description="what the desk promised on this ticket, with "
                                        "when it is due (kept as Promise memories)")


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
    # "a customer or a node, not both", stated in the schema as the engine checks it
    model_config = ConfigDict(extra="forbid", json_schema_extra={"not": {
        "required": ["customer", "node"],
        "properties": {"customer": {"type": "string"}, "node": {"type": "string"}}}})

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
    region: Region = Field(default="india", description="the region whose catalogue and network to seed")
    seed: Seed | None = Field(default=None, description="the network's seed; default the region's code. A "
                              "region's network is seeded once: another seed later is refused (409)")
    max_cities: int | None = Field(default=None, ge=1, le=500, description="only the region's N largest cities")
    customers: list[WorldCustomer] = Field(default_factory=list, max_length=2000,
                                           description="customers to connect to a home box in their area")


class HomeBody(Strict):
    address: Name = Field(examples=["Koramangala, Bengaluru"])
    region: Region | None = Field(default=None, description="the desk the customer talks to; default the tenant's "
                               "only seeded region")


def document_status_models(schema: dict[str, Any]) -> dict[str, Any]:
    """A route whose success status varies (POST /chat: 202 accepted, 200 answered) has the union
    of its answers as its model, and FastAPI publishes that union under its default status. Each
    model documented under another success status of the operation is that status's, not the
    default's: the default keeps the rest (so the 202 of /chat says ChatAccepted, exactly)."""
    for ops in schema.get("paths", {}).values():
        for op in ops.values():
            if not isinstance(op, dict):
                continue
            answers = {status: r.get("content", {}).get("application/json", {}).get("schema", {})
                       for status, r in op.get("responses", {}).items() if str(status).startswith("2")}
            elsewhere = {s.get("$ref") for s in answers.values() if "$ref" in s}
            for status, body in answers.items():
                if "anyOf" not in body:
                    continue
                kept = [s for s in body["anyOf"] if s.get("$ref") not in elsewhere]
                if kept and len(kept) < len(body["anyOf"]):
                    body.clear()
                    body.update(kept[0] if len(kept) == 1 else {"anyOf": kept})
    return schema
