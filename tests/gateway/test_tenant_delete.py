"""A tenant's life has one owner: deleting it (POST /v1/admin/tenants/{t}/delete) leaves nothing of
it behind, whatever door comes next (its keys, its agents' keys, its customers' cookies, a keyless
visitor, a retried write), and a tenant created again under the same name starts clean. Real
gateway app, real FalkorDB (tests/gateway/conftest.py)."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from relay_graph.desk.customers import store as customers
from relay_graph.runtime.db import telemetry_key
from relay_graph.runtime.errors import TenantNotFound
from relay_graph.runtime.tenancy import graph_name, unregister
from services.gateway import judge_tenants
from services.gateway.customer_sessions import COOKIE

from tests.support import eventually

from .helpers import ADMIN, assert_error, client_for, create_agent, create_tenant, make_app

FACT = {"subject": "Asha Verma", "predicate": "phone", "object": "+91 98200 12345", "agent": "intake"}


async def leftovers(redis, tenant: str) -> list[str]:
    """Every key whose name holds the tenant id, and its entries in the shared admin hashes and sets."""
    keys = sorted([k async for k in redis.scan_iter(match=f"*{tenant}*", count=500)])
    graphs = [g for g in await redis.execute_command("GRAPH.LIST") if tenant in g]
    return sorted(set(keys) | set(graphs))


async def a_lived_in_tenant(app, client: httpx.AsyncClient, tenant: str) -> dict:
    """A tenant with something behind every door: a key, an agent key, an open site with a customer
    in it, its own limits, an Idempotency-Key claim, a snapshot, queries (and so FalkorDB's telemetry)."""
    redis = app.state.deps.client.redis
    key = await create_tenant(client, tenant)
    planner = await create_agent(client, tenant, key, "planner")
    assert (await client.put(f"/v1/tenants/{tenant}/site", json={"open": True}, headers=key)).status_code == 200
    browser = client_for(app)
    r = await browser.post(f"/v1/tenants/{tenant}/me/session")
    assert r.status_code == 201, r.text
    token = browser.cookies.get(COOKIE)
    await browser.aclose()
    r = await client.put(f"/v1/tenants/{tenant}/limits", json={"rate_per_second": 7}, headers=ADMIN)
    assert r.status_code == 200 and r.json()["limits"]["rate_per_second"] == 7, r.text
    r = await client.post(f"/v1/tenants/{tenant}/facts", json=FACT, headers={**planner, "Idempotency-Key": "once"})
    assert r.status_code == 201, r.text
    assert [k async for k in redis.scan_iter(match=f"relay-idem:{tenant}:*")]
    assert (await client.post(f"/v1/admin/tenants/{tenant}/snapshots", json={"name": "before"},
                              headers=ADMIN)).status_code == 201
    # FalkorDB keeps a telemetry stream of each graph's queries unless it runs with CMD_INFO off, as
    # Relay starts it (embedded.MODULE_ARGS): one a server with it on wrote, for the delete to find.
    await redis.xadd(telemetry_key(graph_name(tenant)), {"query": "MATCH (n) RETURN n"})
    return {"key": key, "planner": planner, "cookie": {"Cookie": f"{COOKIE}={token}"}}


async def test_a_deleted_tenant_leaves_nothing_behind_and_no_door_brings_it_back(app, client, tenant):
    redis = app.state.deps.client.redis
    old = await a_lived_in_tenant(app, client, tenant)
    base = f"/v1/tenants/{tenant}"

    r = await client.post(f"/v1/admin/tenants/{tenant}/delete", json={"confirm": tenant}, headers=ADMIN)
    assert r.status_code == 200, r.text
    done = r.json()
    assert done["api_key_revoked"] is True and done["kept"] == []
    assert graph_name(tenant) in done["removed_keys"]
    assert await leftovers(redis, tenant) == []  # graph, telemetry, snapshot, sessions, claims, entries

    # The customer's cookie: no session, and nothing it sends makes a graph or a customer.
    assert_error(await client.get(f"{base}/me", headers=old["cookie"]), 401, "unauthorized")
    assert_error(await client.post(f"{base}/me/chat", json={"text": "hello?"}, headers=old["cookie"]),
                 401, "unauthorized")
    assert_error(await client.post(f"{base}/me/session", headers=old["cookie"]), 404, "site_closed")
    assert_error(await client.post(f"{base}/me/session"), 404, "site_closed")  # keyless: no site
    # The tenant's key and its agents' keys authenticate nobody.
    assert_error(await client.post(f"{base}/facts", json=FACT, headers=old["key"]), 401, "unauthorized")
    assert_error(await client.post(f"{base}/facts", json=FACT, headers=old["planner"]), 401, "unauthorized")
    assert_error(await client.put(f"{base}/site", json={"open": True}, headers=old["planner"]), 401, "unauthorized")
    assert not await redis.exists(graph_name(tenant))
    assert await leftovers(redis, tenant) == []

    # Created again under the same name: a new tenant, nothing of the old one applies.
    new = await create_tenant(client, tenant)
    assert_error(await client.post(f"{base}/facts", json=FACT, headers=old["planner"]), 401, "unauthorized")
    assert_error(await client.get(f"{base}/me", headers=old["cookie"]), 401, "unauthorized")
    assert_error(await client.post(f"{base}/me/session"), 404, "site_closed")  # its site is closed until PUT /site
    r = await client.get(f"{base}/limits", headers=new)
    assert r.json()["overrides"] == {} and r.json()["limits"]["rate_per_second"] != 7
    assert (await client.get(f"/v1/admin/tenants/{tenant}/snapshots", headers=ADMIN)).json()["snapshots"] == []
    r = await client.post(f"{base}/facts", json=FACT, headers={**new, "Idempotency-Key": "once"})
    assert r.status_code == 201 and "Idempotent-Replayed" not in r.headers  # the old claim is gone
    r = await client.get(f"{base}/facts", params={"subject": "Asha Verma"}, headers=new)
    assert [f["asserted_by"] for f in r.json()["facts"]] == ["api"]  # the planner's fact went with the old one


async def test_delete_keeps_the_snapshots_when_asked_and_a_restore_brings_them_back(app, client, tenant):
    key = await create_tenant(client, tenant)
    base, admin = f"/v1/tenants/{tenant}", f"/v1/admin/tenants/{tenant}"
    assert (await client.post(f"{base}/facts", json=FACT, headers=key)).status_code == 201
    assert (await client.post(f"{admin}/snapshots", json={"name": "keep"}, headers=ADMIN)).status_code == 201
    assert_error(await client.post(f"{admin}/delete", json={"confirm": tenant, "keep_snapshots": "yes"},
                                   headers=ADMIN), 422, "validation_error")
    r = await client.post(f"{admin}/delete", json={"confirm": tenant, "keep_snapshots": True}, headers=ADMIN)
    assert r.status_code == 200 and r.json()["kept"] == ["snapshots"], r.text
    assert not await app.state.deps.client.graph_exists(tenant)
    # Not restorable into a tenant that is not there: it would be a graph nobody owns.
    assert_error(await client.post(f"{admin}/snapshots/keep/restore", headers=ADMIN), 404, "tenant_not_found")
    assert not await app.state.deps.client.graph_exists(tenant)
    key = await create_tenant(client, tenant)
    r = await client.get(f"{base}/facts", params={"subject": "Asha Verma"}, headers=key)
    assert r.json()["facts"] == []  # a new tenant starts empty ...
    assert (await client.post(f"{admin}/snapshots/keep/restore", headers=ADMIN)).status_code == 200
    r = await client.get(f"{base}/facts", params={"subject": "Asha Verma"}, headers=key)
    assert [f["predicate"] for f in r.json()["facts"]] == ["phone"]  # ... until the operator restores


async def test_a_cookie_that_outlives_its_tenant_for_a_moment_makes_no_graph(app, client, tenant, memory):
    """The moment between a tenant's unregistering and the removal of its sessions (a delete in
    another gateway): the customer's chat meets the one place graphs are made, which refuses it
    with a 404 JSON error, and no graph comes back."""
    key = await create_tenant(client, tenant)
    await client.put(f"/v1/tenants/{tenant}/site", json={"open": True}, headers=key)
    browser = client_for(app)
    try:
        assert (await browser.post(f"/v1/tenants/{tenant}/me/session")).status_code == 201
        assert await unregister(memory.client.redis, tenant)
        await memory.client.redis.delete(graph_name(tenant))
        memory.client.forget_tenant(tenant)  # as every process has within tenant_check_s
        assert_error(await browser.post(f"/v1/tenants/{tenant}/me/chat", json={"text": "is anyone there?"}),
                     404, "tenant_not_found")
        with pytest.raises(TenantNotFound):
            await customers.create(memory.client, tenant, agent="gateway")
        assert not await memory.client.graph_exists(tenant)
    finally:
        await browser.aclose()
        await client.post(f"/v1/admin/tenants/{tenant}/delete", json={"confirm": tenant}, headers=ADMIN)


async def test_an_agent_key_cannot_close_the_site_or_seed_the_world(client, tenant):
    key = await create_tenant(client, tenant)
    planner = await create_agent(client, tenant, key, "planner")
    body = assert_error(await client.put(f"/v1/tenants/{tenant}/site", json={"open": False}, headers=planner),
                        403, "tenant_key_required")
    assert "tenant's own key" in body["error"]["message"] and "/site" in body["error"]["message"]
    body = assert_error(await client.post(f"/v1/tenants/{tenant}/world", json={"region": "india"}, headers=planner),
                        403, "tenant_key_required")
    assert "/world" in body["error"]["message"]
    assert (await client.put(f"/v1/tenants/{tenant}/site", json={"open": True}, headers=key)).status_code == 200


async def test_judge_tenants_are_bounded_and_their_timer_and_work_go_with_them(gateway_settings, memory):
    deps_redis = memory.client.redis
    live = await deps_redis.zcount(judge_tenants.JUDGE_TENANTS_KEY, "(" + str(_now_ms()), "+inf")
    app = make_app(gateway_settings.model_copy(update={"judge_max_tenants": live + 1}), memory)
    try:
        async with client_for(app) as c:
            r = await c.post("/v1/site/judge")
            assert r.status_code == 201, r.text
            tenant = r.json()["tenant"]
            full = await c.post("/v1/site/judge")
            assert_error(full, 503, "judge_mode_full")
            assert int(full.headers["Retry-After"]) >= 1
            (work,) = app.state.deps.http.background  # the story's planted fault, waiting
            r = await c.post(f"/v1/admin/tenants/{tenant}/delete", json={"confirm": tenant}, headers=ADMIN)
            assert r.status_code == 200, r.text
            assert f"{judge_tenants.JUDGE_TENANTS_KEY}#{tenant}" in r.json()["removed_keys"]
            assert await deps_redis.zscore(judge_tenants.JUDGE_TENANTS_KEY, tenant) is None
            await asyncio.wait({work}, timeout=5)
            # stopped: cancelled, or ended on meeting its deleted tenant (TenantNotFound), quietly
            assert work.done() and (work.cancelled() or work.exception() is None)
            assert await leftovers(deps_redis, tenant) == []
            again = await c.post("/v1/site/judge")  # its place is free again
            assert again.status_code == 201, again.text
            r = await c.post(f"/v1/admin/tenants/{again.json()['tenant']}/delete",
                             json={"confirm": again.json()["tenant"]}, headers=ADMIN)
            assert r.status_code == 200
    finally:
        await app.state.deps.aclose()


def _now_ms() -> int:
    from relay_graph.runtime.times import now_ms

    return now_ms()
