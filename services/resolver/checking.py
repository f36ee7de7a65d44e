"""Checking the line with the fault lab's equipment: outages first, then MEASURE every test,
DIAGNOSE from the readings alone and RECORD the diagnosis; healthy readings decide between an
outage that is over (fixed, the check is the proof), one still open (wait for netops to close it),
the billing team, and a technician (the customer says it is broken while everything measures
healthy: the desk does not argue). May use the use cases, the desk's and the lab's reads."""

from __future__ import annotations

from relay_graph import lab
from relay_graph.desk import agent_reads as desk
from relay_graph.desk.conversation import templates as replies
from relay_graph.desk.network import store as network
from relay_graph.desk.network.models import NodeKind, Outage
from relay_graph.desk.tickets import work as ticket_work
from relay_graph.desk.tickets import workflow as wf
from relay_graph.desk.tickets.models import Ticket, TicketStage
from relay_graph.desk.tickets.status import NOT_ON_THE_LINE, OUTAGE_SYMPTOMS, ticket_status
from relay_graph.lab import FaultKind, Reading
from relay_graph.runtime.errors import NotFound
from relay_graph.usecases import equipment, network as network_cases

from . import diagnosing, plain, redirecting, visits
from .job import AGENT, Job, prove, step, tell


async def start(job: Job, t: Ticket) -> Ticket | None:
    """Outages first: a known outage reaching the customer is linked and said before anything is
    measured; then the line is measured either way (the outage still has to be found and fixed)."""
    if t.issue in OUTAGE_SYMPTOMS:
        for o in (await outages(job, t.customer))[:1]:
            t = await _link(job, t, o)
            if t is None:
                return None
            words = replies.outage_notice(o.outage_id, o.place, o.opened_at, cause=o.cause, ticket_id=t.id)
            return await step(job, t, wf.LineCheckStarted(at=job.call.now()), reply=words)
    return await step(job, t, wf.LineCheckStarted(at=job.call.now()),
                      reply=ticket_status(t.id, TicketStage.CHECKING_LINE, job.deps.now(), owner=AGENT))


async def _link(job: Job, t: Ticket, o: Outage) -> Ticket | None:
    await network_cases.link_tickets(job.call, o.outage_id)
    work = job.work.model_copy(update={"outages": [*job.work.outages, o.outage_id]})
    return await step(job, t, wf.OutageLinked(at=job.call.now(), outage_id=o.outage_id, node_name=o.node_name,
                                              since=o.opened_at), work=work)


async def check(job: Job, t: Ticket) -> tuple[Ticket | None, FaultKind | None]:
    """checking_line: new outages linked and said, the line measured and the diagnosis recorded.
    (None, _): nothing more to do here (waiting on the network team, or the ticket moved on)."""
    if job.work.needs == wf.Waiting.NETWORK.value:
        return None, None  # a repair did not hold: the network team's outage to close, not ours to redo
    if t.issue in OUTAGE_SYMPTOMS:
        for o in await outages(job, t.customer):
            if o.outage_id not in job.work.outages:
                t = await _link(job, t, o)
                if t is None:
                    return None, None
                await tell(job, t, replies.outage_notice(o.outage_id, o.place, o.opened_at, cause=o.cause,
                                                         ticket_id=t.id), f"s-{t.id}-{o.outage_id}")
    t, readings = await measure(job, t)
    if t is None:
        return None, None
    kind = lab.diagnose_from_readings(readings)
    job.readings = readings
    return await record_diagnosis(job, t, kind, readings), kind


async def measure(job: Job, t: Ticket) -> tuple[Ticket | None, list[Reading]]:
    """Every test on the customer's line: one check on the work (with its verdict), a step per
    reading on the timeline."""
    readings = await equipment.measure(job.call, t.customer, at=job.clock.after(diagnosing.MEASURE))
    kind = lab.diagnose_from_readings(readings)
    check = check_of(t.round, readings, kind, job.clock.now)
    notes = tuple(wf.ReadingNote(test=r.test.value, reading_id=r.reading_id, says=diagnosing.describe(r),
                                 plain=plain.reading_words(r)) for r in readings)
    work = ticket_work.with_check(job.work, check)
    return await step(job, t, wf.Measured(at=check.at, check=check, readings=notes), work=work), readings


def check_of(round_: int, readings: list[Reading], kind: FaultKind | None, at) -> ticket_work.Check:
    return ticket_work.Check(round=round_, at=max([at, *(r.at for r in readings)]),
                             readings=[r.reading_id for r in readings],
                             diagnosis=kind.value if kind is not None else None, passed=kind is None)


async def record_diagnosis(job: Job, t: Ticket, kind: FaultKind | None, readings: list[Reading]) -> Ticket | None:
    meaning = diagnosing.MEANING[kind] if kind is not None else "every test looks healthy"
    event = wf.Diagnosed(at=job.call.now(), diagnosis=kind.value if kind is not None else None,
                         meaning=f"{meaning} ({diagnosing.evidence(readings, kind)})",
                         readings=tuple(r.reading_id for r in readings))
    new = await step(job, t, event)
    if new is not None:
        await equipment.record_diagnosis(job.call, t.id, t.customer, kind, at=job.clock.now)
    return new


async def healthy(job: Job, t: Ticket, readings: list[Reading] = ()) -> Ticket | None:
    """Everything measures healthy (`readings`: what said so, for the customer's words)."""
    if t.issue in NOT_ON_THE_LINE:  # billing shows nothing wrong: people from billing look at it
        await redirecting.escalate_to_billing(job, t)
        return None
    linked = await desk.ticket_outages(job.client, job.tenant, t.id)
    if linked and not any(o.open for o in linked):
        ids = [o.outage_id for o in linked]
        where = ", ".join(sorted({o.place for o in linked}))
        words = replies.confirm_fixed_request(t.id, f"the fault at {where} is repaired and your "
                                                    "line measures healthy again", job.deps.now(), AGENT)
        words = replies.Reply(words.text, [*words.how_i_know, *(f"outage {i} closed" for i in ids)])
        return await prove(job, t, words, outage_ids=ids)
    if linked:
        # The network came back before netops closed the outage: its close measures this line again
        # and moves the ticket on; a technician would be sent for nothing.
        await step(job, t, wf.WaitingOnOutage(at=job.call.now(), outage_ids=tuple(o.outage_id for o in linked
                                                                                  if o.open)))
        return None
    await visits.book(job, t, wf.VisitReason.HEALTHY_LINE, measured=plain.healthy_words(readings))
    return None


async def outages(job: Job, customer: str) -> list[Outage]:
    try:
        return await network.open_outages_for_customer(job.client, job.tenant, customer)
    except NotFound:
        return []


async def own_box_down(job: Job, customer: str) -> str | None:
    try:
        hops = await network.customer_line(job.client, job.tenant, customer)
    except NotFound:
        return None
    if hops and hops[0].kind is NodeKind.ONT and hops[0].status != "up":
        return hops[0].node_id
    return None
