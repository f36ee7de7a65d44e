"""The chat desk's own graph work: recording a customer's turn with its place in the session, and
reading the reply an agent wrote to it.

A customer is their id (`customers`): a first turn without one makes a new customer, whose id the
turn returns; a name given with it is the customer's `name` fact, never their key, so two people
called alike are two customers. A given id is taken exactly (never matched to an id or a name spelt
alike).

A turn is a `CustomerMessage` episode (written by the episodes module, agent `gateway`, speaker and
customer = the customer's id) whose sequence number in its session comes from a per-session
counter moved in one statement (see queries/chat.py for where it is kept and why).

The outbox: the statement that numbers the turn also writes its announcement (an `Outbox` node
with the TurnReceived's fields and notification id), so a turn is never stored without it. The
caller publishes it after `record_turn` returned (agents always find the turn in the graph) and
then takes it out (`Outbox.done`); if the publish fails, the outbox relay every gateway and agent
replica runs (outbox.py) publishes it a moment later. A copy published twice has the same
notification id, and consumers drop it.

A session belongs to the customer who opened it: a turn naming another customer's session is
refused (SessionConflict) before anything is written, so one customer can never post into, or be
answered from, someone else's conversation."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, NamedTuple

from pydantic import BaseModel

from relay_graph.runtime.times import from_ms, now_ms
from relay_graph.desk.conversation import farewell
from relay_graph.desk.customers import store as customers
from relay_graph.memory import inputs
from relay_graph.runtime.db import GraphClient
from relay_graph.memory.entities import entity_uid, name_key
from relay_graph.runtime.errors import InvalidInput, InvalidValue, RelayError, StateConflict
from relay_graph.memory.facade import Memory
from relay_graph.memory.models import EpisodeInput, aware, utcnow
from relay_graph.desk.queries import chat as q
from relay_graph.memory.registry import clean_text
from relay_graph.runtime.streams import TurnReceived
from relay_graph.runtime.tenancy import validate_tenant

AGENT = "gateway"  # who writes the customer's turns down
MAX_CUSTOMER = 200
MAX_TEXT = 8_000
MAX_SPEAKER = 128  # an episode's speaker is shorter than a name may be


class SessionConflict(RelayError):
    code = "session_conflict"
    status = 409


class RecordedTurn(NamedTuple):
    session: str
    episode_id: str
    seq: int
    customer: str = ""
    notification_id: str = ""  # its announcement's (TurnReceived), kept in the outbox until published
    facts: tuple = ()  # the facts it wrote (a new customer's name), for the caller to announce


class ReplyView(BaseModel):
    episode_id: str
    session: str | None = None
    kind: str | None = None
    text: str
    speaker: str | None = None
    at: datetime | None = None
    reply_to: str | None = None
    ticket_id: str | None = None
    how_i_know: list[str] = []
    answers: list[str] = []  # what kinds of answer the reply is made of (relay_graph.desk.conversation.kinds)


def new_session_id() -> str:
    return "s-" + uuid.uuid4().hex


def new_turn_id() -> str:
    return "t-" + uuid.uuid4().hex


def check_customer(customer: object) -> str:
    """A customer is their id: 1-200 characters with a letter or digit, no control characters."""
    if not isinstance(customer, str):
        raise InvalidInput("customer must be a customer's id")
    name = clean_text(customer, "customer")
    if len(name) > MAX_CUSTOMER:
        raise InvalidValue(f"customer is longer than {MAX_CUSTOMER} characters")
    if not name_key(name):
        raise InvalidValue("customer has no letters or digits")
    return name


def check_session(session: object) -> str:
    return inputs.check_identifier(session, "session")


def check_text(text: object) -> str:
    """The turn's words exactly as written (newlines, tabs, emoji joiners kept)."""
    return inputs.check_text(text, "text", MAX_TEXT)


