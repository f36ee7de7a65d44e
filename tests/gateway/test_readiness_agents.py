"""/readyz of the real process's composition (`ready_agents`): FalkorDB, the streams, and each
desk agent's consumer group with a live replica. On a FalkorDB server of its own, so that consumer
groups and heartbeats other tests leave on the shared server cannot make it ready."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port
from relay_graph.runtime.heartbeat import alive, heartbeat_loop
from relay_graph.runtime.streams import (
    StreamApp,
    NetworkChanged,
    StreamSettings,
    TicketChanged,
    TurnReceived,
    connect,
)

from tests.support import eventually

from .helpers import ADMIN_KEY, client_for, make_app

AGENTS = ["intake", "resolver", "netops"]
KIND_OF = {"intake": TurnReceived, "resolver": TicketChanged, "netops": NetworkChanged}


@pytest.fixture
def settings(gateway_settings, own_server):
    return gateway_settings.model_copy(update={"falkordb_host": own_server.host, "falkordb_port": own_server.port})


async def _nothing(_n) -> None:
    return None


@contextlib.asynccontextmanager
async def agent(redis, service: str):
    """A replica of `service` as the agents run one: its group's consumer, then its heartbeat."""
    consumer = StreamApp(redis, group=service, handlers={KIND_OF[service]: _nothing},
                        settings=StreamSettings(block_ms=50))
    stop = asyncio.Event()
    running = asyncio.create_task(consumer.run())
    await asyncio.wait_for(consumer.ready.wait(), 10)
    beat = asyncio.create_task(heartbeat_loop(redis, service, consumer.name, stop, every_s=1, ttl_s=5))
    await eventually(lambda: alive(redis, service), what=f"{service}'s heartbeat")
    try:
        yield consumer
    finally:
        consumer.stop()
        stop.set()
        await asyncio.wait_for(asyncio.gather(running, beat), 30)


async def readyz(c) -> tuple[int, list[str]]:
    r = await c.get("/readyz")
    return r.status_code, r.json()["missing"]


async def test_ready_once_every_agent_has_a_group_and_a_live_replica(settings):
    app = make_app(settings, memory=None, ready_agents=AGENTS)
    redis = connect(settings)
    try:
        async with client_for(app) as c:
            assert await readyz(c) == (503, AGENTS)
            async with agent(redis, "intake"):
                assert await readyz(c) == (503, ["resolver", "netops"])
                async with agent(redis, "resolver"):
                    async with agent(redis, "netops"):
                        assert await readyz(c) == (200, [])
                    # netops stopped: its group is still there, but no replica is alive.
                    assert await readyz(c) == (503, ["netops"])
            body = (await c.get("/readyz")).json()
            assert body["error"]["code"] == "not_ready" and "intake" in body["error"]["message"]
    finally:
        await app.state.services.bus.close()
        await app.state.services.backend.close()
        await redis.aclose()


async def test_not_ready_names_falkordb_and_streams_when_the_server_is_gone(gateway_settings):
    settings = gateway_settings.model_copy(update={"falkordb_port": free_port()})
    app = make_app(settings, memory=None, ready_agents=[])
    try:
        async with client_for(app) as c:
            assert await readyz(c) == (503, ["falkordb", "streams"])
    finally:
        await app.state.services.bus.close()


def test_unknown_agent_names_are_refused(gateway_settings, memory):
    with pytest.raises(ValueError):
        make_app(gateway_settings, memory, ready_agents=["intake", "marketing"])


def test_the_real_process_waits_for_the_three_agents(gateway_settings):
    from services.gateway.settings import GatewaySettings

    assert GatewaySettings(admin_key=ADMIN_KEY).ready_agents == AGENTS


async def test_a_wrong_falkordb_password_is_named_in_the_503(gateway_settings, tmp_path):
    server = EmbeddedFalkorDB(tmp_path / "pw", free_port(), log_file=tmp_path / "pw.log", password="right").start()
    try:
        for password in ("wrong", None):
            settings = gateway_settings.model_copy(update={
                "falkordb_host": server.host, "falkordb_port": server.port, "falkordb_password": password})
            app = make_app(settings, memory=None, ready_agents=[])
            try:
                async with client_for(app) as c:
                    r = await c.get("/readyz")
                    assert r.status_code == 503 and r.json()["missing"] == ["falkordb", "streams"]
                    message = r.json()["error"]["message"]
                    assert "FalkorDB refused the password: check RELAY_FALKORDB_PASSWORD" in message, message
            finally:
                await app.state.services.bus.close()
                await app.state.services.backend.close()
        right = gateway_settings.model_copy(update={
            "falkordb_host": server.host, "falkordb_port": server.port, "falkordb_password": "right"})
        app = make_app(right, memory=None, ready_agents=[])
        try:
            async with client_for(app) as c:
                assert await readyz(c) == (200, [])
        finally:
            await app.state.services.bus.close()
            await app.state.services.backend.close()
    finally:
        server.stop()
