"""Helpers shared by the gateway tests."""

from __future__ import annotations

import httpx

from services.gateway.app import create_app
from services.gateway.limits import RateLimiter
from services.gateway.settings import GatewaySettings

ADMIN_KEY = "test-admin-key-0123456789"


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


ADMIN = bearer(ADMIN_KEY)


def make_app(settings: GatewaySettings, memory, **overrides):
    # A generous bucket by default: the rate limit has its own tests.
    overrides.setdefault("limiter", RateLimiter(10_000, 10_000))
    overrides.setdefault("address_limiter", RateLimiter(10_000, 10_000))
    return create_app(settings, memory=memory, **overrides)


def client_for(app) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://relay")


async def create_tenant(client: httpx.AsyncClient, tenant: str, *, world: bool = False) -> dict[str, str]:
    """A tenant's key headers. Empty by default (`world: false`): most tests need no network, and
    seeding one per test would slow the suite; the API's own default is the seeded world."""
    r = await client.post("/v1/tenants", json={"tenant": tenant, "world": world}, headers=ADMIN)
    assert r.status_code == 201, r.text
    return bearer(r.json()["api_key"])


async def create_agent(client: httpx.AsyncClient, tenant: str, tenant_key: dict[str, str], agent: str) -> dict[str, str]:
    """The headers of a new agent key of `tenant` (issued with the tenant's key)."""
    r = await client.post(f"/v1/tenants/{tenant}/agents", json={"agent": agent}, headers=tenant_key)
    assert r.status_code == 201, r.text
    assert r.json()["agent"] == agent
    return bearer(r.json()["api_key"])


def assert_error(r: httpx.Response, status: int, code: str) -> dict:
    """The answer is `{"error": {"code", "message"}}` (plus optional extras) with this status and code."""
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json"), r.headers
    body = r.json()
    assert set(body["error"]) == {"code", "message"}, body
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"], body
    return body


async def assert_needs_own_key(client: httpx.AsyncClient, tenant: str, method: str, url: str, **kwargs) -> None:
    """No key or a wrong one: 401; the admin key or another tenant's key: 403."""
    assert_error(await client.request(method, url, **kwargs), 401, "unauthorized")
    assert_error(await client.request(method, url, headers=bearer("wrong"), **kwargs), 401, "unauthorized")
    assert_error(await client.request(method, url, headers=ADMIN, **kwargs), 403, "forbidden")
    other = await create_tenant(client, tenant + "-o")
    assert_error(await client.request(method, url, headers=other, **kwargs), 403, "forbidden")
