"""Technician visits: booked for a slot (the VisitBooked step says when the technician goes,
never that anyone came), and, when the readings point at the fibre inside the home, the visit
carried out by the lab at its booked time on the lab's clock: VisitDone then, a new measurement,
and only a passing one proves the fix. May use the use cases and the lab's clock."""

from __future__ import annotations

import hashlib
import logging
from datetime import datetime, timedelta, timezone

from relay_graph.desk import agent_reads as desk
from relay_graph.desk.conversation import templates as replies
from relay_graph.desk.tickets import work as ticket_work
from relay_graph.desk.tickets import workflow as wf
from relay_graph.desk.tickets.models import TechVisit, Ticket, TicketStage
from relay_graph.lab import Action
from relay_graph.usecases import equipment, tickets as ticket_cases

from . import diagnosing, playbooks
from .job import Job, tell

log = logging.getLogger("services.resolver")

VISIT_HOURS = 2  # the window the customer is given


async def book(job: Job, t: Ticket, reason: wf.VisitReason) -> tuple[Ticket | None, TechVisit | None]:
    """A technician booked and the ticket to technician_dispatched, the customer told when and
    why. (None, _): the ticket moved on, or a visit was pending already."""
    new, visit = await ticket_cases.book_visit(job.call, t.id, technician=technician_for(t.id),
                                               visit_at=visit_slot(job.clock.now), reason=reason, version=t.version)
    if not new.changed or new.stage is not TicketStage.TECHNICIAN_DISPATCHED:
        log.info("ticket %s: no visit booked now (stage %s v%d)", t.id, new.stage.value, new.version)
        return None, None
    words = replies.technician_dispatched(t.id, visit.visit_id, visit.technician, visit.at,
                                          visit.at + timedelta(hours=VISIT_HOURS))
    await tell(job, new, replies.Reply(f"{words.text} Why: {reason.value}.", words.how_i_know),
               desk.status_reply_id(t.id, new.version))
    return new, visit


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


def visit_slot(now: datetime) -> datetime:
    """Tomorrow at 10:00 UTC: the same slot for every delivery on one day."""
    day = (now.astimezone(timezone.utc) + timedelta(days=1)).date()
    return datetime(day.year, day.month, day.day, 10, 0, tzinfo=timezone.utc)
