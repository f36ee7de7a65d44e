"""The customer site's session: a cookie (no key) that reads and writes only its own customer's
things, cannot call any tenant-key route, is refused by closed sites, is rate-limited at creation,
and whose live feed carries only events about its customer. Real FalkorDB, real streams, a real
uvicorn and WebSocket client for the feed."""

from __future__ import annotations

import asyncio
import json
import re

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from relay_graph.desk.tickets import store as tickets
from relay_graph.runtime.streams import Publisher, ReplyWritten, TicketChanged
from services.gateway.customer_sessions import COOKIE

from .helpers import assert_error, client_for, create_tenant, make_app
from .stream_helpers import served


async def open_site(client, tenant) -> dict[str, str]:
    auth = await create_tenant(client, tenant)
    r = await client.put(f"/v1/tenants/{tenant}/site", json={"open": True}, headers=auth)
    assert r.status_code == 200 and r.json() == {"tenant": tenant, "open": True}, r.text
    return auth


@pytest.fixture
async def visitor(app):
    """`await visitor(tenant)`: a browser of its own (its own cookie jar) with a fresh customer session."""
    browsers: list[httpx.AsyncClient] = []

    async def open_one(tenant: str) -> tuple[httpx.AsyncClient, str]:
        browser = client_for(app)
        browsers.append(browser)
        r = await browser.post(f"/v1/tenants/{tenant}/me/session")
        assert r.status_code == 201, r.text
        return browser, r.json()["customer"]

    yield open_one
    for browser in browsers:
        await browser.aclose()


def cookie(token: str | None) -> dict[str, str]:
    return {"Cookie": f"{COOKIE}={token}"}


async def test_a_closed_site_gives_no_session_and_an_open_one_sets_a_scoped_httponly_cookie(app, client, tenant):
    auth = await create_tenant(client, tenant)
    assert_error(await client.post(f"/v1/tenants/{tenant}/me/session"), 404, "site_closed")
    assert_error(await client.post("/v1/tenants/nobody-here/me/session"), 404, "site_closed")
    await client.put(f"/v1/tenants/{tenant}/site", json={"open": True}, headers=auth)

    r = await client.post(f"/v1/tenants/{tenant}/me/session")
    assert r.status_code == 201, r.text
    cookie = r.headers["set-cookie"].lower()
    assert f"{COOKIE}=" in cookie and "httponly" in cookie and "samesite=strict" in cookie
    assert f"path=/v1/tenants/{tenant}/me" in cookie
    customer = r.json()["customer"]
    # The same browser again: the same customer, nothing new.
    again = await client.post(f"/v1/tenants/{tenant}/me/session")
    assert again.status_code == 200 and again.json()["customer"] == customer
    # nothing known of her clock yet (no city, no browser zone, a tenant without a world): UTC
    assert (await client.get(f"/v1/tenants/{tenant}/me")).json() == {"tenant": tenant, "customer": customer,
                                                                       "time_zone": "UTC"}

    # Closing the site ends what its sessions can do.
    await client.put(f"/v1/tenants/{tenant}/site", json={"open": False}, headers=auth)
    assert_error(await client.get(f"/v1/tenants/{tenant}/me"), 404, "site_closed")


async def test_no_cookie_or_a_forged_one_or_another_sites_is_refused(app, client, tenant, visitor):
    await open_site(client, tenant)
    other = tenant + "-x"
    await open_site(client, other)
    assert_error(await client.get(f"/v1/tenants/{tenant}/me/tickets"), 401, "unauthorized")
    assert_error(await client.get(f"/v1/tenants/{tenant}/me/tickets", headers=cookie("forged")), 401,
                 "unauthorized")
    browser, _ = await visitor(other)
    token = browser.cookies.get(COOKIE)
    # Another site's cookie is no session here (sessions are kept per site).
    assert_error(await client.get(f"/v1/tenants/{tenant}/me/facts", headers=cookie(token)), 401, "unauthorized")


async def test_the_customer_cookie_calls_no_tenant_key_route(app, client, tenant, visitor):
    await open_site(client, tenant)
    browser, customer = await visitor(tenant)
    token = browser.cookies.get(COOKIE)
    paths = app.openapi()["paths"]
    tried = 0
    for path, ops in paths.items():
        if "{t}" not in path or path.startswith("/v1/tenants/{t}/me"):
            continue
        url = (path.replace("{t}", tenant).replace("{c}", customer).replace("{id}", "T-1")
               .replace("{node_id}", "n-1").replace("{name}", "remember"))
        for method in ops:
            # The cookie sent to every path, as if its path did not keep the browser from it.
            r = await client.request(method.upper(), url, json={}, headers=cookie(token),
                                     params={"subject": customer, "customer": customer, "node": "n-1"})
            assert_error(r, 401, "unauthorized")
            tried += 1
    assert tried >= 20, tried


