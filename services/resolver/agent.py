"""The resolver agent: picks up tickets handed to it, reads what intake learnt, measures, acts,
measures again. Everything it knows about a ticket it reads from the graph, so any replica can
continue a ticket another one started.

A ticket handed off (or reopened) is claimed atomically (tickets.claim): of all replicas exactly
one wins; a loser returns. Then the ticket's stage says what is left to do.

The resolver never claims what it did not measure. Its working state is typed data on the ticket
(relay_graph.desk.tickets.work.Work, tickets.get_work / set_work): the round's diagnosis, the plans tried,
the step reached, every check (the readings of one measurement, with its verdict) and every action,
on the lab's clock. The timeline is for people; nothing reads it back to decide. The fixing loop's
decision is a pure function of that state (ticket_work.next_move), and a move to `fixed` needs a
proof (ticket_work.with_proof): a passing check taken after the round's last action.

Customers with a line are worked with the fault lab's equipment (relay_graph.lab: measure_all, act,
record_diagnosis, diagnose_from_readings; never the lab's truth):

  reported / reopened  -> an open outage reaching the customer? link the ticket and tell them
                          first (outages first); then checking_line either way
  checking_line        -> MEASURE every test on the line (timeline events for people, one check on
                          the work). DIAGNOSE from the readings alone and RECORD the diagnosis.
                          healthy readings: an outage the ticket waited on is over -> fixed (the
                          check is the proof); a billing question -> the billing team (escalated);
                          else the customer says it is broken while everything measures healthy ->
                          a technician (schedule_visit + lab.act dispatch_technician).
                          a fault: choose the fix, procedural memory first (diagnosing.rank) -> fixing
  fixing               -> next_move: ACT the plan's next step (network changes it brings back are
                          announced as NetworkChanged so netops closes the outage), MEASURE after
                          each; a passing check after the last step -> PROVEN: a verified procedure
                          (record_fix) -> fixed, the customer asked to confirm. The same fault after
                          the plan: a failure for that procedure, the next candidate; none left ->
                          a network fault waits for the network team (work.needs, checking_line;
                          netops measures again and closes the loop), a fault in the home gets a
                          technician. A different fault showing up is diagnosed and planned in turn.

Time on the lab's clock: measuring and acting take simulated time (diagnosing.DURATION); a ticket's
work starts at the wall clock (or after the last thing done, when that is later) and moves on with
each step, so the lab grades how long a fix took in the field, not how long the processes took.

No line on file: nothing can be measured, so the resolver asks intake for the address (work.needs
= "address", an `address_requested` event and a handoff to intake: graph state, not a message), tells
the customer why, and stops; the ticket never reaches `fixed` that way. Billing problems no
instrument measures (a double charge; a payment problem with no line on file) are escalated to the
billing team (tickets.escalate: an Escalation node, the ticket's priority raised, the reason).

Every stage change is tickets.set_stage with expected_version: if anyone moved the ticket
meanwhile (a stale or repeated notification, the customer's answer, another replica, netops) the
change writes nothing and the resolver stops. Each change is announced (TicketChanged "stage") and
the customer hears the ones that matter, in their latest session.

On "closed" (the customer confirmed) the fix of the round is recorded as verified if it is not
yet (record_fix counts once per ticket and round). On "reopened" tickets.confirm has already
counted the failure against the procedure that was credited; the ticket is worked again from a
fresh measurement.

Taking over from a replica that died: the notification it was handling stays pending and another
replica reclaims it (streams runtime). A fresh delivery never takes a held ticket (a duplicate
notification while the holder works is simply dropped). A reclaimed one does, when the holder's
heartbeat key (relay_graph.runtime.heartbeat) has lapsed, waiting at most one heartbeat TTL for it: the
ticket is taken over by name (claim take_over=). A holder that still beats keeps the ticket unless
it has not touched it for `claim_lease_ms` (its handler failed and left it): then claim lease_ms=.
Either way the ticket's state is in the graph, so the new holder continues where the old one was.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from relay_graph.desk import agent_reads as desk

from relay_graph.desk.customers import case_move as case_move

from relay_graph.desk.network import store as network

from relay_graph.desk.tickets import work as ticket_work

from relay_graph.desk.tickets import store as tickets
from relay_graph import lab
from relay_graph.usecases import tickets as ticket_cases
from relay_graph.usecases.context import Deps, announce
from relay_graph.usecases.replies import ReplyDraft, write_replies
from relay_graph.desk.tickets.status import DONE_FOR_NOW, NOT_ON_THE_LINE, OUTAGE_SYMPTOMS, ticket_status
from relay_graph.runtime.errors import NotFound
from relay_graph.desk.conversation import templates as replies
from relay_graph.desk.extraction.schema import IssueKind
from relay_graph.runtime.heartbeat import heartbeat_key
from relay_graph.lab import Action, FaultKind, Reading
from relay_graph.desk.network.models import NodeKind, Outage
from relay_graph.runtime.streams import Delivery, NetworkChanged, TicketChanged
from relay_graph.desk.tickets.models import Ticket, TicketStage

from . import diagnosing, playbooks

log = logging.getLogger("services.resolver")

AGENT = "resolver"
VISIT_HOURS = 2
WAITING = "waiting_on_network"  # work.needs while the network team's repair is awaited
MAX_PLANS = 4  # fixes tried per round before a technician (or the network team) takes over
# Problems the lab has no instrument for: raised to the billing team, never claimed fixed.
ESCALATE_ONLY: frozenset[str] = frozenset({IssueKind.BILLING_DOUBLE_CHARGE.value})


@dataclass(frozen=True)
class Plan:
    procedure_id: str
    steps: tuple[str, ...]
    source: str  # "learnt" (a procedure in the graph) or "manual"


class _Ctx:
    def __init__(self, deps: Deps, tenant: str, replica: str):
        self.deps, self.tenant, self.replica = deps, tenant, replica
        self.client = deps.client
        self.clock = diagnosing.LabClock(deps.now())
        self.work = ticket_work.Work()


# ---------------------------------------------------------------- entry points (handlers call these)


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
    replica = _replica(deps, delivery)
    if not await _claim(deps, tenant, tid, replica, routing, delivery):
        return "lost"
    await work(deps, tenant, tid, replica)
    return "worked"


async def learn_from_closed(deps: Deps, n: TicketChanged) -> bool:
    """The customer confirmed the fix: make sure the round's procedure counts it (once)."""
    tenant = n.tenant
    t = await tickets.get_ticket(deps.client, tenant, n.ticket_id)
    if t.stage is not TicketStage.CLOSED or t.fixed_by:
        return False
    work = await tickets.get_work(deps.client, tenant, t.id)
    plan = work.plan if work.round == t.round else None
    if not plan or work.step < len(plan) or ticket_work.proof(work) is None:
        return False
    fix = await tickets.record_fix(deps.client, tenant, t.id, issue_kind=t.issue, steps=list(plan),
                                   verified=True, agent=AGENT, at=deps.now())
    return fix.counted


