"""The tool catalogue over plain HTTP: list the tools, call one. The same tools MCP serves."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Query
from pydantic import BaseModel, Field, ValidationError
from pydantic.json_schema import models_json_schema

from relay_graph.memory.models import LABEL_PATTERN
from relay_graph.tools import call_tool, get_tool, tool_specs

from ..deps import DepsDep, IdentityDep, MemoryDep, TenantDep
from ..errors import responses
from ..schemas import Answer

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


@router.get("/tools", response_model=Answer[ToolList], responses=responses(401, 403, 429, 503),
            summary="The typed tool catalogue (the same tools as /mcp), with JSON schemas")
async def list_tools(tenant: TenantDep) -> ToolList:
    return ToolList(tools=[ToolSpec(**s) for s in tool_specs()])


@router.post("/tools/{name}", response_model=Answer[ToolAnswer], responses=responses(401, 403, 404, 409, 413, 422, 429, 503),
             operation_id="call_tool",
             summary="Call a tool; the body is its arguments. The key's agent is recorded as writer and reader "
                     "(`api` for the tenant key); `agent` is a sub-label under it")
async def call(
    who: IdentityDep,
    deps: DepsDep,
    memory: MemoryDep,
    name: Annotated[str, Path(min_length=1, max_length=64, description="a tool name from GET /tools")],
    # No body: no arguments. A body is an object: `null` is refused (422) like any other non-object.
    arguments: Annotated[dict[str, Any], Body(description="the tool's arguments (its input_schema)")] = None,  # type: ignore[assignment]
    agent: Annotated[str | None, Query(pattern=LABEL_PATTERN, description="a sub-label under the key's agent "
                                       "(kept as the `label` of the facts it writes)")] = None,
) -> ToolAnswer:
    get_tool(name)  # an unknown tool is 404 before anything else
    ctx = deps.call(who.tenant, who.agent, label=who.label(agent))
    return ToolAnswer.model_validate((await call_tool(ctx, name, arguments or {})).to_json())


def _takes_no_arguments(model: type[BaseModel]) -> bool:
    """Whether a call without a body (its arguments `{}`) is one the tool takes: the body is then
    optional in the schema, and required otherwise (a rule across fields counts, not only
    required fields)."""
    try:
        model.model_validate({})
    except ValidationError:
        return False
    return True


def document_tools(schema: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI document states each tool's call as its own operation, its body the tool's input
    schema, in place of the one `/tools/{name}` route that serves them all: a client (or a property
    test) sees exactly which arguments each tool takes."""
    generic_path = f"{router.prefix}/tools/{{name}}"
    generic = schema["paths"].pop(generic_path)["post"]
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    tools = [get_tool(s["name"]) for s in tool_specs()]
    _, defs = models_json_schema([(t.input, "validation") for t in tools],
                                 ref_template="#/components/schemas/{model}")
    for name, definition in defs.get("$defs", {}).items():
        if name in components and components[name] != definition:
            raise ValueError(f"tool schema {name} differs from the API's schema of that name")
        components[name] = definition
    for t in tools:
        op = {**generic, "operationId": f"tool_{t.name}", "summary": f"Tool `{t.name}`", "description": t.description,
              "parameters": [p for p in generic["parameters"] if p["name"] != "name"]}
        required = not _takes_no_arguments(t.input)
        op["requestBody"] = {"required": required, "content": {"application/json": {
            "schema": {"$ref": f"#/components/schemas/{t.input.__name__}"}}}}
        schema["paths"][f"{router.prefix}/tools/{t.name}"] = {"post": op}
    return schema
