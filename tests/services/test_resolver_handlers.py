"""The resolver's handler against the real FalkorDB and real streams, called directly: claims,
stages and the timeline, outages first, measuring with the fault lab's equipment, technicians,
procedure learning, taking over a dead replica's ticket, and stale or repeated notifications.
(A customer without a line on file is asked for the address, never claimed fixed; a double charge
goes to billing; tests/services/test_resolver_lab.py covers every fault kind through the handler.)"""

from __future__ import annotations

import asyncio

import pytest

from relay_graph.desk import agent_reads as desk

from relay_graph.desk.network import store as network

from relay_graph.desk.tickets import store as tickets
from relay_graph import lab
from relay_graph.runtime.errors import NotFound
from relay_graph.runtime.heartbeat import beat
from relay_graph.runtime.streams import Delivery, STREAM_TICKETS, STREAM_REPLIES, TicketChanged
from relay_graph.desk.tickets.models import TicketStage
from services.intake import agent as intake_agent
from services.resolver import agent, playbooks
from services.resolver.handlers import HANDLERS, handle_ticket_changed
from tests import reads, sample_network

from tests.support import FAST

from .conftest import CONSULTED, counts, published


@pytest.fixture(autouse=True)
async def no_unproven_fix(graph_client, tenant):
    """The desk's invariant after every test here: no ticket reached `fixed` without a passing
    reading taken after the last action."""
    yield
    assert await tickets.unproven_fixes(graph_client, tenant) == {}


def handed(tenant: str, ticket) -> TicketChanged:
    return TicketChanged(tenant=tenant, id=ticket.id, version=ticket.version, change="handed_off", actor="intake")


def delivery(consumer: str, *, reclaimed: bool = False) -> Delivery:
    return Delivery(STREAM_TICKETS, "1-0", "resolver", consumer, 2 if reclaimed else 1, reclaimed)


async def report(intake, gateway, customer: str, text: str, session: str | None = None):
    result = await intake_agent.answer_turn(intake, await gateway.write_turn(customer, text, session=session))
    assert result.change == "handed_off", result
    return result.ticket


async def frozen(graph_client, tenant: str, *customers: str, city: str = "pune") -> None:
    """The customers on a line each, each with a frozen home box (the lab's fault)."""
    await sample_network.build_sample_network(graph_client, tenant, city=city, customers=list(customers))
    for c in customers:
        await lab.inject(graph_client, tenant, kind=lab.FaultKind.ROUTER_FROZEN, customer=c)


def test_handlers_table_names_the_kind_it_consumes():
    assert set(HANDLERS) == {"ticket_changed"}


