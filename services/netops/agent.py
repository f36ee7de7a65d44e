"""The netops agent: watches the network and warns the customers a fault reaches before they
complain.

Node down (NetworkChanged "down"): the node is re-read; a notification whose version is not the
node's, or a node that is up again, is stale and does nothing. Otherwise the node's outage is
opened (or found: one open outage per node), every open ticket of an affected customer is linked
to it (CAUSED_BY), and each affected customer gets a notice (an AgentReply episode in their latest
session, or in a session of its own if they never talked to us) and a ReplyWritten. Affected means
cut off: every path from their home up to the core now runs through a node or link that is down
(network.open_outage); a customer whose primary still works while the node was only their standby,
or whom a standby carries while the node was their primary, is not warned. The outage is
announced (OutageChanged "declared") when it was opened now or when notices were written now, so a
delivery that died half-way is finished by the next one and a repeat announces nothing.

Node up (NetworkChanged "up"): the outage is closed, the tickets waiting on it are measured again
(lab.measure_all) and those that measure healthy move to `fixed` on that proof (the customer is asked
to confirm, as after any fix; one still faulty stays where it is), every affected customer is told it is over, and
OutageChanged "resolved" is announced. Notice ids are derived from the outage and the customer, so
nobody is told twice.

Every write is a use case on the notification's unit of work (`deps.work`): outages and their
tickets through usecases.network, the line measured through usecases.equipment, the ticket's steps
through usecases.tickets (the ticket workflow: a Measured step, then FixProven, refused unless the
check proves it); what they owe is announced when the work ends.

"degraded" is left to a later issue (capacity measurements): nothing is done with it yet.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from relay_graph import lab
from relay_graph.desk import agent_reads as desk
from relay_graph.desk.conversation import templates as replies
from relay_graph.desk.network import store as network
from relay_graph.desk.network.models import NetNode, Outage, place_in_words
from relay_graph.desk.tickets import store as tickets
from relay_graph.desk.tickets import work as ticket_work
from relay_graph.desk.tickets import workflow as wf
from relay_graph.desk.tickets.models import Ticket
from relay_graph.desk.tickets.status import OUTAGE_SYMPTOMS, WAITING_STAGES
from relay_graph.runtime.errors import NotFound
from relay_graph.runtime.streams import NetworkChanged
from relay_graph.usecases import equipment, network as network_cases, tickets as ticket_cases
from relay_graph.usecases.context import Call, Deps
from relay_graph.usecases.replies import ReplyDraft, honest_words, write_replies

log = logging.getLogger("services.netops")

AGENT = "netops"
MEASURE = timedelta(minutes=2)  # a line test after the last action, on the lab's clock


@dataclass
class OutageResult:
    """What handling one NetworkChanged did (handlers ignore it; tests read it)."""

    status: str  # "declared", "resolved", "stale", "nothing_open", "ignored"
    outage: Outage | None = None
    notified: list[str] = field(default_factory=list)  # customers told now
    tickets: list[str] = field(default_factory=list)  # tickets linked (down) or moved to fixed (up)
    announced: bool = False


async def node_down(deps: Deps, n: NetworkChanged) -> OutageResult:
    tenant = n.tenant
    node = await network.get_node(deps.client, tenant, n.node_id)  # unknown node: NotFound
    if node.version != n.version or node.status == "up":
        return OutageResult("stale")
    async with deps.work(tenant, AGENT) as call:
        outage = await network_cases.open_outage(call, node.node_id, cause=_cause(node))
        linked = await network_cases.link_tickets(call, outage.outage_id)
        # the place in the customer's words (a home box's name carries its customer's id)
        words = replies.outage_notice(outage.outage_id, outage.place, outage.opened_at, cause=outage.cause)
        told = await _notify(call, outage, "declared", words, version=node.version)
        announced = outage.created or bool(told)
        if announced:
            network_cases.outage_changed(call, outage, change="declared", version=node.version)
    log.info("outage %s on %s: %d customers, %d told now, %d tickets linked", outage.outage_id, node.node_id,
             outage.affected_count, len(told), len(linked))
    return OutageResult("declared", outage, told, linked, announced)


async def node_up(deps: Deps, n: NetworkChanged) -> OutageResult:
    tenant = n.tenant
    node = await network.get_node(deps.client, tenant, n.node_id)
    if node.version != n.version or node.status != "up":
        return OutageResult("stale")
    async with deps.work(tenant, AGENT) as call:
        closed = await network_cases.close_outage(call, node.node_id)
        outage = closed
        if outage is None:  # closed by an earlier delivery that may not have finished telling everyone
            last = await desk.latest_outage_of_node(deps.client, tenant, node.node_id)
            if last is None:
                return OutageResult("nothing_open")
            outage = await network.get_outage(deps.client, tenant, last)
            if outage.open:
                return OutageResult("stale")
        moved = await _tickets_back(deps, call, outage, node)
        told = await _notify(call, outage, "resolved", _resolved_words(outage, node), version=node.version)
        announced = closed is not None or bool(told)
        if announced:
            network_cases.outage_changed(call, outage, change="resolved", version=node.version)
    return OutageResult("resolved", outage, told, moved, announced)


# ---------------------------------------------------------------- steps


def _cause(node: NetNode) -> str:
    return f"{node.name} ({node.kind.value} {node.node_id}) is down"


def _resolved_words(outage: Outage, node: NetNode) -> replies.Reply:
    closed_at = outage.closed_at or outage.opened_at
    place = place_in_words(node.name, node.kind)
    text = (f"Good news: the outage affecting {place} since {replies.when(outage.opened_at)} is over; service "
            f"is back since {replies.when(closed_at)}. If anything still does not work, just reply here.")
    how = [f"outage {outage.outage_id} on {place} (opened {replies.when(outage.opened_at)}, "
           f"closed {replies.when(closed_at)})"]
    return replies.Reply(text, how)


async def _notify(call: Call, outage: Outage, what: str, words: replies.Reply, *, version: int) -> list[str]:
    """One notice per affected customer (the same words for all: embedded once), in their latest
    session. Returns the customers told now (those told before are skipped)."""
    customers = sorted(set(outage.customers))
    if not customers:
        return []
    sessions = await desk.latest_sessions(call.client, call.tenant, customers)
    # worded once for everyone (one writer call, one embedding), held to the outage's own row
    words = await honest_words(call, words, rows=(outage,))
    at = call.now()
    drafts = [
        ReplyDraft(
            id=desk.notice_id(outage.outage_id, c, what),
            session=sessions.get(c) or desk.notice_session(outage.outage_id, c),
            customer=c, text=words.text, reply_to=outage.outage_id, version=version, at=at,
            how_i_know=list(words.how_i_know), reword=False,
        )
        for c in customers
    ]
    return [d.customer for d in await write_replies(call, drafts)]


async def _tickets_back(deps: Deps, call: Call, outage: Outage, node: NetNode) -> list[str]:
    """Tickets that waited on the outage: fixed once their line measures healthy, and their
    customers asked to confirm."""
    moved = []
    for t in await desk.outage_tickets(deps.client, call.tenant, outage.outage_id):
        if t.stage not in WAITING_STAGES or t.issue not in OUTAGE_SYMPTOMS:
            continue
        new = await _fixed_if_healthy(deps, call, t.id, outage)
        if new is None:
            continue  # something else is still wrong on the line (or it moved on): not claimed fixed
        moved.append(t.id)
        words = replies.confirm_fixed_request(t.id, f"the outage at {place_in_words(node.name, node.kind)} was repaired",
                                              deps.now(), AGENT)
        session = await desk.latest_session(deps.client, call.tenant, new.customer) or new.session \
            or desk.notice_session(outage.outage_id, new.customer)
        await write_replies(call, [ReplyDraft(
            id=desk.status_reply_id(t.id, new.version), session=session, customer=new.customer, text=words.text,
            reply_to=t.id, version=new.version, at=deps.now(), ticket_id=t.id, how_i_know=list(words.how_i_know),
            rows=(t, outage),
        )])
    return moved


async def _fixed_if_healthy(deps: Deps, call: Call, tid: str, outage: Outage) -> Ticket | None:
    """The outage is over, but only a new measurement of the customer's line says their problem is:
    every test is measured (after the ticket's last action on the lab's clock), a Measured step
    with its check on the work, and a passing one is the proof the move to `fixed` rests on."""
    t = await tickets.peek_ticket(deps.client, call.tenant, tid)
    work = ticket_work.for_round(await tickets.get_work(deps.client, call.tenant, tid), t.round)
    try:
        readings = await equipment.measure(call, t.customer, at=_after_the_work(work, deps.now()))
    except NotFound:
        return None  # no line on file: nothing to measure, nothing claimed
    kind = lab.diagnose_from_readings(readings)
    check = ticket_work.Check(round=t.round, at=max(r.at for r in readings), readings=[r.reading_id for r in readings],
                              diagnosis=kind.value if kind is not None else None, passed=kind is None)
    says = "after the outage, every test healthy" if kind is None else f"after the outage, the line shows {kind.value}"
    notes = tuple(wf.ReadingNote(test=r.test.value, reading_id=r.reading_id, says=says) for r in readings)
    work = ticket_work.with_check(work, check)
    measured = await ticket_cases.record(call, tid, wf.Measured(at=check.at, check=check, readings=notes),
                                         version=t.version, work=work)
    if not measured.changed or kind is not None:
        return None
    new = await ticket_cases.fix_proven(call, tid, work=ticket_work.with_proof(work, AGENT),
                                        outage_ids=[outage.outage_id], version=t.version)
    return new if new.changed else None


def _after_the_work(work: ticket_work.Work, now: datetime) -> datetime:
    done = [c.at for c in work.checks] + [a.at for a in work.actions]  # the resolver's lab clock runs ahead
    return max(now, max(done) + MEASURE) if done else now
