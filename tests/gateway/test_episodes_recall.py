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


async def test_posted_turns_file_the_facts_they_state_dated_with_their_source(client, base, auth):
    # said on Monday 8 May 2023: "last Saturday" is 6 May; the fact is the writing key's, from that turn
    turns = [{"session": "d1", "speaker": "Melanie", "id": "d1:1", "at": "2023-05-08T13:56:00+00:00",
              "text": "Last Saturday we adopted a puppy named Luna!\nShe is tiny."},
             {"session": "d1", "speaker": "Caroline", "id": "d1:2", "at": "2023-05-08T13:57:00+00:00",
              "text": "Aww, give Luna a hug from me."}]
    r = await client.post(f"{base}/episodes", json={"episodes": turns}, headers=auth)
    assert r.status_code == 201, r.text
    r = await client.get(f"{base}/facts", params={"subject": "Melanie", "predicate": "has_pet"}, headers=auth)
    assert r.status_code == 200, r.text
    (fact,) = r.json()["facts"]
    assert fact["object"] == "Luna" and fact["valid_from"].startswith("2023-05-06")
    r = await client.get(f"{base}/recall", params={"q": "Who is Luna?"}, headers=auth)
    body = r.json()
    assert body["shape"] == "path"
    assert {i["episode_id"] for i in body["items"][:2]} == {"d1:1", "d1:2"}  # both MENTION Luna
    assert fact["fact_id"] in [f["fact_id"] for f in body["facts"]]
