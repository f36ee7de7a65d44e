"""Writing and retiring facts, the one way every entry point does it (a REST route, a tool, an
agent's handler): the engine writes, and the use case records on the call the FactChanged it owes
for each fact it touched (its outcome is the change; facts are not versioned: version 0), best
effort: the write stands whether or not its announcement goes out (the desk re-reads the graph).
The actor is the call's agent."""

from __future__ import annotations

from typing import TypeVar

from relay_graph.memory import names
from relay_graph.memory.models import FactInput, FactWriteResult, RetireInput, SettleResult
from relay_graph.runtime.errors import AmbiguousName, RelayError
from relay_graph.runtime.streams import FactChanged
from relay_graph.usecases.context import Call, fact_changes



Written = TypeVar("Written", FactInput, RetireInput)


async def _on_customers(call: Call, items: list[Written]) -> list[Written | AmbiguousName]:
    """Each write with its subject as the exact-name rule says (`names.subjects_for_writes`)."""
    found = await names.subjects_for_writes(call.client, call.tenant, [i.subject for i in items])
    out: list[Written | AmbiguousName] = []
    for item in items:
        subject = found.get(item.subject, item.subject)
        out.append(subject if isinstance(subject, AmbiguousName) else item.model_copy(update={"subject": subject}))
    return out


def _matched(result: FactWriteResult, asked: FactInput, written: FactInput) -> FactWriteResult:
    return result if asked.subject == written.subject else result.model_copy(update={"matched": written.subject})


def _only(item: Written | AmbiguousName) -> Written:
    if isinstance(item, AmbiguousName):
        raise item
    return item


async def write_fact(call: Call, fact: FactInput, *, embed: bool = True) -> FactWriteResult:
    """One fact, its subject found by the exact-name rule (`_on_customers`)."""
    [written] = [_only(i) for i in await _on_customers(call, [fact])]
    result = _matched(await call.memory.write_fact(call.tenant, written, embed=embed), fact, written)
    call.owe(*fact_changes(call.tenant, call.agent, [result]), best_effort=True)
    return result


async def write_facts(call: Call, items: list[FactInput], *, embed: bool = False) -> list[FactWriteResult]:
    """Many facts in few statements, all or none (`Memory.write_facts`)."""
    if not items:
        return []
    written = [_only(i) for i in await _on_customers(call, items)]
    results = await call.memory.write_facts(call.tenant, written, embed=embed)
    results = [_matched(r, a, w) for r, a, w in zip(results, items, written)]
    call.owe(*fact_changes(call.tenant, call.agent, results), best_effort=True)
    return results


async def write_facts_each(call: Call, items: list[FactInput], *, embed: bool = True
                           ) -> list[FactWriteResult | RelayError]:
    """Many facts, each atomic: a refused one has its error in its slot, the others are written."""
    found = await _on_customers(call, items) if items else []
    todo = [(i, w) for i, w in enumerate(found) if not isinstance(w, RelayError)]
    done = await call.memory.write_facts_each(call.tenant, [w for _, w in todo], embed=embed) if todo else []
    results: list[FactWriteResult | RelayError] = list(found)  # type: ignore[arg-type]
    for (i, w), r in zip(todo, done):
        results[i] = _matched(r, items[i], w) if isinstance(r, FactWriteResult) else r
    call.owe(*fact_changes(call.tenant, call.agent, [r for r in results if isinstance(r, FactWriteResult)]),
             best_effort=True)
    return results


async def retire_fact(call: Call, retire: RetireInput) -> list[str]:
    """End what is current for the subject's predicate (one value, with `object`): the ids ended. The
    subject is found as a write's is (`_on_customers`)."""
    [retire] = [_only(i) for i in await _on_customers(call, [retire])]
    retired = await call.memory.retire_fact(call.tenant, retire)
    call.owe(*fact_changes(call.tenant, call.agent, retired=retired), best_effort=True)
    return retired


async def settle(call: Call, conflict_id: str, fact_id: str, by: str) -> SettleResult:
    """A person (`by`, not an agent) settles a conflict for one of its claims: the winner is announced."""
    result = await call.memory.settle(call.tenant, conflict_id, fact_id, by)
    call.owe(FactChanged(tenant=call.tenant, id=result.winner, version=0, change="settled", actor=by), best_effort=True)
    return result
