"""Bad input answers 4xx `{"error": {"code", "message"}}` and writes nothing."""

from __future__ import annotations

import pytest

from .helpers import assert_error

FACT = {"subject": "alice rao", "predicate": "lives_in", "object": "pune", "agent": "night-shift"}


async def facts_of(client, tenant, auth, subject="alice rao"):
    r = await client.get(f"/v1/tenants/{tenant}/facts", params={"subject": subject}, headers=auth)
    assert r.status_code == 200, r.text
    return r.json()["facts"]


async def test_unknown_predicate_is_422_and_writes_nothing(client, tenant, auth):
    r = await client.post(f"/v1/tenants/{tenant}/facts", json={**FACT, "predicate": "likes_cheese"}, headers=auth)
    body = assert_error(r, 422, "unknown_predicate")
    assert "lives_in" in body["error"]["message"]  # says what would work
    assert await facts_of(client, tenant, auth) == []
    for path, params in (("facts", {"subject": "alice rao", "predicate": "likes_cheese"}),
                         ("claims", {"subject": "alice rao", "predicate": "likes_cheese"})):
        assert_error(await client.get(f"/v1/tenants/{tenant}/{path}", params=params, headers=auth),
                     422, "unknown_predicate")
    r = await client.post(f"/v1/tenants/{tenant}/facts/retire",
                          json={"subject": "alice rao", "predicate": "likes_cheese"}, headers=auth)
    assert_error(r, 422, "unknown_predicate")


@pytest.mark.parametrize("change", [
    {"colour": "blue"},  # an unknown field
    {"subject": ""},
    {"agent": "has spaces"},
    {"valid_from": "2026-09-05T10:00:00"},  # a time without an offset
    {"valid_from": "yesterday"},
    {"object": None},
    {"recorded_at": "2026-09-05T10:00:00+00:00"},  # the belief clock is the server's
])
async def test_bad_fact_bodies_are_422_and_write_nothing(client, tenant, auth, change):
    r = await client.post(f"/v1/tenants/{tenant}/facts", json={**FACT, **change}, headers=auth)
    body = assert_error(r, 422, "validation_error")
    assert body["details"], body
    assert await facts_of(client, tenant, auth) == []


async def test_validation_message_says_where_and_what(client, tenant, auth):
    r = await client.post(f"/v1/tenants/{tenant}/facts", json={**FACT, "valid_from": "2026-09-05T10:00:00"},
                          headers=auth)
    message = assert_error(r, 422, "validation_error")["error"]["message"]
    assert "body.valid_from" in message
    assert "timezone" in message


async def test_missing_field_is_named(client, tenant, auth):
    body = {k: v for k, v in FACT.items() if k != "object"}
    message = assert_error(await client.post(f"/v1/tenants/{tenant}/facts", json=body, headers=auth),
                           422, "validation_error")["error"]["message"]
    assert "body.object" in message


async def test_invalid_json_is_400(client, tenant, auth):
    r = await client.post(f"/v1/tenants/{tenant}/facts", content=b'{"subject": ',
                          headers={**auth, "content-type": "application/json"})
    assert_error(r, 400, "invalid_json")


async def test_json_nested_past_the_readers_depth_is_400_invalid_json(client, tenant, auth):
    deep = b"[" * 50_000 + b"]" * 50_000
    for path in ("facts", "facts/batch", "chat"):
        r = await client.post(f"/v1/tenants/{tenant}/{path}", content=deep,
                              headers={**auth, "content-type": "application/json"})
        assert "nested too deeply" in assert_error(r, 400, "invalid_json")["error"]["message"]


@pytest.mark.parametrize("params", [
    {"subject": "alice rao", "as_of": "2026-09-05T10:00:00"},  # no offset
    {"subject": "alice rao", "as_of": "last tuesday"},
    {"subject": "alice rao", "clock": "wall"},
    {"predicate": "lives_in"},  # subject is required
])
async def test_bad_fact_queries_are_422(client, tenant, auth, params):
    assert_error(await client.get(f"/v1/tenants/{tenant}/facts", params=params, headers=auth), 422, "validation_error")