async def test_each_customer_reads_only_their_own_tickets_facts_and_conversations(app, client, tenant, memory,
                                                                                  stream_redis, visitor):
    auth = await open_site(client, tenant)
    a, alice = await visitor(tenant)
    b, bob = await visitor(tenant)
    base = f"/v1/tenants/{tenant}"
    turn = await a.post(f"{base}/me/chat", json={"text": "Hi, my internet is down since this morning"})
    assert turn.status_code == 202, turn.text
    session = turn.json()["session"]
    ticket = await tickets.open_ticket(memory.client, tenant, customer=alice, issue_kind="no_connection",
                                       summary="no internet", agent="intake", session=session)
    r = await client.post(f"{base}/facts", json={"subject": alice, "predicate": "lives_in", "object": "pune",
                                                 "agent": "intake"}, headers=auth)
    assert r.status_code == 201, r.text

    assert [t["id"] for t in (await a.get(f"{base}/me/tickets")).json()["tickets"]] == [ticket.id]
    assert (await a.get(f"{base}/me/tickets/{ticket.id}")).json()["customer"] == alice
    assert [f["object"] for f in (await a.get(f"{base}/me/facts")).json()["facts"]] == ["pune"]
    convs = (await a.get(f"{base}/me/conversations")).json()["conversations"]
    assert [c["session"] for c in convs] == [session]
    assert convs[0]["first_text"].startswith("Hi, my internet")
    turns = (await a.get(f"{base}/me/conversations/{session}")).json()["turns"]
    assert [t["text"] for t in turns] == ["Hi, my internet is down since this morning"]

    # Bob sees none of it, and cannot reach it by its ids.
    assert (await b.get(f"{base}/me/tickets")).json()["tickets"] == []
    assert (await b.get(f"{base}/me/facts")).json()["facts"] == []
    assert (await b.get(f"{base}/me/conversations")).json()["conversations"] == []
    assert (await b.get(f"{base}/me/line")).json() == {"customer": bob, "line": []}
    assert_error(await b.get(f"{base}/me/tickets/{ticket.id}"), 404, "ticket_not_found")
    assert_error(await b.get(f"{base}/me/conversations/{session}"), 404, "conversation_not_found")
    assert_error(await b.post(f"{base}/me/chat", json={"text": "hello", "session": session}), 409,
                 "session_conflict")
    # and the chat cannot be told to speak as someone else
    assert_error(await b.post(f"{base}/me/chat", json={"text": "hello", "customer": alice}), 422,
                 "validation_error")


async def test_new_sessions_are_rate_limited_per_address(gateway_settings, memory, tenant):
    app = make_app(gateway_settings.model_copy(update={"site_sessions_per_second": 0.01, "site_sessions_burst": 2}),
                   memory)
    try:
        async with client_for(app) as admin:
            await open_site(admin, tenant)
        got = []
        for _ in range(3):
            async with client_for(app) as browser:  # a fresh cookie jar each time: a new visitor
                got.append((await browser.post(f"/v1/tenants/{tenant}/me/session")).status_code)
        assert got == [201, 201, 429]
    finally:
        await app.state.deps.aclose()


async def test_the_customer_feed_carries_only_their_events(app, client, tenant, memory, stream_redis, visitor):
    await open_site(client, tenant)
    a, alice = await visitor(tenant)
    b, bob = await visitor(tenant)
    base = f"/v1/tenants/{tenant}"
    mine = await tickets.open_ticket(memory.client, tenant, customer=alice, issue_kind="no_connection",
                                     summary="down", agent="intake")
    theirs = await tickets.open_ticket(memory.client, tenant, customer=bob, issue_kind="no_connection",
                                       summary="down", agent="intake")
    bob_session = (await b.post(f"{base}/me/chat", json={"text": "hello"})).json()["session"]
    publisher = Publisher(stream_redis)
    async with served(app) as host:
        async with connect(f"ws://{host}{base}/me/live",
                           additional_headers={"Cookie": f"{COOKIE}={a.cookies.get(COOKIE)}"}) as ws:
            await publisher.publish(TicketChanged(tenant=tenant, id=theirs.id, version=2, change="handed_off",
                                                  actor="intake"))
            await publisher.publish(ReplyWritten(tenant=tenant, id="r-x", session=bob_session, reply_to="t-x",
                                                 ticket_id=theirs.id, version=1, actor="intake"))
            await publisher.publish(TicketChanged(tenant=tenant, id=mine.id, version=2, change="handed_off",
                                                  actor="intake"))
            event = json.loads(await asyncio.wait_for(ws.recv(), 15))
            assert (event["kind"], event["id"]) == ("handoff", mine.id)
        # No cookie: the socket is closed with 4401; and the cookie opens no tenant-key feed.
        for url, headers in ((f"ws://{host}{base}/me/live", {}),
                             (f"ws://{host}{base}/live", {"Cookie": f"{COOKIE}={a.cookies.get(COOKIE)}"})):
            async with connect(url, additional_headers=headers) as ws:
                with pytest.raises(ConnectionClosed) as closed:
                    await asyncio.wait_for(ws.recv(), 15)
                assert closed.value.rcvd.code == 4401, url


