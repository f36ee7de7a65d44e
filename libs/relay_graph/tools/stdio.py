"""`relay mcp --tenant <t>`: the tool catalogue over stdio, for a local MCP client.

The process is trusted local (whoever can start it can reach FalkorDB anyway): the tenant is the
one on the command line, checked with validate_tenant, and FalkorDB is where the RELAY_* settings
say. The calling agent is `mcp:<client name>` from the client's initialize, or `mcp:<--agent>`.
Writes are announced on the streams through the outbox (relay_graph.runtime.outbox: a publish that fails is
kept in the graph, and the relay of a gateway or agent replica publishes it), so the desk's agents
see them as they see their own."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server

from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.tenancy import validate_tenant
from relay_graph.tools.mcp_names import mcp_agent_name
from relay_graph.usecases.context import Call, make_deps
from relay_graph.tools.mcp_server import build_server, client_name

SERVICE = "mcp"

log = logging.getLogger("relay.mcp")


async def serve_stdio(tenant: str, *, agent: str | None = None, settings: GraphSettings | None = None) -> None:
    tenant = validate_tenant(tenant)
    # The process context every entry point runs on (usecases.context.Deps), its memory opened now.
    deps = make_deps(SERVICE, settings or GraphSettings())
    try:
        await deps.open()

        async def context_for(ctx: ServerRequestContext[Any, Any]) -> Call:
            return deps.call(tenant, mcp_agent_name(client_name(ctx), agent))

        server = build_server(context_for)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        await deps.aclose()


def run(tenant: str, *, agent: str | None = None, settings: GraphSettings | None = None) -> None:
    """Blocking entry point: serve until the client closes stdin."""
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    asyncio.run(serve_stdio(tenant, agent=agent, settings=settings))
