"""Customers: entities with a stable id, whose names are facts about them.

A customer is `(:Entity:Customer {uid: "Customer|<id>", name: <id>, name_key: <id>})`, the id
`c-` and 16 hex digits (`entities.new_customer_id`). What they are called is a `name` fact
(`(customer)-[:NAMED]->(:PersonName)` while it is current), so two customers called "Priya Raman"
are two customers, and a customer who changes their name stays who they were.

An older tenant's customers were keyed by their name ("asha rao"): that key stays their id. Every
path that takes a customer id takes it as it is, so their data is read and written as before, and
`find` finds them by that name too.

`find` is the read "customers called ...": the customers whose key or current name is exactly
the name (all of them: two Priya Ramans are both the answer); else the customers named alike,
when one name on file is close to it (`matched` says which); when two or more different names are
close ("esha rao": asha rao, isha rao), the answer is `ambiguous`, listing them, never a pick."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, Field

from relay_graph.memory import entity_refs, facts, names
from relay_graph.runtime.db import GraphClient
from relay_graph.memory.entities import new_customer_id
from relay_graph.desk.catalogue.geo import MAX_ZONE, ZONE_PATTERN
from relay_graph.desk.agent_reads import customer_uid
from relay_graph.desk.queries import site as sq
from relay_graph.runtime.errors import InvalidInput, InvalidValue
from relay_graph.memory.models import Ambiguous, Candidate, FactInput, FactWriteResult, Matched
from relay_graph.memory.queries import facts as fq
from relay_graph.memory.registry import clean_text
from relay_graph.memory.registry import get as get_predicate
from relay_graph.runtime.tenancy import validate_tenant

CUSTOMER = "Customer"


class CustomerView(BaseModel):
    id: str = Field(description="the customer's id: what every other path takes")
    names: list[str] = Field(description="their current name(s) on file (`name` facts); empty when none")


class CustomersAnswer(BaseModel):
    customers: list[CustomerView] = Field(description="the customers of that name (two people may share one)")
    matched: Matched | None = Field(default=None, description="set when they were found by a name spelt alike")
    ambiguous: Ambiguous | None = Field(default=None, description="two or more different names are close: "
                                                                   "nothing was picked; ask which")


def check_time_zone(zone: object) -> str:
    """An IANA time zone name as a browser reports it ("Europe/Lisbon", "Asia/Calcutta", "UTC"); one
    the gazetteer does not know is kept and simply picks no country."""
    if not isinstance(zone, str) or len(zone) > MAX_ZONE or not re.fullmatch(ZONE_PATTERN, zone):
        raise InvalidValue(f"time_zone must be an IANA time zone name such as Europe/Lisbon (at most {MAX_ZONE} "
                           "characters)")
    return zone


TimeZoneName = Annotated[str, Field(min_length=1, max_length=MAX_ZONE, pattern=ZONE_PATTERN,
                                    description="an IANA time zone name, as the browser reports it "
                                                "(Intl.DateTimeFormat().resolvedOptions().timeZone)",
                                    examples=["Europe/Lisbon"])]


async def set_time_zone(client: GraphClient, tenant: str, customer: str, zone: str) -> None:
    """Keeps the browser's time zone on the customer: the country whose prices they see until an
    address says otherwise (conversation.reads.customer_country)."""
    tenant = validate_tenant(tenant)
    await client.run(tenant, sq.SET_TIME_ZONE, {"uid": customer_uid(customer), "time_zone": check_time_zone(zone)})


def check_name(name: object) -> str:
    """A customer's name as the `name` predicate takes it (what `create` writes)."""
    return get_predicate("name").check(clean_text(name, "name"))


async def create(client: GraphClient, tenant: str, *, name: str | None = None, agent: str = "gateway") -> str:
    """A new customer: their id, and (when given) their name as a `name` fact written by `agent`.
    A bad name is refused before anything is written."""
    return (await create_named(client, tenant, name=name, agent=agent))[0]


async def create_named(client: GraphClient, tenant: str, *, name: str | None = None, agent: str = "gateway"
                       ) -> tuple[str, FactWriteResult | None]:
    """`create`, with the write of the name fact (None without a name), for the caller that announces it."""
    tenant = validate_tenant(tenant)
    checked = check_name(name) if name is not None else None
    cid = new_customer_id()
    if checked is not None:
        written = await facts.write_fact(client, tenant, FactInput(subject=cid, predicate="name", object=checked,
                                                                   agent=agent))
        return cid, written
    await client.run(tenant, fq.ENTITY_MERGE[CUSTOMER],
                     {"uid": f"{CUSTOMER}|{cid}", "name": cid, "key": cid, "type": CUSTOMER})
    return cid, None


async def exists(client: GraphClient, tenant: str, customer: str) -> bool:
    return await entity_refs.find_entity(client, tenant, customer, CUSTOMER) is not None


async def find(client: GraphClient, tenant: str, name: object) -> CustomersAnswer:
    """Customers called `name` (rules in the module docstring)."""
    tenant = validate_tenant(tenant)
    if not isinstance(name, str):
        raise InvalidInput("name must be a string")
    found = await names.match(client, tenant, name, CUSTOMER, what="name", together=True)
    hits = list(found.hits)
    matched = None
    if found.how == "fuzzy":
        distinct = sorted({h.name for h in hits})
        if len(distinct) > 1:
            best = {}
            for h in hits:
                best.setdefault(h.name, h)
            amb = [best[n] for n in sorted(best, key=lambda n: (-best[n].score, n))]
            return CustomersAnswer(customers=[], ambiguous=Ambiguous(
                asked=found.asked, message=names.did_you_mean([names.Hit(h.uid, h.name, h.name) for h in amb]),
                candidates=[Candidate(id=h.id, name=h.name) for h in hits]))
        matched = Matched(asked=found.asked, id=hits[0].id if len(hits) == 1 else None, name=distinct[0], how="fuzzy")
    on_file = await names.customer_names(client, tenant, [h.uid for h in hits])
    customers = [CustomerView(id=h.id, names=on_file.get(h.uid, [])) for h in hits]
    customers.sort(key=lambda c: c.id)
    return CustomersAnswer(customers=customers, matched=matched)


__all__ = ["CustomerView", "CustomersAnswer", "check_name", "create", "exists", "find"]