async def test_a_customer_confirms_only_their_own_ticket(app, client, tenant, memory, stream_redis, visitor):
    await open_site(client, tenant)
    a, alice = await visitor(tenant)
    b, _ = await visitor(tenant)
    base = f"/v1/tenants/{tenant}"
    ticket = await tickets.open_ticket(memory.client, tenant, customer=alice, issue_kind="no_connection",
                                       summary="down", agent="intake")
    assert_error(await b.post(f"{base}/me/tickets/{ticket.id}/confirm", json={"fixed": True}), 404,
                 "ticket_not_found")
    assert (await tickets.get_ticket(memory.client, tenant, ticket.id)).stage.value == "reported"
    r = await a.post(f"{base}/me/tickets/{ticket.id}/confirm", json={"fixed": True})
    assert r.status_code == 200 and r.json()["stage"] == "closed", r.text
    timeline = (await a.get(f"{base}/me/tickets/{ticket.id}")).json()["timeline"]
    assert timeline[-1]["agent"] == "customer"


async def test_judge_mode_makes_a_throwaway_tenant_with_the_story_customer_signed_in(app, client):
    r = await client.post("/v1/site/judge")
    assert r.status_code == 201, r.text
    story = r.json()
    tenant = story["tenant"]
    assert re.fullmatch(r"judge-[0-9a-f]{10}", tenant) and story["says"]["fault"]
    cookie_header = r.headers["set-cookie"].lower()
    assert f"path=/v1/tenants/{tenant}/me" in cookie_header and "httponly" in cookie_header
    assert (await client.get(f"/v1/tenants/{tenant}/me")).json()["customer"] == story["customer"]
    assert (await client.get(f"/v1/tenants/{tenant}/me/plans", params={"country": "IN"})).json()["plans"]
    # the story's planted fault waits in the background, and stops with the gateway, not an hour on
    (waiting,) = app.state.deps.http.background
    assert not waiting.done()
    await app.state.deps.aclose()
    assert waiting.cancelled() and not app.state.deps.http.background


async def test_judge_tenants_are_deleted_when_their_time_is_up(app, client, memory):
    from services.gateway import judge_tenants

    deps = app.state.deps
    old, young = [(await client.post("/v1/site/judge")).json() for _ in range(2)]
    keys = await deps.http.keys()
    redis = keys.redis
    # `young` made later: give it a later expiry than the sweep's "now"
    await redis.zadd(judge_tenants.JUDGE_TENANTS_KEY, {young["tenant"]: 10**15})
    expiry = await redis.zscore(judge_tenants.JUDGE_TENANTS_KEY, old["tenant"])
    assert expiry is not None
    assert await memory.client.graph_exists(old["tenant"]) and await keys.exists(old["tenant"])

    gone = await judge_tenants.sweep(deps, now_ms=int(expiry) + 1)

    assert old["tenant"] in gone and young["tenant"] not in gone
    assert not await memory.client.graph_exists(old["tenant"])
    assert not await keys.exists(old["tenant"])
    assert not [k async for k in redis.scan_iter(match=f"*{old['tenant']}*")]
    # the customer's cookie no longer opens the site: it is closed with the tenant
    assert (await client.get(f"/v1/tenants/{old['tenant']}/me")).status_code in (401, 403, 404)
    # the young one is untouched, and a second sweep has nothing to do
    assert await memory.client.graph_exists(young["tenant"])
    assert (await client.get(f"/v1/tenants/{young['tenant']}/me")).json()["customer"] == young["customer"]
    assert await judge_tenants.sweep(deps, now_ms=int(expiry) + 1) == []
    await redis.zrem(judge_tenants.JUDGE_TENANTS_KEY, young["tenant"])


async def test_judge_mode_can_be_off_and_is_rate_limited(gateway_settings, memory):
    off = make_app(gateway_settings.model_copy(update={"judge_mode": False}), memory)
    limited = make_app(gateway_settings.model_copy(update={"judge_runs_per_second": 0.001, "judge_runs_burst": 1}),
                       memory)
    try:
        async with client_for(off) as c:
            assert_error(await c.post("/v1/site/judge"), 403, "forbidden")
        async with client_for(limited) as c:
            assert (await c.post("/v1/site/judge")).status_code == 201
            assert_error(await c.post("/v1/site/judge"), 429, "rate_limited")
    finally:
        for app in (off, limited):
            await app.state.deps.aclose()