# ---------------------------------------------------------------- claiming


def _replica(deps: Deps, delivery: Delivery | None) -> str:
    if delivery is not None:
        return delivery.consumer
    return deps.consumer_name or f"{AGENT}-{deps.settings.replica}"


async def _claim(deps: Deps, tenant: str, tid: str, replica: str, routing: desk.TicketRouting,
                 delivery: Delivery | None) -> bool:
    if await tickets.claim(deps.client, tenant, tid, agent=AGENT, replica=replica, at=deps.now()):
        await _announce_pickup(deps, tenant, tid, replica, routing)
        return True
    if delivery is None or not delivery.reclaimed:
        return False  # another replica holds it; the notification it works from is its own
    # We reclaimed a notification its consumer stopped handling (it died, or its handler failed).
    now = await desk.ticket_routing(deps.client, tenant, tid)
    holder = now.owner_replica
    if now.owner != AGENT or not holder or now.stage in DONE_FOR_NOW:
        return False
    if await _gone(deps, holder):
        won = await tickets.claim(deps.client, tenant, tid, agent=AGENT, replica=replica, take_over=holder,
                                  at=deps.now())
    else:  # alive: only a holder that has not touched the ticket for a whole lease lets go
        won = await tickets.claim(deps.client, tenant, tid, agent=AGENT, replica=replica,
                                  lease_ms=_lease_ms(deps), at=deps.now())
    if won:
        log.info("%s took ticket %s over from %s", replica, tid, holder)
        await _announce_pickup(deps, tenant, tid, replica, now)
    return won


def _lease_ms(deps: Deps) -> int:
    return int(getattr(deps.settings, "claim_lease_ms", 60_000))


