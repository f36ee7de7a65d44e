"""Read helpers of the desk agents (intake, resolver, netops): turns, sessions, a ticket's routing
and history, outages' tickets. Typed results; the Cypher is in queries/desk.py.

Also the deterministic ids the agents mint, so that a redelivered notification finds what the
first delivery wrote instead of writing it twice."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any, Iterable

from pydantic import BaseModel

from relay_graph.runtime.times import from_ms
from relay_graph.runtime.db import GraphClient
from relay_graph.memory.entities import entity_uid, name_key
from relay_graph.runtime.errors import InvalidInput, NotFound
from relay_graph.desk.queries import agent_reads as q
from relay_graph.memory.registry import clean_text
from relay_graph.runtime.tenancy import validate_tenant

MAX_EPISODE_ID = 128


def _digest(*parts: str, size: int = 10) -> str:
    h = hashlib.blake2b(digest_size=size)
    for p in parts:
        h.update(p.encode())
        h.update(b"\x1f")
    return h.hexdigest()


# ---------------------------------------------------------------- deterministic ids


def reply_id_for(turn_id: str) -> str:
    """The id of the agent's reply to a customer turn: one reply per turn, however often the
    turn's notification is delivered."""
    rid = "r-" + turn_id
    return rid if len(rid) <= MAX_EPISODE_ID else "r-" + _digest(turn_id, size=16)


def ticket_id_for(turn_id: str) -> str:
    """The ticket a turn opens: the same turn never opens two tickets."""
    return "T-" + _digest(turn_id, size=6).upper()


def status_reply_id(ticket_id: str, version: int) -> str:
    """A resolver's status reply about a ticket at one version (one per stage change)."""
    return f"s-{ticket_id}-v{int(version)}"


def notice_id(outage_id: str, customer: str, what: str) -> str:
    """Netops' notice to one customer about one outage (`what`: declared / resolved)."""
    return f"n-{outage_id}-{what}-{_digest(name_key(customer), size=8)}"


def notice_session(outage_id: str, customer: str) -> str:
    """A session of its own for a customer who never talked to us."""
    return f"notice-{outage_id}-{_digest(name_key(customer), size=8)}"


def customer_uid(customer: str) -> str:
    key = name_key(clean_text(customer, "customer"))
    if not key:
        raise InvalidInput("customer has no letters or digits")
    return entity_uid("Customer", key)


# ---------------------------------------------------------------- models


class EpisodeView(BaseModel):
    episode_id: str
    text: str | None = None
    speaker: str | None = None
    kind: str | None = None
    session: str | None = None
    customer: str | None = None
    customer_names: list[str] = []  # the customer's current names (their id is `customer`)
    at: datetime | None = None
    recorded_at: datetime | None = None
    reply_to: str | None = None
    ticket_id: str | None = None
    how_i_know: list[str] = []


class TicketRouting(BaseModel):
    id: str
    stage: str
    version: int
    round: int = 0
    handoff_from: str | None = None
    handoff_to: str | None = None
    waiting_for: str | None = None
    owner: str | None = None
    owner_replica: str | None = None
    owner_seen_at: datetime | None = None
    customer: str
    issue: str


class TicketOutage(BaseModel):
    outage_id: str
    node_id: str
    open: bool


class OutageTicket(BaseModel):
    id: str
    stage: str
    version: int
    issue: str
    customer: str


class AgentEdge(BaseModel):
    type: str
    agent: str
    replica: str | None = None
    to_role: str | None = None
    at: datetime | None = None


def episode_view(row: dict[str, Any]) -> EpisodeView:
    """A row of queries.agent_reads.EPISODE_FIELDS (and `customer`) as an EpisodeView."""
    how = row.get("how_i_know")
    return EpisodeView(
        episode_id=row["episode_id"],
        text=row.get("text"),
        speaker=row.get("speaker"),
        kind=row.get("kind"),
        session=row.get("session"),
        customer=row.get("customer"),
        customer_names=[n for n in row.get("customer_names") or () if isinstance(n, str)],
        at=from_ms(row.get("at_ms")),
        recorded_at=from_ms(row.get("recorded_at_ms")),
        reply_to=row.get("reply_to"),
        ticket_id=row.get("ticket_id"),
        how_i_know=list(how) if isinstance(how, (list, tuple)) else [],
    )


