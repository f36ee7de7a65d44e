"""Netops' handler against the real FalkorDB and real streams, called directly: a node going down
warns every customer it reaches before they complain, once; coming back up closes the loop."""

from __future__ import annotations

import pytest

from relay_graph.desk import agent_reads as desk

from relay_graph.desk.network import store as network

from relay_graph.desk.tickets import store as tickets
from relay_graph.runtime.errors import NotFound
from relay_graph.lab.network_gen import generate_network
from relay_graph.runtime.streams import NetworkChanged, STREAM_OUTAGES, STREAM_REPLIES, STREAM_TICKETS
from relay_graph.desk.tickets.models import TicketStage
from services.intake import agent as intake_agent
from services.netops import agent
from services.netops.handlers import HANDLERS, handle_network_changed
from services.resolver.handlers import handle_ticket_changed
from relay_graph.runtime.streams import TicketChanged
from tests import reads, sample_network

from .conftest import counts, published

pytestmark = pytest.mark.falkordb

# Dealt round-robin over four splitters: the first splitter serves customers 0 and 4.
CUSTOMERS = ["Ann Bell", "Ben Cole", "Cat Dunn", "Dan Eady", "Eve Fox", "Fin Gale"]


def test_handlers_table_names_the_kind_it_consumes():
    assert set(HANDLERS) == {"network_changed"}


async def down(graph_client, tenant, node) -> NetworkChanged:
    change = await network.set_node_status(graph_client, tenant, node, up=False)
    return NetworkChanged(tenant=tenant, id=node, version=change.version, change="down", actor="lab")


async def up(graph_client, tenant, node) -> NetworkChanged:
    change = await network.set_node_status(graph_client, tenant, node, up=True)
    return NetworkChanged(tenant=tenant, id=node, version=change.version, change="up", actor="lab")


async def test_a_node_down_warns_every_customer_behind_it_once(netops, agent_deps, gateway, graph_client,
                                                               stream_redis, tenant):
    net = await sample_network.build_sample_network(graph_client, tenant, city="pune", customers=CUSTOMERS)
    splitter = net.splitters[0]
    behind = sorted(c.customer for c in await network.customers_behind(graph_client, tenant, splitter))
    assert behind == ["Ann Bell", "Eve Fox"]
    # Ann talked to us before and has an open ticket; Eve never did
    intake = await agent_deps("intake")
    opened = await intake_agent.answer_turn(intake, await gateway.write_turn("Ann Bell", "my wifi keeps dropping",
                                                                             session="ann-1"))

    n = await down(graph_client, tenant, splitter)
    result = await agent.node_down(netops, n)
    assert result.status == "declared" and result.outage.created and result.announced
    assert sorted(result.notified) == behind
    oid = result.outage.outage_id
    assert [o.outage_id for o in await desk.ticket_outages(graph_client, tenant, opened.ticket.id)] == [oid]

    notices = await published(stream_redis, STREAM_REPLIES, tenant, reply_to=oid)
    assert len(notices) == 2 and all(w.actor == "netops" and w.version == n.version for w in notices)
    by_session = {w.session: w for w in notices}
    assert "ann-1" in by_session  # in the session she talked to us in
    eve = next(w for w in notices if w.session != "ann-1")
    assert await desk.latest_session(graph_client, tenant, "Eve Fox") == eve.session
    notice = await reads.get_turn(graph_client, tenant, eve.id)
    assert notice.kind == "AgentReply" and notice.speaker == "netops" and "known fault" in notice.text
    assert notice.customer == "Eve Fox"
    declared = await published(stream_redis, STREAM_OUTAGES, tenant, id=oid)
    assert [(d.change, d.node_id) for d in declared] == [("declared", splitter)]
    # nobody else heard anything
    assert not [w for w in await published(stream_redis, STREAM_REPLIES, tenant)
                if w.reply_to == oid and w.session not in by_session]

    before = await counts(graph_client, tenant)
    again = await agent.node_down(netops, n)
    await handle_network_changed(netops, n)
    assert again.notified == [] and not again.announced
    assert await counts(graph_client, tenant) == before
    assert len(await published(stream_redis, STREAM_OUTAGES, tenant, id=oid)) == 1
    assert len(await published(stream_redis, STREAM_REPLIES, tenant, reply_to=oid)) == 2


