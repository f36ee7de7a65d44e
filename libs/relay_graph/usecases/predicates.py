"""A tenant's own vocabulary, the one way every entry point changes it (a REST route, a tool):
define a predicate, retire one. Nothing is announced on the streams: every process finds a change
through the vocabulary's stamp on its next write (memory/predicates.py says how and why)."""

from __future__ import annotations

from relay_graph.memory.predicates import PredicateDefinition, PredicateView
from relay_graph.usecases.context import Call


async def define_predicate(call: Call, name: str, definition: PredicateDefinition) -> tuple[PredicateView, bool]:
    """The predicate as now defined, and whether it is new (or back from retirement)."""
    return await call.memory.define_predicate(call.tenant, name, definition, agent=call.agent)


async def retire_predicate(call: Call, name: str) -> bool:
    """Retires the tenant's predicate: False when it was retired already."""
    return await call.memory.retire_predicate(call.tenant, name)
