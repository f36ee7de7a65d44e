"""Body size limit (413) and the per-key rate limit (429)."""

from __future__ import annotations

import json

import pytest

from services.gateway.errors import RateLimited
from services.gateway.limits import AddressLimiter, RateLimiter

from .helpers import ADMIN, assert_error, client_for, create_tenant, make_app

FACT = {"subject": "alice rao", "predicate": "lives_in", "object": "pune"}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_bucket_allows_the_burst_then_refills_at_the_rate():
    clock = Clock()
    limiter = RateLimiter(rate=2, burst=3, clock=clock)
    for _ in range(3):
        limiter.hit("k")
    with pytest.raises(RateLimited) as exc:
        limiter.hit("k")
    assert exc.value.retry_after == 1
    limiter.hit("other")  # buckets are per key
    clock.now += 0.5  # one token back at 2/s
    limiter.hit("k")
    with pytest.raises(RateLimited):
        limiter.hit("k")
    clock.now += 60  # refills up to the burst, not beyond
    for _ in range(3):
        limiter.hit("k")
    with pytest.raises(RateLimited):
        limiter.hit("k")


def test_retry_after_is_whole_seconds_until_a_token():
    clock = Clock()
    limiter = RateLimiter(rate=0.1, burst=1, clock=clock)
    limiter.hit("k")
    with pytest.raises(RateLimited) as exc:
        limiter.hit("k")
    assert exc.value.retry_after == 10
    clock.now += 7.5
    with pytest.raises(RateLimited) as exc:
        limiter.hit("k")
    assert exc.value.retry_after == 3


async def test_over_the_rate_is_429_with_retry_after(gateway_settings, memory, tenant):
    # The admin key has its own bucket of 3; so does each tenant key.
    app = make_app(gateway_settings, memory, limiter=RateLimiter(rate=0.001, burst=3))
    async with client_for(app) as c:
        headers = await create_tenant(c, tenant)
        url = f"/v1/tenants/{tenant}/facts"
        for _ in range(3):
            assert (await c.get(url, params={"subject": "x"}, headers=headers)).status_code == 200
        r = await c.post(url, json=FACT, headers=headers)
        assert f"for tenant '{tenant}'" in assert_error(r, 429, "rate_limited")["error"]["message"]
        assert int(r.headers["retry-after"]) >= 1
    # The refused write wrote nothing (read through an app with a fresh bucket).
    async with client_for(make_app(gateway_settings, memory)) as c:
        r = await c.get(url, params={"subject": "alice rao"}, headers=headers)
        assert r.status_code == 200 and r.json()["facts"] == []


async def test_a_body_over_the_limit_is_413(gateway_settings, memory, tenant):
    app = make_app(gateway_settings.model_copy(update={"max_body_bytes": 2048}), memory)
    async with client_for(app) as c:
        headers = await create_tenant(c, tenant)
        url = f"/v1/tenants/{tenant}/facts"
        big = {**FACT, "source": "x" * 150, "padding": "y" * 4000}
        body = assert_error(await c.post(url, json=big, headers=headers), 413, "payload_too_large")
        assert "2048" in body["error"]["message"]
        # Under the limit, the same route works.
        assert (await c.post(url, json=FACT, headers=headers)).status_code == 201


async def test_a_streamed_body_is_cut_off_without_reading_it_all(gateway_settings, memory, tenant):
    app = make_app(gateway_settings.model_copy(update={"max_body_bytes": 2048}), memory)
    pulled = []

    async def chunks():
        # No Content-Length (chunked): the limit is counted as the body arrives.
        for i in range(50):
            pulled.append(i)
            yield b" " * 1024

    async with client_for(app) as c:
        headers = await create_tenant(c, tenant)
        r = await c.post(f"/v1/tenants/{tenant}/facts", content=chunks(),
                         headers={**headers, "content-type": "application/json"})
        assert_error(r, 413, "payload_too_large")
        assert len(pulled) < 50


async def test_a_declared_length_over_the_limit_is_refused_before_reading(gateway_settings, memory, tenant):
    app = make_app(gateway_settings.model_copy(update={"max_body_bytes": 2048}), memory)
    pulled = []

    async def chunks():
        for i in range(3):
            pulled.append(i)
            yield b"x" * 1024

    async with client_for(app) as c:
        headers = await create_tenant(c, tenant)
        r = await c.post(f"/v1/tenants/{tenant}/facts", content=chunks(),
                         headers={**headers, "content-type": "application/json", "content-length": str(10**9)})
        assert_error(r, 413, "payload_too_large")
        assert pulled == []


async def test_the_limit_applies_before_auth_and_to_tenant_creation(gateway_settings, memory):
    app = make_app(gateway_settings.model_copy(update={"max_body_bytes": 64}), memory)
    async with client_for(app) as c:
        payload = json.dumps({"tenant": "a" * 60, "pad": "b" * 100})
        assert_error(await c.post("/v1/tenants", content=payload, headers={"content-type": "application/json"}),
                     413, "payload_too_large")