async def test_coverage_names_the_cities_degraded_or_cut_off_right_now(client, memory):
    from relay_graph.desk.network import store as network
    from relay_graph.desk.network.models import LinkType
    from relay_graph.runtime.queries import Query

    story = (await client.post("/v1/site/judge")).json()
    tenant = story["tenant"]
    coverage = f"/v1/tenants/{tenant}/me/coverage"
    assert (await client.get(coverage)).json() == {"cities": []}  # a fresh network: all running

    hubs = await memory.client.run(tenant, Query(
        "test_hub_uplinks", "MATCH (h:Pop)-[:UPLINK]->(b:Backbone) "
        "WITH h, collect(b.node_id) AS up ORDER BY h.node_id RETURN h.node_id AS hub, h.name AS name, up",
        read_only=True))
    two = next(h for h in hubs if len(h["up"]) == 2)  # the hub with a standby uplink
    primary, standby = two["up"]
    city = two["name"].removesuffix(" hub")
    await network.set_link_status(memory.client, tenant, LinkType.UPLINK, two["hub"], primary, up=False)
    (row,) = (await client.get(coverage)).json()["cities"]
    assert row["city"] == city and row["status"] == "degraded" and "standby" in row["reason"]
    await network.set_link_status(memory.client, tenant, LinkType.UPLINK, two["hub"], standby, up=False)
    (row,) = (await client.get(coverage)).json()["cities"]
    assert row["city"] == city and row["status"] == "outage"

    # a street cabinet down in another city: that city is degraded, not cut off
    other = next(h for h in hubs if h["hub"] != two["hub"])
    (cabinet,) = await memory.client.run(tenant, Query(
        "test_a_cabinet", "MATCH (s:Splitter)-[:PON]->(:Olt)-[:UPLINK]->(h:Pop {node_id: $hub}) "
        "RETURN s.node_id AS id ORDER BY id LIMIT 1", read_only=True), {"hub": other["hub"]})
    await network.set_node_status(memory.client, tenant, cabinet["id"], up=False)
    rows = {r["city"]: r for r in (await client.get(coverage)).json()["cities"]}
    assert set(rows) == {city, other["name"].removesuffix(" hub")}
    assert rows[other["name"].removesuffix(" hub")]["status"] == "degraded"

    for target in (primary, standby):
        await network.set_link_status(memory.client, tenant, LinkType.UPLINK, two["hub"], target, up=True)
    await network.set_node_status(memory.client, tenant, cabinet["id"], up=True)
    assert (await client.get(coverage)).json() == {"cities": []}


async def test_the_browsers_time_zone_picks_the_country_the_desk_prices_until_an_address_is_on_file(app, client, tenant):
    auth = await open_site(client, tenant)
    r = await client.post(f"/v1/tenants/{tenant}/world", json={"region": "europe", "max_cities": 1}, headers=auth)
    assert r.status_code == 200, r.text
    browsers = []
    try:
        async def plans_for_zone(body):
            browser = client_for(app)
            browsers.append(browser)
            r = await browser.post(f"/v1/tenants/{tenant}/me/session", json=body)
            assert r.status_code == 201, r.text
            r = await browser.get(f"/v1/tenants/{tenant}/me/plans")
            assert r.status_code == 200, r.text
            return r.json()

        lisbon = await plans_for_zone({"time_zone": "Europe/Lisbon"})
        assert lisbon["country"] == "PT"
        assert {p["price"]["currency"] for p in lisbon["plans"]} == {"EUR"}
        # a zone this desk does not serve, or none at all: the desk's home country
        home = (await plans_for_zone({}))["country"]
        assert home == "GB"
        assert (await plans_for_zone({"time_zone": "America/New_York"}))["country"] == home
        assert (await plans_for_zone({"time_zone": "Europe/London"}))["country"] == "GB"
        # the site shows her times on that clock until her city is known
        browser = browsers[0]
        assert (await browser.get(f"/v1/tenants/{tenant}/me")).json()["time_zone"] == "Europe/Lisbon"
        # an explicit country still answers for that country
        r = await browser.get(f"/v1/tenants/{tenant}/me/plans", params={"country": "ES"})
        assert r.status_code == 200 and r.json()["country"] == "ES"
        # a malformed zone is refused before any customer is made
        fresh = client_for(app)
        browsers.append(fresh)
        for bad in ("../../etc/passwd", "Europe/Lisbon; DROP", "x" * 65, 7):
            r = await fresh.post(f"/v1/tenants/{tenant}/me/session", json={"time_zone": bad})
            assert_error(r, 422, "validation_error")
            assert "set-cookie" not in r.headers
    finally:
        for b in browsers:
            await b.aclose()
