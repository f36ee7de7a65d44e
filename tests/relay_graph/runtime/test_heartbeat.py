"""Heartbeats against a real FalkorDB (the server that carries the streams)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid

import pytest
import redis.asyncio as aioredis

from relay_graph.runtime.embedded import free_port
from relay_graph.runtime.errors import InvalidInput
from relay_graph.runtime.heartbeat import (
    PREFIX,
    alive,
    beat,
    heartbeat_key,
    heartbeat_loop,
    this_host_prefix,
)
from tests.support import eventually


@pytest.fixture
async def r(falkordb_server):
    client = aioredis.Redis(host=falkordb_server.host, port=falkordb_server.port)
    yield client
    await client.aclose()


@pytest.fixture
def service() -> str:
    # A fresh service name per test, so counts never see another test's consumers.
    return "svc-" + uuid.uuid4().hex[:10]


async def test_beat_counts_consumers_of_one_service_only(r, service):
    other = service + "-other"
    await beat(r, service, "host-a-1")
    await beat(r, service, "host-b-1")
    await beat(r, other, "host-a-1")
    assert await alive(r, service) == 2
    assert await alive(r, other) == 1
    assert await alive(r, service, consumer_prefix="host-a") == 1


async def test_beat_sets_a_ttl(r, service):
    await beat(r, service, "c1", ttl_s=7)
    ttl = await r.ttl(heartbeat_key(service, "c1"))
    assert 0 < ttl <= 7
    assert heartbeat_key(service, "c1") == f"{PREFIX}{service}:c1"


async def test_an_expired_heartbeat_is_not_alive(r, service):
    await beat(r, service, "c1")
    await r.delete(heartbeat_key(service, "c1"))  # what the TTL does to a consumer that stops beating
    assert await alive(r, service) == 0


async def test_loop_beats_until_stopped_then_removes_its_key(r, service):
    stop = asyncio.Event()
    task = asyncio.create_task(heartbeat_loop(r, service, "c1", stop, every_s=0.05, ttl_s=5))
    await eventually(lambda: alive(r, service), what="the loop's first beat")
    assert await alive(r, service) == 1
    stop.set()
    await asyncio.wait_for(task, 5)
    assert await alive(r, service) == 0


@pytest.mark.parametrize(
    "service_name, consumer",
    [("res*", "c1"), ("res:x", "c1"), ("Resolver", "c1"), ("", "c1"), ("resolver", "c*"), ("resolver", "c?"),
     ("resolver", "c[1]"), ("resolver", ""), ("resolver", "a b")],
)
async def test_names_that_could_escape_the_key_space_are_refused(r, service_name, consumer):
    before = sorted(await r.keys(f"{PREFIX}*"))
    with pytest.raises(InvalidInput):
        await beat(r, service_name, consumer)
    assert sorted(await r.keys(f"{PREFIX}*")) == before


async def test_alive_refuses_glob_characters(r):
    with pytest.raises(InvalidInput):
        await alive(r, "res*")
    with pytest.raises(InvalidInput):
        await alive(r, "resolver", consumer_prefix="*")


async def test_loop_refuses_a_period_not_shorter_than_the_ttl(r, service):
    with pytest.raises(InvalidInput):
        await heartbeat_loop(r, service, "c1", asyncio.Event(), every_s=15, ttl_s=15)


def _check(service: str, port: int, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "RELAY_FALKORDB_HOST": "127.0.0.1", "RELAY_FALKORDB_PORT": str(port)}
    return subprocess.run(
        [sys.executable, "-m", "relay_graph.runtime.heartbeat", service, *extra],
        env=env, capture_output=True, text=True, timeout=60,
    )


async def test_cli_check_exit_codes(r, service, falkordb_server):
    none = _check(service, falkordb_server.port)
    assert none.returncode == 1, none.stderr
    await beat(r, service, "host-a-1")
    ok = _check(service, falkordb_server.port)
    assert ok.returncode == 0, ok.stderr
    assert "1 alive" in ok.stdout
    assert _check(service, falkordb_server.port, "--consumer-prefix", "host-b").returncode == 1
    assert _check("bad*name", falkordb_server.port).returncode == 2


def test_cli_check_fails_when_the_server_is_unreachable():
    res = _check("resolver", free_port())
    assert res.returncode == 1
    assert "cannot check resolver" in res.stderr


async def test_this_host_counts_the_consumers_the_streams_runtime_names_here(r, falkordb_server):
    from relay_graph.runtime.streams import consumer_name

    service = "svc" + uuid.uuid4().hex[:8]
    here = consumer_name(service)
    assert here.startswith(this_host_prefix(service)), "heartbeat and streams runtime disagree on names"
    await beat(r, service, "elsewhere-host-1-abc")
    assert _check(service, falkordb_server.port, "--this-host").returncode == 1, "a sibling is not this host"
    await beat(r, service, here)
    assert _check(service, falkordb_server.port, "--this-host").returncode == 0
