"""The tool catalogue as an MCP server (the `mcp` package's low-level Server), whatever the
transport: the gateway serves it over streamable HTTP at /mcp, `relay mcp` over stdio.

The transport decides who is calling: `context_for(request_context)` returns the Call
(tenant, agent, connection) for one request. A tool error (unknown tool, invalid arguments, any
RelayError) is an MCP tool result with `isError` and `{"error": {"code", "message"}}` as its
structured content, so the calling model can read it and try again; the connection stays up."""

from __future__ import annotations

import json
import logging
from typing import Any, Awaitable, Callable

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server

from relay_graph.runtime.errors import RelayError
from relay_graph.usecases.context import Call
from relay_graph.tools.toolset import TOOLS, Tool, call_tool

log = logging.getLogger("relay.mcp")

SERVER_NAME = "relay"
SERVER_VERSION = "1"
INSTRUCTIONS = """Relay is shared, time-aware graph memory. Every tool answers one envelope:
{"shape": "answered"|"memory"|"not_in_graph"|"unknown_name", "data": ..., "how_i_know": [...]}.
unknown_name means a name in your arguments is not in the graph (nothing else was looked up);
`how_i_know` lists the graph rows an answer rests on. What you write is recorded as written by you."""

ContextFactory = Callable[[ServerRequestContext[Any, Any]], Awaitable[Call]]


def client_name(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The name the MCP client gave in its initialize `clientInfo`, if it gave one."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    return info.name if info is not None else None


def mcp_tool(t: Tool) -> types.Tool:
    return types.Tool(
        name=t.name,
        description=t.description,
        input_schema=t.input_schema(),
        output_schema=t.output_schema(),
        annotations=types.ToolAnnotations(read_only_hint=not t.writes, destructive_hint=False,
                                          idempotent_hint=not t.writes, open_world_hint=False),
    )


def error_result(code: str, message: str) -> types.CallToolResult:
    body = {"error": {"code": code, "message": message}}
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(body))],
                                structured_content=body, is_error=True)


def build_server(context_for: ContextFactory, *, name: str = SERVER_NAME) -> Server:
    tools = [mcp_tool(TOOLS[n]) for n in sorted(TOOLS)]

    async def list_tools(ctx: ServerRequestContext[Any, Any],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            tool_ctx = await context_for(ctx)
            result = await call_tool(tool_ctx, params.name, params.arguments)
        except RelayError as exc:
            return error_result(exc.code, exc.message)
        except Exception:  # noqa: BLE001 - the caller gets a tool error, the log gets the trace
            log.exception("tool %s failed", params.name)
            return error_result("internal_error", "the tool failed on our side; it was logged")
        body = result.to_json()
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(body))],
                                    structured_content=body)

    return Server(name, version=SERVER_VERSION, instructions=INSTRUCTIONS, on_list_tools=list_tools,
                  on_call_tool=call)
