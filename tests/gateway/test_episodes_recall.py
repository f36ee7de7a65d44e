from __future__ import annotations

import re

import pytest

OFFSET = re.compile(r"[+-]\d{2}:\d{2}$")

TURNS = [
    {"session": "s1", "speaker": "alice", "text": "my router keeps blinking red since the storm",
     "at": "2026-09-05T10:00:00+00:00", "id": "ep-router"},
    {"session": "s1", "speaker": "desk", "text": "let us restart the optical terminal first",
     "at": "2026-09-05T10:01:00+00:00"},
    {"session": "s2", "speaker": "bob", "text": "we are planning a trip to goa in december",
     "at": "2026-09-06T09:00:00+05:30"},
]


@pytest.fixture
def base(tenant):
    return f"/v1/tenants/{tenant}"


async def test_write_episodes_then_recall(client, base, auth):
    r = await client.post(f"{base}/episodes", json={"episodes": TURNS}, headers=auth)
    assert r.status_code == 201, r.text
    ids = r.json()["episode_ids"]
    assert len(ids) == 3 and ids[0] == "ep-router" and len(set(ids)) == 3
    # A replayed batch writes nothing new and answers the same ids.
    again = await client.post(f"{base}/episodes", json={"episodes": TURNS}, headers=auth)
    assert again.status_code == 201 and again.json()["episode_ids"] == ids

    r = await client.get(f"{base}/recall", params={"q": "why is the router light red?"}, headers=auth)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["shape"] in {"path", "memory", "not_in_graph", "unknown_name"}
    assert isinstance(body["facts"], list)
    items = body["items"]
    assert items[0]["episode_id"] == "ep-router"
    assert items[0]["text"] == TURNS[0]["text"]
    assert items[0]["session"] == "s1" and items[0]["speaker"] == "alice"
    assert set(items[0]) >= {"episode_id", "session", "speaker", "text", "at", "score", "path"}
    assert OFFSET.search(items[0]["at"])
    assert len({i["episode_id"] for i in items}) == len(items)


async def test_recall_filters_and_k(client, base, auth):
    r = await client.post(f"{base}/episodes", json={"episodes": TURNS}, headers=auth)
    assert r.status_code == 201
    r = await client.get(f"{base}/recall", params={"q": "router", "session": "s2"}, headers=auth)
    assert r.status_code == 200
    assert {i["session"] for i in r.json()["items"]} <= {"s2"}
    r = await client.get(f"{base}/recall", params={"q": "router", "k": 1}, headers=auth)
    assert r.status_code == 200
    assert len(r.json()["items"]) <= 1


async def test_episodes_of_one_tenant_are_not_recalled_by_another(client, tenant, auth):
    from .helpers import create_tenant

    other = tenant + "-x"
    other_auth = await create_tenant(client, other)
    r = await client.post(f"/v1/tenants/{tenant}/episodes", json={"episodes": TURNS}, headers=auth)
    assert r.status_code == 201
    r = await client.get(f"/v1/tenants/{other}/recall", params={"q": "router blinking red"}, headers=other_auth)
    assert r.status_code == 200
    assert r.json()["items"] == []
