"""`relay mcp --tenant <t>` as a real subprocess, driven by the `mcp` package's own stdio client:
the catalogue is listed, a fact written through it carries the MCP client's agent name, the desk's
reads see it, and errors come back as tool errors the client can read."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import Implementation

from relay_graph.memory import facts
from relay_graph.runtime.streams import FactChanged, connect
from relay_graph.runtime.streams.keys import STREAM_FACTS
from relay_graph.tools import TOOLS
from tests.gateway.stream_helpers import published

pytestmark = [pytest.mark.falkordb, pytest.mark.processes]

REPO = Path(__file__).resolve().parents[2]
# a data folder of its own: the password a developer's `relay up` keeps in .relay/data is not the
# session FalkorDB's
DATA_DIR = tempfile.TemporaryDirectory(prefix="relay-mcp-stdio-")


def server(falkordb_server, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "relay_cli.main", "mcp", *args],
        cwd=REPO,
        env={
            "RELAY_FALKORDB_HOST": falkordb_server.host,
            "RELAY_FALKORDB_PORT": str(falkordb_server.port),
            "RELAY_DATA_DIR": DATA_DIR.name,
            "RELAY_MODEL_DIR": os.environ.get("RELAY_MODEL_DIR", str(REPO / ".relay" / "model")),
            **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
        },
    )


async def announced_facts(falkordb_server, tenant: str) -> list:
    # a bytes client: the gateway's entries are FastStream envelopes, not text fields
    redis = connect(host=falkordb_server.host, port=falkordb_server.port)
    try:
        return await published(redis, STREAM_FACTS, tenant)
    finally:
        await redis.aclose()


async def test_stdio_lists_tools_and_writes_as_the_clients_own_agent(falkordb_server, graph_client, tenant):
    client_info = Implementation(name="Acme Support Bot", version="0.3")
    async with stdio_client(server(falkordb_server, "--tenant", tenant)) as (read, write):
        async with ClientSession(read, write, client_info=client_info) as session:
            await session.initialize()
            listed = await session.list_tools()
            assert {t.name for t in listed.tools} == set(TOOLS)
            by_name = {t.name: t for t in listed.tools}
            assert by_name["remember_fact"].input_schema == TOOLS["remember_fact"].input_schema()
            assert by_name["facts_at"].annotations.read_only_hint is True

            wrote = await session.call_tool("remember_fact", {"subject": "mira nair", "predicate": "lives_in",
                                                              "object": "pune"})
            assert not wrote.is_error, wrote
            assert wrote.structured_content["shape"] == "answered"
            assert wrote.structured_content["data"]["asserted_by"] == "mcp:acme-support-bot"
            fact_id = wrote.structured_content["data"]["fact_id"]

            read_back = await session.call_tool("facts_at", {"subject": "Mira  Nair"})
            [f] = read_back.structured_content["data"]["facts"]
            assert (f["fact_id"], f["object"], f["asserted_by"]) == (fact_id, "pune", "mcp:acme-support-bot")

            everything = await session.call_tool("recall_customer", {"customer": "mira nair"})
            assert [x["fact_id"] for x in everything.structured_content["data"]["facts"]] == [fact_id]
            assert any(fact_id in line for line in everything.structured_content["how_i_know"])

            unknown = await session.call_tool("recall_customer", {"customer": "nobody at all"})
            assert not unknown.is_error
            assert unknown.structured_content["shape"] == "unknown_name"
            assert unknown.structured_content["unknown"] == [
                {"argument": "customer", "kind": "customer", "name": "nobody at all"}]

            bad = await session.call_tool("facts_at", {"subject": "mira nair", "tenant": "someone-else"})
            assert bad.is_error
            assert bad.structured_content["error"]["code"] == "invalid_arguments"
            assert "tenant: Extra inputs are not permitted" in bad.structured_content["error"]["message"]

            missing = await session.call_tool("drop_everything", {})
            assert missing.is_error and missing.structured_content["error"]["code"] == "unknown_tool"

    # the desk reads the same graph and sees an agent of its own
    [seen] = await facts.read_facts(graph_client, tenant, "mira nair")
    assert (seen.fact_id, seen.asserted_by) == (fact_id, "mcp:acme-support-bot")
    assert any(isinstance(n, FactChanged) and n.id == fact_id and n.tenant == tenant
               and n.actor == "mcp:acme-support-bot" for n in await announced_facts(falkordb_server, tenant))


async def test_stdio_with_a_configured_agent_name(falkordb_server, graph_client, tenant):
    async with stdio_client(server(falkordb_server, "--tenant", tenant, "--agent", "Billing Sync")) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            wrote = await session.call_tool("remember_fact", {"subject": "omar", "predicate": "on_plan",
                                                              "object": "fiber 300"})
            assert wrote.structured_content["data"]["asserted_by"] == "mcp:billing-sync"
    [seen] = await facts.read_facts(graph_client, tenant, "omar")
    assert seen.asserted_by == "mcp:billing-sync"


def test_stdio_refuses_a_bad_tenant_before_serving():
    import subprocess

    proc = subprocess.run([sys.executable, "-m", "relay_cli.main", "mcp", "--tenant", "Not A Tenant"], cwd=REPO,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert proc.stdout == ""  # stdout is the MCP wire: nothing but protocol goes there
    assert "tenant must match ^[a-z0-9][a-z0-9-]{1,62}$" in proc.stderr
