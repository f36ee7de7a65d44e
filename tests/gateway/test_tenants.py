from __future__ import annotations

import hashlib

import pytest

from relay_graph.desk.customers import regional_desks as desks
from services.gateway.auth import KEY_INDEX, TENANTS_KEY

from .helpers import ADMIN, assert_error, bearer, client_for, create_tenant, make_app


async def test_create_tenant_returns_a_key_that_works(client, tenant):
    r = await client.post("/v1/tenants", json={"tenant": tenant}, headers=ADMIN)
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["tenant"] == tenant
    assert len(body["api_key"]) >= 40
    r = await client.get(f"/v1/tenants/{tenant}/facts", params={"subject": "nobody"}, headers=bearer(body["api_key"]))
    assert r.status_code == 200, r.text
    assert r.json() == {"facts": [], "matched": None, "ambiguous": None}


async def test_a_new_tenant_has_its_regions_world_unless_it_asks_for_none(client, tenant):
    body = (await client.post("/v1/tenants", json={"tenant": tenant}, headers=ADMIN)).json()
    made = body["world"]
    assert made["region"] == "india" and made["catalogue_seeded"] is True and made["nodes_created"] > 0
    auth = bearer(body["api_key"])
    # the same region again through POST /world writes nothing new; another seed is refused
    again = (await client.post(f"/v1/tenants/{tenant}/world", json={"region": "india"}, headers=auth)).json()
    assert again["nodes_created"] == 0 and again["catalogue_seeded"] is False and again["nodes"] == made["nodes"]
    assert_error(await client.post(f"/v1/tenants/{tenant}/world", json={"region": "india", "seed": 5},
                                   headers=auth), 409, "world_seeded")

    eu = tenant + "-eu"
    body = (await client.post("/v1/tenants", json={"tenant": eu, "region": "europe"}, headers=ADMIN)).json()
    assert body["world"]["region"] == "europe" and body["world"]["nodes_created"] > 0

    empty = tenant + "-e"
    body = (await client.post("/v1/tenants", json={"tenant": empty, "world": False}, headers=ADMIN)).json()
    assert body["world"] is None
    first = (await client.post(f"/v1/tenants/{empty}/world", json={"region": "india"},
                               headers=bearer(body["api_key"]))).json()
    assert first["catalogue_seeded"] is True and first["nodes_created"] > 0  # nothing was there


async def test_an_operators_desks_are_one_per_region(client, tenant, graph_client):
    op = "op-" + tenant
    r = await client.post("/v1/tenants", json={"tenant": tenant, "world": False, "operator": op}, headers=ADMIN)
    assert r.status_code == 201, r.text
    eu = tenant + "-eu"
    r = await client.post("/v1/tenants", json={"tenant": eu, "world": False, "region": "europe", "operator": op},
                          headers=ADMIN)
    assert r.status_code == 201, r.text
    assert await desks.desk_for(graph_client, tenant, "europe") == eu
    assert await desks.desk_for(graph_client, eu, "india") == tenant
    # a second India desk for the operator is refused before anything is made
    other = tenant + "-in2"
    assert_error(await client.post("/v1/tenants", json={"tenant": other, "world": False, "operator": op},
                                   headers=ADMIN), 409, "desk_taken")
    assert not await graph_client.redis.hexists(TENANTS_KEY, other)
    assert_error(await client.post("/v1/tenants", json={"tenant": other, "operator": "Bad Op"}, headers=ADMIN),
                 422, "validation_error")


async def test_only_a_hash_of_the_key_is_stored(client, tenant, graph_client):
    r = await client.post("/v1/tenants", json={"tenant": tenant, "world": False}, headers=ADMIN)
    key = r.json()["api_key"]
    digest = hashlib.sha256(key.encode()).hexdigest()
    assert await graph_client.redis.hget(TENANTS_KEY, tenant) == digest
    assert await graph_client.redis.hget(KEY_INDEX, digest) == tenant
    assert key not in await graph_client.redis.hvals(TENANTS_KEY)
    assert key not in await graph_client.redis.hkeys(KEY_INDEX)


async def test_existing_tenant_is_409_and_its_key_still_works(client, tenant):
    headers = await create_tenant(client, tenant)
    assert_error(await client.post("/v1/tenants", json={"tenant": tenant}, headers=ADMIN), 409, "already_exists")
    r = await client.get(f"/v1/tenants/{tenant}/facts", params={"subject": "x"}, headers=headers)
    assert r.status_code == 200


@pytest.mark.parametrize("name", ["A-corp", "-acme", "a", "acme_corp", "acme corp", "x" * 64, "relay:acme", ""])
async def test_bad_tenant_name_is_422(client, name, graph_client):
    r = await client.post("/v1/tenants", json={"tenant": name}, headers=ADMIN)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] in {"invalid_tenant", "validation_error"}
    assert not await graph_client.redis.hexists(TENANTS_KEY, name)


async def test_tenant_body_is_checked(client):
    assert_error(await client.post("/v1/tenants", json={}, headers=ADMIN), 422, "validation_error")
    assert_error(await client.post("/v1/tenants", json={"tenant": "ok-name", "plan": "gold"}, headers=ADMIN),
                 422, "validation_error")
    for bad in ({"world": "no"}, {"world": 0}, {"region": "atlantis"}):
        assert_error(await client.post("/v1/tenants", json={"tenant": "ok-name", **bad}, headers=ADMIN),
                     422, "validation_error")


@pytest.mark.parametrize("headers", [{}, bearer("not-the-admin-key"), {"Authorization": ADMIN["Authorization"][7:]},
                                     {"Authorization": "Basic " + ADMIN["Authorization"][7:]}])
async def test_creating_a_tenant_needs_the_admin_key(client, tenant, headers, graph_client):
    r = await client.post("/v1/tenants", json={"tenant": tenant}, headers=headers)
    assert_error(r, 401, "unauthorized")
    assert r.headers["www-authenticate"] == "Bearer"
    assert not await graph_client.redis.hexists(TENANTS_KEY, tenant)


async def test_a_tenant_key_cannot_create_tenants(client, auth, tenant, graph_client):
    other = tenant + "-b"
    assert_error(await client.post("/v1/tenants", json={"tenant": other}, headers=auth), 403, "forbidden")
    assert not await graph_client.redis.hexists(TENANTS_KEY, other)


async def test_no_admin_key_configured_means_no_tenant_creation(gateway_settings, memory, tenant):
    app = make_app(gateway_settings.model_copy(update={"admin_key": None}), memory)
    async with client_for(app) as c:
        assert_error(await c.post("/v1/tenants", json={"tenant": tenant}, headers=bearer("")), 401, "unauthorized")
        assert_error(await c.post("/v1/tenants", json={"tenant": tenant}, headers=bearer("anything")),
                     401, "unauthorized")
