"""Fixing: the fix chosen for a diagnosis (procedural memory first, diagnosing.rank), then the
loop whose every decision is ticket_work.next_move over the work (pure): ACT the plan's next step,
MEASURE after each; a passing check after the last step is PROVEN (a verified procedure, the
customer asked to confirm). The same fault after the plan: a failure for that procedure, the next
candidate; none left: a network fault waits for the network team, a fault in the home gets a
technician. A different fault showing up is diagnosed and planned in turn. May use the use cases
and the desk's and lab's reads."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from relay_graph import lab
from relay_graph.desk.tickets import store as tickets
from relay_graph.desk.tickets import work as ticket_work
from relay_graph.desk.tickets import workflow as wf
from relay_graph.desk.conversation import templates as replies
from relay_graph.desk.tickets.models import Ticket, TicketStage
from relay_graph.desk import agent_reads as desk
from relay_graph.lab import Action, FaultKind, Reading
from relay_graph.runtime.errors import NotFound
from relay_graph.usecases import equipment, network as network_cases, tickets as ticket_cases

from . import checking, diagnosing, visits
from .job import AGENT, Job, prove, step, tell

MAX_PLANS = 4  # fixes tried per round before a technician (or the network team) takes over
Move = ticket_work.MoveKind


@dataclass(frozen=True)
class Plan:
    procedure_id: str
    steps: tuple[str, ...]
    source: str  # "learnt" (a procedure in the graph) or "manual"


async def plan_fix(job: Job, t: Ticket, kind: FaultKind) -> Ticket | None:
    """The best fix not yet tried in this round for the diagnosed kind, kept as the work's current
    plan; into `fixing` unless already there. None left: see give_up."""
    plan = await choose_fix(job, t, kind, {tuple(p) for p in job.work.plans})
    if plan is None:
        return await give_up(job, t, kind)
    event = wf.FixPlanned(at=job.call.now(), procedure_id=plan.procedure_id, steps=plan.steps, diagnosis=kind.value,
                          source=plan.source)
    return await step(job, t, event, work=ticket_work.with_plan(job.work, plan.steps, kind.value))


async def choose_fix(job: Job, t: Ticket, kind: FaultKind, tried: set[tuple[str, ...]]) -> Plan | None:
    candidates: list[diagnosing.Candidate] = []
    learnt: set[tuple[str, ...]] = set()
    for p in await tickets.best_procedures(job.client, job.tenant, t.issue, limit=20):
        steps = diagnosing.applicable(p.steps, kind)
        if steps is not None:
            candidates.append(diagnosing.Candidate(steps, p.successes, p.failures, learnt=True))
            learnt.add(tuple(a.value for a in steps))
    for steps in diagnosing.manual(kind):
        try:  # a manual fix customers said did not hold has a record without a success
            p = await tickets.get_procedure(job.client, job.tenant,
                                            tickets.procedure_id(t.issue, [a.value for a in steps]))
            candidates.append(diagnosing.Candidate(steps, p.successes, p.failures))
        except NotFound:
            candidates.append(diagnosing.Candidate(steps))
    for c in diagnosing.rank(kind, candidates):
        names = tuple(a.value for a in c.steps)
        if names not in tried:
            return Plan(tickets.procedure_id(t.issue, list(names)), names, "learnt" if names in learnt else "manual")
    return None


async def fix(job: Job, t: Ticket) -> Ticket | None:
    """The fixing loop: each decision is next_move over the work; a step is always followed by a
    new measurement, and only a passing one proves the fix."""
    if job.work.plan is None or job.work.diagnosis is None:  # fixing set by hand: measure first
        return await step(job, t, wf.LineCheckStarted(at=job.call.now()))
    readings: list[Reading] | None = None
    while t is not None:
        move = ticket_work.next_move(job.work, max_plans=MAX_PLANS)
        if move.kind is Move.ACT:
            t = await act(job, t, move.step)
            readings = None
        if move.kind is Move.MEASURE or readings is None:
            if t is not None:  # also: applied but not judged since (a crash)
                t, readings = await checking.measure(job, t)
            continue
        if move.kind is Move.PROVEN:
            return await proven(job, t, readings)
        return await not_cleared(job, t, move, readings)
    return None


async def act(job: Job, t: Ticket, name: str) -> Ticket | None:
    """One step on the customer's line (the technician's visit when the step is theirs)."""
    action = diagnosing.action(name)
    if action is None:
        raise ValueError(f"not a lab action: {name!r}")
    if action is Action.DISPATCH_TECHNICIAN:
        return await visits.technician_fixes(job, t)
    result = await equipment.act(job.call, t.customer, action, ticket=t.id,
                                 at=job.clock.after(diagnosing.DURATION[action]))
    work = ticket_work.with_act(job.work, ticket_work.Act(round=t.round, action=action.value,
                                                          action_id=result.action_id, at=result.at))
    t = await step(job, t, wf.FixAttempted(at=result.at, action=action.value, action_id=result.action_id), work=work)
    delay = job.deps.settings.step_delay_ms / 1000  # tests: a window between a step and its measurement
    if delay:
        await asyncio.sleep(delay)
    return t


async def proven(job: Job, t: Ticket, readings: list[Reading]) -> Ticket | None:
    """The re-measurement is healthy after the last step: the steps taken are a verified
    procedure; ask the customer."""
    steps = tuple((job.work.plan or [])[:job.work.step])
    kind = FaultKind(job.work.diagnosis)
    said = "; ".join(diagnosing.SAY[diagnosing.action(s)] for s in steps)
    proof = diagnosing.evidence(readings, None)
    words = replies.confirm_fixed_request(
        t.id, f"we found that {diagnosing.MEANING[kind]}; {said}, and measured your line again ({proof})",
        job.deps.now(), AGENT)
    words = replies.Reply(words.text, [*words.how_i_know, f"ticket {t.id}: re-measured "
                                       + ", ".join(r.reading_id for r in readings) + " healthy"])
    return await prove(job, t, words, steps=steps)


async def not_cleared(job: Job, t: Ticket, move: ticket_work.Move, readings: list[Reading]) -> Ticket | None:
    """The plan is spent (or another fault shows): diagnose again, count the failure, plan the
    next fix or give up."""
    if t.stage is not TicketStage.FIXING:
        return None  # a technician came and did not clear it: theirs now
    kind, now_kind = FaultKind(job.work.diagnosis), FaultKind(move.diagnosis)
    if now_kind is not kind:  # that fault is gone, another one shows now: diagnose it in turn
        t = await checking.record_diagnosis(job, t, now_kind, readings)
    elif await ticket_cases.fix_failed(job.call, t.id, issue_kind=t.issue, steps=list(job.work.plan or []),
                                       version=t.version) is None:
        return None
    if t is None:
        return None
    if move.kind is Move.GIVE_UP:
        return await give_up(job, t, now_kind)
    return await plan_fix(job, t, now_kind)


async def give_up(job: Job, t: Ticket, kind: FaultKind) -> Ticket | None:
    """No remote fix left: a network fault waits for the network team (netops closes the outage and
    the ticket with it, after measuring the line again); a fault in the home gets a technician."""
    if kind not in lab.NETWORK_KINDS:
        await visits.book(job, t, wf.VisitReason.NO_REMOTE_FIX)
        return None
    if await checking.own_box_down(job, t.customer) is not None:  # the home box is down: a visit
        await visits.book(job, t, wf.VisitReason.BOX_DOWN)
        return None
    outages = await checking.outages(job, t.customer)
    for o in outages:
        await network_cases.link_tickets(job.call, o.outage_id)
    ids = tuple(o.outage_id for o in outages)
    where = ", ".join(f"outage {o.outage_id} at {o.node_name}" for o in outages) or "a fault above your home"
    work = job.work.model_copy(update={"needs": wf.Waiting.NETWORK.value, "outages": sorted({*job.work.outages, *ids})})
    waiting = await step(job, t, wf.WaitingOnNetwork(at=job.call.now(), diagnosis=kind.value, outage_ids=ids),
                         work=work)
    if waiting is None:
        return None
    await ticket_cases.escalate(job.call, t.id, to="netops", version=waiting.version,
                                reason=f"{kind.value}: no remote fix cleared it; a network repair is needed ({where})")
    words = replies.Reply(
        f"Our measurements for ticket {t.id} show a fault in the network ({diagnosing.MEANING[kind]}), not in "
        "your home. Our network team is working on it; there is no need to restart anything, and we will tell "
        "you here as soon as it is repaired.",
        [f"ticket {t.id}: diagnosis {kind.value}, waiting on {where}"])
    moved = waiting.stage is not t.stage
    await tell(job, waiting, words, desk.status_reply_id(t.id, waiting.version) if moved
               else f"s-{t.id}-network-r{t.round}")
    return None
