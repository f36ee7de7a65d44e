"""The resolver agent: picks up tickets handed to it, reads what intake learnt, measures, acts,
measures again. Everything it knows about a ticket it reads from the graph, so any replica can
continue a ticket another one started.

A ticket handed off (or reopened) is claimed atomically (tickets.claim): of all replicas exactly
one wins; a loser returns. Then the ticket's stage says what is left to do.

Customers with a line (the usual case) are worked with the fault lab's equipment (relay_graph.lab:
measure_all, act, record_diagnosis, diagnose_from_readings; never the lab's truth):

  reported / reopened  -> an open outage reaching the customer? link the ticket and tell them
                          first (outages first); then checking_line either way
  checking_line        -> MEASURE every test on the line; each reading is a timeline event with its
                          values. DIAGNOSE from the readings alone and RECORD the diagnosis on the
                          ticket (lab.record_diagnosis), also as a timeline event.
                          healthy readings: an outage the ticket waited on is over -> fixed;
                          a billing question -> the playbook (below); else the customer says it is
                          broken while everything measures healthy -> a technician
                          (schedule_visit + lab.act dispatch_technician) -> technician_dispatched.
                          a fault: choose the fix, procedural memory first (diagnosing.rank: the
                          best-scored learnt procedure for this kind of issue that fits the
                          diagnosis, else the manual's usual fix) -> fixing
  fixing               -> ACT each step (a fix_step event; network changes it brings back are
                          announced as NetworkChanged so netops closes the outage), RE-MEASURE after
                          each step; the re-measurement is healthy -> the fix is proven: recorded
                          as a verified procedure (record_fix with the steps actually taken) ->
                          fixed, the customer asked to confirm. Not healthy after the plan: a
                          failure for that procedure, then the next candidate; none left ->
                          a network fault waits for the network team (checking_line, netops closes
                          the loop), a fault in the home gets a technician. A different fault
                          showing up after a repair is diagnosed and recorded in turn.

Time on the lab's clock: measuring and acting take simulated time (diagnosing.DURATION); a ticket's
work starts at the wall clock and moves on with each step, so the lab grades how long a fix took
in the field, not how long the desk's processes took.

Customers the network does not know (no line on file), and billing problems the lab has no
instrument for (a double charge), follow the catalogue playbook as before: the remote steps are
timeline events, the line (if any) is checked again, and the customer's answer decides
(record_fix verified on the playbook's steps; "not fixed" counts a failure).

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
heartbeat key (relay_graph.heartbeat) has lapsed, waiting at most one heartbeat TTL for it: the
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

from relay_graph import desk, lab, network, tickets
from relay_graph.agents import Deps, ReplyDraft, announce, write_replies
from relay_graph.agents.issues import DONE_FOR_NOW, NOT_ON_THE_LINE, OUTAGE_SYMPTOMS, ticket_status
from relay_graph.errors import NotFound
from relay_graph.extraction import replies
from relay_graph.extraction.schema import IssueKind
from relay_graph.heartbeat import heartbeat_key
from relay_graph.lab import Action, FaultKind, Reading
from relay_graph.network_models import NodeKind, Outage
from relay_graph.streams import Delivery, NetworkChanged, TicketChanged
from relay_graph.ticket_models import Ticket, TicketDetail, TicketStage

from . import diagnosing, playbooks

log = logging.getLogger("services.resolver")

AGENT = "resolver"
ROUND_STARTS = ("confirmed_not_fixed", "reopened")
VISIT_HOURS = 2
WAITING = "waiting_on_network"  # a round's marker: the network team's repair is awaited
MAX_PLANS = 4  # fixes tried per round before a technician (or the network team) takes over
# Problems the lab has no instrument for: the playbook and the customer's word decide.
PLAYBOOK_ONLY: frozenset[str] = frozenset({IssueKind.BILLING_DOUBLE_CHARGE.value})


@dataclass(frozen=True)
class Plan:
    procedure_id: str
    steps: tuple[str, ...]
    source: str  # "learnt" (a procedure in the graph) or "playbook"


@dataclass(frozen=True)
class LineReading:
    summary: str
    own_box_down: str | None  # the customer's Ont, when it is down
    upstream_down: str | None  # the first node or link further up that is down

    @property
    def healthy(self) -> bool:
        return self.own_box_down is None and self.upstream_down is None


class _Ctx:
    def __init__(self, deps: Deps, tenant: str, replica: str):
        self.deps, self.tenant, self.replica = deps, tenant, replica
        self.client = deps.client
        self.lab = False  # worked with the lab's equipment (the customer has a line)
        self.clock = diagnosing.LabClock(deps.now())


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
    plan = await _plan_of_round(deps, tenant, t)
    if plan is None or len(_steps_done(t)) < len(plan.steps):
        return False
    fix = await tickets.record_fix(deps.client, tenant, t.id, issue_kind=t.issue, steps=list(plan.steps),
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
    ctx.lab = t.issue not in PLAYBOOK_ONLY and await _has_line(ctx, t.customer)
    while t is not None:
        if t.owner != AGENT or t.owner_replica != replica:
            return t  # taken over, released or reopened under us
        stage = t.stage
        if stage in (TicketStage.REPORTED, TicketStage.REOPENED):
            t = await (_lab_start(ctx, t) if ctx.lab else _start(ctx, t))
        elif stage is TicketStage.CHECKING_LINE:
            t = await (_diagnose(ctx, t) if ctx.lab else _check_line(ctx, t))
        elif stage is TicketStage.FIXING:
            t = await (_lab_fix(ctx, t) if ctx.lab else _fix(ctx, t))
        else:
            return t
    return None


async def _has_line(ctx: _Ctx, customer: str) -> bool:
    try:
        return bool(await network.customer_line(ctx.client, ctx.tenant, customer))
    except NotFound:
        return False


# ---------------------------------------------------------------- with the lab's equipment


async def _lab_start(ctx: _Ctx, t: Ticket) -> Ticket | None:
    """Outages first: a known outage reaching the customer is linked and said before anything is
    measured; then the line is measured either way (the outage still has to be found and fixed)."""
    if t.issue in OUTAGE_SYMPTOMS:
        outages = await _outages(ctx, t.customer)
        if outages:
            o = outages[0]
            await network.link_tickets_to_outage(ctx.client, ctx.tenant, o.outage_id)
            words = replies.outage_notice(o.outage_id, o.node_name, o.opened_at, cause=o.cause, ticket_id=t.id)
            return await _move(ctx, t, TicketStage.CHECKING_LINE,
                               f"waiting on outage {o.outage_id} at {o.node_name}; measuring the line", reply=words)
    return await _move(ctx, t, TicketStage.CHECKING_LINE, "measuring the line",
                       reply=ticket_status(t.id, TicketStage.CHECKING_LINE, ctx.deps.now(), owner=AGENT))


async def _diagnose(ctx: _Ctx, t: Ticket) -> Ticket | None:
    full = await tickets.get_ticket(ctx.client, ctx.tenant, t.id)
    events = _round_events(full)
    if any(e.event == WAITING for e in events):
        return None  # a repair did not hold: the network team's outage to close, not ours to redo
    if t.issue in OUTAGE_SYMPTOMS:
        for o in await _outages(ctx, t.customer):
            if not any(o.outage_id in (e.detail or "") for e in events):
                await network.link_tickets_to_outage(ctx.client, ctx.tenant, o.outage_id)
                await tickets.add_event(ctx.client, ctx.tenant, t.id, agent=AGENT, event="outage_linked",
                                        detail=f"outage {o.outage_id} at {o.node_name}", at=ctx.deps.now())
                await _tell(ctx, t, replies.outage_notice(o.outage_id, o.node_name, o.opened_at, cause=o.cause,
                                                          ticket_id=t.id), f"s-{t.id}-{o.outage_id}")
    readings = await _measure(ctx, t, "measured")
    kind = lab.diagnose_from_readings(readings)
    await _record_diagnosis(ctx, t, kind, readings)
    if kind is None:
        return await _healthy(ctx, t)
    return await _plan_fix(ctx, t, kind, tried=set(), fixing=False)


async def _plan_fix(ctx: _Ctx, t: Ticket, kind: FaultKind, *, tried: set[tuple[str, ...]],
                    fixing: bool) -> Ticket | None:
    """The best fix not yet tried in this round for the diagnosed kind (procedural memory first),
    as a `plan` event; into `fixing` unless already there. None left: see _give_up."""
    plan = await _choose_fix(ctx, t, kind, tried)
    if plan is None:
        return await _give_up(ctx, t, kind)
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
    full = await tickets.get_ticket(ctx.client, ctx.tenant, t.id)
    events = _round_events(full)
    kind = _diagnosis_of(events)
    plans = [(i, e) for i, e in enumerate(events) if e.event == "plan" and e.detail]
    if plans and (kind is None or any(diagnosing.action(s) is None for s in _steps_of(plans[-1][1].detail))):
        return await _fix(ctx, t)  # the playbook's steps (a billing question that measures healthy)
    if kind is None or not plans:  # fixing without a diagnosis or a plan (set by hand): measure first
        return await _move(ctx, t, TicketStage.CHECKING_LINE, "no diagnosis on file; measuring the line")
    at, last = plans[-1]
    steps = _steps_of(last.detail)
    tried = {_steps_of(e.detail) for _, e in plans}
    segment = events[at + 1:]
    done = [e for e in segment if e.event == "fix_step"]
    applied = list(steps[:len(done)])
    pending = list(steps[len(done):])
    readings: list[Reading] = []
    if done and (segment[-1].event == "fix_step" or not pending):
        readings = await _measure(ctx, t, "re-measured")  # applied but not judged since (a crash)
    while pending and (not readings or lab.diagnose_from_readings(readings) is kind):
        step = pending.pop(0)
        t = await _act(ctx, t, step)
        if t is None:
            return None
        applied.append(step)
        readings = await _measure(ctx, t, "re-measured")
    if not readings:
        readings = await _measure(ctx, t, "re-measured")
    now_kind = lab.diagnose_from_readings(readings)
    if now_kind is None:
        return await _proven(ctx, t, kind, applied, readings)
    if t.stage is not TicketStage.FIXING:
        return None  # a technician was booked and did not clear it: theirs now
    if now_kind is not kind:  # that fault is gone, another one shows now: diagnose it in turn
        await _record_diagnosis(ctx, t, now_kind, readings)
        if len(plans) >= MAX_PLANS:
            return await _give_up(ctx, t, now_kind)
        return await _plan_fix(ctx, t, now_kind, tried=set(), fixing=True)
    # the readings still show the same fault: this procedure did not prove out
    fix = await tickets.record_fix(ctx.client, ctx.tenant, t.id, issue_kind=t.issue, steps=list(steps),
                                   verified=False, agent=AGENT, at=ctx.deps.now())
    log.info("ticket %s: %s did not clear %s", t.id, fix.procedure_id, kind.value)
    if len(plans) >= MAX_PLANS:
        return await _give_up(ctx, t, kind)
    return await _plan_fix(ctx, t, kind, tried=tried, fixing=True)


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
    await tickets.add_event(ctx.client, ctx.tenant, t.id, agent=AGENT, event="fix_step",
                            detail=f"{action.value}: {result.note} ({result.action_id}, lab time "
                                   f"{replies.when(result.at)}{visit_note})", at=ctx.deps.now())
    for change in result.visible:
        if change.node_id is not None and change.version is not None:
            await announce(ctx.deps, NetworkChanged(
                tenant=ctx.tenant, id=change.node_id, version=change.version, change="up" if change.up else "down",
                actor=AGENT))
    return t


async def _proven(ctx: _Ctx, t: Ticket, kind: FaultKind, steps: list[str], readings: list[Reading]
                  ) -> Ticket | None:
    """The re-measurement is healthy: the steps taken are a verified procedure; ask the customer."""
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
    if t.issue in NOT_ON_THE_LINE:
        return await _plan_and_fix(ctx, t)  # a billing question: the playbook's steps
    outages = await desk.ticket_outages(ctx.client, ctx.tenant, t.id)
    if outages and not any(o.open for o in outages):
        ids = ", ".join(o.outage_id for o in outages)
        words = replies.confirm_fixed_request(t.id, f"the outage affecting you ({ids}) is over and your line "
                                                    "measures healthy again", ctx.deps.now(), AGENT)
        return await _move(ctx, t, TicketStage.FIXED, f"outage {ids} is over; the line measures healthy", reply=words)
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
    the ticket with it); a fault in the home gets a technician."""
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
    await tickets.add_event(ctx.client, ctx.tenant, t.id, agent=AGENT, event=WAITING,
                            detail=f"{kind.value}: waiting on the network team ({where})", at=ctx.deps.now())
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


