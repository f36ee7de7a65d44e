"""Writing and retiring facts, the one way every entry point does it (a REST route, a tool, an
agent's handler): the engine writes, and the use case returns the FactChanged it owes for each
fact it touched (its outcome is the change; facts are not versioned: version 0), which the entry
point announces. The actor is the call's agent."""

from __future__ import annotations

from relay_graph.memory.models import FactInput, FactWriteResult, RetireInput, SettleResult
from relay_graph.runtime.errors import RelayError
from relay_graph.runtime.streams import FactChanged, NotificationBase
from relay_graph.usecases.context import Call, fact_changes

Notifications = list[NotificationBase]


async def write_fact(call: Call, fact: FactInput, *, embed: bool = True) -> tuple[FactWriteResult, Notifications]:
    result = await call.memory.write_fact(call.tenant, fact, embed=embed)
    return result, fact_changes(call.tenant, call.agent, [result])


async def write_facts(call: Call, items: list[FactInput], *, embed: bool = False
                      ) -> tuple[list[FactWriteResult], Notifications]:
    """Many facts in few statements, all or none (`Memory.write_facts`)."""
    results = await call.memory.write_facts(call.tenant, items, embed=embed) if items else []
    return results, fact_changes(call.tenant, call.agent, results)


async def write_facts_each(call: Call, items: list[FactInput], *, embed: bool = True
                           ) -> tuple[list[FactWriteResult | RelayError], Notifications]:
    """Many facts, each atomic: a refused one has its error in its slot, the others are written."""
    results = await call.memory.write_facts_each(call.tenant, items, embed=embed)
    return results, fact_changes(call.tenant, call.agent, [r for r in results if isinstance(r, FactWriteResult)])


async def retire_fact(call: Call, retire: RetireInput) -> tuple[list[str], Notifications]:
    """End what is current for the subject's predicate (one value, with `object`): the ids ended."""
    retired = await call.memory.retire_fact(call.tenant, retire)
    return retired, fact_changes(call.tenant, call.agent, retired=retired)


async def settle(call: Call, conflict_id: str, fact_id: str, by: str) -> tuple[SettleResult, Notifications]:
    """A person (`by`, not an agent) settles a conflict for one of its claims: the winner is announced."""
    result = await call.memory.settle(call.tenant, conflict_id, fact_id, by)
    return result, [FactChanged(tenant=call.tenant, id=result.winner, version=0, change="settled", actor=by)]
