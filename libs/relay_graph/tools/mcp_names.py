"""The name an outside MCP client acts as. A tool runs with the use cases' per-call context
(relay_graph.usecases.context.Call: tenant, agent, label, memory, where to announce), which its
transport builds; never from its arguments."""

from __future__ import annotations

import re

MCP_PREFIX = "mcp:"
_UNSAFE = re.compile(r"[^a-z0-9_.@-]+")


def mcp_agent_name(client_name: str | None, configured: str | None = None) -> str:
    """The agent an outside MCP client writes and reads as: `mcp:<name>`, from a configured name if
    there is one, else the client's own name from the MCP initialize `clientInfo`. Lowercased, runs
    of anything but letters, digits and `_.@-` become one dash, at most 64 characters in all. Always
    under the `mcp:` prefix, so an outside agent can never pass for one of the desk's agents (and
    borrow its trust)."""
    for raw in (configured, client_name):
        if not raw:
            continue
        name = _UNSAFE.sub("-", raw.strip().lower()).strip("-._@")
        name = name[: 64 - len(MCP_PREFIX)].rstrip("-._@")
        if name:
            return MCP_PREFIX + name
    return MCP_PREFIX + "client"