async def _measure(ctx: _Ctx, t: Ticket, label: str) -> list[Reading]:
    """Every test on the customer's line; each reading a timeline event named after its test."""
    readings = await lab.measure_all(ctx.client, ctx.tenant, t.customer, at=ctx.clock.after(diagnosing.MEASURE))
    for r in readings:
        await tickets.add_event(ctx.client, ctx.tenant, t.id, agent=AGENT, event=r.test.value,
                                detail=f"{label}: {diagnosing.describe(r)}", at=ctx.deps.now())
    return readings


async def _record_diagnosis(ctx: _Ctx, t: Ticket, kind: FaultKind | None, readings: list[Reading]) -> None:
    name = kind.value if kind is not None else diagnosing.HEALTHY
    meaning = diagnosing.MEANING[kind] if kind is not None else "every test looks healthy"
    await tickets.add_event(ctx.client, ctx.tenant, t.id, agent=AGENT, event="diagnosis",
                            detail=f"{name}: {meaning} ({diagnosing.evidence(readings, kind)}; readings "
                                   + ", ".join(r.reading_id for r in readings) + ")", at=ctx.deps.now())
    await lab.record_diagnosis(ctx.client, ctx.tenant, t.id, t.customer, kind, at=ctx.clock.now)


def _diagnosis_of(events: list) -> FaultKind | None:
    for e in reversed(events):
        if e.event == "diagnosis" and e.detail:
            return diagnosing.kind_of(e.detail.split(":", 1)[0].strip())
    return None


