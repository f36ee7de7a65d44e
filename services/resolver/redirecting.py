"""Tickets the resolver cannot measure: no line on file (intake is asked for the address) and
billing problems no instrument measures (escalated to the billing team). Neither is ever claimed
fixed. May use the use cases and the desk's reads."""

from __future__ import annotations

from relay_graph.desk import agent_reads as desk
from relay_graph.desk.conversation import templates as replies
from relay_graph.desk.extraction.schema import IssueKind
from relay_graph.desk.network import store as network
from relay_graph.desk.tickets import store as tickets
from relay_graph.desk.tickets import work as ticket_work
from relay_graph.desk.tickets import workflow as wf
from relay_graph.desk.tickets.models import Ticket, TicketStage
from relay_graph.runtime.errors import NotFound
from relay_graph.usecases import tickets as ticket_cases

from .job import AGENT, Job, step, tell


async def has_line(job: Job, customer: str) -> bool:
    try:
        return bool(await network.customer_line(job.client, job.tenant, customer))
    except NotFound:
        return False


async def ask_for_address(job: Job, t: Ticket) -> None:
    """No line on file: nothing can be measured, so nothing is claimed. The ticket asks intake for
    the customer's address (work.needs and a handoff to intake: graph state intake reads), and the
    customer hears why; once intake places the address on a line it hands the ticket back
    (services/intake/placing.py). An address placed while we were asking: back at once."""
    if job.work.needs == ticket_work.NEEDS_ADDRESS:
        return  # asked already in this round
    asked = await step(job, t, wf.AddressRequested(at=job.call.now()),
                       work=job.work.model_copy(update={"needs": ticket_work.NEEDS_ADDRESS}))
    if asked is None:
        return
    handed = await ticket_cases.hand_off(job.call, t.id, to_role="intake", detail="needs the customer's address")
    if await has_line(job, t.customer):  # placed meanwhile (the same turn that opened the ticket)
        if await step(job, handed, wf.AddressPlaced(at=job.call.now()),
                      work=job.work.model_copy(update={"needs": None})) is not None:
            await ticket_cases.hand_off(job.call, t.id, to_role=AGENT, again=True, detail="a line is on file now")
        return
    words = replies.Reply(
        f"I cannot test your line for ticket {t.id} yet: we have no line on file for you. Could you tell me "
        "your address (the area and the city)? Then I can find your line and measure it.",
        [f"ticket {t.id}: no line on file for this customer"])
    moved = asked.stage is not t.stage
    await tell(job, handed, words, desk.status_reply_id(t.id, asked.version) if moved
               else f"s-{t.id}-address-r{t.round}")


async def escalate_to_billing(job: Job, t: Ticket) -> None:
    """A billing problem no instrument of ours can measure (a double charge; a payment problem of a
    customer with no line on file): raised to the billing team as graph state, never `fixed`."""
    reason = ("a refund of a double charge is done and checked by the billing team"
              if t.issue == IssueKind.BILLING_DOUBLE_CHARGE.value
              else "no account on our network to read the billing status from")
    if await tickets.round_escalation(job.client, job.tenant, t.id, t.round) is not None:
        return  # raised already in this round
    esc = await ticket_cases.escalate(job.call, t.id, to="billing", reason=reason, version=t.version)
    if esc is None or t.stage is TicketStage.CHECKING_LINE:
        return
    new = await tickets.peek_ticket(job.client, job.tenant, t.id)
    words = replies.Reply(
        f"I have passed ticket {t.id} to our billing team with a raised priority: {reason}. They will "
        "write to you here once it is done.",
        [f"ticket {t.id}: escalated {esc.escalation_id} to billing ({reason})"])
    await tell(job, new, words, desk.status_reply_id(t.id, new.version))
