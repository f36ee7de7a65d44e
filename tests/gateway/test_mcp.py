"""/mcp on the real gateway process (`python -m services.gateway`), driven by the `mcp` package's
own streamable HTTP client: the tenant key is required before any MCP traffic, the tenant comes
from the key, an outside agent writes as `mcp:<its name>`, and an MCP session is bound to its key."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import Implementation
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from relay_graph.memory import facts
from relay_graph.runtime.embedded import free_port
from relay_graph.tools import TOOLS

from .test_process import wait_ready
from tests.markers import needs

pytestmark = pytest.mark.creates_tenant  # its tenant is made over HTTP, as a user makes one

REPO = Path(__file__).resolve().parents[2]
ADMIN_KEY = "mcp-test-admin-key"
SESSIONS_PER_TENANT = 3
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {},
    "clientInfo": {"name": "raw-client", "version": "1"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
@needs("processes")
def gateway(falkordb_server, tmp_path_factory):
    port = free_port()
    env = {
        **os.environ,
        "RELAY_FALKORDB_HOST": falkordb_server.host,
        "RELAY_FALKORDB_PORT": str(falkordb_server.port),
        "RELAY_PORT": str(port),
        "RELAY_HOST": "127.0.0.1",
        "RELAY_ADMIN_KEY": ADMIN_KEY,
        "RELAY_LOG_LEVEL": "warning",
        "RELAY_READY_AGENTS": "[]",  # the gateway alone: ready once FalkorDB and the streams answer
        "RELAY_MCP_SESSIONS_PER_TENANT": str(SESSIONS_PER_TENANT),
    }
    log_path = tmp_path_factory.mktemp("gateway") / "gateway.log"
    log = log_path.open("w+b")
    proc = subprocess.Popen([sys.executable, "-m", "services.gateway"], cwd=REPO, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(base, proc)
        yield base
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, log_path.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()


def new_tenant(base: str, name: str) -> str:
    # an empty tenant: these tests are about keys and tools, and a seeded world would name its cities
    r = httpx.post(f"{base}/v1/tenants", json={"tenant": name, "world": False},
                   headers={"Authorization": f"Bearer {ADMIN_KEY}"}, timeout=10)
    assert r.status_code == 201, r.text
    return r.json()["api_key"]


@asynccontextmanager
async def session_for(url: str, key: str, **headers: str):
    """The mcp client's streamable HTTP transport, sending the key (and any headers) on every request."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}", **headers},
                                  timeout=httpx2.Timeout(30, read=60)) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            yield streams


async def test_mcp_over_http_lists_and_calls_as_the_remote_agent(gateway, graph_client, tenant):
    key = new_tenant(gateway, tenant)
    async with session_for(f"{gateway}/mcp", key) as (read, write):
        async with ClientSession(read, write, client_info=Implementation(name="Remote Agent", version="2")) as s:
            await s.initialize()
            assert {t.name for t in (await s.list_tools()).tools} == set(TOOLS)
            wrote = await s.call_tool("remember_fact", {"subject": "nina p", "predicate": "has_router",
                                                        "object": "tp-link archer c6"})
            assert not wrote.is_error, wrote
            fact_id = wrote.structured_content["data"]["fact_id"]
            # the tenant key writes as `api`; the client's own name is only a sub-label
            assert wrote.structured_content["data"]["asserted_by"] == "api"
            read_back = await s.call_tool("facts_at", {"subject": "nina p", "predicate": "has_router"})
            [f] = read_back.structured_content["data"]["facts"]
            assert (f["fact_id"], f["asserted_by"], f["label"]) == (fact_id, "api", "mcp:remote-agent")
            bad = await s.call_tool("capacity", {"node": "not a node id!"})
            assert bad.is_error and bad.structured_content["error"]["code"] == "invalid_arguments"
    # the desk sees the outside agent as an agent of its own, in the key's tenant
    [seen] = await facts.read_facts(graph_client, tenant, "nina p")
    assert (seen.fact_id, seen.asserted_by, seen.label) == (fact_id, "api", "mcp:remote-agent")


async def test_an_agent_key_writes_as_its_agent_over_mcp(gateway, graph_client, tenant):
    key = new_tenant(gateway, tenant)
    r = httpx.post(f"{gateway}/v1/tenants/{tenant}/agents", json={"agent": "planner"},
                   headers={"Authorization": f"Bearer {key}"}, timeout=10)
    assert r.status_code == 201, r.text
    agent_key = r.json()["api_key"]
    async with session_for(f"{gateway}/mcp", agent_key) as (read, write):
        async with ClientSession(read, write, client_info=Implementation(name="Night Shift", version="1")) as s:
            await s.initialize()
            wrote = await s.call_tool("remember_fact", {"subject": "ravi", "predicate": "lives_in", "object": "pune"})
            assert not wrote.is_error, wrote
            assert wrote.structured_content["data"]["asserted_by"] == "planner"
    [seen] = await facts.read_facts(graph_client, tenant, "ravi")
    assert (seen.asserted_by, seen.label) == ("planner", "mcp:night-shift")
    # the agent key of this tenant opens nothing in another tenant
    new_tenant(gateway, tenant + "-b")
    r = httpx.post(f"{gateway}/v1/tenants/{tenant}-b/mcp", headers={"Authorization": f"Bearer {agent_key}"},
                   json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=10)
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"


