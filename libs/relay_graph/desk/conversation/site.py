"""What the customer site reads about one customer: their conversations and the turns of one, and
whether a fact or a ticket is theirs (the live feed of a customer session keeps only those)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from relay_graph.runtime.times import from_ms
from relay_graph.runtime.db import GraphClient
from relay_graph.memory.entities import entity_uid, name_key
from relay_graph.runtime.errors import NotFound
from relay_graph.desk.queries import chat as chat_q
from relay_graph.desk.queries import site as q
from relay_graph.runtime.tenancy import validate_tenant

MAX_SESSIONS = 100
MAX_TURNS = 500


class Conversation(BaseModel):
    session: str
    started_at: datetime | None
    last_at: datetime | None
    first_text: str | None


class ConversationTurn(BaseModel):
    episode_id: str
    kind: str | None
    speaker: str | None
    text: str
    at: datetime | None
    reply_to: str | None = None
    ticket_id: str | None = None
    how_i_know: list[str] = []
    sources: list[str] = Field(default=[], description="the how-I-know rows in the customer's words (no ids, "
                               "their clock): what the customer site shows under a reply")


def customer_uid(customer: str) -> str:
    return entity_uid("Customer", name_key(customer))


async def conversations(client: GraphClient, tenant: str, customer: str) -> list[Conversation]:
    """The customer's conversations, newest first."""
    rows = await client.run(validate_tenant(tenant), q.CUSTOMER_SESSIONS,
                            {"uid": customer_uid(customer), "limit": MAX_SESSIONS})
    return [Conversation(session=r["session"], started_at=from_ms(r["first_at_ms"]), last_at=from_ms(r["last_at_ms"]),
                         first_text=r["first_text"]) for r in rows]


async def turns(client: GraphClient, tenant: str, customer: str, session: str) -> list[ConversationTurn]:
    """A conversation's turns in order; NotFound when it is not this customer's (or does not exist),
    so nobody learns whether another customer's session id exists."""
    rows = await client.run(validate_tenant(tenant), q.SESSION_TURNS,
                            {"uid": customer_uid(customer), "session": session, "limit": MAX_TURNS})
    if not rows:
        raise NotFound("you have no conversation with that id", code="conversation_not_found")
    return [ConversationTurn(episode_id=r["episode_id"], kind=r["kind"], speaker=r["speaker"], text=r["text"] or "",
                 at=from_ms(r["at_ms"]), reply_to=r["reply_to"], ticket_id=r["ticket_id"],
                 how_i_know=[str(h) for h in r["how_i_know"]] if isinstance(r["how_i_know"], list) else [])
            for r in rows]


async def fact_is_about(client: GraphClient, tenant: str, fact_id: str, customer: str) -> bool:
    rows = await client.run(validate_tenant(tenant), q.FACT_SUBJECT, {"id": fact_id})
    return bool(rows) and rows[0]["subject_uid"] == customer_uid(customer)


async def ticket_is_for(client: GraphClient, tenant: str, ticket_id: str, customer: str) -> bool:
    rows = await client.run(validate_tenant(tenant), q.TICKET_CUSTOMER, {"id": ticket_id})
    return bool(rows) and rows[0]["customer_uid"] == customer_uid(customer)


async def session_is_of(client: GraphClient, tenant: str, session: str, customer: str) -> bool:
    rows = await client.run(validate_tenant(tenant), chat_q.SESSION_OWNERS, {"session": session})
    return bool(rows) and customer_uid(customer) in (rows[0]["owners"] or [])
