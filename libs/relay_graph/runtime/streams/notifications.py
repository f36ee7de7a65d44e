"""The thin change notifications that travel on Relay's streams.

A notification says *that* something changed: which tenant, which kind of thing, its id, the
version it reached, what kind of change, who did it and when. It never carries state (no text,
no names, no values): every consumer re-reads what it needs from the graph, and a consumer that
sees a version it already handled does nothing. Event names are in the past tense.

Each kind has exactly one stream (`stream` class attribute), so a consumer subscribes to streams
by naming the kinds it handles. Unknown extra fields are ignored on decode so that a newer
publisher can add a field without sending older consumers' messages to the dead letters.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import (
    AliasChoices,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    field_validator,
)

from relay_graph.runtime.times import utcnow
from relay_graph.runtime.errors import InvalidInput, RelayError
from relay_graph.runtime.tenancy import TENANT_RE, validate_tenant
from relay_graph.runtime.streams.keys import (
    STREAM_FACTS,
    STREAM_NETWORK,
    STREAM_OUTAGES,
    STREAM_REPLIES,
    STREAM_TASKS,
    STREAM_TICKETS,
    STREAM_TURNS,
    order_key,
)

# An identifier minted by Relay (episode, ticket, node, session, customer, agent ids).
# Bounded and free of control characters: a notification is an address, not a document.
Ref = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$")]


class InvalidNotification(InvalidInput):
    code = "invalid_notification"




class NotificationBase(BaseModel):
    """Fields every notification has. Subclasses fix `kind`, `change` and their stream."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    stream: ClassVar[str]

    tenant: str = Field(json_schema_extra={"pattern": TENANT_RE.pattern})
    id: Ref
    version: int = Field(ge=0, description="the version the thing reached with this change")
    actor: Ref = Field(description="the agent, person or process that made the change")
    at: AwareDatetime = Field(default_factory=utcnow, description="when the change happened")
    notification_id: uuid.UUID = Field(default_factory=uuid.uuid4, description="for dedupe")

    @field_validator("tenant")
    @classmethod
    def _tenant(cls, value: str) -> str:
        return validate_tenant(value)

    def order_key(self) -> str | None:
        """Notifications with the same key are handled one at a time, in publish order.
        None: no ordering needed (handlers rely on graph versions instead)."""
        return None


class TurnReceived(NotificationBase):
    """A customer's message was stored as an episode. `version` is the turn's sequence number
    within its session (also readable as `seq`), `id` the episode id (also `episode_id`)."""

    stream: ClassVar[str] = STREAM_TURNS
    kind: Literal["turn_received"] = "turn_received"
    change: Literal["received"] = "received"
    id: Ref = Field(validation_alias=AliasChoices("id", "episode_id"))
    version: int = Field(ge=1, validation_alias=AliasChoices("version", "seq"))
    session: Ref
    customer: Ref
    actor: Ref = "customer"

    @property
    def episode_id(self) -> str:
        return self.id

    @property
    def seq(self) -> int:
        return self.version

    def order_key(self) -> str:
        return order_key("session", self.tenant, self.session)


class TicketChanged(NotificationBase):
    stream: ClassVar[str] = STREAM_TICKETS
    kind: Literal["ticket_changed"] = "ticket_changed"
    change: Literal["opened", "handed_off", "picked_up", "stage", "closed", "reopened"]
    id: Ref = Field(validation_alias=AliasChoices("id", "ticket_id"))

    @property
    def ticket_id(self) -> str:
        return self.id


class NetworkChanged(NotificationBase):
    stream: ClassVar[str] = STREAM_NETWORK
    kind: Literal["network_changed"] = "network_changed"
    change: Literal["down", "up", "degraded"]
    id: Ref = Field(validation_alias=AliasChoices("id", "node_id"))

    @property
    def node_id(self) -> str:
        return self.id