async def test_a_handed_off_ticket_is_claimed_and_worked_to_fixed(intake, resolver, gateway, graph_client,
                                                                  stream_redis, tenant):
    await sample_network.build_sample_network(graph_client, tenant, city="pune", customers=["Alice Rao"])
    await lab.inject(graph_client, tenant, kind=lab.FaultKind.WIFI_INTERFERENCE, customer="Alice Rao")
    t = await report(intake, gateway, "Alice Rao", "My wifi keeps dropping upstairs. My router is a TP-Link "
                                                   "Archer C6", session="alice-1")
    await handle_ticket_changed(resolver, handed(tenant, t), delivery(resolver.consumer_name))

    done = await tickets.get_ticket(graph_client, tenant, t.id)
    assert done.stage is TicketStage.FIXED and done.owner == "resolver"
    assert done.owner_replica == resolver.consumer_name
    events = [(e.agent, e.event) for e in done.timeline]
    readings = [("resolver", test.value) for test in lab.Test]
    steps = ["change_wifi_channel"]  # the fix for what the readings show, measured again after
    assert events == [
        ("intake", "opened"), ("intake", "handed_off"), ("resolver", "picked_up"), ("resolver", "checking_line"),
        *readings, ("resolver", "diagnosis"), ("resolver", "plan"), ("resolver", "fixing"),
        *[("resolver", "fix_step")] * len(steps), *readings, ("resolver", "fix_verified"), ("resolver", "fixed"),
    ]
    assert [e.detail.split(" ", 1)[0] for e in done.timeline if e.event == "fix_step"] == steps
    assert next(e.detail for e in done.timeline if e.event == "diagnosis").startswith("wifi_interference:")
    edges = await desk.ticket_agent_edges(graph_client, tenant, t.id)
    assert [(e.type, e.agent) for e in edges if e.type in ("HANDED_OFF", "PICKED_UP")] == [
        ("HANDED_OFF", "intake"), ("PICKED_UP", "resolver")]
    assert [e.replica for e in edges if e.type == "PICKED_UP"] == [resolver.consumer_name]

    # it read what intake learnt
    router = [f for f in await resolver.memory.facts(tenant, "Alice Rao") if f.predicate == "has_router"]
    consulted = {r["fact_id"] for r in await graph_client.run(tenant, CONSULTED, {"agent": "resolver"})}
    assert router and router[0].fact_id in consulted

    # the fix is on file as a procedure, credited to this ticket
    (proc,) = await tickets.best_procedures(graph_client, tenant, "wifi_drops")
    assert proc.steps == steps and (proc.successes, proc.failures) == (1, 0)
    assert done.fixed_by == [proc.procedure_id]

    # each stage change announced with the version it reached; the customer told in their session
    stages = [c for c in await published(stream_redis, STREAM_TICKETS, tenant, id=t.id) if c.actor == "resolver"]
    assert [c.change for c in stages] == ["picked_up", "stage", "stage", "stage"]
    assert stages[-1].version == done.version
    replies = await published(stream_redis, STREAM_REPLIES, tenant, reply_to=t.id)
    assert len(replies) == 2 and {r.session for r in replies} == {"alice-1"}
    last = await reads.get_turn(graph_client, tenant, replies[-1].id)
    assert last.speaker == "resolver" and "Is everything working" in last.text


async def test_of_two_replicas_racing_for_a_ticket_exactly_one_works_it(intake, agent_deps, gateway, graph_client,
                                                                        tenant):
    await frozen(graph_client, tenant, "Bo Chen")
    t = await report(intake, gateway, "Bo Chen", "my router is frozen")
    a = await agent_deps("resolver", consumer_name="resolver-host-2-aaaaaa")
    b = await agent_deps("resolver", consumer_name="resolver-host-3-bbbbbb")
    n = handed(tenant, t)
    outcomes = await asyncio.gather(agent.take_up(a, n, delivery(a.consumer_name)),
                                    agent.take_up(b, n, delivery(b.consumer_name)))
    assert sorted(outcomes) == ["lost", "worked"]
    edges = await desk.ticket_agent_edges(graph_client, tenant, t.id)
    assert len([e for e in edges if e.type == "PICKED_UP"]) == 1
    done = await tickets.get_ticket(graph_client, tenant, t.id)
    assert done.stage is TicketStage.FIXED
    assert [e.detail.split(" ", 1)[0] for e in done.timeline if e.event == "fix_step"] == ["restart_ont"]


async def test_stale_and_repeated_notifications_change_nothing(intake, resolver, agent_deps, gateway, graph_client,
                                                               tenant):
    t = await report(intake, gateway, "Cy Young", "my router is frozen")
    await handle_ticket_changed(resolver, handed(tenant, t), delivery(resolver.consumer_name))
    before = await counts(graph_client, tenant)
    other = await agent_deps("resolver", consumer_name="resolver-host-4-cccccc")
    # the same notification again, to the holder and to another replica, fresh and reclaimed
    await handle_ticket_changed(resolver, handed(tenant, t), delivery(resolver.consumer_name))
    await handle_ticket_changed(other, handed(tenant, t), delivery(other.consumer_name))
    await handle_ticket_changed(other, handed(tenant, t), delivery(other.consumer_name, reclaimed=True))
    # the resolver's own announcements, and a kind it does not act on
    for change in ("picked_up", "stage", "opened"):
        await handle_ticket_changed(other, TicketChanged(tenant=tenant, id=t.id, version=t.version, change=change,
                                                         actor="resolver"))
    assert await counts(graph_client, tenant) == before


