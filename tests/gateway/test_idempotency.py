"""Idempotency-Key on the writes: a retry with the same key gets the first answer and writes
nothing; the same key for a different request is refused; without a key nothing changes."""

from __future__ import annotations

import json

import pytest

from relay_graph.runtime.streams import STREAM_TURNS
from tests import reads

from .helpers import assert_error
from .stream_helpers import published


@pytest.fixture
def base(tenant) -> str:
    return f"/v1/tenants/{tenant}"


async def test_a_retried_chat_is_one_turn(client, base, auth, tenant, memory, stream_redis):
    body = {"customer": "Ann Bell", "text": "my internet is down"}
    key = {"Idempotency-Key": "chat-retry-1"}
    first = await client.post(f"{base}/chat", json=body, headers={**auth, **key})
    again = await client.post(f"{base}/chat", json=body, headers={**auth, **key})
    assert first.status_code == again.status_code == 202
    assert again.json() == first.json()
    assert again.headers.get("Idempotent-Replayed") == "true" and "Idempotent-Replayed" not in first.headers
    turns = await published(stream_redis, STREAM_TURNS, tenant)
    assert [n.id for n in turns] == [first.json()["episode_id"]]
    assert await reads.turn_seq(memory.client, tenant, first.json()["episode_id"]) == 1

    # another key is another turn, in the same session
    third = await client.post(f"{base}/chat", json={**body, "session": first.json()["session"]},
                              headers={**auth, "Idempotency-Key": "chat-retry-2"})
    assert third.status_code == 202 and third.json()["episode_id"] != first.json()["episode_id"]
    assert len(await published(stream_redis, STREAM_TURNS, tenant)) == 2


async def test_the_same_key_for_another_request_is_refused(client, base, auth, tenant, stream_redis):
    key = {"Idempotency-Key": "k-1"}
    r = await client.post(f"{base}/chat", json={"customer": "Ann Bell", "text": "one"}, headers={**auth, **key})
    assert r.status_code == 202
    r = await client.post(f"{base}/chat", json={"customer": "Ann Bell", "text": "two"}, headers={**auth, **key})
    assert_error(r, 422, "idempotency_key_reused")
    assert len(await published(stream_redis, STREAM_TURNS, tenant)) == 1
    r = await client.post(f"{base}/chat", json={"customer": "Ann Bell", "text": "x"},
                          headers={**auth, "Idempotency-Key": "has a space"})
    assert r.status_code == 422
    assert len(await published(stream_redis, STREAM_TURNS, tenant)) == 1


async def test_a_retried_fact_write_is_written_once(client, base, auth):
    fact = {"subject": "ann bell", "predicate": "lives_in", "object": "pune", "agent": "intake"}
    key = {"Idempotency-Key": "fact-1"}
    first = await client.post(f"{base}/facts", json=fact, headers={**auth, **key})
    again = await client.post(f"{base}/facts", json=fact, headers={**auth, **key})
    assert first.status_code == again.status_code == 201 and again.json() == first.json()
    assert first.json()["outcome"] == "created"
    # without the key the same fact again is a second write: it corroborates the first
    third = await client.post(f"{base}/facts", json=fact, headers=auth)
    assert third.status_code == 201 and third.json()["outcome"] == "corroborated"


async def test_a_retried_episode_write_is_written_once(client, base, auth, memory, tenant):
    turn = {"session": "s-idem", "speaker": "ann", "text": "hello there", "at": "2026-01-01T10:00:00+00:00"}
    key = {"Idempotency-Key": "episodes-1"}
    first = await client.post(f"{base}/episodes", json={"episodes": [turn]}, headers={**auth, **key})
    again = await client.post(f"{base}/episodes", json={"episodes": [turn]}, headers={**auth, **key})
    assert first.status_code == again.status_code == 201 and again.json() == first.json()
    assert again.headers.get("Idempotent-Replayed") == "true"
    # the first answer came back without a second write: nothing but the key's record was touched
    assert "Idempotent-Replayed" not in first.headers
    other = {**turn, "text": "another turn"}
    r = await client.post(f"{base}/episodes", json={"episodes": [other]}, headers={**auth, **key})
    assert_error(r, 422, "idempotency_key_reused")


async def test_a_key_whose_first_request_is_still_running_is_409_with_retry_after(client, base, auth, memory, tenant):
    fact = {"subject": "ann bell", "predicate": "lives_in", "object": "goa"}
    key = {"Idempotency-Key": "fact-in-flight"}
    first = await client.post(f"{base}/facts", json=fact, headers={**auth, **key})
    assert first.status_code == 201
    # As if the first request were still being handled: its claim, not yet its answer.
    redis = memory.client.redis
    [slot] = [k async for k in redis.scan_iter(match=f"relay-idem:{tenant}:*")]
    record = json.loads(await redis.get(slot))
    await redis.set(slot, json.dumps({"state": "pending", "fp": record["fp"]}), ex=60)
    r = await client.post(f"{base}/facts", json=fact, headers={**auth, **key})
    assert_error(r, 409, "idempotency_key_in_use")
    assert r.headers["retry-after"] == "1"


async def test_a_retried_batch_task_and_settlement_happen_once(client, base, auth):
    batch = {"facts": [{"subject": "asha rao", "predicate": "owns_device", "object": "kindle"}]}
    first = await client.post(f"{base}/facts/batch", json=batch, headers={**auth, "Idempotency-Key": "b-1"})
    again = await client.post(f"{base}/facts/batch", json=batch, headers={**auth, "Idempotency-Key": "b-1"})
    assert first.status_code == again.status_code == 200 and again.headers.get("Idempotent-Replayed") == "true"
    assert again.json() == first.json()
    [fact] = (await client.get(f"{base}/facts", params={"subject": "asha rao", "predicate": "owns_device"},
                               headers=auth)).json()["facts"]
    assert fact["corroborations"] == 1  # the retry was not a second assertion
    task = {"title": "call back"}
    one = await client.post(f"{base}/tasks", json=task, headers={**auth, "Idempotency-Key": "t-1"})
    two = await client.post(f"{base}/tasks", json=task, headers={**auth, "Idempotency-Key": "t-1"})
    assert one.status_code == two.status_code == 201 and one.json()["task_id"] == two.json()["task_id"]
    assert len((await client.get(f"{base}/tasks", headers=auth)).json()["tasks"]) == 1
    ids = []
    for agent, city in (("retail-desk", "pune"), ("field-tech", "mumbai")):
        key = (await client.post(f"{base}/agents", json={"agent": agent}, headers=auth)).json()["api_key"]
        r = await client.post(f"{base}/facts", headers={"Authorization": f"Bearer {key}"},
                              json={"subject": "asha rao", "predicate": "lives_in", "object": city})
        ids.append(r.json())
    path = f"{base}/conflicts/{ids[1]['conflict_id']}/settle"
    body = {"fact_id": ids[1]["fact_id"], "by": "maya"}
    settled = await client.post(path, json=body, headers={**auth, "Idempotency-Key": "s-1"})
    replayed = await client.post(path, json=body, headers={**auth, "Idempotency-Key": "s-1"})
    assert settled.status_code == replayed.status_code == 200 and replayed.json() == settled.json()
