"""Tools over the tenant's own vocabulary: defining a predicate, listing what may be written. An
agent brings the predicates it writes (as `PUT /v1/tenants/{t}/predicates/{name}` does); retiring
one is left to the tenant's key (REST), since it stops every agent from writing it."""

from __future__ import annotations

from pydantic import Field

from relay_graph.memory.predicates import PredicateDefinition, PredicateList, PredicateView
from relay_graph.memory.registry import NAME_PATTERN
from relay_graph.tools.envelope import Shape, ToolResult
from relay_graph.tools.toolset import tool
from relay_graph.tools.types import Args
from relay_graph.usecases import predicates as cases
from relay_graph.usecases.context import Call


class DefinePredicateInput(Args, PredicateDefinition):
    # strict tool arguments (Args) read an enum's value from its JSON string only when told so (Lax)
    model_config = Args.model_config | {"strict": False}

    name: str = Field(pattern=NAME_PATTERN, strict=True, examples=["prefers_language"],
                      description="the predicate's name: lower case letters, digits and _, starting with a letter, "
                                  "2-48 characters; never a built-in one's")


class DefinePredicateOutput(PredicateView):
    created: bool = Field(description="new (or back from retirement); false: it was defined already")


def _line(p: PredicateView) -> str:
    kind = "built in" if p.builtin else ("retired" if p.retired else "the tenant's own")
    edge = f", mirrored as {p.edge}" if p.edge else ""
    return f"predicate {p.name}: {p.cardinality.value}-valued, {p.object.value} object, {p.conflict.value}{edge} ({kind})"


@tool("define_predicate", """Define a predicate of the tenant's own so facts of it can be written like the
      built-in ones: cardinality single or multi, object text, entity (mirrored as a typed edge), number or
      time, conflict supersede or keep_both (another agent's different value stands beside it and a conflict
      opens). The same definition again changes nothing; a new cardinality is refused while the predicate has
      facts.""", input=DefinePredicateInput, output=DefinePredicateOutput, writes=True)
async def define_predicate(ctx: Call, args: DefinePredicateInput) -> ToolResult:
    definition = PredicateDefinition(**args.model_dump(exclude={"name"}))
    view, created = await cases.define_predicate(ctx, args.name, definition)
    return ToolResult(tool="define_predicate", shape=Shape.ANSWERED,
                      data=DefinePredicateOutput(**view.model_dump(), created=created),
                      how_i_know=[_line(view) + (" defined now" if created else "")])


class ListPredicatesInput(Args):
    pass


@tool("list_predicates", """The predicates the tenant may write: the built-in ones and its own (each marked
      which; a retired one is still read, no longer written).""", input=ListPredicatesInput, output=PredicateList)
async def list_predicates(ctx: Call, args: ListPredicatesInput) -> ToolResult:
    listed = await ctx.memory.predicates(ctx.tenant)
    return ToolResult(tool="list_predicates", shape=Shape.ANSWERED, data=listed,
                      how_i_know=[_line(p) for p in listed.predicates])
