"""The operator's API (admin key): snapshots, reset, delete, forget, stats, over HTTP on a real
FalkorDB. What the operations do is tested in tests/relay_graph/usecases/test_operations.py; these check
the wiring, the confirmation step and the errors."""

from __future__ import annotations

import pytest

from services.gateway.settings import GatewaySettings

from .conftest import acl_env
from .helpers import ADMIN, assert_error, create_agent, create_tenant, make_app


@pytest.fixture(params=["default", "acl"])
async def app(request, gateway_settings, memory, falkordb_server):
    """The app on the test's memory (FalkorDB's `default` user), and on connections of its own as
    `relay up` runs it: the gateway's user, the admin routes on the operations user's."""
    if request.param == "default":
        app = make_app(gateway_settings, memory)
    else:
        env = acl_env(falkordb_server)
        if not env:
            pytest.skip("the session's FalkorDB has no users (a test cluster)")
        app = make_app(GatewaySettings(**{**gateway_settings.model_dump(), **{k.removeprefix("RELAY_").lower(): v
                                                                             for k, v in env.items()}}), None)
    yield app
    await app.state.deps.aclose()


async def test_snapshot_reset_restore_and_stats(client, tenant):
    headers = await create_tenant(client, tenant)
    base = f"/v1/admin/tenants/{tenant}"
    r = await client.post(f"/v1/tenants/{tenant}/facts", headers=headers, json={
        "subject": "Asha Verma", "predicate": "lives_in", "object": "Pune", "agent": "intake"})
    assert r.status_code in (200, 201), r.text
    assert_error(await client.get(f"{base}/stats", headers=headers), 403, "forbidden")  # a tenant key is not admin
    before = (await client.get(f"{base}/stats", headers=ADMIN)).json()
    assert before["exists"] and before["nodes"]["Fact"] == 1 and before["memory_mb"] is not None
    r = await client.post(f"{base}/snapshots", headers=ADMIN, json={"name": "one"})
    assert r.status_code == 201, r.text
    assert_error(await client.post(f"{base}/snapshots", headers=ADMIN, json={"name": "one"}), 409, "snapshot_exists")
    assert_error(await client.post(f"{base}/snapshots", headers=ADMIN, json={"name": "No!"}), 422, "invalid_input")
    assert_error(await client.post(f"{base}/reset", headers=ADMIN, json={"confirm": "other"}), 422,
                 "confirmation_required")
    r = await client.post(f"{base}/reset", headers=ADMIN, json={"confirm": tenant})
    assert r.status_code == 200 and r.json()["snapshot"]["name"].startswith("pre-reset-")
    assert (await client.get(f"{base}/stats", headers=ADMIN)).json()["nodes"] == {}
    names = [s["name"] for s in (await client.get(f"{base}/snapshots", headers=ADMIN)).json()["snapshots"]]
    assert "one" in names and len(names) == 2
    assert (await client.post(f"{base}/snapshots/one/restore", headers=ADMIN)).status_code == 200
    after = (await client.get(f"{base}/stats", headers=ADMIN)).json()
    assert (after["nodes"], after["edges"]) == (before["nodes"], before["edges"])
    assert (await client.delete(f"{base}/snapshots/one", headers=ADMIN)).status_code == 204
    assert_error(await client.delete(f"{base}/snapshots/one", headers=ADMIN), 404, "snapshot_not_found")


async def test_forget_then_delete(client, tenant):
    headers = await create_tenant(client, tenant)
    planner = await create_agent(client, tenant, headers, "planner")
    base = f"/v1/admin/tenants/{tenant}"
    await client.post(f"/v1/tenants/{tenant}/facts", headers=headers, json={
        "subject": "Asha Verma", "predicate": "phone", "object": "+91 98200 12345", "agent": "intake"})
    r = await client.post(f"{base}/forget", headers=ADMIN, json={"customer": "Asha Verma"})
    assert r.status_code == 200, r.text
    assert (r.json()["facts"], r.json()["entity"]) == (1, 1)
    r = await client.get(f"/v1/tenants/{tenant}/facts", params={"subject": "Asha Verma"}, headers=headers)
    assert r.json()["facts"] == []
    assert_error(await client.post(f"{base}/delete", headers=ADMIN, json={}), 422, "validation_error")
    r = await client.post(f"{base}/delete", headers=ADMIN, json={"confirm": tenant})
    assert r.status_code == 200 and r.json()["api_key_revoked"] is True
    r = await client.get(f"/v1/tenants/{tenant}/facts", params={"subject": "x"}, headers=headers)
    assert r.status_code == 401  # the key is gone with the tenant
    r = await client.get(f"/v1/tenants/{tenant}/facts", params={"subject": "x"}, headers=planner)
    assert r.status_code == 401  # and so are its agents' keys
    # deleted already, or a name never created: nothing to delete, said so
    assert_error(await client.post(f"{base}/delete", headers=ADMIN, json={"confirm": tenant}), 404, "tenant_not_found")
    ghost = tenant + "-never"
    assert_error(await client.post(f"/v1/admin/tenants/{ghost}/delete", headers=ADMIN, json={"confirm": ghost}),
                 404, "tenant_not_found")


async def test_recent_queries_are_bounded_and_timed(client, tenant, memory):
    headers = await create_tenant(client, tenant)
    await client.get(f"/v1/tenants/{tenant}/facts", params={"subject": "Asha"}, headers=headers)
    assert_error(await client.get("/v1/admin/queries", headers=headers), 403, "forbidden")
    got = (await client.get("/v1/admin/queries", headers=ADMIN)).json()["queries"]
    mine = [q for q in got if q["tenant"] == tenant]
    assert mine and all(q["ms"] >= 0 and q["ok"] and q["query"] for q in mine)
    assert len(got) <= memory.client.recent.maxlen
