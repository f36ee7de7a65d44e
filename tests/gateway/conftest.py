"""Gateway fixtures: the app on the session's real FalkorDB, called in-process over ASGI (no
lifespan needed: the test hands in a ready Memory)."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.gateway.settings import GatewaySettings

from .helpers import ADMIN_KEY, client_for, create_tenant, make_app
from tests.markers import needs
from tests.support import register_test_tenant, stop_process


def acl_env(falkordb_server) -> dict[str, str]:
    """The gateway's FalkorDB users (relay_graph.runtime.acl), as `relay up` gives them, when the
    session's server has them (not on a test cluster)."""
    from relay_graph.runtime import acl

    users = getattr(falkordb_server, "acl_users", None)
    if not users:
        return {}
    return {"RELAY_FALKORDB_USER": "relay-gateway", "RELAY_FALKORDB_PASSWORD": users["relay-gateway"],
            "RELAY_FALKORDB_OPS_USER": acl.OPS_USER, "RELAY_FALKORDB_OPS_PASSWORD": users[acl.OPS_USER]}


@pytest.fixture
def gateway_settings(graph_settings) -> GatewaySettings:
    # Judge tenants live an hour and the session's tests make many: their bound has its own test.
    return GatewaySettings(**graph_settings.model_dump(), admin_key=ADMIN_KEY, port=0, judge_max_tenants=10_000)


@pytest.fixture(autouse=True)
def registered_tenant(request):
    """A test that calls the gateway creates its tenant over HTTP (POST /v1/tenants); one that only
    builds a graph straight through the library has it registered as everywhere else."""
    if "gateway_settings" not in request.fixturenames:
        register_test_tenant(request)


@pytest.fixture
async def app(gateway_settings, memory):
    app = make_app(gateway_settings, memory)
    yield app
    await app.state.deps.aclose()  # the stream client and tail, if the test used them


@pytest.fixture
async def client(app):
    async with client_for(app) as c:
        yield c


@pytest.fixture
async def auth(client, tenant) -> dict[str, str]:
    """Authorization headers with the key of a fresh tenant (the `tenant` fixture)."""
    return await create_tenant(client, tenant)


class RunningGateway:
    """`python -m services.gateway` on a free port of this machine, on the session's FalkorDB."""

    def __init__(self, url: str, admin_key: str, log: Path):
        self.url, self.admin_key, self.log = url, admin_key, log


@pytest.fixture(scope="session")
@needs("processes")
def running_gateway(falkordb_server, graph_settings, tmp_path_factory):
    """The real gateway process (no desk agents: ready once FalkorDB and the streams answer), with
    rate limits (per tenant, per address, for new sessions and Judge runs) that property tests do
    not meet."""
    import os
    import subprocess
    import sys
    import time

    import httpx

    from relay_graph.runtime.embedded import free_port

    from .test_process import REPO

    port, admin = free_port(), "running-gateway-admin-key"
    log_path = tmp_path_factory.mktemp("gateway") / "gateway.log"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("RELAY_")},
           "RELAY_FALKORDB_HOST": falkordb_server.host, "RELAY_FALKORDB_PORT": str(falkordb_server.port),
           "RELAY_FALKORDB_CLUSTER": graph_settings.falkordb_cluster,
           "RELAY_PORT": str(port), "RELAY_HOST": "127.0.0.1", "RELAY_ADMIN_KEY": admin,
           "RELAY_LOG_LEVEL": "warning", "RELAY_READY_AGENTS": "[]", "RELAY_MODEL_DIR": str(graph_settings.model_dir),
           "RELAY_RATE_LIMIT_PER_SECOND": "100000", "RELAY_RATE_LIMIT_BURST": "100000",
           "RELAY_KEYLESS_RATE_PER_SECOND": "100000", "RELAY_KEYLESS_BURST": "100000",
           "RELAY_SITE_SESSIONS_PER_SECOND": "100000", "RELAY_SITE_SESSIONS_BURST": "100000",
           "RELAY_JUDGE_RUNS_PER_SECOND": "100000", "RELAY_JUDGE_RUNS_BURST": "100000", "RELAY_JUDGE_MAX_TENANTS": "10000"}
    env.update(acl_env(falkordb_server))
    with log_path.open("wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "services.gateway"], cwd=REPO, env=env,
                                stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, f"the gateway exited:\n{log_path.read_text()}"
            try:
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"the gateway never became ready:\n{log_path.read_text()}"
            time.sleep(0.2)
        yield RunningGateway(url, admin, log_path)
    finally:
        stop_process(proc)