async def test_the_tenant_comes_from_the_key_and_a_header_can_name_the_agent(gateway, graph_client, tenant):
    key_a = new_tenant(gateway, tenant)
    key_b = new_tenant(gateway, tenant + "-b")
    async with session_for(f"{gateway}/mcp", key_a, **{"X-Relay-Agent": "Field Tablet"}) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            wrote = await s.call_tool("remember_fact", {"subject": "omid", "predicate": "lives_in", "object": "pune"})
            assert wrote.structured_content["data"]["asserted_by"] == "api"
    [seen] = await facts.read_facts(graph_client, tenant, "omid")
    assert seen.label == "mcp:field-tablet"
    async with session_for(f"{gateway}/mcp", key_b) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            other = await s.call_tool("facts_at", {"subject": "omid"})
            assert other.structured_content["shape"] == "unknown_name"
    async with session_for(f"{gateway}/v1/tenants/{tenant}/mcp", key_a) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            mine = await s.call_tool("facts_at", {"subject": "omid"})
            assert [f["object"] for f in mine.structured_content["data"]["facts"]] == ["pune"]


def assert_refused(r: httpx.Response, status: int, code: str) -> None:
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code
    assert "mcp-session-id" not in r.headers  # no MCP session was opened


async def test_mcp_is_refused_without_a_valid_key_and_with_another_tenants_key(gateway, tenant):
    key_a = new_tenant(gateway, tenant)
    new_tenant(gateway, tenant + "-b")
    no_key = httpx.post(f"{gateway}/mcp", json=INITIALIZE, headers=MCP_HEADERS, timeout=10)
    assert_refused(no_key, 401, "unauthorized")
    assert no_key.headers["www-authenticate"] == "Bearer"
    wrong = httpx.post(f"{gateway}/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": "Bearer nope"},
                       timeout=10)
    assert_refused(wrong, 401, "unauthorized")
    admin = httpx.post(f"{gateway}/mcp", json=INITIALIZE,
                       headers={**MCP_HEADERS, "Authorization": f"Bearer {ADMIN_KEY}"}, timeout=10)
    assert_refused(admin, 403, "forbidden")
    other = httpx.post(f"{gateway}/v1/tenants/{tenant}-b/mcp", json=INITIALIZE,
                       headers={**MCP_HEADERS, "Authorization": f"Bearer {key_a}"}, timeout=10)
    assert_refused(other, 403, "forbidden")

    # the real client is refused too: its initialize fails on a 401 and no session is opened
    statuses: list[int] = []

    async def record(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    async with httpx2.AsyncClient(headers={"Authorization": "Bearer not-a-key"}, event_hooks={"response": [record]},
                                  timeout=httpx2.Timeout(30, read=60)) as http:
        async with streamable_http_client(f"{gateway}/mcp", http_client=http) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=20) as s:
                with pytest.raises(MCPError):
                    await s.initialize()
    assert statuses == [401]


async def test_an_mcp_session_is_bound_to_the_key_that_opened_it(gateway, tenant):
    key_a = new_tenant(gateway, tenant)
    key_b = new_tenant(gateway, tenant + "-b")
    with httpx.Client(base_url=gateway, timeout=10) as http:
        opened = http.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": f"Bearer {key_a}"})
        assert opened.status_code == 200, opened.text
        sid = opened.headers["mcp-session-id"]
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        headers = {**MCP_HEADERS, "mcp-session-id": sid, "mcp-protocol-version": LATEST_HANDSHAKE_VERSION}
        stolen = http.post("/mcp", json=listing, headers={**headers, "Authorization": f"Bearer {key_b}"})
        assert stolen.status_code == 404  # as if the session did not exist
        http.delete("/mcp", headers={**headers, "Authorization": f"Bearer {key_a}"})


def test_one_tenant_cannot_take_every_mcp_session(gateway, tenant):
    key_a = new_tenant(gateway, tenant)
    key_b = new_tenant(gateway, tenant + "-other")
    with httpx.Client(base_url=gateway, timeout=10) as http:
        def open_session(key: str) -> httpx.Response:
            return http.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": f"Bearer {key}"})

        opened = [open_session(key_a) for _ in range(SESSIONS_PER_TENANT)]
        assert [r.status_code for r in opened] == [200] * SESSIONS_PER_TENANT
        refused = open_session(key_a)
        assert refused.status_code == 503 and "Too many open sessions" in refused.text
        other = open_session(key_b)  # another tenant is not held back
        assert other.status_code == 200, other.text
        sid = opened[0].headers["mcp-session-id"]
        closed = http.delete("/mcp", headers={**MCP_HEADERS, "mcp-session-id": sid,
                                               "mcp-protocol-version": LATEST_HANDSHAKE_VERSION,
                                               "Authorization": f"Bearer {key_a}"})
        assert closed.status_code < 300, closed.text
        assert open_session(key_a).status_code == 200  # a closed session frees its place