def _steps_of(detail: str) -> tuple[str, ...]:
    body = detail.split(":", 1)[1] if ":" in detail else detail
    return tuple(s.strip() for s in body.split(">") if s.strip())


# ---------------------------------------------------------------- without it (no line on file, or billing)


async def _start(ctx: _Ctx, t: Ticket) -> Ticket | None:
    if t.issue in NOT_ON_THE_LINE:
        return await _plan_and_fix(ctx, t)
    outages = await _outages(ctx, t.customer) if t.issue in OUTAGE_SYMPTOMS else []
    if outages:
        return await _wait_on_outage(ctx, t, outages[0])
    return await _move(ctx, t, TicketStage.CHECKING_LINE, "line test started",
                       reply=ticket_status(t.id, TicketStage.CHECKING_LINE, ctx.deps.now(), owner=AGENT))


async def _check_line(ctx: _Ctx, t: Ticket) -> Ticket | None:
    if t.issue in OUTAGE_SYMPTOMS:
        outages = await _outages(ctx, t.customer)
        if outages:
            return await _wait_on_outage(ctx, t, outages[0])
    reading = await _line_test(ctx, t)
    if reading.own_box_down:
        return await _dispatch(ctx, t, f"the home box {reading.own_box_down} does not answer the line test")
    if t.issue in playbooks.TECHNICIAN_FIRST:
        return await _dispatch(ctx, t, "a red LOS light: no light reaches the home box, the fibre needs a technician")
    if reading.upstream_down:
        await _wait_upstream(ctx, t, reading.upstream_down)
        return None
    return await _plan_and_fix(ctx, t)


