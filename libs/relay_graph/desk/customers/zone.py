"""A customer's clock: the time zone every time a customer reads is worded in, and the wording.

The zone is their city's (the gazetteer's zone of the city they live in, found by its name when the
desk does not serve it), else the browser's zone
kept on their first visit (customers.set_time_zone), else the zone of their city's country, else of
the desk's home country. `local_when` words a time in it; `localised` rewrites the UTC stamps
staff-facing templates print ("2026-12-06 10:00 UTC") into it, so no UTC reaches a customer. May use
the catalogue's gazetteer and the conversation reads."""

from __future__ import annotations

import re
from datetime import datetime, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from relay_graph.desk.agent_reads import customer_uid
from relay_graph.desk.catalogue.geo import ZONE_ALIASES, place_key, world
from relay_graph.desk.catalogue.regions import REGIONS
from relay_graph.desk.queries import conversation as q
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.tenancy import validate_tenant

UTC: tzinfo = timezone.utc
# the stamp templates.when prints: what a staff line says, and what localised() rewrites
UTC_STAMP = re.compile(r"\b(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}) UTC\b")


def zone_named(name: str | None) -> tzinfo | None:
    """The zone of an IANA name (browsers' older names too), None when unknown."""
    if not name:
        return None
    try:
        return ZoneInfo(ZONE_ALIASES.get(name, name))
    except (ZoneInfoNotFoundError, ValueError):
        return None


async def customer_zone(client: GraphClient, tenant: str, customer: str) -> tzinfo:
    """The customer's zone (see the module doc); UTC only when nothing at all is known."""
    validate_tenant(tenant)
    rows = await client.run(tenant, q.CUSTOMER_ZONE, {"uid": customer_uid(customer)})
    r = rows[0] if rows else {}
    geo = world()
    zone = (zone_named(geo.zone_of_city(r.get("geonameid"))) or _zone_of_named_city(r.get("city_name"))
            or zone_named(r.get("time_zone")) or zone_named(geo.zone_of_country(r.get("country"))))
    if zone is not None:
        return zone
    return zone_named(geo.zone_of_country(await _home_country(client, tenant))) or UTC


def _zone_of_named_city(name: str | None) -> tzinfo | None:
    """The zone of a city known only by its name (one the desk does not serve: "I live in Madrid" on
    an Indian desk): the most populous gazetteer city of that primary name. Alternate names are not
    used: they hold airport codes and short words ("THE" is Teresina's)."""
    if not name:
        return None
    geo = world()
    cities, _ = geo.lookup(place_key(name))
    best = max(cities, key=lambda c: c.population, default=None)
    return zone_named(geo.zone_of_city(best.geonameid)) if best is not None else None


async def _home_country(client: GraphClient, tenant: str) -> str | None:
    """The desk's home country: the first served country of the first region seeded in the tenant
    (as conversation.reads.customer_country falls back to)."""
    have = {(r["region"], r["code"]) for r in await client.run(tenant, q.TENANT_COUNTRIES)}
    for region, spec in REGIONS.items():
        for cc in spec.countries:
            if (region, cc) in have:
                return cc
    return next((cc for _, cc in sorted(have)), None)


def local_when(at: datetime, zone: tzinfo) -> str:
    """A time as a customer reads it: "Sat 6 Dec, 10:00 IST" (their day, their clock, its zone's name)."""
    at = at if at.tzinfo else at.replace(tzinfo=UTC)
    local = at.astimezone(zone)
    return f"{local:%a} {local.day} {local:%b}, {local:%H:%M} {local.tzname()}"


def localised(text: str, zone: tzinfo) -> str:
    """`text` with every UTC stamp worded in `zone`."""
    def one(m: re.Match[str]) -> str:
        y, mo, d, h, mi = (int(x) for x in m.groups())
        return local_when(datetime(y, mo, d, h, mi, tzinfo=UTC), zone)
    return UTC_STAMP.sub(one, text) if isinstance(text, str) else text
