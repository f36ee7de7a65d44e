"""The catalogue: every tool once, with its typed input and output, and the one way to call one.

A tool is a name, a description, a pydantic input model, a pydantic output model and an async
implementation `(Call, input) -> ToolResult`. The JSON schemas MCP lists come from the same
models, so what the agents call, what the gateway serves at `/v1/tenants/{t}/tools` and what an MCP
client sees cannot drift apart."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Awaitable, Callable, TypeVar

from pydantic import BaseModel, ValidationError

from relay_graph.runtime.errors import InvalidInput, NotFound
from relay_graph.usecases.context import Call
from relay_graph.tools.envelope import Shape, ToolResult
from relay_graph.tools.resolve import UnknownNames

InT = TypeVar("InT", bound=BaseModel)
Impl = Callable[[Call, Any], Awaitable[ToolResult]]

MAX_ERRORS_SHOWN = 10


class UnknownTool(NotFound):
    code = "unknown_tool"


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input: type[BaseModel]
    output: type[BaseModel]
    run: Impl
    writes: bool = False  # changes the graph (MCP: readOnlyHint false)

    @cached_property
    def result_model(self) -> type[ToolResult]:
        return ToolResult[self.output]  # type: ignore[name-defined]

    def input_schema(self) -> dict[str, Any]:
        return self.input.model_json_schema(mode="validation")

    def output_schema(self) -> dict[str, Any]:
        """The whole envelope's schema, `data` typed by this tool's output model."""
        return self.result_model.model_json_schema(mode="serialization")

    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "writes": self.writes,
                "input_schema": self.input_schema(), "output_schema": self.output_schema()}


TOOLS: dict[str, Tool] = {}


def tool(name: str, description: str, *, input: type[BaseModel], output: type[BaseModel],
         writes: bool = False) -> Callable[[Impl], Impl]:
    """Registers the decorated implementation as a tool."""

    def register(fn: Impl) -> Impl:
        if name in TOOLS:
            raise ValueError(f"tool {name!r} is registered twice")
        TOOLS[name] = Tool(name, " ".join(description.split()), input, output, fn, writes)
        return fn

    return register


def get_tool(name: object) -> Tool:
    if not isinstance(name, str) or name not in TOOLS:
        raise UnknownTool(f"unknown tool {name!r}; known: {', '.join(sorted(TOOLS))}")
    return TOOLS[name]


def _where(loc: tuple) -> str:
    return ".".join(str(p) for p in loc) or "arguments"


def validation_message(tool_name: str, exc: ValidationError) -> str:
    errors = exc.errors()
    shown = [f"{_where(e.get('loc', ()))}: {e.get('msg', 'invalid')}" for e in errors[:MAX_ERRORS_SHOWN]]
    more = f" (and {len(errors) - MAX_ERRORS_SHOWN} more)" if len(errors) > MAX_ERRORS_SHOWN else ""
    return f"invalid arguments for {tool_name}: " + "; ".join(shown) + more


def parse_arguments(t: Tool, arguments: object) -> BaseModel:
    """The tool's typed input, or InvalidInput (422 at HTTP, a tool error in MCP) saying which
    argument is wrong and why. Nothing has run yet when this refuses."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise InvalidInput(f"arguments for {t.name} must be a JSON object", code="invalid_arguments")
    try:
        return t.input.model_validate(arguments)
    except ValidationError as exc:
        raise InvalidInput(validation_message(t.name, exc), code="invalid_arguments") from None


async def call_tool(ctx: Call, name: str, arguments: dict[str, Any] | None) -> ToolResult:
    """Validate the arguments, resolve the names in them, run the tool. Unknown tool -> UnknownTool
    (404); bad arguments -> InvalidInput (422); a name that matches nothing -> the unknown_name
    envelope, one that stands for two or more -> the ambiguous envelope, with nothing else run. Other engine errors (RelayError) propagate as they are.
    What the tool's use cases owe is flushed here, once it has run."""
    t = get_tool(name)
    args = parse_arguments(t, arguments)
    ctx.matched.clear()
    try:
        result = await t.run(ctx, args)
    except UnknownNames as exc:
        await ctx.flush_quietly()
        if exc.ambiguous:
            return ToolResult(tool=t.name, shape=Shape.AMBIGUOUS, unknown=exc.unknown, ambiguous=exc.ambiguous,
                              message="; ".join(a.message for a in exc.ambiguous) + " nothing else was looked up")
        names = ", ".join(f"{u.kind} {u.name!r} ({u.argument})" for u in exc.unknown)
        return ToolResult(tool=t.name, shape=Shape.UNKNOWN_NAME, unknown=exc.unknown,
                          message=f"not in the graph: {names}; nothing else was looked up")
    except BaseException:
        await ctx.flush_quietly()
        raise
    await ctx.flush()  # what the tool's use cases owe, announced after its writes (every transport alike)
    if ctx.matched:
        result.matched = list(ctx.matched)
    return result


def tool_specs() -> list[dict[str, Any]]:
    return [TOOLS[n].spec() for n in sorted(TOOLS)]