async def _plan_and_fix(ctx: _Ctx, t: Ticket) -> Ticket | None:
    plan = await _choose_plan(ctx, t)
    if plan is None:
        return await _dispatch(ctx, t, "no remote fix left to try")
    await tickets.add_event(ctx.client, ctx.tenant, t.id, agent=AGENT, event="plan",
                            detail=f"{plan.procedure_id}: " + " > ".join(plan.steps), at=ctx.deps.now())
    return await _move(ctx, t, TicketStage.FIXING, f"trying the {plan.source} procedure {plan.procedure_id}")


async def _fix(ctx: _Ctx, t: Ticket) -> Ticket | None:
    detail = await tickets.get_ticket(ctx.client, ctx.tenant, t.id)
    plan = await _plan_of_round(ctx.deps, ctx.tenant, detail)
    if plan is None:  # a fixing stage without a plan (set by hand): plan now
        plan = await _choose_plan(ctx, t)
        if plan is None:
            return await _dispatch(ctx, t, "no remote fix left to try")
        await tickets.add_event(ctx.client, ctx.tenant, t.id, agent=AGENT, event="plan",
                                detail=f"{plan.procedure_id}: " + " > ".join(plan.steps), at=ctx.deps.now())
    done = len(_steps_done(detail))
    delay = ctx.deps.settings.step_delay_ms / 1000
    for step in plan.steps[done:]:
        if delay:
            await asyncio.sleep(delay)
        await tickets.add_event(ctx.client, ctx.tenant, t.id, agent=AGENT, event="fix_step", detail=step,
                                at=ctx.deps.now())
    if t.issue not in NOT_ON_THE_LINE:
        reading = await _line_test(ctx, t)
        if reading.own_box_down:
            return await _dispatch(ctx, t, f"the home box {reading.own_box_down} still does not answer")
        if reading.upstream_down:
            await _wait_upstream(ctx, t, reading.upstream_down)
            return None
    now = ctx.deps.now()
    fix = await tickets.record_fix(ctx.client, ctx.tenant, t.id, issue_kind=t.issue, steps=list(plan.steps),
                                   verified=True, agent=AGENT, at=now)
    words = replies.confirm_fixed_request(
        t.id, "we went through these steps: " + "; ".join(playbooks.describe(s) for s in plan.steps), now, AGENT)
    await _move(ctx, t, TicketStage.FIXED, f"{fix.procedure_id} applied; the line test passes", reply=words)
    return None


