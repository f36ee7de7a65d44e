"""Filing what a turn says about the customer: retire what ended, write what is true (one batch,
`Memory.write_facts`), through the facts use cases on the turn's call (they owe the FactChanged)."""

from __future__ import annotations

from dataclasses import dataclass, field

from relay_graph.desk.agent_reads import EpisodeView
from relay_graph.desk.extraction import Extraction, Intent, IssueKind
from relay_graph.memory.models import FactInput, FactView, RetireInput
from relay_graph.usecases import facts as fact_cases
from relay_graph.usecases.context import Call

from .deciding import AGENT, issue_of, when


@dataclass
class Filed:
    """What filing the turn's facts did: learnt (new, besides has_issue), ended, and every fact
    current after (the customer's file)."""

    learnt: list[FactView] = field(default_factory=list)
    ended: list[FactView] = field(default_factory=list)
    current: list[FactView] = field(default_factory=list)


async def file_facts(call: Call, customer: str, turn: EpisodeView, extraction: Extraction,
                     on_file: list[FactView]) -> Filed:
    """Retire what ended, write what is true (valid_from: when it became true by the customer's
    words, else the turn's time; source: the turn), and the problem as a `has_issue` fact."""
    at = turn.at
    by_id = {f.fact_id: f for f in on_file}
    ended: list[FactView] = []
    for f in extraction.facts:
        if not f.ended:
            continue
        retired = await fact_cases.retire_fact(call, RetireInput(
            subject=customer, predicate=f.predicate, object=f.object, agent=AGENT, valid_to=when(f.valid_from_hint, at)))
        ended += [by_id[fid] for fid in retired if fid in by_id]
    items = [FactInput(subject=customer, predicate=f.predicate, object=f.object, agent=AGENT,
                       valid_from=when(f.valid_from_hint, at), source=turn.episode_id)
             for f in extraction.facts if not f.ended]
    problem = extraction.problem
    if problem is not None and problem.kind is not IssueKind.OTHER and extraction.intent is not Intent.CONFIRM_FIXED:
        items.append(FactInput(subject=customer, predicate="has_issue", object=issue_of(problem, at, on_file),
                               agent=AGENT, valid_from=when(problem.time, at), source=turn.episode_id))
    results = await fact_cases.write_facts(call, items)
    written = {r.fact_id for r in results}
    if not written and not ended:
        return Filed([], [], on_file)
    current = await call.memory.facts(call.tenant, customer)
    learnt = [f for f in current if f.fact_id in written and f.predicate != "has_issue"]
    return Filed(learnt, ended, current)