async def test_an_unknown_ticket_raises_so_the_runtime_dead_letters_it(resolver, tenant, gateway):
    await gateway.write_turn("Di Roy", "hello")
    with pytest.raises(NotFound):
        await handle_ticket_changed(resolver, TicketChanged(tenant=tenant, id="T-NOPE", version=1,
                                                            change="handed_off", actor="intake"))


async def test_an_open_outage_comes_first_the_ticket_waits_on_it(intake, resolver, gateway, graph_client, tenant):
    net = await sample_network.build_sample_network(graph_client, tenant, city="goa", customers=["Eli Ford"])
    splitter = net.splitter_of[net.onts["Eli Ford"]]
    t = await report(intake, gateway, "Eli Ford", "my internet is down", session="eli-1")
    # the fault lands between intake's handoff and the resolver's pickup (set by staff: not a lab
    # fault, so the field crew the resolver sends cannot clear it)
    await network.set_node_status(graph_client, tenant, splitter, up=False)
    outage = await network.open_outage(graph_client, tenant, splitter, cause="cabinet flooded")
    await handle_ticket_changed(resolver, handed(tenant, t), delivery(resolver.consumer_name))

    done = await tickets.get_ticket(graph_client, tenant, t.id)
    assert done.stage is TicketStage.CHECKING_LINE
    events = [e.event for e in done.timeline]
    # outages first: linked and said before anything is measured
    first = done.timeline[events.index("outage_linked")]
    assert outage.outage_id in first.detail and outage.outage_id not in first.customer
    assert events.index("outage_linked") < events.index("checking_line") < events.index("line_test")
    # then measured, diagnosed, the crew sent, measured again: still down, so it waits on the outage
    assert next(e.detail for e in done.timeline if e.event == "diagnosis").startswith("cut_street_cable:")
    assert [e.detail.split(" ", 1)[0] for e in done.timeline if e.event == "fix_step"] == ["repair_street_cable"]
    assert "fix_failed" in events and "waiting_on_network" in events
    assert events[-3:] == ["waiting_on_network", "checking_line", "escalated"]
    assert outage.outage_id in done.timeline[-3].detail and "netops" in done.timeline[-1].detail
    assert [o.outage_id for o in await desk.ticket_outages(graph_client, tenant, t.id)] == [outage.outage_id]
    transcript = await reads.transcript(graph_client, tenant, "eli-1")
    said = [e.text for e in transcript if e.speaker == "resolver"]
    assert "known outage" in said[0] and "network team" in said[-1]
    # a repeat does not measure, act or say anything again
    before = await counts(graph_client, tenant)
    await agent.work(resolver, tenant, t.id, resolver.consumer_name)
    assert await counts(graph_client, tenant) == before


async def test_a_red_light_or_a_dead_home_box_gets_a_technician(intake, resolver, gateway, graph_client, tenant):
    net = await sample_network.build_sample_network(graph_client, tenant, city="agra", customers=["Fay Wu", "Gil Ota"])
    t = await report(intake, gateway, "Fay Wu", "the red light on my box is blinking")
    await handle_ticket_changed(resolver, handed(tenant, t), delivery(resolver.consumer_name))
    done = await tickets.get_ticket(graph_client, tenant, t.id)
    assert done.stage is TicketStage.TECHNICIAN_DISPATCHED and len(done.visits) == 1
    assert done.visits[0].technician in playbooks.TECHNICIANS
    assert not [e for e in done.timeline if e.event == "fix_step"]

    await network.set_node_status(graph_client, tenant, net.onts["Gil Ota"], up=False)
    t2 = await report(intake, gateway, "Gil Ota", "my wifi keeps dropping")
    await handle_ticket_changed(resolver, handed(tenant, t2), delivery(resolver.consumer_name))
    done = await tickets.get_ticket(graph_client, tenant, t2.id)
    assert done.stage is TicketStage.TECHNICIAN_DISPATCHED
    line = next(e for e in done.timeline if e.event == "line_test")
    assert f"{net.onts['Gil Ota']} down" in line.detail


