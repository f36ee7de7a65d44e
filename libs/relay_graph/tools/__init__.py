"""The typed tool catalogue: one definition used by the desk's agents, the gateway
(`/v1/tenants/{t}/tools`) and MCP (`/mcp`, `relay mcp --tenant <t>`).

    from relay_graph.tools import Call, call_tool
    ctx = Call(memory, tenant, agent="resolver")
    result = await call_tool(ctx, "recall_customer", {"customer": "alice rao"})
    result.shape, result.data, result.how_i_know

Every tool takes typed arguments (pydantic, extra fields refused), resolves the names in them
against the graph before anything else runs (an unknown name answers the `unknown_name` shape and
nothing else runs), and answers one envelope (`ToolResult`). The tenant and the calling agent come
from the context, never from the arguments: the agent is recorded as the writer of what a tool
writes and the reader of what it reads.

Tools: remember, remember_fact, remember_facts, retire_fact, facts_at, history, claims, recall, ask, explain,
recall_customer, tickets, handoff, who_handled, past_fixes, affected_by, capacity, customer_line,
why_affected, define_predicate, list_predicates; open_task, hand_off_task, claim_task, complete_task,
list_tasks.

An entry point like the gateway's routes and the agents' handlers: it reaches the graph through
the use cases and the engine, never through statements of its own.
May use: `relay_graph.usecases`, `relay_graph.lab`, `relay_graph.desk`, `relay_graph.memory`, `relay_graph.runtime`.
"""

from __future__ import annotations

from relay_graph.tools import (  # noqa: F401  (each registers its tools)
    desk_tools, memory_tools, network_tools, task_tools, vocabulary_tools,
)
from relay_graph.tools.mcp_names import MCP_PREFIX, mcp_agent_name
from relay_graph.usecases.context import Call
from relay_graph.tools.envelope import Shape, ToolResult, UnknownName, jsonable
from relay_graph.tools.toolset import (
    TOOLS,
    Tool,
    UnknownTool,
    call_tool,
    get_tool,
    parse_arguments,
    tool_specs,
)
from relay_graph.tools.resolve import Resolver, UnknownNames

__all__ = [
    "MCP_PREFIX", "Resolver", "Shape", "TOOLS", "Tool", "Call", "ToolResult", "UnknownName", "UnknownNames",
    "UnknownTool", "call_tool", "get_tool", "jsonable", "mcp_agent_name", "parse_arguments", "tool_specs",
]
