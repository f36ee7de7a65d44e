"""Technician visits: booked for a slot (the VisitBooked step says when the technician goes,
never that anyone came), and, when the readings point at the fibre inside the home, the visit
carried out by the lab at its booked time on the lab's clock: VisitDone then, a new measurement,
and only a passing one proves the fix. May use the use cases and the lab's clock."""

from __future__ import annotations

import hashlib
import logging
from datetime import datetime, timedelta, timezone, tzinfo

from relay_graph.desk import agent_reads as desk
from relay_graph.desk.conversation import reads as conversation_reads, templates as replies
from relay_graph.desk.conversation.answering import TIP_FAQS
from relay_graph.desk.customers.zone import customer_zone
from relay_graph.desk.tickets import work as ticket_work
from relay_graph.desk.tickets import workflow as wf
from relay_graph.desk.tickets.models import TechVisit, Ticket, TicketStage
from relay_graph.lab import Action
from relay_graph.usecases import equipment, tickets as ticket_cases

from . import diagnosing, playbooks
from .job import Job, tell

log = logging.getLogger("services.resolver")

VISIT_HOURS = 2  # the window the customer is given


async def book(job: Job, t: Ticket, reason: wf.VisitReason,
               measured: str | None = None) -> tuple[Ticket | None, TechVisit | None]:
    """A technician booked and the ticket to technician_dispatched, the customer told when and
    why (`measured`: what the line measured, in plain words, for a healthy line). (None, _): the
    ticket moved on, or a visit was pending already."""
    new, visit = await ticket_cases.book_visit(job.call, t.id, technician=technician_for(t.id),
                                               visit_at=visit_slot(job.clock.now, await customer_zone(
                                                   job.client, job.tenant, t.customer)),
                                               reason=reason, version=t.version)
    if not new.changed or new.stage is not TicketStage.TECHNICIAN_DISPATCHED:
        log.info("ticket %s: no visit booked now (stage %s v%d)", t.id, new.stage.value, new.version)
        return None, None
    words = replies.technician_dispatched(t.id, visit.visit_id, visit.technician, visit.at,
                                          visit.at + timedelta(hours=VISIT_HOURS))
    if reason is wf.VisitReason.HEALTHY_LINE:
        words = await _healthy_line_words(job, t, words, measured)
    else:
        words = replies.Reply(f"{words.text} Why: {reason.value}.", words.how_i_know)
    await tell(job, new, words, desk.status_reply_id(t.id, new.version))
    return new, visit


async def _healthy_line_words(job: Job, t: Ticket, booked: replies.Reply, measured: str | None) -> replies.Reply:
    """Every reading healthy and the customer says it is broken: what was measured, that we do not
    argue (a technician comes, at the visit's own time), and one safe tip for the wait."""
    said = (measured or "every test on your line measures healthy").rstrip(".")
    text = (f"{said[0].upper()}{said[1:]}. You still see a problem, so we will not argue with that: {booked.text}")
    how = list(booked.how_i_know)
    tip = await safe_tip(job, t)
    if tip is not None:
        text += f" While you wait, one thing that is safe to try: {tip.answer}"
        how.append(f"faq {tip.faq_id}: {tip.question}")
    return replies.Reply(text, how)


async def safe_tip(job: Job, t: Ticket):
    """The first FAQ on file for the ticket's kind of problem that is not a speed test (we just ran one)."""
    for faq_id in TIP_FAQS.get(t.issue, ("restart-router",)):
        if faq_id == "speed-test":
            continue
        answer = await conversation_reads.faq_by_id(job.client, job.tenant, faq_id)
        if answer is not None:
            return answer
    return None


async def technician_fixes(job: Job, t: Ticket) -> Ticket | None:
    """The plan's step is the technician's: booked, then carried out by the lab at the visit's time
    (the lab's clock waits for it), and the visit marked done at the lab's outcome."""
    t, visit = await book(job, t, wf.VisitReason.IN_HOME_FIBRE)
    if t is None or visit is None:
        return None
    result = await equipment.act(job.call, t.customer, Action.DISPATCH_TECHNICIAN, ticket=t.id,
                                 at=job.clock.until(visit.at + diagnosing.VISIT))
    work = ticket_work.with_act(job.work, ticket_work.Act(round=t.round, action=Action.DISPATCH_TECHNICIAN.value,
                                                          action_id=result.action_id, at=result.at))
    new = await ticket_cases.visit_done(job.call, t.id, visit.visit_id, at=result.at, work=work)
    if not new.changed:
        return None
    job.work = work
    return new


def technician_for(ticket_id: str) -> str:
    """Picked per ticket, so that a redelivery books the same person."""
    i = int(hashlib.blake2b(ticket_id.encode(), digest_size=4).hexdigest(), 16)
    return playbooks.TECHNICIANS[i % len(playbooks.TECHNICIANS)]


def visit_slot(now: datetime, zone: tzinfo = timezone.utc) -> datetime:
    """Tomorrow at 10:00 on the customer's clock: the same slot for every delivery on one day."""
    day = (now.astimezone(zone) + timedelta(days=1)).date()
    return datetime(day.year, day.month, day.day, 10, 0, tzinfo=zone).astimezone(timezone.utc)
