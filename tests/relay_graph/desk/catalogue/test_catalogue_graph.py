"""The catalogue in a real FalkorDB: seeding, reads, placement against the graph, query plans."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timezone

import httpx
import pytest

from relay_graph.desk import catalogue as cat
from relay_graph.memory import facts
from relay_graph.desk.catalogue import pricing
from relay_graph.desk.catalogue.faqs import FAQS
from relay_graph.desk.catalogue.footprint import footprint
from relay_graph.desk.catalogue.geocoder import OpenCageGeocoder
from relay_graph.desk.catalogue.offers import ADDONS, PLANS, ROUTERS, SERVICES
from relay_graph.desk.catalogue.playbooks import INSTRUCTIONS, PLAYBOOKS
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import InvalidInput, InvalidTenant, NotFound
from relay_graph.memory.models import FactInput
from relay_graph.runtime.queries import Query
from relay_graph.desk.queries import catalogue as q
from tests.support import register


async def raw(client, tenant, cypher, params=None):
    return await client.run(tenant, Query("test", cypher, True), params)


async def counts(client, tenant) -> tuple[dict, int]:
    rows = await raw(client, tenant, "MATCH (n) UNWIND labels(n) AS l RETURN l AS label, count(*) AS n")
    rels = await raw(client, tenant, "MATCH ()-[r]->() RETURN count(r) AS n")
    return {r["label"]: r["n"] for r in rows}, rels[0]["n"]


# ---------------------------------------------------------------- seeding


async def test_seeding_is_idempotent(graph_client, tenant) -> None:
    first = await cat.ensure_catalogue(graph_client, tenant, "india")
    fp_cities = footprint().cities_in("india")
    assert first.seeded and first.version == cat.CATALOGUE_VERSION
    assert (first.countries, first.cities, first.areas) == (1, len(fp_cities), sum(len(c.areas) for c in fp_cities))
    assert (first.plans, first.addons, first.services, first.prices) == (
        len(PLANS), len(ADDONS), len(SERVICES), len(PLANS) + len(ADDONS) + len(SERVICES))
    before = await counts(graph_client, tenant)
    second = await cat.ensure_catalogue(graph_client, tenant, "india")
    assert not second.seeded
    assert await counts(graph_client, tenant) == before
    # a marker from an older version re-seeds: every write is a MERGE, so nothing doubles
    await graph_client.run(tenant, Query("t", "MATCH (m:CatalogueSeed) SET m.version = 0"))
    again = await cat.ensure_catalogue(graph_client, tenant, "india")
    assert again.seeded
    assert await counts(graph_client, tenant) == before
    labels, _ = before
    assert labels["City"] == len(fp_cities) and labels["Region"] == 1 and labels["Playbook"] == len(PLAYBOOKS)
    assert labels["PlaybookStep"] == sum(len(p.steps) for p in PLAYBOOKS.values())


async def test_racing_seeders_write_one_catalogue(graph_client, graph_settings, tenant) -> None:
    """Two processes seeding one tenant at once. Without the lease this doubled the PRICED_IN
    edges in about half the runs (FalkorDB's relationship MERGE is not atomic under concurrency),
    so a few rounds are run."""
    await cat.ensure_catalogue(graph_client, tenant, "europe")  # the reference: seeded once, alone
    expected = await counts(graph_client, tenant)
    other = GraphClient(graph_settings)  # another process, in effect
    try:
        for _ in range(4):
            fresh = "t-" + uuid.uuid4().hex[:12]
            await register(graph_client.redis, fresh)
            results = await asyncio.gather(*(cat.ensure_catalogue(c, fresh, "europe")
                                             for c in (graph_client, other, graph_client, other)))
            assert sum(r.seeded for r in results) == 1
            assert await counts(graph_client, fresh) == expected
    finally:
        await other.close()


async def test_a_seeder_waits_for_another_processes_lease(graph_client, tenant) -> None:
    from relay_graph.desk.catalogue.seed import lease_key

    await graph_client.redis.set(lease_key(tenant, "india"), "someone-else", px=300)  # expires by itself
    res = await cat.ensure_catalogue(graph_client, tenant, "india")
    assert res.seeded
    assert not await graph_client.redis.exists(lease_key(tenant, "india"))  # released after seeding
    assert tenant not in lease_key(tenant, "india")


async def test_a_second_region_adds_its_slice_and_shares_the_rest(graph_client, tenant) -> None:
    await cat.ensure_catalogue(graph_client, tenant, "india")
    await cat.ensure_catalogue(graph_client, tenant, "europe")
    labels, _ = await counts(graph_client, tenant)
    assert labels["Region"] == 2 and labels["Country"] == 1 + len(footprint().countries_in("europe"))
    assert labels["Plan"] == len(PLANS) and labels["Faq"] == len(FAQS)
    assert await cat.seeded_regions(graph_client, tenant) == {"india": 1, "europe": 1}


async def test_bad_input_is_refused_and_writes_nothing(graph_client, tenant) -> None:
    with pytest.raises(InvalidInput) as err:
        await cat.ensure_catalogue(graph_client, tenant, "antarctica")
    assert err.value.code == "unknown_region"
    with pytest.raises(InvalidTenant):
        await cat.ensure_catalogue(graph_client, "bad tenant!", "india")
    labels, rels = await counts(graph_client, tenant)
    assert labels == {} and rels == 0


# ---------------------------------------------------------------- reads


async def test_prices_carry_each_countrys_currency_and_tax(graph_client, tenant) -> None:
    for region in ("india", "europe", "north-america", "asia-pacific"):
        await cat.ensure_catalogue(graph_client, tenant, region)
    for cc, currency, tax in (("IN", "INR", 0.18), ("GB", "GBP", 0.20), ("DE", "EUR", 0.19), ("US", "USD", 0.0),
                              ("JP", "JPY", 0.10)):
        plans = await cat.plans_for(graph_client, tenant, cc.lower())
        assert [p.name for p in plans] == ["Fiber 100", "Fiber 300", "Fiber 1000"]
        assert [p.down_mbps for p in plans] == [100, 300, 1000]
        for p, spec in zip(plans, PLANS):
            expected = pricing.local_price(spec.base_usd, cc, currency)
            assert (p.price.country, p.price.currency, p.price.tax_rate, p.price.period) == (cc, currency, tax, "month")
            assert (p.price.amount, p.price.price_incl_tax, p.price.display) == (
                expected.amount, expected.price_incl_tax, expected.display)
            assert p.price.price_incl_tax == pytest.approx(p.price.amount + p.price.tax_amount)
            assert p.uid == spec.uid
        assert plans[0].price.amount < plans[1].price.amount < plans[2].price.amount


async def test_addons_and_services(graph_client, tenant) -> None:
    await cat.ensure_catalogue(graph_client, tenant, "india")
    addons = await cat.addons_for(graph_client, tenant, "IN")
    services = await cat.services_for(graph_client, tenant, "IN")
    assert [a.name for a in addons] == [a.name for a in ADDONS]
    assert {a.kind for a in addons} == {"addon"} and {a.price.period for a in addons} == {"month"}
    assert [s.offer_id for s in services] == [s.offer_id for s in SERVICES]
    assert {s.price.period for s in services} == {"once"} and {s.price.currency for s in services} == {"INR"}


async def test_a_country_not_seeded_or_not_a_code(graph_client, tenant) -> None:
    await cat.ensure_catalogue(graph_client, tenant, "india")
    with pytest.raises(NotFound) as err:
        await cat.plans_for(graph_client, tenant, "BR")  # served by latin-america, not seeded here
    assert err.value.code == "country_not_served"
    for bad in ("IND", "", "1N", None):
        with pytest.raises(InvalidInput):
            await cat.addons_for(graph_client, tenant, bad)


async def test_faq_full_text_search(graph_client, tenant) -> None:
    await cat.ensure_catalogue(graph_client, tenant, "india")
    assert (await cat.faq(graph_client, tenant, "how do I change my wifi pasword"))[0].faq_id == "wifi-password"
    assert (await cat.faq(graph_client, tenant, "I was charged twice this month"))[0].faq_id == "double-charge"
    assert (await cat.faq(graph_client, tenant, "red light on the box"))[0].faq_id == "red-light"
    top = await cat.faq(graph_client, tenant, "moving to a new house", limit=1)
    assert [f.faq_id for f in top] == ["moving-home"]
    # an FAQ answers only when it holds half the question's words: one shared word is not enough
    for question, expected in (("Do you have a plan for gamers with low ping?", None),
                               ("can I pause my plan while travelling?", None),
                               ("how do I change my wifi password?", "wifi-password"),
                               ("can I keep my router if I leave?", "own-router"),
                               ("How do I upgrade?", "change-plan")):
        best = (await cat.faq(graph_client, tenant, question, limit=1))[:1]
        answered = [f.faq_id for f in best if f.score >= cat.faq_floor(question)]
        assert answered == ([expected] if expected else []), (question, best)
    assert await cat.faq(graph_client, tenant, "the and of") == []
    assert await cat.faq(graph_client, tenant, "') RETURN 1 //") == []  # no query syntax survives
    with pytest.raises(InvalidInput):
        await cat.faq(graph_client, tenant, "wifi", limit=0)


async def playbook(client, tenant: str, issue_kind: str) -> list[str]:
    """The playbook's step actions in order (PlaybookAction codes)."""
    return [s.action for s in await cat.playbook_steps(client, tenant, issue_kind)]


async def test_playbooks_are_step_paths(graph_client, tenant) -> None:
    await cat.ensure_catalogue(graph_client, tenant, "india")
    for kind, spec in PLAYBOOKS.items():
        assert await playbook(graph_client, tenant, kind) == [a.value for a in spec.steps]
    steps = await cat.playbook_steps(graph_client, tenant, "no_signal_light")
    assert [s.order for s in steps] == [1, 2, 3, 4]
    assert steps[-1].instruction == INSTRUCTIONS[cat.PlaybookAction.DISPATCH_TECHNICIAN]
    # the stored shape: FIRST then a NEXT chain as long as the playbook
    rows = await raw(graph_client, tenant, "MATCH (:Playbook {issue_kind: $k})-[:FIRST]->(f:PlaybookStep) "
                     "MATCH p = (f)-[:NEXT*]->(last:PlaybookStep) WHERE NOT (last)-[:NEXT]->() "
                     "RETURN f.order AS first, length(p) AS hops", {"k": "slow_speed"})
    assert rows == [{"first": 1, "hops": len(PLAYBOOKS["slow_speed"].steps) - 1}]
    with pytest.raises(InvalidInput):
        await playbook(graph_client, tenant, "alien_invasion")


async def test_playbook_of_an_unseeded_tenant(graph_client, tenant) -> None:
    with pytest.raises(NotFound):
        await playbook(graph_client, tenant, "no_connection")


async def test_extraction_context_lists_the_seeded_catalogue(graph_client, tenant) -> None:
    empty = await cat.extraction_context(graph_client, tenant)
    assert (empty.cities, empty.plans, empty.routers) == ((), (), ())
    await cat.ensure_catalogue(graph_client, tenant, "india")
    ctx = await cat.extraction_context(graph_client, tenant)
    assert set(ctx.cities) == {c.name for c in footprint().cities_in("india")}
    assert "Berlin" not in ctx.cities
    assert set(ctx.plans) == {p.name for p in PLANS}
    assert set(ctx.routers) == {r.name for r in ROUTERS}


async def test_cities_and_plans_are_the_entities_facts_point_at(graph_client, tenant) -> None:
    at = datetime(2026, 9, 1, tzinfo=timezone.utc)
    await facts.write_fact(graph_client, tenant, FactInput(subject="Asha Rao", predicate="lives_in", object="pune",
                                                           agent="intake", valid_from=at, recorded_at=at))
    await cat.ensure_catalogue(graph_client, tenant, "india")
    await facts.write_fact(graph_client, tenant, FactInput(subject="Asha Rao", predicate="on_plan",
                                                           object="fiber 300", agent="intake", valid_from=at,
                                                           recorded_at=at))
    rows = await raw(graph_client, tenant, "MATCH (e:Entity) WHERE e.uid IN ['City|pune', 'Plan|fiber 300'] "
                     "RETURN e.uid AS uid, labels(e) AS labels, e.type AS type, e.name AS name ORDER BY uid")
    assert [(r["uid"], sorted(r["labels"]), r["type"], r["name"]) for r in rows] == [
        ("City|pune", ["City", "Entity"], "City", "Pune"),
        ("Plan|fiber 300", ["Entity", "Offer", "Plan"], "Plan", "Fiber 300"),
    ]
    linked = await raw(graph_client, tenant, "MATCH (c:Entity {uid: 'City|pune'})<-[:LIVES_IN]-(:Customer) "
                       "MATCH (c)-[:IN_COUNTRY]->(k:Country) RETURN k.code AS country")
    assert linked == [{"country": "IN"}]


# ---------------------------------------------------------------- placement against the graph


async def test_place_reads_the_own_list_from_the_graph(graph_client, tenant) -> None:
    await cat.ensure_catalogue(graph_client, tenant, "india")
    p = await cat.place(graph_client, tenant, "Flat 2, Pimpri, Pune")
    assert (p.status, p.area, p.city, p.city_uid, p.source) == ("served", "Pimpri", "Pune", "City|pune", "own_list")
    # a city of another region: not on this tenant's list, found in the gazetteer, routed to its desk
    berlin = await cat.place(graph_client, tenant, "Kreuzberg, Berlin", region="india")
    assert (berlin.status, berlin.city, berlin.region, berlin.source) == ("served", "Berlin", "europe", "gazetteer")
    assert cat.route_region(berlin, current="india") == "europe"
    amb = await cat.place(graph_client, tenant, "Hyderabad")
    assert amb.status == "ambiguous"
    assert (await cat.place(graph_client, tenant, "Hyderabad", region="india")).city == "Hyderabad"
    with pytest.raises(InvalidInput):
        await cat.place(graph_client, tenant, "   ")
    with pytest.raises(InvalidInput):
        await cat.place(graph_client, tenant, "Pune", region="mars")


async def test_the_own_list_follows_the_graph(graph_client, tenant) -> None:
    """An area added to the graph is placed from the own list once the catalogue marker moves."""
    await cat.ensure_catalogue(graph_client, tenant, "india")
    assert (await cat.place(graph_client, tenant, "Koramangala")).status != "served"
    await graph_client.run(tenant, Query("t", "MATCH (c:Entity {uid: 'City|bengaluru'}) "
                                              "CREATE (:Area {uid: 'Area|bengaluru|koramangala', name: 'Koramangala', "
                                              "lat: 12.9352, lon: 77.6245})-[:IN_CITY]->(c) "
                                              "WITH c MATCH (m:CatalogueSeed) SET m.seeded_at_ms = m.seeded_at_ms + 1"))
    p = await cat.place(graph_client, tenant, "koramangala")
    assert (p.status, p.area, p.city, p.source) == ("served", "Koramangala", "Bengaluru", "own_list")


class _Counting:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        return httpx.Response(200, json={"results": [{
            "components": {"village": "Qwertyvadi", "country_code": "in"},
            "geometry": {"lat": 18.60, "lng": 73.90}}]})


async def test_the_geocoder_is_the_last_resort_and_only_with_a_key(graph_client, tenant) -> None:
    await cat.ensure_catalogue(graph_client, tenant, "india")
    handler = _Counting()
    geo = OpenCageGeocoder("key", transport=httpx.MockTransport(handler))
    try:
        known = await cat.place(graph_client, tenant, "Pune", geocoder=geo)
        assert known.source == "own_list" and handler.calls == 0  # known places never go online
        nowhere = await cat.place(graph_client, tenant, "Qwertyvadi")  # no key: no geocoder at all
        assert nowhere.status == "unknown" and handler.calls == 0
        found = await cat.place(graph_client, tenant, "Qwertyvadi", geocoder=geo)
        assert (found.status, found.city, found.source) == ("served", "Pune", "geocoder")
        assert handler.calls == 1
        await cat.place(graph_client, tenant, "qwertyvadi", geocoder=geo)
        assert handler.calls == 1  # cached
    finally:
        await geo.aclose()
    assert cat.make_geocoder(None) is None


async def test_a_failing_geocoder_leaves_the_place_unknown(graph_client, tenant) -> None:
    geo = OpenCageGeocoder("key", transport=httpx.MockTransport(lambda r: httpx.Response(503)))
    try:
        p = await cat.place(graph_client, tenant, "Qwertyvadi", geocoder=geo)
    finally:
        await geo.aclose()
    assert p.status == "unknown"


# ---------------------------------------------------------------- query plans


@pytest.mark.parametrize(
    ("query", "params"),
    [
        (q.PLANS_FOR, {"country": "IN"}),
        (q.ADDONS_FOR, {"country": "IN"}),
        (q.SERVICES_FOR, {"country": "IN"}),
        (q.COUNTRY_EXISTS, {"country": "IN"}),
        (q.PLAYBOOK_STEPS, {"issue_kind": "no_connection"}),
        (q.SEED_MARKER, {"region": "india"}),
        (q.UPSERT_PRICES, {"rows": [{"country": "IN", "offer_id": "fiber-100", "currency": "INR", "amount": 1,
                                     "tax_rate": 0.18, "tax_amount": 0.18, "price_incl_tax": 1.18, "period": "month",
                                     "display": "x", "display_incl_tax": "y"}]}),
        (q.UPSERT_CITIES, {"rows": []}),
    ],
)
async def test_hot_queries_start_from_an_index(graph_client, tenant, query, params) -> None:
    await cat.ensure_catalogue(graph_client, tenant, "india")
    plan = await graph_client.explain(tenant, query, params)
    assert "Index Scan" in plan, plan
    assert "All Node Scan" not in plan and "Label Scan" not in plan, plan


async def test_faq_search_uses_the_full_text_index(graph_client, tenant) -> None:
    await cat.ensure_catalogue(graph_client, tenant, "india")
    plan = await graph_client.explain(tenant, q.FAQ_SEARCH, {"q": "wifi", "limit": 3})
    assert "ProcedureCall" in plan and "Label Scan" not in plan and "All Node Scan" not in plan, plan