# ---------------------------------------------------------------- decisions


async def _choose_plan(ctx: _Ctx, t: Ticket) -> Plan | None:
    """The best learnt procedure not yet tried on this ticket; on a first round with none, the
    default playbook. A ticket reopened twice goes to a technician."""
    if t.round >= 2:
        return None
    tried = {f.procedure_id for f in await desk.tried_fixes(ctx.client, ctx.tenant, t.id)}
    for p in await tickets.best_procedures(ctx.client, ctx.tenant, t.issue, limit=10):
        if ctx.lab and all(diagnosing.action(s) is not None for s in p.steps):
            continue  # a fix for a diagnosed fault, not a playbook for what measures healthy
        if p.procedure_id not in tried:
            return Plan(p.procedure_id, tuple(p.steps), "learnt")
    if t.round == 0 and not tried:
        steps = playbooks.playbook(t.issue)
        return Plan(tickets.procedure_id(t.issue, list(steps)), steps, "playbook")
    return None


def _round_events(t: TicketDetail) -> list:
    start = 0
    for i, e in enumerate(t.timeline):
        if e.event in ROUND_STARTS:
            start = i + 1
    return t.timeline[start:]


def _steps_done(t: TicketDetail) -> list[str]:
    return [e.detail or "" for e in _round_events(t) if e.event == "fix_step"]


async def _plan_of_round(deps: Deps, tenant: str, t: TicketDetail) -> Plan | None:
    plans = [e for e in _round_events(t) if e.event == "plan" and e.detail]
    if not plans:
        return None
    pid = plans[-1].detail.split(":", 1)[0].strip()
    try:
        p = await tickets.get_procedure(deps.client, tenant, pid)
        if p.steps:
            return Plan(pid, tuple(p.steps), "learnt")
    except NotFound:
        pass
    steps = playbooks.playbook_by_id(t.issue, pid)
    return Plan(pid, steps, "playbook") if steps else None


async def _outages(ctx: _Ctx, customer: str) -> list[Outage]:
    try:
        return await network.open_outages_for_customer(ctx.client, ctx.tenant, customer)
    except NotFound:
        return []