async def test_a_stale_notification_does_nothing(netops, graph_client, tenant):
    net = await sample_network.build_sample_network(graph_client, tenant, city="agra", customers=CUSTOMERS[:2])
    n = await down(graph_client, tenant, net.olts[0])
    await up(graph_client, tenant, net.olts[0])  # back before netops saw it go down
    before = await counts(graph_client, tenant)
    assert (await agent.node_down(netops, n)).status == "stale"
    old = n.model_copy(update={"version": n.version - 1})
    assert (await agent.node_down(netops, old)).status == "stale"
    assert await counts(graph_client, tenant) == before
    with pytest.raises(NotFound):
        await handle_network_changed(netops, n.model_copy(update={"id": "no-such-node"}))


async def test_back_up_closes_the_outage_and_the_tickets_waiting_on_it(netops, agent_deps, gateway, graph_client,
                                                                       stream_redis, tenant):
    net = await sample_network.build_sample_network(graph_client, tenant, city="goa", customers=CUSTOMERS)
    splitter = net.splitters[1]  # Ben and Fin
    n = await down(graph_client, tenant, splitter)
    declared = await agent.node_down(netops, n)
    oid = declared.outage.outage_id
    # Ben complains anyway: intake links his ticket, the resolver parks it on the outage
    intake = await agent_deps("intake")
    resolver = await agent_deps("resolver")
    opened = await intake_agent.answer_turn(intake, await gateway.write_turn("Ben Cole", "my internet is down",
                                                                             session="ben-1"))
    await handle_ticket_changed(resolver, TicketChanged(tenant=tenant, id=opened.ticket.id,
                                                        version=opened.ticket.version, change="handed_off",
                                                        actor="intake"))
    assert (await tickets.peek_ticket(graph_client, tenant, opened.ticket.id)).stage is TicketStage.CHECKING_LINE

    back = await up(graph_client, tenant, splitter)
    result = await agent.node_up(netops, back)
    assert result.status == "resolved" and result.announced and result.tickets == [opened.ticket.id]
    assert not (await network.get_outage(graph_client, tenant, oid)).open
    t = await tickets.get_ticket(graph_client, tenant, opened.ticket.id)
    assert t.stage is TicketStage.FIXED and [e.event for e in t.timeline[-2:]] == ["outage_over", "fixed"]
    assert oid in t.timeline[-2].detail and t.timeline[-1].agent == "netops"
    assert "line_test" in [e.event for e in t.timeline if e.agent == "netops"]  # measured before it is said
    assert (await published(stream_redis, STREAM_TICKETS, tenant, id=t.id))[-1].version == t.version
    assert sorted(result.notified) == ["Ben Cole", "Fin Gale"]
    transcript = await reads.transcript(graph_client, tenant, "ben-1")
    assert "Is everything working" in transcript[-2].text + transcript[-1].text
    assert [o.change for o in await published(stream_redis, STREAM_OUTAGES, tenant, id=oid)] == ["declared",
                                                                                                  "resolved"]
    # the customer's "it works now" closes it
    closed = await intake_agent.answer_turn(intake, await gateway.write_turn("Ben Cole", "It works now, thanks!",
                                                                             session="ben-1"))
    assert closed.change == "closed"

    before = await counts(graph_client, tenant)
    again = await agent.node_up(netops, back)
    assert again.notified == [] and again.tickets == [] and not again.announced
    assert await counts(graph_client, tenant) == before