async def test_as_of_with_an_unencoded_plus_is_read_as_the_offset(client, tenant, auth):
    # "…+05:30" typed into a URL arrives as "… 05:30"; it means the offset, not a bad time.
    r = await client.get(f"/v1/tenants/{tenant}/facts?subject=alice+rao&as_of=2026-09-05T10:00:00+05:30",
                         headers=auth)
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("params", [{"q": "x", "k": 0}, {"q": "x", "k": 101}, {"q": ""}, {"k": 5}])
async def test_bad_recall_queries_are_422(client, tenant, auth, params):
    assert_error(await client.get(f"/v1/tenants/{tenant}/recall", params=params, headers=auth),
                 422, "validation_error")


async def test_episode_time_without_offset_is_422_and_writes_nothing(client, tenant, auth):
    good = {"session": "s1", "speaker": "alice", "text": "my router keeps blinking red", "at": "2026-09-05T10:00:00Z"}
    bad = {**good, "text": "second turn", "at": "2026-09-05T10:01:00"}
    r = await client.post(f"/v1/tenants/{tenant}/episodes", json={"episodes": [good, bad]}, headers=auth)
    body = assert_error(r, 422, "validation_error")
    assert "body.episodes.1.at" in body["error"]["message"]
    r = await client.get(f"/v1/tenants/{tenant}/recall", params={"q": "router blinking red"}, headers=auth)
    assert r.status_code == 200
    assert r.json()["items"] == []


async def test_episodes_need_at_least_one_and_refuse_extra_fields(client, tenant, auth):
    url = f"/v1/tenants/{tenant}/episodes"
    assert_error(await client.post(url, json={"episodes": []}, headers=auth), 422, "validation_error")
    turn = {"session": "s1", "speaker": "a", "text": "hi", "at": "2026-09-05T10:00:00+00:00", "mood": "sunny"}
    assert_error(await client.post(url, json={"episodes": [turn]}, headers=auth), 422, "validation_error")


async def test_settle_body_is_checked(client, tenant, auth):
    url = f"/v1/tenants/{tenant}/conflicts/c-1/settle"
    assert_error(await client.post(url, json={"fact_id": "f"}, headers=auth), 422, "validation_error")
    assert_error(await client.post(url, json={"fact_id": "f", "by": "maya", "x": 1}, headers=auth),
                 422, "validation_error")


async def test_unknown_route_and_method_are_json(client, tenant, auth):
    assert_error(await client.get("/v2/anything"), 404, "not_found")
    assert_error(await client.get(f"/v1/tenants/{tenant}/nothing-here", headers=auth), 404, "not_found")
    r = await client.delete(f"/v1/tenants/{tenant}/claims", headers=auth)
    assert_error(r, 405, "method_not_allowed")
    assert r.headers["allow"] == "GET"
    # A path two routes serve allows the methods of both.
    for path, allowed in (("agents", "GET, POST"), ("facts", "GET, POST")):
        r = await client.patch(f"/v1/tenants/{tenant}/{path}", headers=auth, json={})
        assert allowed in assert_error(r, 405, "method_not_allowed")["error"]["message"]
        assert r.headers["allow"] == allowed


async def test_a_query_string_or_path_that_is_not_utf8_is_400(client, tenant, auth):
    # Decoded leniently, %FF would reach the route as U+FFFD: a name nobody wrote.
    url = f"/v1/tenants/{tenant}/facts"
    for query in ("subject=%FF", "subject=caf%E9", "subject=ok&predicate=%C3", "sub%FFject=x"):
        body = assert_error(await client.get(f"{url}?{query}", headers=auth), 400, "invalid_encoding")
        assert "query string is not UTF-8" in body["error"]["message"]
    body = assert_error(await client.get(f"/v1/tenants/{tenant}/tickets/T-%FF", headers=auth), 400,
                        "invalid_encoding")
    assert "path is not UTF-8" in body["error"]["message"]
    # UTF-8, escaped or not, and `+` for a space, are what they say.
    r = await client.post(url, json={"subject": "josé ana", "predicate": "lives_in", "object": "pune"}, headers=auth)
    assert r.status_code == 201, r.text
    for query in ("subject=jos%C3%A9+ana", "subject=jos%C3%A9%20ana"):
        r = await client.get(f"{url}?{query}", headers=auth)
        assert r.status_code == 200 and [f["object"] for f in r.json()["facts"]] == ["pune"], (query, r.text)