async def _gone(deps: Deps, holder: str) -> bool:
    """Whether the holder's heartbeat has lapsed, waiting at most one heartbeat TTL for it: a
    replica killed a moment ago still has its key until the TTL runs out."""
    key = heartbeat_key(AGENT, holder)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + deps.settings.heartbeat_ttl_s + 0.5
    while await deps.redis.exists(key):
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(0.1)
    return True


async def _announce_pickup(deps: Deps, tenant: str, tid: str, replica: str, before: desk.TicketRouting) -> None:
    if before.owner == AGENT and before.owner_replica == replica:
        return  # a redelivery to the replica that already holds it
    await announce(deps, TicketChanged(tenant=tenant, id=tid, version=before.version, change="picked_up",
                                       actor=AGENT))


# ---------------------------------------------------------------- the workflow


async def work(deps: Deps, tenant: str, tid: str, replica: str) -> Ticket | None:
    ctx = _Ctx(deps, tenant, replica)
    t: Ticket | None = await tickets.peek_ticket(deps.client, tenant, tid)
    # What intake learnt about the customer (recorded as consulted by the resolver).
    await deps.memory.facts(tenant, t.customer, reader=AGENT)
    ctx.work = ticket_work.for_round(await tickets.get_work(deps.client, tenant, tid), t.round)
    ctx.clock.until(_latest(ctx.work))  # the lab's clock never runs back behind what was done
    if any(m.get("direction") == "out" for m in await case_move.moves_of(deps.client, tenant, t.customer)):
        log.info("ticket %s: the customer's case moved to another desk; that desk works it", tid)
        return None
    has_line = await _has_line(ctx, t.customer)
    if t.issue in ESCALATE_ONLY or (not has_line and t.issue in NOT_ON_THE_LINE):
        await _escalate_to_billing(ctx, t)
        return None
    if not has_line:
        await _ask_for_address(ctx, t)
        return None
    while t is not None:
        if t.owner != AGENT or t.owner_replica != replica:
            return t  # taken over, released or reopened under us
        stage = t.stage
        if stage in (TicketStage.REPORTED, TicketStage.REOPENED):
            t = await _lab_start(ctx, t)
        elif stage is TicketStage.CHECKING_LINE:
            t = await _diagnose(ctx, t)
        elif stage is TicketStage.FIXING:
            t = await _lab_fix(ctx, t)
        else:
            return t
    return None


def _latest(work: ticket_work.Work) -> datetime:
    times = [c.at for c in work.checks] + [a.at for a in work.actions]
    return max(times) if times else datetime.min.replace(tzinfo=timezone.utc)


async def _has_line(ctx: _Ctx, customer: str) -> bool:
    try:
        return bool(await network.customer_line(ctx.client, ctx.tenant, customer))
    except NotFound:
        return False


async def _save(ctx: _Ctx, t: Ticket, work: ticket_work.Work) -> None:
    ctx.work = work
    await tickets.set_work(ctx.client, ctx.tenant, t.id, work)


# ---------------------------------------------------------------- nothing to measure


async def _ask_for_address(ctx: _Ctx, t: Ticket) -> None:
    """No line on file: nothing can be measured, so nothing is claimed. The ticket asks intake for
    the customer's address (work.needs and a handoff to intake: graph state intake reads), and the
    customer hears why; once intake places the address on a line it hands the ticket back
    (services/intake/placing.py). An address placed while we were asking: back at once."""
    if ctx.work.needs == ticket_work.NEEDS_ADDRESS:
        return  # asked already in this round
    await _save(ctx, t, ctx.work.model_copy(update={"needs": ticket_work.NEEDS_ADDRESS}))
    await tickets.add_event(ctx.client, ctx.tenant, t.id, agent=AGENT, event="address_requested",
                            detail="no line on file for this customer; intake to get the address",
                            at=ctx.deps.now())
    call = ctx.deps.call(ctx.tenant, AGENT)
    handed, owed = await ticket_cases.hand_off(call, t.id, to_role="intake", at=ctx.deps.now(),
                                               detail="needs the customer's address")
    if await _has_line(ctx, t.customer):  # placed meanwhile (the same turn that opened the ticket)
        await _save(ctx, t, ctx.work.model_copy(update={"needs": None}))
        _, owed = await ticket_cases.hand_off(call, t.id, to_role=AGENT, at=ctx.deps.now(), again=True,
                                              detail="a line is on file now")
        await call.announce(owed)
        return
    await call.announce(owed)
    words = replies.Reply(
        f"I cannot test your line for ticket {t.id} yet: we have no line on file for you. Could you tell me "
        "your address (the area and the city)? Then I can find your line and measure it.",
        [f"ticket {t.id}: no line on file for this customer"])
    if handed.stage is not TicketStage.CHECKING_LINE:
        await _move(ctx, handed, TicketStage.CHECKING_LINE, "no line on file: the address is needed to measure",
                    reply=words)
    else:
        await _tell(ctx, handed, words, f"s-{t.id}-address-r{t.round}")


