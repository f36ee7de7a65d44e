"""The graph reads and the one write (a promise) behind the intake conversation; every answer's
words are composed from these rows by compose.py."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any, NamedTuple

from pydantic import BaseModel

from relay_graph.runtime.times import from_ms, ms_of
from relay_graph.desk.catalogue.models import FaqAnswer
from relay_graph.desk.catalogue.geo import world
from relay_graph.desk.catalogue.regions import REGIONS
from relay_graph.runtime.db import GraphClient
from relay_graph.desk.agent_reads import customer_uid
from relay_graph.memory.entities import name_key
from relay_graph.runtime.errors import InvalidInput
from relay_graph.desk.queries import conversation as q
from relay_graph.desk.tickets.models import TicketStage
from relay_graph.runtime.tenancy import validate_tenant

MAX_PROMISE_TEXT = 300


class Country(NamedTuple):
    code: str
    name: str


class Returning(NamedTuple):
    sessions_before: int
    ticket_id: str | None
    summary: str | None
    stage: str | None
    updated_at: datetime | None
    promise: str | None
    promise_due: datetime | None


class PromiseView(BaseModel):
    promise_id: str
    text: str
    due_at: datetime
    made_at: datetime
    made_by: str
    status: str
    source: str | None = None
    due_zone: str | None = None  # the customer's zone the promise was made in ("Asia/Kolkata")


async def customer_country(client: GraphClient, tenant: str, customer: str) -> Country | None:
    """The country whose prices the customer sees: their city's (lives_in on file), else their
    browser's time zone's (given on their first visit) when this tenant serves it, else the first
    served country of the first region seeded in this tenant (its desk's home country); None when
    the tenant has no catalogue."""
    validate_tenant(tenant)
    rows = await client.run(tenant, q.CUSTOMER_COUNTRY, {"uid": customer_uid(customer)})
    if rows and rows[0]["code"]:
        return Country(rows[0]["code"], rows[0]["name"] or rows[0]["code"])
    zone = rows[0].get("time_zone") if rows else None
    rows = await client.run(tenant, q.TENANT_COUNTRIES)
    if not rows:
        return None
    have = {(r["region"], r["code"]): r["name"] for r in rows}
    if zone:
        code = world().country_of_zone(zone)
        for (_, cc), name in have.items():
            if cc == code:
                return Country(cc, name or cc)
    for region, spec in REGIONS.items():
        for cc in spec.countries:
            if (region, cc) in have:
                return Country(cc, have[(region, cc)] or cc)
    r = rows[0]
    return Country(r["code"], r["name"] or r["code"])


async def served_city(client: GraphClient, tenant: str, place: str) -> tuple[str, str] | None:
    """(city, country name) of the served city the place names, else None."""
    validate_tenant(tenant)
    rows = await client.run(tenant, q.SERVED_CITY, {"key": name_key(place), "name": place.strip()})
    return (rows[0]["city_name"], rows[0]["country"]) if rows else None


async def served_city_names(client: GraphClient, tenant: str, limit: int = 9) -> list[str]:
    validate_tenant(tenant)
    return [r["city_name"] for r in await client.run(tenant, q.SERVED_CITY_NAMES, {"limit": limit})]


async def faq_by_id(client: GraphClient, tenant: str, faq_id: str) -> FaqAnswer | None:
    validate_tenant(tenant)
    rows = await client.run(tenant, q.FAQ_BY_ID, {"faq_id": faq_id})
    if not rows:
        return None
    r = rows[0]
    return FaqAnswer(faq_id=r["faq_id"], topic=r["topic"], question=r["question"], answer=r["answer"], score=0.0)


class SaidBefore(set):
    """Every answer label of the session's earlier replies, and `last`: the labels of the newest
    reply that has any (what the desk said, and asked, last)."""

    last: tuple[str, ...] = ()


async def session_answers(client: GraphClient, tenant: str, session: str, reply_id: str) -> SaidBefore:
    """Every answer kind (and "ask:<what>") the desk's earlier replies in the session recorded."""
    validate_tenant(tenant)
    out = SaidBefore()
    newest = -1
    for r in await client.run(tenant, q.SESSION_ANSWERS, {"session": session, "reply_id": reply_id}):
        if isinstance(r["answers"], list) and r["answers"]:
            out.update(str(a) for a in r["answers"])
            if (r.get("at_ms") or 0) > newest:
                newest, out.last = r.get("at_ms") or 0, tuple(str(a) for a in r["answers"])
    return out


async def returning(client: GraphClient, tenant: str, customer: str, session: str) -> Returning:
    validate_tenant(tenant)
    rows = await client.run(tenant, q.RETURNING, {"uid": customer_uid(customer), "session": session})
    if not rows:
        return Returning(0, None, None, None, None, None, None)
    r = rows[0]
    return Returning(int(r["before"] or 0), r["ticket_id"], r["summary"], r["stage"], from_ms(r["updated_at_ms"]),
                     r["promise"], from_ms(r["promise_due_ms"]))


def promise_id_for(source: str, text: str) -> str:
    return "pr-" + hashlib.sha256(f"{source}\x1f{text}".encode()).hexdigest()[:12]


def _promise(r: dict[str, Any]) -> PromiseView:
    return PromiseView(promise_id=r["promise_id"], text=r["text"], due_at=from_ms(r["due_at_ms"]),
                       made_at=from_ms(r["made_at_ms"]), made_by=r["made_by"], status=r["status"], source=r.get("source"),
                       due_zone=r.get("due_zone"))


async def make_promise(client: GraphClient, tenant: str, ticket_id: str, text: str, due: datetime, *, agent: str,
                       source: str, at: datetime) -> PromiseView | None:
    """Keep a promise made on a ticket (once per source and wording); None if the ticket is not here."""
    validate_tenant(tenant)
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_PROMISE_TEXT:
        raise InvalidInput(f"a promise is 1-{MAX_PROMISE_TEXT} characters")
    if due.tzinfo is None:
        raise InvalidInput("a promise's due time must carry its time zone")
    rows = await client.run(tenant, q.MAKE_PROMISE, {
        "ticket_id": ticket_id, "promise_id": promise_id_for(source, text), "text": text.strip(),
        "due_ms": ms_of(due), "now": ms_of(at), "agent": agent, "source": source,
        "due_zone": getattr(due.tzinfo, "key", None) or due.tzname()})
    return _promise(rows[0]) if rows else None


async def ticket_promises(client: GraphClient, tenant: str, ticket_id: str) -> list[PromiseView]:
    validate_tenant(tenant)
    return [_promise(r) for r in await client.run(tenant, q.TICKET_PROMISES, {"ticket_id": ticket_id})]


async def overdue_promises(client: GraphClient, tenant: str, customer: str,
                           now: datetime) -> list[tuple[str, str, PromiseView]]:
    """(ticket id, its stage, promise) for each promise on the customer's open tickets that is past due and
    not yet owned up to, the earliest due first."""
    validate_tenant(tenant)
    rows = await client.run(tenant, q.OVERDUE_PROMISES, {"uid": customer_uid(customer), "now": ms_of(now),
                                                          "closed_stages": [TicketStage.CLOSED.value]})
    return [(r["ticket_id"], r["stage"], _promise(r)) for r in rows]


async def chase_promise(client: GraphClient, tenant: str, ticket_id: str, promise_id: str, at: datetime) -> bool:
    """Mark an overdue promise as owned up to and chased; False when it already was (or is not here)."""
    validate_tenant(tenant)
    rows = await client.run(tenant, q.CHASE_PROMISE, {"ticket_id": ticket_id, "promise_id": promise_id,
                                                       "now": ms_of(at)})
    return bool(rows)