async def record_turn(
    memory: Memory,
    tenant: str,
    *,
    customer: str | None,
    text: str,
    session: str | None = None,
    at: datetime | None = None,
    name: str | None = None,
) -> RecordedTurn:
    """Stores a customer's turn and gives it the session's next sequence number (from 1).
    `customer` None: a new customer (`customers.create`, with `name` as their name fact); `name`
    with a `customer` is refused. No session: a new one ("s-" + uuid hex). SessionConflict if the
    session is another customer's; InvalidInput/InvalidValue for a bad id, name, text or session.
    Everything is checked before anything is written. Returns (session, episode_id, seq, customer)."""
    validate_tenant(tenant)
    if customer is not None and name is not None:
        raise InvalidInput("name is for a new customer's first turn: leave customer out, or name out")
    key = check_customer(customer) if customer is not None else None
    new_name = customers.check_name(name) if name is not None else None
    body = check_text(text)
    client = memory.client
    if session is None:
        session = new_session_id()
    else:
        session = check_session(session)
        owners = (await client.run(tenant, q.SESSION_OWNERS, {"session": session}))[0]["owners"] or []
        if owners and (key is None or entity_uid("Customer", name_key(key)) not in owners):
            raise SessionConflict(f"session {session!r} belongs to another customer; "
                                  "leave session out to start a new conversation")
    written = ()
    if key is None:
        key, named = await customers.create_named(client, tenant, name=new_name, agent=AGENT)
        written = (named,) if named is not None else ()
    name = key
    episode_id = new_turn_id()
    speaker = name if len(name) <= MAX_SPEAKER else name[: MAX_SPEAKER - 1] + "…"
    # Its vector is made by intake once the reply is out (episodes.embed_missing): the customer
    # should not wait for the model twice.
    await memory.write_episodes(tenant, [EpisodeInput(
        session=session, speaker=speaker, text=body, at=aware(at) or utcnow(), id=episode_id,
        kind="CustomerMessage", agent=AGENT, customer=name,
    )], embed=False)
    notification_id = str(uuid.uuid4())
    rows = await client.run(tenant, q.ASSIGN_SEQ, {
        "id": episode_id, "session": session, "customer": name, "notification_id": notification_id,
        "at_ms": now_ms()})
    if not rows or rows[0]["seq"] is None:
        raise StateConflict(f"turn {episode_id} was written but could not be numbered; send it again")
    return RecordedTurn(session=session, episode_id=episode_id, seq=int(rows[0]["seq"]), customer=name,
                        notification_id=notification_id, facts=written)


def announcement(tenant: str, turn: RecordedTurn) -> TurnReceived:
    """The TurnReceived of a recorded turn (the same notification id however often it is sent:
    consumers drop the copies)."""
    return TurnReceived(tenant=tenant, id=turn.episode_id, version=turn.seq, session=turn.session,
                        customer=turn.customer, actor="customer", notification_id=turn.notification_id)


class ReplyTicket(NamedTuple):
    """The ticket a reply concerns, as a waiting chat request shows it."""

    id: str
    stage: str


async def get_reply_and_ticket(client: GraphClient, tenant: str, episode_id: str, ticket_id: str | None = None
                               ) -> tuple[ReplyView | None, ReplyTicket | None]:
    """The reply episode with its text and `how_i_know`, and the stage of the ticket the reply
    concerns (its own ticket_id, else `ticket_id`), in one round trip. (None, None) without such a
    reply; the ticket is None when the reply concerns none or it is not in this tenant."""
    validate_tenant(tenant)
    rows = await client.run(tenant, q.REPLY_AND_TICKET, {"id": episode_id, "ticket_id": ticket_id})
    if not rows or rows[0]["episode_id"] is None:
        kept = await farewell.read(client, tenant, episode_id)  # the one reply never stored
        if kept is None:
            return None, None
        return ReplyView(episode_id=episode_id, session=kept["session"], kind="AgentReply", text=kept["text"],
                         at=datetime.fromisoformat(kept["at"]), reply_to=kept["reply_to"],
                         answers=kept["answers"]), None
    r = rows[0]
    ticket = ReplyTicket(r["ticket"], r["ticket_stage"]) if r.get("ticket") and r.get("ticket_stage") else None
    return reply_view(r), ticket


def reply_view(r: dict[str, Any]) -> ReplyView:
    """A row of a reply episode's fields (queries.chat.REPLY_AND_TICKET's) as a ReplyView."""
    how = r.get("how_i_know")
    return ReplyView(
        episode_id=r["episode_id"], session=r.get("session"), kind=r.get("kind"), text=r.get("text") or "",
        speaker=r.get("speaker"), at=from_ms(r.get("at_ms")), reply_to=r.get("reply_to"),
        ticket_id=r.get("ticket_id"), how_i_know=[str(h) for h in how] if isinstance(how, list) else [],
        answers=[str(a) for a in r["answers"]] if isinstance(r.get("answers"), list) else [],
    )