async def _escalate_to_billing(ctx: _Ctx, t: Ticket) -> None:
    """A billing problem no instrument of ours can measure (a double charge; a payment problem of a
    customer with no line on file): raised to the billing team as graph state, never `fixed`."""
    reason = ("a refund of a double charge is done and checked by the billing team"
              if t.issue == IssueKind.BILLING_DOUBLE_CHARGE.value
              else "no account on our network to read the billing status from")
    esc = await tickets.escalate(ctx.client, ctx.tenant, t.id, reason=reason, to="billing", agent=AGENT,
                                 at=ctx.deps.now())
    words = replies.Reply(
        f"I have passed ticket {t.id} to our billing team with a raised priority: {reason}. They will "
        "write to you here once it is done.",
        [f"ticket {t.id}: escalated {esc.escalation_id} to billing ({reason})"])
    if t.stage is TicketStage.CHECKING_LINE:
        return
    await _move(ctx, t, TicketStage.CHECKING_LINE, f"escalated to billing: {reason}", reply=words)


# ---------------------------------------------------------------- with the lab's equipment


async def _lab_start(ctx: _Ctx, t: Ticket) -> Ticket | None:
    """Outages first: a known outage reaching the customer is linked and said before anything is
    measured; then the line is measured either way (the outage still has to be found and fixed)."""
    if t.issue in OUTAGE_SYMPTOMS:
        outages = await _outages(ctx, t.customer)
        if outages:
            o = outages[0]
            await network.link_tickets_to_outage(ctx.client, ctx.tenant, o.outage_id)
            await _save(ctx, t, ctx.work.model_copy(update={"outages": [*ctx.work.outages, o.outage_id]}))
            words = replies.outage_notice(o.outage_id, o.node_name, o.opened_at, cause=o.cause, ticket_id=t.id)
            return await _move(ctx, t, TicketStage.CHECKING_LINE,
                               f"waiting on outage {o.outage_id} at {o.node_name}; measuring the line", reply=words)
    return await _move(ctx, t, TicketStage.CHECKING_LINE, "measuring the line",
                       reply=ticket_status(t.id, TicketStage.CHECKING_LINE, ctx.deps.now(), owner=AGENT))


async def _diagnose(ctx: _Ctx, t: Ticket) -> Ticket | None:
    if ctx.work.needs == WAITING:
        return None  # a repair did not hold: the network team's outage to close, not ours to redo
    if t.issue in OUTAGE_SYMPTOMS:
        for o in await _outages(ctx, t.customer):
            if o.outage_id not in ctx.work.outages:
                await network.link_tickets_to_outage(ctx.client, ctx.tenant, o.outage_id)
                await _save(ctx, t, ctx.work.model_copy(update={"outages": [*ctx.work.outages, o.outage_id]}))
                await tickets.add_event(ctx.client, ctx.tenant, t.id, agent=AGENT, event="outage_linked",
                                        detail=f"outage {o.outage_id} at {o.node_name}", at=ctx.deps.now())
                await _tell(ctx, t, replies.outage_notice(o.outage_id, o.node_name, o.opened_at, cause=o.cause,
                                                          ticket_id=t.id), f"s-{t.id}-{o.outage_id}")
    readings, kind = await _measure(ctx, t, "measured")
    await _record_diagnosis(ctx, t, kind, readings)
    if kind is None:
        return await _healthy(ctx, t)
    return await _plan_fix(ctx, t, kind, fixing=False)


