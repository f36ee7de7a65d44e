"""Gateway fixtures: the app on the session's real FalkorDB, called in-process over ASGI (no
lifespan needed: the test hands in a ready Memory)."""

from __future__ import annotations

import pytest

from services.gateway.settings import GatewaySettings

from .helpers import ADMIN_KEY, client_for, create_tenant, make_app


@pytest.fixture(scope="session")
def memory(graph_client, embedder):
    from relay_graph.memory import Memory

    return Memory(graph_client, embedder)


@pytest.fixture
def gateway_settings(graph_settings) -> GatewaySettings:
    return GatewaySettings(**graph_settings.model_dump(), admin_key=ADMIN_KEY, port=0)


@pytest.fixture
async def app(gateway_settings, memory):
    app = make_app(gateway_settings, memory)
    yield app
    await app.state.services.bus.close()  # the stream client and tail, if the test used them


@pytest.fixture
async def client(app):
    async with client_for(app) as c:
        yield c


@pytest.fixture
async def auth(client, tenant) -> dict[str, str]:
    """Authorization headers with the key of a fresh tenant (the `tenant` fixture)."""
    return await create_tenant(client, tenant)


@pytest.fixture
async def stream_redis(graph_settings):
    """A bytes client on the test server's streams (what the services use)."""
    from relay_graph.streams import connect

    redis = connect(graph_settings)
    yield redis
    await redis.aclose()