async def test_five_hundred_facts_one_by_one_meet_the_limit_one_batch_does_not(gateway_settings, memory, tenant):
    # The gateway's default bucket (50/s, burst 100), on a clock that stands still: only the burst counts.
    clock = Clock()
    limiter = RateLimiter(gateway_settings.rate_limit_per_second, gateway_settings.rate_limit_burst, clock=clock)
    app = make_app(gateway_settings, memory, limiter=limiter)
    facts = [{"subject": f"one by one {i}", "predicate": "lives_in", "object": "pune"} for i in range(500)]
    async with client_for(app) as c:
        headers = await create_tenant(c, tenant)
        url = f"/v1/tenants/{tenant}/facts"
        codes = [(await c.post(url, json=f, headers=headers)).status_code for f in facts[:101]]
        assert codes[:100] == [201] * 100 and codes[100] == 429
        clock.now += 60  # the bucket is full again
        r = await c.post(f"{url}/batch", json={"facts": facts}, headers=headers)
        assert r.status_code == 200 and r.json()["written"] == 500


async def test_limits_are_per_tenant_and_shared_by_its_keys(gateway_settings, memory, tenant):
    app = make_app(gateway_settings, memory, limiter=RateLimiter(rate=1000, burst=1000, clock=Clock()))
    async with client_for(app) as c:
        headers = await create_tenant(c, tenant)
        other = await create_tenant(c, tenant + "-o")
        r = await c.post(f"/v1/tenants/{tenant}/agents", json={"agent": "planner"}, headers=headers)
        planner = {"Authorization": f"Bearer {r.json()['api_key']}"}
        r = await c.put(f"/v1/tenants/{tenant}/limits", json={"rate_per_second": 0.001, "burst": 3}, headers=ADMIN)
        assert r.status_code == 200, r.text
        assert r.json() == {"tenant": tenant, "overrides": {"burst": 3, "rate_per_second": 0.001},
                            "limits": {"rate_per_second": 0.001, "burst": 3, "batch_max_facts": 1000}}
        url = f"/v1/tenants/{tenant}/facts"
        assert (await c.get(url, params={"subject": "x"}, headers=headers)).status_code == 200
        assert (await c.get(url, params={"subject": "x"}, headers=planner)).status_code == 200
        assert (await c.get(f"/v1/tenants/{tenant}/limits", headers=headers)).status_code == 200
        # the tenant's bucket is empty, for its key and its agent's alike; another tenant's is not
        assert_error(await c.get(url, params={"subject": "x"}, headers=planner), 429, "rate_limited")
        assert_error(await c.get(url, params={"subject": "x"}, headers=headers), 429, "rate_limited")
        r = await c.get(f"/v1/tenants/{tenant}-o/limits", headers=other)
        assert r.status_code == 200 and r.json()["limits"]["burst"] == 1000 and r.json()["overrides"] == {}
        # back to the defaults
        r = await c.put(f"/v1/tenants/{tenant}/limits", json={}, headers=ADMIN)
        assert r.json()["overrides"] == {} and r.json()["limits"]["rate_per_second"] == 1000


async def test_only_the_admin_sets_limits(client, tenant, auth):
    url = f"/v1/tenants/{tenant}/limits"
    # The refusal names what was asked, not another admin action.
    message = assert_error(await client.put(url, json={"burst": 5}, headers=auth), 403, "forbidden")["error"]["message"]
    assert message.startswith(f"PUT {url} needs the admin key") and "creating tenants" not in message
    assert_error(await client.put(url, json={"burst": 5}), 401, "unauthorized")
    assert_error(await client.put("/v1/tenants/no-such-tenant/limits", json={"burst": 5}, headers=ADMIN),
                 404, "not_found")
    for bad in ({"burst": 0}, {"rate_per_second": -1}, {"batch_max_facts": 10**6}, {"burst": "many"},
                {"speed": 3}):
        assert_error(await client.put(url, json=bad, headers=ADMIN), 422, "validation_error")
    r = await client.get(url, headers=auth)
    assert r.status_code == 200 and r.json()["overrides"] == {}
async def test_requests_without_a_valid_key_are_limited_per_client_address(gateway_settings, memory, tenant):
    app = make_app(gateway_settings, memory, address_limiter=AddressLimiter(rate=0.5, burst=5))
    async with client_for(app) as client:
        good = await create_tenant(client, tenant)
        bad = {"Authorization": "Bearer not-a-key-at-all"}
        codes = [(await client.get(f"/v1/tenants/{tenant}/facts", params={"subject": "x"}, headers=bad)).status_code
                 for _ in range(8)]
        assert codes == [401] * 5 + [429] * 3
        r = await client.get(f"/v1/tenants/{tenant}/facts", params={"subject": "x"})  # no key at all: same address
        message = assert_error(r, 429, "rate_limited")["error"]["message"]
        # The bucket is the address's, whatever tenant the path names.
        assert "without a valid key from 127.0.0.1" in message and tenant not in message, message
        assert int(r.headers["Retry-After"]) >= 1
        # a valid key is not held back by its address's refused requests
        r = await client.get(f"/v1/tenants/{tenant}/facts", params={"subject": "x"}, headers=good)
        assert r.status_code == 200, r.text


def test_the_address_table_stays_bounded():
    clock = Clock()
    limiter = AddressLimiter(rate=1, burst=2, max_addresses=100, clock=clock)
    for i in range(1_000):
        limiter.hit(f"10.0.{i // 256}.{i % 256}")
        clock.now += 0.01
    assert len(limiter._buckets) <= 100