async def _plan_fix(ctx: _Ctx, t: Ticket, kind: FaultKind, *, fixing: bool) -> Ticket | None:
    """The best fix not yet tried in this round for the diagnosed kind (procedural memory first),
    kept as the work's current plan (and a `plan` event for people); into `fixing` unless already
    there. None left: see _give_up."""
    tried = {tuple(p) for p in ctx.work.plans}
    plan = await _choose_fix(ctx, t, kind, tried)
    if plan is None:
        return await _give_up(ctx, t, kind)
    await _save(ctx, t, ticket_work.with_plan(ctx.work, plan.steps, kind.value))
    await tickets.add_event(ctx.client, ctx.tenant, t.id, agent=AGENT, event="plan",
                            detail=f"{plan.procedure_id}: " + " > ".join(plan.steps), at=ctx.deps.now())
    if fixing:
        return t
    return await _move(ctx, t, TicketStage.FIXING,
                       f"diagnosed {kind.value}; trying the {plan.source} procedure {plan.procedure_id}")


async def _choose_fix(ctx: _Ctx, t: Ticket, kind: FaultKind, tried: set[tuple[str, ...]]) -> Plan | None:
    candidates: list[diagnosing.Candidate] = []
    learnt: set[tuple[str, ...]] = set()
    for p in await tickets.best_procedures(ctx.client, ctx.tenant, t.issue, limit=20):
        steps = diagnosing.applicable(p.steps, kind)
        if steps is not None:
            candidates.append(diagnosing.Candidate(steps, p.successes, p.failures, learnt=True))
            learnt.add(tuple(a.value for a in steps))
    for steps in diagnosing.manual(kind):
        try:  # a manual fix customers said did not hold has a record without a success
            p = await tickets.get_procedure(ctx.client, ctx.tenant,
                                            tickets.procedure_id(t.issue, [a.value for a in steps]))
            candidates.append(diagnosing.Candidate(steps, p.successes, p.failures))
        except NotFound:
            candidates.append(diagnosing.Candidate(steps))
    for c in diagnosing.rank(kind, candidates):
        names = tuple(a.value for a in c.steps)
        if names not in tried:
            source = "learnt" if names in learnt else "manual"
            return Plan(tickets.procedure_id(t.issue, list(names)), names, source)
    return None


async def _lab_fix(ctx: _Ctx, t: Ticket) -> Ticket | None:
    """The fixing loop: each decision is ticket_work.next_move over the work (pure); this carries
    it out. A step is always followed by a new measurement, and only a passing one proves the fix."""
    if ctx.work.plan is None or ctx.work.diagnosis is None:  # fixing set by hand: measure first
        return await _move(ctx, t, TicketStage.CHECKING_LINE, "no diagnosis on file; measuring the line")
    readings: list[Reading] | None = None
    while True:
        move = ticket_work.next_move(ctx.work, max_plans=MAX_PLANS)
        if move.kind is ticket_work.MoveKind.MEASURE or (readings is None and move.kind is not ticket_work.MoveKind.ACT):
            readings, _ = await _measure(ctx, t, "re-measured")  # also: applied but not judged since (a crash)
            continue
        kind = FaultKind(ctx.work.diagnosis)
        if move.kind is ticket_work.MoveKind.ACT:
            t = await _act(ctx, t, move.step)
            if t is None:
                return None
            readings, _ = await _measure(ctx, t, "re-measured")
            continue
        if move.kind is ticket_work.MoveKind.PROVEN:
            return await _proven(ctx, t, kind, list((ctx.work.plan or [])[:ctx.work.step]), readings)
        if t.stage is not TicketStage.FIXING:
            return None  # a technician was booked and did not clear it: theirs now
        now_kind = FaultKind(move.diagnosis)
        if now_kind is not kind:  # that fault is gone, another one shows now: diagnose it in turn
            await _record_diagnosis(ctx, t, now_kind, readings)
            if move.kind is ticket_work.MoveKind.GIVE_UP:
                return await _give_up(ctx, t, now_kind)
            return await _plan_fix(ctx, t, now_kind, fixing=True)
        # the readings still show the same fault: this procedure did not prove out
        steps = list(ctx.work.plan or [])
        fix = await tickets.record_fix(ctx.client, ctx.tenant, t.id, issue_kind=t.issue, steps=steps,
                                       verified=False, agent=AGENT, at=ctx.deps.now())
        log.info("ticket %s: %s did not clear %s", t.id, fix.procedure_id, kind.value)
        if move.kind is ticket_work.MoveKind.GIVE_UP:
            return await _give_up(ctx, t, kind)
        return await _plan_fix(ctx, t, kind, fixing=True)


