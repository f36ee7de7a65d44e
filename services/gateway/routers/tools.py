"""The tool catalogue over plain HTTP: list the tools, call one. The same tools MCP serves."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from relay_graph.models import LABEL_PATTERN
from relay_graph.tools import ToolContext, call_tool, get_tool, tool_specs

from ..deps import BusDep, IdentityDep, MemoryDep, TenantDep, respond
from ..errors import responses

router = APIRouter(prefix="/v1/tenants/{t}", tags=["tools"])


class ToolSpec(BaseModel):
    name: str
    description: str
    writes: bool = Field(description="the tool changes the graph")
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]


class ToolList(BaseModel):
    tools: list[ToolSpec]


class ToolAnswer(BaseModel):
    """Every tool's envelope; `data` is typed by the tool's output_schema."""

    tool: str
    shape: str = Field(description="answered | memory | not_in_graph | unknown_name")
    data: Any = None
    how_i_know: list[str]
    unknown: list[dict[str, str]] = Field(description="names that resolved to nothing: {argument, kind, name}")
    message: str | None = None


@router.get("/tools", response_model=ToolList, responses=responses(401, 403, 429, 503),
            summary="The typed tool catalogue (the same tools as /mcp), with JSON schemas")
async def list_tools(tenant: TenantDep) -> JSONResponse:
    return respond(ToolList(tools=[ToolSpec(**s) for s in tool_specs()]))


@router.post("/tools/{name}", response_model=ToolAnswer, responses=responses(401, 403, 404, 409, 413, 422, 429, 503),
             summary="Call a tool; the body is its arguments. The key's agent is recorded as writer and reader "
                     "(`api` for the tenant key); `agent` is a sub-label under it")
async def call(
    who: IdentityDep,
    memory: MemoryDep,
    bus: BusDep,
    name: Annotated[str, Path(min_length=1, max_length=64, description="a tool name from GET /tools")],
    arguments: Annotated[dict[str, Any] | None, Body(description="the tool's arguments (its input_schema)")] = None,
    agent: Annotated[str | None, Query(pattern=LABEL_PATTERN, description="a sub-label under the key's agent "
                                       "(kept as the `label` of the facts it writes)")] = None,
) -> JSONResponse:
    get_tool(name)  # an unknown tool is 404 before anything else
    ctx = ToolContext(memory, who.tenant, who.agent, announce=bus.publish, label=who.label(agent))
    return respond((await call_tool(ctx, name, arguments or {})).to_json())
