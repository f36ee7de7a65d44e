"""Reads the tests use to check what the code under test wrote, where no production code reads the
graph that way (so they live here, not in the packages). Each returns what the engine's or the
desk's own reads return for the same nodes (their view models, through the production converters);
the Cypher is in tests/statements.py."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from relay_graph.desk.agent_reads import EpisodeView, episode_view
from relay_graph.desk.conversation.turns import ReplyView, reply_view
from relay_graph.desk.tickets.models import Escalation
from relay_graph.desk.tickets.store import escalation_of
from relay_graph.memory.entities import entity_uid, name_key
from relay_graph.memory.inputs import check_identifier
from relay_graph.memory.queries.episodes import CUSTOMER_LABEL
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.tenancy import validate_tenant

from tests import statements as q


class TriedFix(BaseModel):
    procedure_id: str
    steps: list[str]
    round: int
    outcome: str


async def get_turn(client: GraphClient, tenant: str, episode_id: str) -> EpisodeView | None:
    """An episode with its session and the customer that session belongs to; None if unknown."""
    validate_tenant(tenant)
    rows = await client.run(tenant, q.TURN, {"id": episode_id})
    return episode_view(rows[0]) if rows and rows[0].get("episode_id") else None


async def transcript(client: GraphClient, tenant: str, session: str) -> list[EpisodeView]:
    """A session's episodes in the order they happened."""
    validate_tenant(tenant)
    return [episode_view(r) for r in await client.run(tenant, q.TRANSCRIPT, {"session": session})]


async def tried_fixes(client: GraphClient, tenant: str, ticket_id: str) -> list[TriedFix]:
    validate_tenant(tenant)
    return [TriedFix(**r) for r in await client.run(tenant, q.TRIED_FIXES, {"id": ticket_id})]


async def turn_seq(client: GraphClient, tenant: str, episode_id: str) -> int | None:
    """A turn's sequence number in its session (None: unknown episode, or not a numbered turn)."""
    validate_tenant(tenant)
    rows = await client.run(tenant, q.TURN_SEQ, {"id": episode_id})
    return int(rows[0]["seq"]) if rows and rows[0]["seq"] is not None else None


async def get_reply(client: GraphClient, tenant: str, episode_id: str) -> ReplyView | None:
    """The reply episode with its text and `how_i_know`; None if this tenant has no such episode."""
    validate_tenant(tenant)
    rows = await client.run(tenant, q.REPLY, {"id": episode_id})
    return reply_view(rows[0]) if rows and rows[0]["episode_id"] is not None else None


async def get_episode(client: GraphClient, tenant: str, episode_id: str) -> dict[str, Any] | None:
    """An episode's stored fields, its labels and the uids it mentions, as the row reads them."""
    rows = await client.run(tenant, q.EPISODE, {"id": episode_id})
    return rows[0] if rows else None


async def session_chain(client: GraphClient, tenant: str, customer: str) -> list[dict[str, Any]]:
    """A customer's sessions in order, each with the session FOLLOWED_BY links it has."""
    uid = entity_uid(CUSTOMER_LABEL, name_key(customer))
    return await client.run(tenant, q.SESSION_CHAIN, {"uid": uid})


async def customer_of_session(client: GraphClient, tenant: str, session: str) -> str | None:
    """The customer a session belongs to, if the graph knows it."""
    validate_tenant(tenant)
    rows = await client.run(tenant, q.CUSTOMER_OF_SESSION, {"session": check_identifier(session, "session")})
    return rows[0]["customer"] if rows else None


async def escalations(client: GraphClient, tenant: str, ticket_id: str) -> list[Escalation]:
    validate_tenant(tenant)
    rows = await client.run(tenant, q.ESCALATIONS, {"id": check_identifier(ticket_id, "ticket_id")})
    return [escalation_of(r) for r in rows]