async def _act(ctx: _Ctx, t: Ticket, step: str) -> Ticket | None:
    """One step on the customer's line: a fix_step event with the lab's note; network changes it
    brings about announced for netops. A technician is booked first (the customer told)."""
    action = diagnosing.action(step)
    if action is None:
        raise ValueError(f"not a lab action: {step!r}")
    visit_note = ""
    if action is Action.DISPATCH_TECHNICIAN:
        t, visit = await _book_technician(ctx, t, "the readings point at the fibre inside your home")
        if t is None:
            return None
        at = ctx.clock.until(visit.at + diagnosing.VISIT)
        visit_note = f"; visit {visit.visit_id}"
    else:
        at = ctx.clock.after(diagnosing.DURATION[action])
    result = await lab.act(ctx.client, ctx.tenant, t.customer, action, ticket=t.id, actor=AGENT, at=at)
    await _save(ctx, t, ticket_work.with_act(ctx.work, ticket_work.Act(
        round=t.round, action=action.value, action_id=result.action_id, at=result.at)))
    await tickets.add_event(ctx.client, ctx.tenant, t.id, agent=AGENT, event="fix_step",
                            detail=f"{action.value}: {result.note} ({result.action_id}, lab time "
                                   f"{replies.when(result.at)}{visit_note})", at=ctx.deps.now())
    for change in result.visible:
        if change.node_id is not None and change.version is not None:
            await announce(ctx.deps, NetworkChanged(
                tenant=ctx.tenant, id=change.node_id, version=change.version, change="up" if change.up else "down",
                actor=AGENT))
    delay = ctx.deps.settings.step_delay_ms / 1000  # tests: a window between a step and its measurement
    if delay:
        await asyncio.sleep(delay)
    return t


async def _proven(ctx: _Ctx, t: Ticket, kind: FaultKind, steps: list[str], readings: list[Reading]
                  ) -> Ticket | None:
    """The re-measurement is healthy after the last step: the steps taken are a verified procedure;
    ask the customer. with_proof refuses (Unproven) unless the work shows that measurement."""
    await _save(ctx, t, ticket_work.with_proof(ctx.work, AGENT))
    now = ctx.deps.now()
    fix = await tickets.record_fix(ctx.client, ctx.tenant, t.id, issue_kind=t.issue, steps=list(steps),
                                   verified=True, agent=AGENT, at=now)
    said = "; ".join(diagnosing.SAY[diagnosing.action(s)] for s in steps)
    proof = diagnosing.evidence(readings, None)
    words = replies.confirm_fixed_request(
        t.id, f"we found that {diagnosing.MEANING[kind]}; {said}, and measured your line again ({proof})", now, AGENT)
    words = replies.Reply(words.text, [*words.how_i_know, f"ticket {t.id}: re-measured "
                                       + ", ".join(r.reading_id for r in readings) + " healthy"])
    return await _move(ctx, t, TicketStage.FIXED,
                       f"{fix.procedure_id} fixed {kind.value}: re-measured healthy ({proof})", reply=words)


async def _healthy(ctx: _Ctx, t: Ticket) -> Ticket | None:
    """Everything measures healthy."""
    if t.issue in NOT_ON_THE_LINE:  # billing shows nothing wrong: people from billing look at it
        await _escalate_to_billing(ctx, t)
        return None
    outages = await desk.ticket_outages(ctx.client, ctx.tenant, t.id)
    if outages and not any(o.open for o in outages):
        ids = ", ".join(o.outage_id for o in outages)
        await _save(ctx, t, ticket_work.with_proof(ctx.work, AGENT))
        words = replies.confirm_fixed_request(t.id, f"the outage affecting you ({ids}) is over and your line "
                                                    "measures healthy again", ctx.deps.now(), AGENT)
        return await _move(ctx, t, TicketStage.FIXED, f"outage {ids} is over; the line measures healthy", reply=words)
    if outages:
        # The network came back before netops closed the outage: its close measures this line again
        # and moves the ticket on; a technician would be sent for nothing.
        ids = ", ".join(o.outage_id for o in outages if o.open)
        await tickets.add_event(ctx.client, ctx.tenant, t.id, agent=AGENT, event="waiting_on_outage",
                                detail=f"the line measures healthy; outage {ids} is still open, so the network "
                                       "team closes it and measures again", at=ctx.deps.now())
        return None
    t, _ = await _book_technician(ctx, t, "every test on your line looks healthy, so a technician will check "
                                          "your home in person", act=True)
    return None


