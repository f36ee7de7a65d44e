"""What a customer reads is true when said, on their own clock and in their words (issue 31), on a
real FalkorDB with the agents' handlers in-process: a healthy line is answered with what was
measured, the visit's own local time and a safe tip; a promise made in India is due at 10:00 IST on
the next local day; no UTC, reading, visit, node or fact id reaches the customer."""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo

import pytest

from relay_graph.desk import agent_reads as desk
from relay_graph.desk.conversation.reply_check import find_ids
from relay_graph.desk.conversation.reads import ticket_promises
from relay_graph.desk.customers.zone import customer_zone
from relay_graph.desk.tickets import store as tickets
from relay_graph.desk.tickets.models import TicketStage
from relay_graph.lab import world
from relay_graph.runtime.streams import Delivery, STREAM_TICKETS, TicketChanged
from services.intake import agent as intake_agent
from services.resolver.handlers import handle_ticket_changed
from tests import reads

IST = ZoneInfo("Asia/Kolkata")
INTERNAL = re.compile(r"\b(?:rd|act|visit|out|pr)-[0-9a-f]{6,}|\b[0-9a-f]{32}\b|\bUTC\b|lab time|slow_speed|_mbps")


@pytest.fixture
async def divya(graph_client, tenant):
    """Divya lives in Bengaluru (a served city of the seeded India desk), on a healthy line."""
    await world.seed_world(graph_client, tenant, "india", max_cities=3,
                           customers=[("Divya Rao", "12 MG Road, Bengaluru")])
    return "Divya Rao"


def customer_safe(text: str) -> None:
    assert not INTERNAL.search(text), text


async def replies_to(graph_client, tenant, customer: str) -> list[str]:
    session = await desk.latest_session(graph_client, tenant, customer)
    return [t.text for t in await reads.transcript(graph_client, tenant, session) if t.kind == "AgentReply"]


async def test_the_customer_clock_is_their_city_s(graph_client, tenant, divya):
    assert getattr(await customer_zone(graph_client, tenant, divya), "key", None) == "Asia/Kolkata"


async def test_a_customer_in_a_city_the_desk_does_not_serve_reads_its_clock(intake, gateway, graph_client, tenant,
                                                                            divya):
    """"I live in Madrid" on the India desk: no line there, but Madrid's clock, not the desk's."""
    await intake_agent.answer_turn(intake, await gateway.write_turn(
        "Ana Ruiz", "Hi, I'm Ana Ruiz and I live in Madrid. My internet is down.", session="ana-1"))
    assert getattr(await customer_zone(graph_client, tenant, "Ana Ruiz"), "key", None) == "Europe/Madrid"


async def test_a_healthy_line_is_answered_with_what_was_measured_the_visit_time_and_a_tip(
        intake, resolver, gateway, graph_client, tenant, divya):
    opened = await intake_agent.answer_turn(intake, await gateway.write_turn(
        divya, "My internet is very slow since yesterday.", session="dv-1"))
    t = opened.ticket
    await handle_ticket_changed(resolver, TicketChanged(tenant=tenant, id=t.id, version=t.version, change="handed_off",
                                                        actor="intake"),
                                Delivery(STREAM_TICKETS, "1-0", "resolver", resolver.consumer_name, 1, False))
    done = await tickets.get_ticket(graph_client, tenant, t.id)
    assert done.stage is TicketStage.TECHNICIAN_DISPATCHED
    [visit] = done.visits
    local = visit.at.astimezone(IST)
    assert (local.hour, local.minute) == (10, 0)  # the visit is 10:00 on her clock
    said = (await replies_to(graph_client, tenant, divya))[-1]
    assert re.search(r"your line tests healthy: \d+ Mbps to the box", said, re.I), said
    assert f"{local:%a} {local.day} {local:%b}, 10:00 IST" in said and "will not argue" in said
    assert "safe to try" in said
    customer_safe(said)
    for e in done.timeline:  # the customer wording of each step: no ids, no UTC, no lab time
        customer_safe(e.customer or "")


async def test_a_promise_in_india_is_due_on_the_local_clock_and_worded_in_it(
        intake, gateway, graph_client, tenant, divya):
    opened = await intake_agent.answer_turn(intake, await gateway.write_turn(
        divya, "My router is frozen.", session="dv-2"))
    said = await intake_agent.answer_turn(intake, await gateway.write_turn(
        divya, "can someone call me before 10 tomorrow?", session="dv-2"))
    [promise] = await ticket_promises(graph_client, tenant, opened.ticket.id)
    due = promise.due_at.astimezone(IST)
    now = said.reply.at.astimezone(IST)
    assert promise.due_zone == "Asia/Kolkata" and (due.hour, due.minute) == (10, 0)
    assert (due.date() - now.date()).days == 1  # tomorrow on her calendar
    assert f"{due:%a} {due.day} {due:%b}, 10:00 IST" in said.reply.text
    customer_safe(said.reply.text)
    step = next(e for e in (await tickets.get_ticket(graph_client, tenant, opened.ticket.id)).timeline
                if e.event == "promised")
    assert "10:00 IST" in step.customer and promise.promise_id not in step.customer


def test_the_internal_pattern_catches_what_it_must():
    for bad in ("rd-3f9a0c12ab", "at 10:00 UTC", "12:00 lab time", "slow_speed", "visit-abc123def"):
        with pytest.raises(AssertionError):
            customer_safe(bad)
    assert find_ids("visit visit-3f9a0c12") == ["visit-3f9a0c12"]
