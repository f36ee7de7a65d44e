"""No turn is lost between the graph and the stream: with XADD refused for a while (the gateway's
stream user loses the command through a real ACL change, and gets it back once three requests
have answered 503), every chat turn written is
announced exactly once per notification id, by the request or by the outbox relay, and the
requests that could not publish answered 503 (their retries, with the same Idempotency-Key, get the
stored turn back instead of storing it again)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
import redis.asyncio as aioredis

from relay_graph.runtime.queries import outbox as q
from relay_graph.runtime.streams import STREAM_TURNS
from services.gateway import outbox
from services.gateway.bus import Bus
from tests import reads
from tests.support import eventually

from .stream_helpers import published


@pytest.fixture
async def acl_user(stream_redis):
    name, password = f"gw-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    await stream_redis.execute_command("ACL", "SETUSER", name, "on", f">{password}", "~*", "&*", "+@all")
    yield name, password
    await stream_redis.execute_command("ACL", "DELUSER", name)


async def test_xadd_failing_for_a_while_loses_no_turn(app, client, auth, tenant, memory, stream_redis,
                                                        graph_settings, acl_user):
    name, password = acl_user
    services = app.state.services
    user_redis = aioredis.Redis(host=graph_settings.falkordb_host, port=graph_settings.falkordb_port,
                                username=name, password=password, decode_responses=False)
    bus = Bus(services.settings, redis=user_redis, graph=services.backend.graph_client)
    services.bus = bus
    stop = asyncio.Event()
    relay = asyncio.create_task(outbox.relay_loop(bus, stop, every_s=0.2, older_than_s=0.5))
    base = f"/v1/tenants/{tenant}"
    statuses: list[int] = []
    try:
        r = await client.post(f"{base}/chat", json={"customer": "Ann Bell", "text": "hello"}, headers=auth)
        assert r.status_code == 202
        session = r.json()["session"]
        statuses.append(r.status_code)

        refused: list[int] = []
        await stream_redis.execute_command("ACL", "SETUSER", name, "-xadd")
        for i in range(30):
            if len(refused) == 3:  # the window was hit: XADD comes back for the turns after it
                await stream_redis.execute_command("ACL", "SETUSER", name, "+xadd")
            r = await client.post(f"{base}/chat", json={"customer": "Ann Bell", "text": f"turn {i}",
                                                        "session": session},
                                  headers={**auth, "Idempotency-Key": f"turn-{i}"})
            statuses.append(r.status_code)
            if r.status_code == 503:
                assert r.json()["error"]["code"] == "unavailable" and "stored" in r.json()["error"]["message"]
                refused.append(i)
        assert set(statuses) == {202, 503} and statuses.count(503) >= 3  # the window was hit, and passed
        # the client retries what answered 503: the turn it had stored comes back, nothing is stored twice
        for i in refused:
            r = await client.post(f"{base}/chat", json={"customer": "Ann Bell", "text": f"turn {i}",
                                                        "session": session},
                                  headers={**auth, "Idempotency-Key": f"turn-{i}"})
            assert r.status_code == 202 and r.headers["Idempotent-Replayed"] == "true"

        async def all_announced():
            seqs = {n.seq for n in await published(stream_redis, STREAM_TURNS, tenant)}
            return seqs == set(range(1, 32))

        await eventually(all_announced, what="every turn announced, by its request or by the relay")
    finally:
        stop.set()
        await asyncio.wait_for(relay, 10)
        await bus.close()
        await user_redis.aclose()

    turns = await published(stream_redis, STREAM_TURNS, tenant)
    by_seq: dict[int, set] = {}
    for n in turns:
        by_seq.setdefault(n.seq, set()).add(n.notification_id)
    assert sorted(by_seq) == list(range(1, 32))
    assert all(len(ids) == 1 for ids in by_seq.values())  # a copy, if any, is the same notification
    assert await memory.client.run(tenant, q.PENDING, {"before_ms": 2**62, "limit": 10}) == []
    assert [await reads.turn_seq(memory.client, tenant, n.id) for n in turns[:1]] == [turns[0].seq]


async def test_the_gateway_publishes_through_its_faststream_broker(app, client, auth, tenant, stream_redis):
    """FastStream's FastAPI integration: the app includes the Bus's RedisRouter, whose broker XADDs
    the turn's announcement as FastStream's envelope (the agents read both shapes alike)."""
    from faststream.redis.fastapi import RedisRouter

    from relay_graph.runtime.streams.wire import from_fields, text_fields

    assert isinstance(app.state.services.bus.router, RedisRouter)
    r = await client.post(f"/v1/tenants/{tenant}/chat", json={"customer": "Eve Fox", "text": "hello"}, headers=auth)
    assert r.status_code == 202
    mine = []
    for _, fields in await stream_redis.xrange(STREAM_TURNS):
        try:
            n = from_fields(text_fields(fields))
        except Exception:  # noqa: BLE001 - another test's poison entry
            continue
        if n.tenant == tenant:
            mine.append((set(fields), n))
    assert [(keys, n.id) for keys, n in mine] == [({b"__data__"}, r.json()["episode_id"])]