async def _book_technician(ctx: _Ctx, t: Ticket, reason: str, *, act: bool = False):
    """Book (or find) the visit and move to technician_dispatched; with `act`, the lab's
    dispatch_technician is carried out at the visit (healthy readings: nothing more to measure)."""
    now = ctx.deps.now()
    full = await tickets.get_ticket(ctx.client, ctx.tenant, t.id)
    upcoming = [v for v in full.visits if v.at >= now]
    visit = upcoming[0] if upcoming else await tickets.schedule_visit(
        ctx.client, ctx.tenant, t.id, technician=_technician(t.id), at=_visit_slot(ctx.clock.now), agent=AGENT)
    if act:
        result = await lab.act(ctx.client, ctx.tenant, t.customer, Action.DISPATCH_TECHNICIAN, ticket=t.id,
                               actor=AGENT, at=ctx.clock.until(visit.at + diagnosing.VISIT))
        await _save(ctx, t, ctx.work.model_copy(update={"actions": [*ctx.work.actions, ticket_work.Act(
            round=t.round, action=Action.DISPATCH_TECHNICIAN.value, action_id=result.action_id, at=result.at)]}))
        await tickets.add_event(ctx.client, ctx.tenant, t.id, agent=AGENT, event="technician",
                                detail=f"dispatch_technician: {result.note} ({result.action_id}, visit "
                                       f"{visit.visit_id})", at=ctx.deps.now())
    words = replies.technician_dispatched(t.id, visit.visit_id, visit.technician, visit.at,
                                          visit.at + timedelta(hours=VISIT_HOURS))
    words = replies.Reply(f"{words.text} Why: {reason}.", words.how_i_know)
    new = await _move(ctx, t, TicketStage.TECHNICIAN_DISPATCHED, f"{reason}; visit {visit.visit_id}", reply=words)
    return new, visit


async def _give_up(ctx: _Ctx, t: Ticket, kind: FaultKind) -> Ticket | None:
    """No remote fix left: a network fault waits for the network team (netops closes the outage and
    the ticket with it, after measuring the line again); a fault in the home gets a technician."""
    if kind not in lab.NETWORK_KINDS:
        await _book_technician(ctx, t, "no remote fix cleared the fault", act=True)
        return None
    own = await _own_box_down(ctx, t.customer)
    if own is not None:  # the home box itself is down: a visit, not the network team
        await _book_technician(ctx, t, f"your home box {own} does not answer", act=True)
        return None
    outages = await _outages(ctx, t.customer)
    for o in outages:
        await network.link_tickets_to_outage(ctx.client, ctx.tenant, o.outage_id)
    where = ", ".join(f"outage {o.outage_id} at {o.node_name}" for o in outages) or "a fault above your home"
    await _save(ctx, t, ctx.work.model_copy(update={
        "needs": WAITING, "outages": sorted({*ctx.work.outages, *(o.outage_id for o in outages)})}))
    await tickets.add_event(ctx.client, ctx.tenant, t.id, agent=AGENT, event=WAITING,
                            detail=f"{kind.value}: waiting on the network team ({where})", at=ctx.deps.now())
    await tickets.escalate(ctx.client, ctx.tenant, t.id, to="netops", agent=AGENT, at=ctx.deps.now(),
                           reason=f"{kind.value}: no remote fix cleared it; a network repair is needed ({where})")
    words = replies.Reply(
        f"Our measurements for ticket {t.id} show a fault in the network ({diagnosing.MEANING[kind]}), not in "
        "your home. Our network team is working on it; there is no need to restart anything, and we will tell "
        "you here as soon as it is repaired.",
        [f"ticket {t.id}: diagnosis {kind.value}, waiting on {where}"])
    if t.stage is TicketStage.CHECKING_LINE:
        await _tell(ctx, t, words, f"s-{t.id}-network-r{t.round}")
        return None
    await _move(ctx, t, TicketStage.CHECKING_LINE, f"waiting on the network team ({where})", reply=words)
    return None


async def _own_box_down(ctx: _Ctx, customer: str) -> str | None:
    try:
        hops = await network.customer_line(ctx.client, ctx.tenant, customer)
    except NotFound:
        return None
    if hops and hops[0].kind is NodeKind.ONT and hops[0].status != "up":
        return hops[0].node_id
    return None