async def _line_test(ctx: _Ctx, t: Ticket) -> LineReading:
    """The customer's line as the graph has it (node and link statuses), written to the timeline."""
    try:
        hops = await network.customer_line(ctx.client, ctx.tenant, t.customer)
    except NotFound:
        hops = []
    own = upstream = None
    parts = []
    for i, h in enumerate(hops):
        parts.append(f"{h.node_id} {h.status}")
        if h.status != "up":
            if i == 0 and h.kind is NodeKind.ONT:
                own = own or h.node_id
            else:
                upstream = upstream or h.node_id
        if h.link_up is False and upstream is None:
            upstream = f"the {h.link_type.value if h.link_type else 'link'} link above {h.node_id}"
    summary = " > ".join(parts) if parts else "no line on file for this customer"
    await tickets.add_event(ctx.client, ctx.tenant, t.id, agent=AGENT, event="line_test", detail=summary,
                            at=ctx.deps.now())
    return LineReading(summary, own, upstream)


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


async def _wait_on_outage(ctx: _Ctx, t: Ticket, outage: Outage) -> Ticket | None:
    """A known outage reaches the customer: link the ticket, say so, wait for netops."""
    await network.link_tickets_to_outage(ctx.client, ctx.tenant, outage.outage_id)
    if outage.node_kind is NodeKind.ONT:
        return await _dispatch(ctx, t, f"the home box {outage.node_name} is down (outage {outage.outage_id})")
    words = replies.outage_notice(outage.outage_id, outage.node_name, outage.opened_at, cause=outage.cause,
                                  ticket_id=t.id)
    detail = f"waiting on outage {outage.outage_id} at {outage.node_name}"
    if t.stage is not TicketStage.CHECKING_LINE:
        await _move(ctx, t, TicketStage.CHECKING_LINE, detail, reply=words)
        return None
    full = await tickets.get_ticket(ctx.client, ctx.tenant, t.id)
    if any(outage.outage_id in (e.detail or "") for e in _round_events(full)):
        return None  # already waiting on it
    await tickets.add_event(ctx.client, ctx.tenant, t.id, agent=AGENT, event="outage_linked", detail=detail,
                            at=ctx.deps.now())
    await _tell(ctx, t, words, f"s-{t.id}-{outage.outage_id}")
    return None


async def _wait_upstream(ctx: _Ctx, t: Ticket, where: str) -> None:
    """The line test shows a fault further up than the home: that is netops' outage to declare;
    the ticket waits in checking_line and is linked when the outage opens."""
    full = await tickets.get_ticket(ctx.client, ctx.tenant, t.id)
    detail = f"{where} is down: a network fault, not the home"
    if any(e.event == "fault_upstream" and e.detail == detail for e in _round_events(full)):
        return
    await tickets.add_event(ctx.client, ctx.tenant, t.id, agent=AGENT, event="fault_upstream", detail=detail,
                            at=ctx.deps.now())
    words = replies.Reply(
        f"Our line test for ticket {t.id} shows a fault in the network ({where}), not in your home. "
        "There is no need to restart anything; we will tell you here as soon as it is repaired.",
        [f"ticket {t.id}: line test at {replies.when(ctx.deps.now())} shows {where} down"],
    )
    await _tell(ctx, t, words, f"s-{t.id}-upstream-r{t.round}")


def _technician(ticket_id: str) -> str:
    i = int(hashlib.blake2b(ticket_id.encode(), digest_size=4).hexdigest(), 16)
    return playbooks.TECHNICIANS[i % len(playbooks.TECHNICIANS)]


def _visit_slot(now: datetime) -> datetime:
    """Tomorrow at 10:00 UTC: the same slot for every delivery on one day."""
    day = (now.astimezone(timezone.utc) + timedelta(days=1)).date()
    return datetime(day.year, day.month, day.day, 10, 0, tzinfo=timezone.utc)


async def _dispatch(ctx: _Ctx, t: Ticket, reason: str) -> Ticket | None:
    now = ctx.deps.now()
    full = await tickets.get_ticket(ctx.client, ctx.tenant, t.id)
    upcoming = [v for v in full.visits if v.at >= now]
    visit = upcoming[0] if upcoming else await tickets.schedule_visit(
        ctx.client, ctx.tenant, t.id, technician=_technician(t.id), at=_visit_slot(now), agent=AGENT)
    words = replies.technician_dispatched(t.id, visit.visit_id, visit.technician, visit.at,
                                          visit.at + timedelta(hours=VISIT_HOURS))
    await _move(ctx, t, TicketStage.TECHNICIAN_DISPATCHED, f"{reason}; visit {visit.visit_id}", reply=words)
    return None
