"""The resolver agent: picks up tickets handed to it, reads what intake learnt, measures, acts,
measures again. Everything it knows about a ticket it reads from the graph, so any replica can
continue a ticket another one started.

Each notification's work runs in one unit of work (`deps.work`): its Call is what the use cases
write through (usecases.tickets for every ticket write, through the ticket workflow's state
machine; usecases.equipment for the lab's instruments; usecases.network for outages), and what
they owe is announced when the work ends. The agent reads, decides (pure functions:
ticket_work.next_move, diagnosing.rank) and calls use cases; it writes no step text of its own.

A ticket handed off (or reopened) is claimed atomically (claiming.py): of all replicas exactly
one wins; a loser returns. Then the ticket's stage says what is left to do:

  reported / reopened  -> outages first, then checking_line (checking.start)
  checking_line        -> measure, diagnose, record the diagnosis (checking.check); healthy readings
                          -> checking.healthy; a fault -> the fix chosen (fixing.plan_fix)
  fixing               -> the fixing loop (fixing.fix); a technician's step is a visit booked and
                          carried out at its time (visits.py)

No line on file, or a billing problem no instrument measures: redirecting.py. Every event is
written with the version the resolver last saw: if anyone moved the ticket meanwhile (a stale or
repeated notification, the customer's answer, another replica, netops) nothing is written and
the resolver stops.

Time on the lab's clock: measuring and acting take simulated time (diagnosing.DURATION); a ticket's
work starts at the wall clock (or after the last thing done, when that is later) and moves on with
each step, so the lab grades how long a fix took in the field, not how long the processes took.

On "closed" (the customer confirmed) the fix of the round is counted verified if it is not yet
(usecases.tickets.credit_fix counts once per ticket and round). On "reopened" the confirmation has
already counted the failure against the procedure that was credited; the ticket is worked again
from a fresh measurement."""

from __future__ import annotations

import logging
from datetime import datetime, timezone

from relay_graph.desk import agent_reads as desk
from relay_graph.desk.customers import case_move
from relay_graph.desk.extraction.schema import IssueKind
from relay_graph.desk.tickets import store as tickets
from relay_graph.desk.tickets import work as ticket_work
from relay_graph.desk.tickets.models import Ticket, TicketStage
from relay_graph.desk.tickets.status import DONE_FOR_NOW, NOT_ON_THE_LINE
from relay_graph.runtime.streams import Delivery, TicketChanged
from relay_graph.usecases import tickets as ticket_cases
from relay_graph.usecases.context import Call, Deps

from . import checking, claiming, fixing, redirecting
from .diagnosing import LabClock
from .job import AGENT, Job

log = logging.getLogger("services.resolver")

# Problems the lab has no instrument for: raised to the billing team, never claimed fixed.
ESCALATE_ONLY: frozenset[str] = frozenset({IssueKind.BILLING_DOUBLE_CHARGE.value})


async def take_up(deps: Deps, n: TicketChanged, delivery: Delivery | None = None) -> str:
    """Claim and work a ticket handed to the resolver (or reopened). Returns what happened:
    "not_ours", "nothing_to_do", "lost" or "worked"."""
    tenant, tid = n.tenant, n.ticket_id
    routing = await desk.ticket_routing(deps.client, tenant, tid)  # an unknown ticket raises NotFound
    if routing.stage in DONE_FOR_NOW:
        return "nothing_to_do"
    if routing.owner not in (None, AGENT):
        return "not_ours"
    if routing.owner is None and routing.waiting_for != AGENT and routing.stage != TicketStage.REOPENED.value:
        return "not_ours"
    replica = claiming.replica_of(deps, delivery)
    async with deps.work(tenant, AGENT) as call:
        if not await claiming.claim(deps, call, tid, replica, delivery):
            return "lost"
        await work_on(deps, call, tid, replica)
    return "worked"


async def learn_from_closed(deps: Deps, n: TicketChanged) -> bool:
    """The customer confirmed the fix: make sure the round's procedure counts it (once)."""
    t = await tickets.get_ticket(deps.client, n.tenant, n.ticket_id)
    if t.stage is not TicketStage.CLOSED or t.fixed_by:
        return False
    work = await tickets.get_work(deps.client, n.tenant, t.id)
    plan = work.plan if work.round == t.round else None
    if not plan or work.step < len(plan) or ticket_work.proof(work) is None:
        return False
    async with deps.work(n.tenant, AGENT) as call:
        fix = await ticket_cases.credit_fix(call, t.id, issue_kind=t.issue, steps=list(plan))
    return fix.counted


async def work(deps: Deps, tenant: str, tid: str, replica: str) -> Ticket | None:
    """Work the ticket this replica holds, in a unit of work of its own."""
    async with deps.work(tenant, AGENT) as call:
        return await work_on(deps, call, tid, replica)


async def work_on(deps: Deps, call: Call, tid: str, replica: str) -> Ticket | None:
    t: Ticket | None = await tickets.peek_ticket(deps.client, call.tenant, tid)
    job = Job(deps, call, replica, LabClock(deps.now()))
    await deps.memory.facts(call.tenant, t.customer, reader=AGENT)  # what intake learnt, read as consulted
    job.work = ticket_work.for_round(await tickets.get_work(deps.client, call.tenant, tid), t.round)
    job.clock.until(_latest(job.work))  # the lab's clock never runs back behind what was done
    if any(m.get("direction") == "out" for m in await case_move.moves_of(deps.client, call.tenant, t.customer)):
        log.info("ticket %s: the customer's case moved to another desk; that desk works it", tid)
        return None
    has_line = await redirecting.has_line(job, t.customer)
    if t.issue in ESCALATE_ONLY or (not has_line and t.issue in NOT_ON_THE_LINE):
        await redirecting.escalate_to_billing(job, t)
        return None
    if not has_line:
        await redirecting.ask_for_address(job, t)
        return None
    while t is not None:
        if t.owner != AGENT or t.owner_replica != replica:
            return t  # taken over, released or reopened under us
        if t.stage in (TicketStage.REPORTED, TicketStage.REOPENED):
            t = await checking.start(job, t)
        elif t.stage is TicketStage.CHECKING_LINE:
            t = await _check(job, t)
        elif t.stage is TicketStage.FIXING:
            t = await fixing.fix(job, t)
        else:
            return t
    return None


async def _check(job: Job, t: Ticket) -> Ticket | None:
    t, kind = await checking.check(job, t)
    if t is None:
        return None
    if kind is None:
        return await checking.healthy(job, t)
    return await fixing.plan_fix(job, t, kind)


def _latest(work: ticket_work.Work) -> datetime:
    times = [c.at for c in work.checks] + [a.at for a in work.actions]
    return max(times) if times else datetime.min.replace(tzinfo=timezone.utc)