async def _measure(ctx: _Ctx, t: Ticket, label: str) -> tuple[list[Reading], FaultKind | None]:
    """Every test on the customer's line; each reading a timeline event named after its test, and
    the set kept on the work as one check with its verdict."""
    readings, kind = await measure_check(ctx.client, ctx.tenant, t, at=ctx.clock.after(diagnosing.MEASURE),
                                         now=ctx.deps.now(), label=label)
    await _save(ctx, t, ticket_work.with_check(ctx.work, check_of(t.round, readings, kind, ctx.clock.now)))
    return readings, kind


async def measure_check(client, tenant: str, t: Ticket, *, at: datetime, now: datetime, label: str, agent: str = AGENT
                        ) -> tuple[list[Reading], FaultKind | None]:
    """Measure every test on the ticket's customer's line (timeline events for people) and diagnose."""
    readings = await lab.measure_all(client, tenant, t.customer, at=at)
    for r in readings:
        await tickets.add_event(client, tenant, t.id, agent=agent, event=r.test.value,
                                detail=f"{label}: {diagnosing.describe(r)}", at=now)
    return readings, lab.diagnose_from_readings(readings)


def check_of(round_: int, readings: list[Reading], kind: FaultKind | None, at: datetime) -> ticket_work.Check:
    return ticket_work.Check(round=round_, at=max([at, *(r.at for r in readings)]),
                             readings=[r.reading_id for r in readings],
                             diagnosis=kind.value if kind is not None else None, passed=kind is None)


async def _record_diagnosis(ctx: _Ctx, t: Ticket, kind: FaultKind | None, readings: list[Reading]) -> None:
    name = kind.value if kind is not None else diagnosing.HEALTHY
    meaning = diagnosing.MEANING[kind] if kind is not None else "every test looks healthy"
    await tickets.add_event(ctx.client, ctx.tenant, t.id, agent=AGENT, event="diagnosis",
                            detail=f"{name}: {meaning} ({diagnosing.evidence(readings, kind)}; readings "
                                   + ", ".join(r.reading_id for r in readings) + ")", at=ctx.deps.now())
    await lab.record_diagnosis(ctx.client, ctx.tenant, t.id, t.customer, kind, at=ctx.clock.now)


async def _outages(ctx: _Ctx, customer: str) -> list[Outage]:
    try:
        return await network.open_outages_for_customer(ctx.client, ctx.tenant, customer)
    except NotFound:
        return []


# ---------------------------------------------------------------- actions


async def _move(ctx: _Ctx, t: Ticket, stage: TicketStage, detail: str, *, reply: replies.Reply | None = None,
                ) -> Ticket | None:
    new = await tickets.set_stage(ctx.client, ctx.tenant, t.id, stage=stage, agent=AGENT, detail=detail,
                                  expected_version=t.version, at=ctx.deps.now())
    if not new.changed:
        log.info("ticket %s moved on meanwhile (now %s v%d); leaving it", t.id, new.stage.value, new.version)
        return None
    await announce(ctx.deps, TicketChanged(tenant=ctx.tenant, id=t.id, version=new.version, change="stage",
                                           actor=AGENT))
    if reply is not None:
        await _tell(ctx, new, reply, desk.status_reply_id(t.id, new.version))
    return new


async def _tell(ctx: _Ctx, t: Ticket, reply: replies.Reply, reply_id: str) -> None:
    session = await desk.latest_session(ctx.client, ctx.tenant, t.customer) or t.session \
        or f"desk-{t.id}"
    await write_replies(ctx.deps, ctx.tenant, [ReplyDraft(
        id=reply_id, session=session, customer=t.customer, text=reply.text, reply_to=t.id,
        version=t.version, at=ctx.deps.now(), ticket_id=t.id, how_i_know=list(reply.how_i_know), rows=(t,),
    )])



def _technician(ticket_id: str) -> str:
    i = int(hashlib.blake2b(ticket_id.encode(), digest_size=4).hexdigest(), 16)
    return playbooks.TECHNICIANS[i % len(playbooks.TECHNICIANS)]


def _visit_slot(now: datetime) -> datetime:
    """Tomorrow at 10:00 UTC: the same slot for every delivery on one day."""
    day = (now.astimezone(timezone.utc) + timedelta(days=1)).date()
    return datetime(day.year, day.month, day.day, 10, 0, tzinfo=timezone.utc)