# Two cities as the generator builds them (seed 3): Navrangpura's exchange (Anil, Bina) has its
# primary uplink to the Ahmedabad hub and a standby uplink to the Chennai hub; Maninagar's (Mira)
# and T Nagar's (Ravi) have none.
CITIES = [("Ahmedabad", ["Navrangpura", "Maninagar"]), ("Chennai", ["T Nagar"])]
PEOPLE = [("Anil Shah", "Ahmedabad", "Navrangpura"), ("Bina Modi", "Ahmedabad", "Navrangpura"),
          ("Mira Joshi", "Ahmedabad", "Maninagar"), ("Ravi Kumar", "Chennai", "T Nagar")]


async def test_a_hub_down_does_not_warn_customers_its_standby_uplink_serves(netops, agent_deps, gateway,
                                                                            graph_client, stream_redis, tenant):
    region = await generate_network(graph_client, tenant, cities=CITIES, seed=3, customers=PEOPLE)
    chennai, ahmedabad = region.hubs["Chennai"], region.hubs["Ahmedabad"]
    assert (region.exchanges["Ahmedabad"]["Navrangpura"], chennai) in region.backup_links
    # Anil has an open ticket from before
    intake = await agent_deps("intake")
    opened = await intake_agent.answer_turn(intake, await gateway.write_turn("Anil Shah", "my wifi keeps dropping",
                                                                             session="anil-1"))

    # the Chennai hub fails: Anil and Bina still run on their primary, so only Ravi hears of it
    result = await agent.node_down(netops, await down(graph_client, tenant, chennai))
    oid = result.outage.outage_id
    assert result.status == "declared" and result.notified == ["Ravi Kumar"] and result.tickets == []
    assert result.outage.customers == ["Ravi Kumar"]
    assert await desk.ticket_outages(graph_client, tenant, opened.ticket.id) == []
    assert await network.open_outages_for_customer(graph_client, tenant, "Anil Shah") == []  # recall_customer's read
    notices = await published(stream_redis, STREAM_REPLIES, tenant, reply_to=oid)
    assert len(notices) == 1 and (await reads.get_turn(graph_client, tenant, notices[0].id)).customer == "Ravi Kumar"

    # the primary's hub fails too: every way up is down now, so they are warned and linked
    both = await agent.node_down(netops, await down(graph_client, tenant, ahmedabad))
    assert sorted(both.notified) == ["Anil Shah", "Bina Modi", "Mira Joshi"]
    assert both.tickets == [opened.ticket.id]
    assert [o.outage_id for o in await desk.ticket_outages(graph_client, tenant, opened.ticket.id)] == [
        both.outage.outage_id]
    assert [o.node_id for o in await network.open_outages_for_customer(graph_client, tenant, "Anil Shah")] == [
        ahmedabad]


async def test_a_home_box_down_is_said_as_your_home_box_without_ids(netops, graph_client, stream_redis, tenant):
    """A home box's node name starts with its customer's id (the simulator's customers are `c-…`):
    the notice and the "over" notice name the place as the customer reads it (the staff's
    how-I-know keeps the ids)."""
    await sample_network.build_sample_network(graph_client, tenant, city="surat", customers=CUSTOMERS[:1])
    box = (await network.customer_line(graph_client, tenant, "Ann Bell"))[0]
    assert box.kind.value == "Ont" and box.name.endswith("home box")
    declared = await agent.node_down(netops, await down(graph_client, tenant, box.node_id))
    assert declared.notified == ["Ann Bell"]
    await agent.node_up(netops, await up(graph_client, tenant, box.node_id))
    said = [await reads.get_turn(graph_client, tenant, w.id) for w in
            await published(stream_redis, STREAM_REPLIES, tenant, reply_to=declared.outage.outage_id)]
    assert len(said) == 2 and all("your home box" in s.text for s in said), [s.text for s in said]
    for s in said:
        assert box.name not in s.text and box.node_id not in s.text
