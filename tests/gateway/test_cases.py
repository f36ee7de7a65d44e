"""POST /v1/tenants/{t}/cases/move: moving a case needs both tenants' keys (the source's as bearer,
the target's in the body), answers 201 with what was copied, 200 on a repeat, and typed errors
that change nothing."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

import pytest

from relay_graph.memory import facts
from relay_graph.desk.catalogue import ensure_catalogue
from relay_graph.memory.models import FactInput
from relay_graph.runtime.queries import Query

from .helpers import ADMIN, assert_error, create_tenant

NODES = Query("t_cases_nodes", "MATCH (n) RETURN count(n) AS n", read_only=True)


def fresh() -> str:
    return "t-" + uuid.uuid4().hex[:12]


async def nodes(client, tenant) -> int:
    return (await client.run(tenant, NODES))[0]["n"]


@pytest.fixture
async def desks(client, graph_client):
    india, europe, other = fresh(), fresh(), fresh()
    keys = {t: await create_tenant(client, t) for t in (india, europe, other)}
    await ensure_catalogue(graph_client, india, "india")
    await ensure_catalogue(graph_client, europe, "europe")
    for obj, at in (("Pune", datetime(2024, 1, 1, tzinfo=timezone.utc)),
                    ("Berlin", datetime(2025, 3, 1, tzinfo=timezone.utc))):
        await facts.write_fact(graph_client, india, FactInput(subject="Ravi Nair", predicate="lives_in", object=obj,
                                                              agent="intake", valid_from=at, recorded_at=at))
    return india, europe, other, keys


def key_of(headers: dict[str, str]) -> str:
    return headers["Authorization"].removeprefix("Bearer ")


async def test_move_needs_both_keys(client, graph_client, desks):
    india, europe, other, keys = desks
    path = f"/v1/tenants/{india}/cases/move"
    before = await nodes(graph_client, europe)
    body = {"customer": "ravi nair", "to_tenant": europe}

    assert_error(await client.post(path, json={**body, "to_tenant_key": "not-a-key"}, headers=keys[india]),
                 403, "target_forbidden")
    assert_error(await client.post(path, json={**body, "to_tenant_key": key_of(keys[other])}, headers=keys[india]),
                 403, "target_forbidden")
    assert_error(await client.post(path, json={**body, "to_tenant_key": key_of(keys[india])}, headers=keys[india]),
                 403, "target_forbidden")
    # the target's key as bearer does not open the source's path, nor does the admin key
    assert_error(await client.post(path, json={**body, "to_tenant_key": key_of(keys[europe])}, headers=keys[europe]),
                 403, "forbidden")
    assert_error(await client.post(path, json={**body, "to_tenant_key": key_of(keys[europe])}, headers=ADMIN),
                 403, "forbidden")
    assert_error(await client.post(path, json={**body, "to_tenant_key": key_of(keys[europe])}), 401, "unauthorized")
    assert_error(await client.post(path, json=body, headers=keys[india]), 422, "validation_error")
    assert await nodes(graph_client, europe) == before


async def test_move_answers_201_then_200(client, graph_client, desks):
    india, europe, other, keys = desks
    path = f"/v1/tenants/{india}/cases/move"
    body = {"customer": "ravi nair", "to_tenant": europe, "to_tenant_key": key_of(keys[europe]), "by": "ops"}

    r = await client.post(path, json=body, headers=keys[india])
    assert r.status_code == 201, r.text
    moved = r.json()
    assert set(moved) == {"customer", "from_region", "to_region", "move_id", "at", "facts", "episodes", "tickets",
                          "tickets_marked"}
    assert (moved["customer"], moved["from_region"], moved["to_region"], moved["facts"]) == \
        ("Ravi Nair", "india", "europe", 2)
    assert moved["at"].endswith("+00:00")

    # the target desk now answers from the moved history, through its own key
    src = (await client.get(f"/v1/tenants/{india}/facts", params={"subject": "ravi nair", "predicate": "lives_in",
                                                                   "as_of": "2024-06-01T00:00:00+00:00"},
                            headers=keys[india])).json()
    dst = (await client.get(f"/v1/tenants/{europe}/facts", params={"subject": "ravi nair", "predicate": "lives_in",
                                                                   "as_of": "2024-06-01T00:00:00+00:00"},
                            headers=keys[europe])).json()
    assert dst == src and [f["object"] for f in dst["facts"]] == ["Pune"]

    again = await client.post(path, json=body, headers=keys[india])
    assert again.status_code == 200, again.text
    assert again.json() | {"facts": 2} == moved and again.json()["facts"] == 0


async def test_move_errors_are_typed(client, graph_client, desks):
    india, europe, other, keys = desks
    path = f"/v1/tenants/{india}/cases/move"
    before = await nodes(graph_client, europe)
    body = {"to_tenant": europe, "to_tenant_key": key_of(keys[europe])}
    assert_error(await client.post(path, json={**body, "customer": "nobody we know"}, headers=keys[india]),
                 404, "unknown_customer")
    assert_error(await client.post(path, json={**body, "to_tenant": "Bad Name!", "customer": "ravi nair"},
                                   headers=keys[india]), 422, "validation_error")
    # a tenant that is not seeded for a region is not a desk to move to
    assert_error(await client.post(path, json={"customer": "ravi nair", "to_tenant": other,
                                               "to_tenant_key": key_of(keys[other])}, headers=keys[india]),
                 422, "not_a_regional_desk")
    assert await nodes(graph_client, europe) == before
