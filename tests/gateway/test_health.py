from __future__ import annotations

from relay_graph.runtime.embedded import free_port
from services.gateway.readiness import ReadinessCheck

from .helpers import assert_error, client_for, make_app


async def test_healthz(client):
    r = await client.get("/healthz")
    assert r.status_code == 200
    assert r.json() == {"status": "ok"}


async def test_readyz_when_falkordb_answers(client):
    r = await client.get("/readyz")
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "ready"
    assert r.json()["missing"] == []


async def test_readyz_503_when_falkordb_is_not_there(gateway_settings):
    # A second app, no Memory handed in, pointed at a port where nothing listens.
    settings = gateway_settings.model_copy(update={"falkordb_port": free_port()})
    app = make_app(settings, memory=None)
    async with client_for(app) as c:
        r = await c.get("/readyz")
        assert r.status_code == 503
        body = r.json()
        assert body["status"] == "not_ready"
        assert body["missing"] == ["falkordb"]
        assert body["error"]["code"] == "not_ready"
        # Liveness does not depend on FalkorDB; everything that needs it answers 503, not 500.
        assert (await c.get("/healthz")).status_code == 200
        assert_error(await c.get("/v1/tenants/acme/facts", params={"subject": "x"},
                                 headers={"Authorization": "Bearer some-key"}), 503, "unavailable")


async def test_readyz_names_every_failing_check(gateway_settings, memory):
    async def broken():
        raise ConnectionError("no consumer group")

    async def says_no():
        return False

    async def fine():
        return None

    checks = [ReadinessCheck("streams", broken), ReadinessCheck("intake", says_no), ReadinessCheck("ok", fine)]
    async with client_for(make_app(gateway_settings, memory, readiness=checks)) as c:
        r = await c.get("/readyz")
    assert r.status_code == 503
    assert r.json()["missing"] == ["streams", "intake"]


async def test_lifespan_opens_and_closes_its_own_pool(gateway_settings):
    app = make_app(gateway_settings, memory=None)
    deps = app.state.deps
    async with app.router.lifespan_context(app):
        async with client_for(app) as c:
            assert (await c.get("/readyz")).status_code == 200
        client = (await deps.open()).client
        assert await client.ping()
    assert deps.memory is None  # closed and dropped at the end of the lifespan