async def test_with_no_line_on_file_nothing_is_claimed_and_intake_is_asked_for_the_address(
        intake, resolver, gateway, graph_client, stream_redis, tenant):
    # A procedure learnt for slow speed is no licence to claim a fix nobody measured: with no line on
    # file (this used to run the playbook's steps as timeline text and go `fixed`) the resolver asks
    # for the address, as graph state on the ticket, and tells the customer why.
    seed = await tickets.open_ticket(graph_client, tenant, customer="seed", issue_kind="slow_speed", summary="slow",
                                     agent="intake", ticket_id="T-SEED-0")
    await tickets.record_fix(graph_client, tenant, seed.id, issue_kind="slow_speed",
                             steps=["reboot the home box remotely"], verified=True, agent="resolver")
    t = await report(intake, gateway, "Hal Vik", "my internet is really slow", session="hal-1")
    await handle_ticket_changed(resolver, handed(tenant, t), delivery(resolver.consumer_name))
    done = await tickets.get_ticket(graph_client, tenant, t.id)
    assert done.stage is TicketStage.CHECKING_LINE and done.owner is None
    assert done.handoffs[-1].from_ == "resolver" and done.handoffs[-1].to == "intake"
    assert not [e for e in done.timeline if e.event in ("fix_step", "fixed", "fix_verified")]
    assert [e.event for e in done.timeline][-3:] == ["address_requested", "checking_line", "handed_off"]
    work = await tickets.get_work(graph_client, tenant, t.id)
    assert work.needs == "address" and work.checks == [] and work.proofs == []
    said = [r for r in await published(stream_redis, STREAM_REPLIES, tenant, reply_to=t.id)]
    text = (await reads.get_turn(graph_client, tenant, said[-1].id)).text
    assert "no line on file" in text and "address" in text
    # the handoff to intake is not the resolver's to take up again; a repeat asks nothing twice
    assert await agent.take_up(resolver, TicketChanged(tenant=tenant, id=t.id, version=done.version,
                                                       change="handed_off", actor="resolver")) == "not_ours"
    assert await tickets.unproven_fixes(graph_client, tenant) == {}


async def test_a_double_charge_is_escalated_to_billing_not_claimed_fixed(intake, resolver, gateway, graph_client,
                                                                        tenant):
    t = await tickets.open_ticket(graph_client, tenant, customer="Pia Lund", issue_kind="billing_double_charge",
                                  summary="charged twice", agent="intake", ticket_id="T-TWICE-1")
    t = await tickets.hand_off(graph_client, tenant, t.id, from_agent="intake", to_role="resolver")
    await handle_ticket_changed(resolver, handed(tenant, t), delivery(resolver.consumer_name))
    await handle_ticket_changed(resolver, handed(tenant, t), delivery(resolver.consumer_name))  # a repeat
    done = await tickets.get_ticket(graph_client, tenant, t.id)
    assert done.stage is TicketStage.CHECKING_LINE
    assert not [e for e in done.timeline if e.event in ("fix_step", "fixed")]
    (esc,) = await reads.escalations(graph_client, tenant, t.id)
    assert (esc.to, esc.priority, esc.agent) == ("billing", "high", "resolver") and "double charge" in esc.reason


async def test_a_confirmed_fix_counts_once(intake, resolver, gateway, graph_client, stream_redis, tenant):
    await frozen(graph_client, tenant, "Ida Berg", "Jo Lee")
    t = await report(intake, gateway, "Ida Berg", "my router is frozen", session="ida-1")
    await handle_ticket_changed(resolver, handed(tenant, t), delivery(resolver.consumer_name))
    closed = await intake_agent.answer_turn(intake, await gateway.write_turn("Ida Berg", "It works now, thanks!",
                                                                             session="ida-1"))
    assert closed.change == "closed"
    n = TicketChanged(tenant=tenant, id=t.id, version=closed.ticket.version, change="closed", actor="intake")
    await handle_ticket_changed(resolver, n)
    await handle_ticket_changed(resolver, n)
    (proc,) = await tickets.best_procedures(graph_client, tenant, "router_frozen")
    assert (proc.successes, proc.failures) == (1, 0)
    # the next frozen router is fixed with what was learnt
    t2 = await report(intake, gateway, "Jo Lee", "my router is frozen")
    await handle_ticket_changed(resolver, handed(tenant, t2), delivery(resolver.consumer_name))
    done = await tickets.get_ticket(graph_client, tenant, t2.id)
    assert "(learnt, for router_frozen)" in next(e.detail for e in done.timeline if e.event == "plan")
    assert done.fixed_by == [proc.procedure_id]