# ---------------------------------------------------------------- reads


async def get_turn_and_reply(client: GraphClient, tenant: str, episode_id: str
                             ) -> tuple[EpisodeView | None, EpisodeView | None]:
    """A customer's turn with its session and the customer that session belongs to, and the reply
    written to it (`reply_id_for`), in one round trip: (None, None) if the turn is unknown; the
    reply is None until it is written. The reply's `customer` is not read (None)."""
    validate_tenant(tenant)
    rows = await client.run(tenant, q.TURN_AND_REPLY, {"id": episode_id, "reply_id": reply_id_for(episode_id)})
    if not rows or not rows[0].get("episode_id"):
        return None, None
    reply = rows[0].get("reply")
    return episode_view(rows[0]), (episode_view(reply) if isinstance(reply, dict) and reply.get("episode_id") else None)


async def existing_episodes(client: GraphClient, tenant: str, ids: Iterable[str]) -> set[str]:
    validate_tenant(tenant)
    wanted = sorted(set(ids))
    if not wanted:
        return set()
    rows = await client.run(tenant, q.EXISTING_EPISODES, {"ids": wanted})
    return {r["episode_id"] for r in rows}


async def latest_sessions(client: GraphClient, tenant: str, customers: Iterable[str]) -> dict[str, str | None]:
    """customer name -> the session of their latest turn (None: never talked to us, or unknown)."""
    validate_tenant(tenant)
    by_uid = {customer_uid(c): c for c in customers}
    out: dict[str, str | None] = {c: None for c in by_uid.values()}
    if not by_uid:
        return out
    for row in await client.run(tenant, q.LATEST_SESSIONS, {"uids": sorted(by_uid)}):
        out[by_uid[row["uid"]]] = row["session"]
    return out


async def latest_session(client: GraphClient, tenant: str, customer: str) -> str | None:
    return (await latest_sessions(client, tenant, [customer]))[customer]


async def ticket_routing(client: GraphClient, tenant: str, ticket_id: str) -> TicketRouting:
    validate_tenant(tenant)
    rows = await client.run(tenant, q.TICKET_ROUTING, {"id": ticket_id})
    if not rows:
        raise NotFound(f"no ticket {ticket_id!r} in this tenant")
    r = rows[0]
    return TicketRouting(**{k: v for k, v in r.items() if k != "owner_seen_ms"},
                         owner_seen_at=from_ms(r.get("owner_seen_ms")))


async def ticket_outages(client: GraphClient, tenant: str, ticket_id: str) -> list[TicketOutage]:
    validate_tenant(tenant)
    rows = await client.run(tenant, q.TICKET_OUTAGES, {"id": ticket_id})
    return [TicketOutage(outage_id=r["outage_id"], node_id=r["node_id"], open=bool(r["open"])) for r in rows]


async def latest_outage_of_node(client: GraphClient, tenant: str, node_id: str) -> str | None:
    validate_tenant(tenant)
    rows = await client.run(tenant, q.LATEST_OUTAGE_OF_NODE, {"node_id": node_id})
    return rows[0]["outage_id"] if rows else None


async def outage_tickets(client: GraphClient, tenant: str, outage_id: str) -> list[OutageTicket]:
    validate_tenant(tenant)
    return [OutageTicket(**r) for r in await client.run(tenant, q.OUTAGE_TICKETS, {"outage_id": outage_id})]


async def ticket_agent_edges(client: GraphClient, tenant: str, ticket_id: str) -> list[AgentEdge]:
    """OPENED / HANDED_OFF / PICKED_UP edges of agents on the ticket, oldest first."""
    validate_tenant(tenant)
    rows = await client.run(tenant, q.TICKET_AGENT_EDGES, {"id": ticket_id})
    return [AgentEdge(type=r["type"], agent=r["agent"], replica=r.get("replica"), to_role=r.get("to_role"),
                      at=from_ms(r.get("at_ms"))) for r in rows]
