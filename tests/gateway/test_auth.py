"""The 401/403 matrix on every tenant route, and that a refused request changes nothing."""

from __future__ import annotations

import pytest

from .helpers import ADMIN, assert_error, bearer, create_tenant

FACT = {"subject": "alice rao", "predicate": "lives_in", "object": "pune"}

ROUTES = [
    ("POST", "/v1/tenants/{t}/facts", {"json": FACT}),
    ("POST", "/v1/tenants/{t}/facts/retire", {"json": {"subject": "alice rao", "predicate": "lives_in",
                                                       "agent": "intake"}}),
    ("GET", "/v1/tenants/{t}/facts", {"params": {"subject": "alice rao"}}),
    ("GET", "/v1/tenants/{t}/facts/history", {"params": {"subject": "alice rao"}}),
    ("GET", "/v1/tenants/{t}/claims", {"params": {"subject": "alice rao", "predicate": "lives_in"}}),
    ("POST", "/v1/tenants/{t}/conflicts/c-1/settle", {"json": {"fact_id": "f-1", "by": "maya"}}),
    ("POST", "/v1/tenants/{t}/episodes", {"json": {"episodes": [
        {"session": "s1", "speaker": "alice", "text": "hello", "at": "2026-09-05T10:00:00+00:00"}]}}),
    ("GET", "/v1/tenants/{t}/recall", {"params": {"q": "where does alice live"}}),
    ("POST", "/v1/tenants/{t}/facts/batch", {"json": {"facts": [FACT]}}),
    ("POST", "/v1/tenants/{t}/agents", {"json": {"agent": "planner"}}),
    ("GET", "/v1/tenants/{t}/agents", {}),
    ("GET", "/v1/tenants/{t}/limits", {}),
]
IDS = [f"{m} {p}" for m, p, _ in ROUTES]


@pytest.fixture
async def two_tenants(client, tenant):
    other = tenant + "-other"
    return (tenant, await create_tenant(client, tenant)), (other, await create_tenant(client, other))


@pytest.mark.parametrize("method,path,kwargs", ROUTES, ids=IDS)
async def test_no_key_or_a_wrong_key_is_401(client, two_tenants, method, path, kwargs):
    (tenant, _), _ = two_tenants
    url = path.format(t=tenant)
    for headers in ({}, bearer("wrong-key"), {"Authorization": "Bearer"}, {"Authorization": "Token abc"},
                    bearer("x" * 1000)):
        r = await client.request(method, url, headers=headers, **kwargs)
        assert_error(r, 401, "unauthorized")
        assert r.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize("method,path,kwargs", ROUTES, ids=IDS)
async def test_another_tenants_key_is_403(client, two_tenants, method, path, kwargs):
    (tenant, _), (_, other_key) = two_tenants
    assert_error(await client.request(method, path.format(t=tenant), headers=other_key, **kwargs), 403, "forbidden")


@pytest.mark.parametrize("method,path,kwargs", ROUTES, ids=IDS)
async def test_the_admin_key_is_403_on_tenant_paths(client, two_tenants, method, path, kwargs):
    (tenant, _), _ = two_tenants
    assert_error(await client.request(method, path.format(t=tenant), headers=ADMIN, **kwargs), 403, "forbidden")


@pytest.mark.parametrize("method,path,kwargs", ROUTES, ids=IDS)
async def test_a_tenant_path_that_is_not_a_tenant_name_is_403(client, two_tenants, method, path, kwargs):
    (_, key), _ = two_tenants
    for bad in ("Relay-acme", "a", "acme_corp", "x" * 70):
        assert_error(await client.request(method, path.format(t=bad), headers=key, **kwargs), 403, "forbidden")


async def test_refused_writes_change_nothing(client, two_tenants):
    (tenant, key), (other, other_key) = two_tenants
    for headers in ({}, bearer("wrong"), other_key, ADMIN):
        r = await client.post(f"/v1/tenants/{tenant}/facts", json=FACT, headers=headers)
        assert r.status_code in (401, 403)
    for t, k in ((tenant, key), (other, other_key)):
        r = await client.get(f"/v1/tenants/{t}/facts", params={"subject": "alice rao"}, headers=k)
        assert r.status_code == 200
        assert r.json()["facts"] == []


async def test_each_key_sees_only_its_own_tenant(client, two_tenants):
    (tenant, key), (other, other_key) = two_tenants
    r = await client.post(f"/v1/tenants/{tenant}/facts", json=FACT, headers=key)
    assert r.status_code == 201, r.text
    mine = await client.get(f"/v1/tenants/{tenant}/facts", params={"subject": "alice rao"}, headers=key)
    theirs = await client.get(f"/v1/tenants/{other}/facts", params={"subject": "alice rao"}, headers=other_key)
    assert [f["object"] for f in mine.json()["facts"]] == ["pune"]
    assert theirs.json()["facts"] == []