async def test_a_replica_continues_the_ticket_of_one_that_died(intake, agent_deps, gateway, graph_client,
                                                               stream_redis, tenant):
    await frozen(graph_client, tenant, "Kai Sun")
    t = await report(intake, gateway, "Kai Sun", "my router is frozen")
    dead = "resolver-host-9-dead01"
    assert await tickets.claim(graph_client, tenant, t.id, agent="resolver", replica=dead)
    await beat(stream_redis, "resolver", dead, ttl_s=1)  # killed a moment ago: its key outlives it briefly
    alive = await agent_deps("resolver", consumer_name="resolver-host-5-live01", heartbeat_ttl_s=3)
    # a fresh (not reclaimed) notification does not take a held ticket
    assert await agent.take_up(alive, handed(tenant, t), delivery(alive.consumer_name)) == "lost"
    # the notification the dead one was handling, reclaimed: taken over once its heartbeat lapses
    assert await agent.take_up(alive, handed(tenant, t), delivery(alive.consumer_name, reclaimed=True)) == "worked"
    done = await tickets.get_ticket(graph_client, tenant, t.id)
    assert done.stage is TicketStage.FIXED and done.owner_replica == alive.consumer_name
    edges = [e for e in await desk.ticket_agent_edges(graph_client, tenant, t.id) if e.type == "PICKED_UP"]
    assert [e.replica for e in edges] == [dead, alive.consumer_name]


async def test_a_holder_that_still_beats_keeps_its_ticket(intake, agent_deps, gateway, graph_client, stream_redis,
                                                          tenant):
    await frozen(graph_client, tenant, "Ola Nor")
    t = await report(intake, gateway, "Ola Nor", "my router is frozen")
    holder = "resolver-host-8-busy01"
    assert await tickets.claim(graph_client, tenant, t.id, agent="resolver", replica=holder)
    await beat(stream_redis, "resolver", holder, ttl_s=30)
    other = await agent_deps("resolver", consumer_name="resolver-host-7-other1", heartbeat_ttl_s=1)
    before = await counts(graph_client, tenant)
    assert await agent.take_up(other, handed(tenant, t), delivery(other.consumer_name, reclaimed=True)) == "lost"
    assert await counts(graph_client, tenant) == before
    # ... unless it has not touched it for a whole lease (its handler failed and left it)
    idle = await agent_deps("resolver", consumer_name="resolver-host-7-other2", heartbeat_ttl_s=1,
                            claim_lease_ms=1)
    assert await agent.take_up(idle, handed(tenant, t), delivery(idle.consumer_name, reclaimed=True)) == "worked"
    assert (await tickets.peek_ticket(graph_client, tenant, t.id)).owner_replica == idle.consumer_name


async def test_a_dead_holder_without_heartbeat_is_taken_over_by_name(intake, agent_deps, gateway, graph_client,
                                                                     tenant):
    await frozen(graph_client, tenant, "Lu Mae")
    t = await report(intake, gateway, "Lu Mae", "my router is frozen")
    dead = "resolver-host-9-dead02"
    assert await tickets.claim(graph_client, tenant, t.id, agent="resolver", replica=dead)
    alive = await agent_deps("resolver", consumer_name="resolver-host-6-live02", streams=FAST.model_copy(update={"min_idle_ms": 600_000}))
    assert await agent.take_up(alive, handed(tenant, t), delivery(alive.consumer_name, reclaimed=True)) == "worked"
    done = await tickets.get_ticket(graph_client, tenant, t.id)
    assert done.owner_replica == alive.consumer_name and done.stage is TicketStage.FIXED