class ReplyWritten(NotificationBase):
    """An agent's reply episode was stored; `reply_to` is the customer turn's episode id."""

    stream: ClassVar[str] = STREAM_REPLIES
    kind: Literal["reply_written"] = "reply_written"
    change: Literal["written"] = "written"
    id: Ref = Field(validation_alias=AliasChoices("id", "episode_id"))
    version: int = Field(default=1, ge=0)
    session: Ref
    reply_to: Ref
    ticket_id: Ref | None = None

    @property
    def episode_id(self) -> str:
        return self.id


class FactChanged(NotificationBase):
    """For the live feed: a fact was written or its standing changed."""

    stream: ClassVar[str] = STREAM_FACTS
    kind: Literal["fact_changed"] = "fact_changed"
    change: Literal["created", "corroborated", "superseded", "conflict", "retired", "settled"]
    id: Ref = Field(validation_alias=AliasChoices("id", "fact_id"))

    @property
    def fact_id(self) -> str:
        return self.id


class OutageChanged(NotificationBase):
    """For the live feed and the warn-first path: an outage was declared, updated or resolved."""

    stream: ClassVar[str] = STREAM_OUTAGES
    kind: Literal["outage_changed"] = "outage_changed"
    change: Literal["declared", "updated", "resolved"]
    id: Ref = Field(validation_alias=AliasChoices("id", "outage_id"))
    node_id: Ref | None = None

    @property
    def outage_id(self) -> str:
        return self.id


class TaskChanged(NotificationBase):
    """For the live feed and outside agents: a task was opened, handed off, picked up or done."""

    stream: ClassVar[str] = STREAM_TASKS
    kind: Literal["task_changed"] = "task_changed"
    change: Literal["opened", "handed_off", "picked_up", "done"]
    id: Ref = Field(validation_alias=AliasChoices("id", "task_id"))

    @property
    def task_id(self) -> str:
        return self.id


NOTIFICATION_TYPES: tuple[type[NotificationBase], ...] = (
    TurnReceived,
    TicketChanged,
    NetworkChanged,
    ReplyWritten,
    FactChanged,
    OutageChanged,
    TaskChanged,
)

Notification = Annotated[
    Union[TurnReceived, TicketChanged, NetworkChanged, ReplyWritten, FactChanged, OutageChanged, TaskChanged],
    Field(discriminator="kind"),
]

KINDS: dict[str, type[NotificationBase]] = {cls.model_fields["kind"].default: cls for cls in NOTIFICATION_TYPES}
STREAM_OF_KIND: dict[str, str] = {kind: cls.stream for kind, cls in KINDS.items()}

_ADAPTER: TypeAdapter[Any] = TypeAdapter(Notification)


def kind_of(kind_or_type: str | type[NotificationBase]) -> str:
    kind = kind_or_type.model_fields["kind"].default if isinstance(kind_or_type, type) else kind_or_type
    if kind not in KINDS:
        raise InvalidInput(f"unknown notification kind {kind!r}; known: {', '.join(KINDS)}")
    return kind


def stream_for(kind_or_notification: str | type[NotificationBase] | NotificationBase) -> str:
    if isinstance(kind_or_notification, NotificationBase):
        return type(kind_or_notification).stream
    return STREAM_OF_KIND[kind_of(kind_or_notification)]


def encode(notification: NotificationBase) -> str:
    """The JSON payload of a notification (what travels in the stream's `payload` field)."""
    if not isinstance(notification, NotificationBase):
        raise InvalidNotification("only notification models can be published")
    return notification.model_dump_json()


def decode(data: str | bytes | dict[str, Any]) -> Notification:
    """Parse a payload back into its notification model; anything else is InvalidNotification."""
    try:
        if isinstance(data, dict):
            return _ADAPTER.validate_python(data)
        return _ADAPTER.validate_json(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'payload'}: {err['msg']}" for err in exc.errors()[:5]
        )
        raise InvalidNotification(f"not a valid notification: {problems}") from exc
    except RelayError as exc:  # e.g. InvalidTenant raised by a validator
        raise InvalidNotification(f"not a valid notification: {exc.message}") from exc
    except (ValueError, TypeError) as exc:
        raise InvalidNotification(f"not a valid notification: {exc}") from exc
