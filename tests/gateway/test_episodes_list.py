"""GET /episodes: a session's turns read back in order of arrival, or every session's under a
prefix, a page at a time, with both clocks and the writer."""

from __future__ import annotations

import pytest

from .helpers import create_agent


@pytest.fixture
def base(tenant):
    return f"/v1/tenants/{tenant}"


def turn(session: str, text: str, **kw) -> dict:
    return {"session": session, "speaker": "mel", "text": text, **kw}


async def write(client, base, auth, *turns) -> list[str]:
    r = await client.post(f"{base}/episodes", json={"episodes": list(turns)}, headers=auth)
    assert r.status_code == 201, r.text
    return r.json()["episode_ids"]


async def test_a_sessions_turns_come_back_in_order_of_arrival_exactly_as_written(client, base, auth, tenant):
    planner = await create_agent(client, tenant, auth, "planner")
    # said earlier in the world than the first turn, but written after it: arrival decides the order
    first = await write(client, base, auth, turn("lg:users.a.", "one\n\ttwo 👩‍💻", at="2026-03-01T10:00:00+00:00"))
    second = await write(client, base, planner, turn("lg:users.a.", "{\"key\": \"k\"}", at="2026-01-01T10:00:00+00:00"),
                         turn("lg:users.a.", "third"))
    await write(client, base, auth, turn("lg:users.b.", "elsewhere"))
    r = await client.get(f"{base}/episodes", params={"session": "lg:users.a."}, headers=auth)
    assert r.status_code == 200, r.text
    body = r.json()
    assert [e["episode_id"] for e in body["episodes"]] == first + second
    assert [e["text"] for e in body["episodes"]] == ["one\n\ttwo 👩‍💻", "{\"key\": \"k\"}", "third"]
    assert [e["agent"] for e in body["episodes"]] == ["api", "planner", "planner"]
    assert body["episodes"][1]["at"] == "2026-01-01T10:00:00+00:00"
    assert all(e["recorded_at"].endswith("+00:00") and e["session"] == "lg:users.a." for e in body["episodes"])
    assert body["next"] is None


async def test_a_prefix_reads_every_session_under_it_and_no_other(client, base, auth):
    await write(client, base, auth, turn("lg:users.b.", "b1"), turn("lg:users.a.", "a1"), turn("lg:users.a.", "a2"),
                turn("lg:users2.", "not under users."), turn("lg:teams.x.", "a team"))
    r = await client.get(f"{base}/episodes", params={"session_prefix": "lg:users."}, headers=auth)
    assert r.status_code == 200, r.text
    assert [(e["session"], e["text"]) for e in r.json()["episodes"]] == [
        ("lg:users.a.", "a1"), ("lg:users.a.", "a2"), ("lg:users.b.", "b1")]


async def test_pages_follow_each_other_without_repeating_or_skipping(client, base, auth):
    texts = [f"turn {i}" for i in range(5)]
    await write(client, base, auth, *[turn(f"s{i % 2}", t) for i, t in enumerate(texts)])
    seen, after = [], None
    for _ in range(10):
        params = {"session_prefix": "s", "limit": 2} | ({"after": after} if after else {})
        body = (await client.get(f"{base}/episodes", params=params, headers=auth)).json()
        assert len(body["episodes"]) <= 2
        seen += [e["text"] for e in body["episodes"]]
        if body["next"] is None:
            break
        after = body["next"]
        await write(client, base, auth, turn("s1", f"later {len(seen)}"))  # a write between pages
    assert seen[:3] == ["turn 0", "turn 2", "turn 4"]  # session s0, then s1 in arrival order
    assert seen[3:5] == ["turn 1", "turn 3"]
    assert len(seen) == len(set(seen))


async def test_an_unknown_session_is_an_empty_page(client, base, auth):
    r = await client.get(f"{base}/episodes", params={"session": "nobody"}, headers=auth)
    assert r.status_code == 200 and r.json() == {"episodes": [], "next": None}


async def test_session_and_prefix_together_narrow_and_neither_reads_every_session(client, base, auth):
    await write(client, base, auth, turn("x.1", "one"), turn("y.1", "two"))
    listed = lambda params: client.get(f"{base}/episodes", params=params, headers=auth)  # noqa: E731
    assert [e["text"] for e in (await listed({"session": "x.1", "session_prefix": "x."})).json()["episodes"]] == ["one"]
    assert (await listed({"session": "x.1", "session_prefix": "y."})).json()["episodes"] == []
    assert [e["text"] for e in (await listed({})).json()["episodes"]] == ["one", "two"]


@pytest.mark.parametrize("params,code", [
    ({"session": "a", "after": "bm90IGEgY3Vyc29y"}, "invalid_cursor"),
    ({"session": "a", "after": "a b"}, "validation_error"),
    ({"session": " a"}, "validation_error"),
    ({"session": "a", "limit": 0}, "validation_error"),
])
async def test_a_bad_listing_is_refused_with_what_is_wrong(client, base, auth, params, code):
    r = await client.get(f"{base}/episodes", params=params, headers=auth)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == code


async def test_another_tenants_key_reads_nothing(client, base, auth, tenant):
    from .helpers import create_tenant

    other = await create_tenant(client, tenant + "-x")
    await write(client, base, auth, turn("secret", "only ours"))
    r = await client.get(f"{base}/episodes", params={"session": "secret"}, headers=other)
    assert r.status_code == 403
