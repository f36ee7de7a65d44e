"""One piece of the resolver's work on a ticket (`Job`: the process's deps, the Call its use cases
run on, the replica, the lab's clock and the ticket's working state) and the two things every
stage does with it: record a workflow event (`step`, through usecases.tickets) and tell the
customer (`tell`, through usecases.replies). May use the use cases and the desk's reads; writes
nothing itself."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from relay_graph.desk import agent_reads as desk
from relay_graph.desk.conversation.templates import Reply
from relay_graph.desk.tickets.models import Ticket
from relay_graph.desk.tickets.work import Work, with_proof
from relay_graph.desk.tickets.workflow import TicketEvent
from relay_graph.usecases import tickets as ticket_cases
from relay_graph.usecases.context import Call, Deps
from relay_graph.usecases.replies import ReplyDraft, write_replies

from .diagnosing import LabClock

log = logging.getLogger("services.resolver")

AGENT = "resolver"


@dataclass
class Job:
    deps: Deps
    call: Call
    replica: str
    clock: LabClock
    work: Work = field(default_factory=Work)

    @property
    def tenant(self) -> str:
        return self.call.tenant

    @property
    def client(self):
        return self.call.client


async def step(job: Job, t: Ticket, event: TicketEvent, *, work: Work | None = None, reply: Reply | None = None,
               reply_id: str | None = None) -> Ticket | None:
    """`event` on the ticket as the resolver last saw it (version `t.version`), with the working
    state after it; the customer told `reply` (by default under the id of the version reached).
    None: the ticket moved on meanwhile (a stale or repeated notification, the customer's answer,
    another replica, netops) and nothing was written: the resolver leaves it."""
    new = await ticket_cases.record(job.call, t.id, event, version=t.version, work=work)
    if not new.changed:
        log.info("ticket %s moved on meanwhile (now %s v%d); leaving it", t.id, new.stage.value, new.version)
        return None
    if work is not None:
        job.work = work
    if reply is not None:
        await tell(job, new, reply, reply_id or desk.status_reply_id(t.id, new.version))
    return new


async def prove(job: Job, t: Ticket, words: Reply, *, steps: tuple[str, ...] = (),
                outage_ids: list[str] | tuple[str, ...] = ()) -> Ticket | None:
    """The round's latest check passed after its last action: the proof on the work, the ticket to
    `fixed` (with `steps`, their procedure counted verified), the customer asked to confirm. The
    workflow refuses (StepRefused) a fix the stored check does not prove."""
    work = with_proof(job.work, AGENT)
    new = await ticket_cases.fix_proven(job.call, t.id, work=work, issue_kind=t.issue, steps=steps,
                                        outage_ids=outage_ids, version=t.version)
    if not new.changed:
        log.info("ticket %s moved on meanwhile (now %s v%d); leaving it", t.id, new.stage.value, new.version)
        return None
    job.work = work
    await tell(job, new, words, desk.status_reply_id(t.id, new.version))
    return new


async def tell(job: Job, t: Ticket, reply: Reply, reply_id: str) -> None:
    """The customer hears `reply` in their latest session."""
    session = await desk.latest_session(job.client, job.tenant, t.customer) or t.session or f"desk-{t.id}"
    await write_replies(job.call, [ReplyDraft(
        id=reply_id, session=session, customer=t.customer, text=reply.text, reply_to=t.id,
        version=t.version, at=job.deps.now(), ticket_id=t.id, how_i_know=list(reply.how_i_know), rows=(t,),
    )])
