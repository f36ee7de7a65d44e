"""A customer's first address in chat puts them on a line (services/intake/placing.py), through
intake's and the resolver's real handlers on the real FalkorDB: the home connected to the nearest
served area's exchange, a blind lab fault on it diagnosed, an unserved place answered honestly, a
ticket that waited for the address handed back to the resolver, a city another regional desk of the
operator serves moving the case there."""

from __future__ import annotations

import pytest

from relay_graph.desk import agent_reads as desk
from relay_graph.desk.customers import case_move, regional_desks as desks
from relay_graph.desk.network import algorithms as network_algorithms, store as network
from relay_graph.desk.tickets import store as tickets
from relay_graph import lab
from relay_graph.lab import world
from relay_graph.runtime.errors import AlreadyExists
from relay_graph.desk.network.models import NodeKind
from relay_graph.runtime.queries import Query
from relay_graph.runtime.streams import STREAM_FACTS, STREAM_TICKETS, TicketChanged
from relay_graph.desk.tickets.models import TicketStage
from services.intake import agent as intake_agent
from services.resolver.handlers import handle_ticket_changed

from tests.support import register

from .conftest import published

SOURCE_OF = Query("test_fact_source", "MATCH (e:Episode)-[:DERIVED]->(f:Fact {fact_id: $fact_id}) "
                                      "RETURN e.episode_id AS episode_id", read_only=True)


@pytest.fixture
async def india(graph_client, tenant):
    """The tenant's world, as POST /v1/tenants seeds it by default."""
    return await world.seed_world(graph_client, tenant, "india")


@pytest.fixture(autouse=True)
async def no_unproven_fix(graph_client, tenant):
    yield
    assert await tickets.unproven_fixes(graph_client, tenant) == {}


async def test_an_address_in_the_first_message_puts_the_customer_on_a_line(india, intake, resolver, gateway,
                                                                          graph_client, tenant):
    text = "Hi, I'm Meera Iyer from Chennai.\nMy wifi is slow upstairs since yesterday evening."
    result = await intake_agent.answer_turn(intake, await gateway.write_turn("Meera Iyer", text, session="m-1"))
    assert "found your line" in result.reply.text and "Chennai" in result.reply.text
    hops = await network.customer_line(graph_client, tenant, "Meera Iyer")
    assert hops[0].kind is NodeKind.ONT and hops[-1].kind is NodeKind.BACKBONE  # from the home to the core
    assert "Chennai" in " ".join(h.name for h in hops)
    (fact,) = [f for f in await intake.memory.facts(tenant, "Meera Iyer") if f.predicate == "lives_in"]
    assert fact.object == "Chennai"
    rows = await graph_client.run(tenant, SOURCE_OF, {"fact_id": fact.fact_id})
    assert [r["episode_id"] for r in rows] == [result.reply.reply_to]  # filed with the message it came from

    # a blind fault on her line (the lab picks the kind): the resolver measures it and diagnoses it right
    await lab.inject(graph_client, tenant, customer="Meera Iyer", seed=7)
    t = result.ticket
    await handle_ticket_changed(resolver, TicketChanged(tenant=tenant, id=t.id, version=t.version,
                                                        change="handed_off", actor="intake"))
    board = await lab.scoreboard(graph_client, tenant)
    (row,) = [r for r in board.rows if r.customer == "Meera Iyer"]
    assert row.diagnosed_right, row
    cap = await network_algorithms.capacity(graph_client, tenant, hops[0].node_id)
    assert cap.node == hops[0].node_id and cap.max_flow_gbps >= 0


async def test_a_later_move_of_house_moves_the_line_and_a_move_we_cannot_serve_leaves_it(india, intake, gateway,
                                                                                        graph_client, tenant):
    async def turn(text):
        return await intake_agent.answer_turn(intake, await gateway.write_turn("Asha Rao", text, session="a-1"))

    async def line_names():
        return " ".join(h.name for h in await network.customer_line(graph_client, tenant, "Asha Rao"))

    await turn("Hi, I'm Asha Rao and I live in Pune. My internet is slow.")
    first = await network.customer_line(graph_client, tenant, "Asha Rao")
    assert "(Pune)" in await line_names()
    # saying the same city again changes nothing
    again = await turn("I live in Pune, yes.")
    assert "moved your line" not in again.reply.text and "found your line" not in again.reply.text
    assert (await network.customer_line(graph_client, tenant, "Asha Rao"))[0].node_id == first[0].node_id

    moved = await turn("We have just moved to Mumbai.")
    assert "moved your line from Pune to" in moved.reply.text and "Mumbai" in moved.reply.text, moved.reply.text
    now = await network.customer_line(graph_client, tenant, "Asha Rao")
    assert "(Mumbai)" in await line_names() and "(Pune)" not in await line_names()
    assert now[0].node_id != first[0].node_id and now[0].kind is NodeKind.ONT
    (home,) = [f for f in await intake.memory.facts(tenant, "Asha Rao") if f.predicate == "lives_in"]
    assert home.object == "Mumbai"

    # a move to a place with no line: said so, and the Mumbai line stays hers
    away = await turn("Actually we have moved to Reykjavik now.")
    assert "no line in Reykjav" in away.reply.text, away.reply.text
    assert (await network.customer_line(graph_client, tenant, "Asha Rao"))[0].node_id == now[0].node_id


async def test_a_pin_code_given_as_the_address_puts_the_customer_on_a_line(india, intake, gateway, graph_client,
                                                                           tenant):
    result = await intake_agent.answer_turn(intake, await gateway.write_turn(
        "Kiran Rao", "Hi, I'm Kiran Rao. My pin code is 560034 and the internet is down.", session="k-1"))
    assert "found your line" in result.reply.text and "Bengaluru" in result.reply.text, result.reply.text
    assert "(Bengaluru)" in " ".join(h.name for h in await network.customer_line(graph_client, tenant, "Kiran Rao"))
    (home,) = [f for f in await intake.memory.facts(tenant, "Kiran Rao") if f.predicate == "lives_in"]
    assert home.object == "Bengaluru"


async def test_the_home_learnt_from_a_city_named_in_chat_is_announced(india, intake, gateway, stream_redis, tenant):
    # "from Chennai" is no `lives_in` in the words: placing files it (services/intake/placing.py)
    text = "Hi, I'm Ravi Menon from Chennai.\nMy internet is down since this morning."
    await intake_agent.answer_turn(intake, await gateway.write_turn("Ravi Menon", text, session="r-1"))
    (fact,) = [f for f in await intake.memory.facts(tenant, "Ravi Menon") if f.predicate == "lives_in"]
    announced = [a for a in await published(stream_redis, STREAM_FACTS, tenant) if a.id == fact.fact_id]
    assert [(a.change, a.actor, a.version) for a in announced] == [("created", "intake", 0)]


async def test_a_place_we_do_not_serve_gets_an_honest_no_line(india, intake, gateway, graph_client, tenant):
    result = await intake_agent.answer_turn(intake, await gateway.write_turn(
        "Olaf Berg", "Hi, I'm Olaf Berg and I live in Reykjavik.", session="o-1"))
    assert "no line in Reykjav" in result.reply.text, result.reply.text  # the gazetteer spells it Reykjavík
    assert not await network.customer_line(graph_client, tenant, "Olaf Berg")


async def test_a_ticket_that_waited_for_the_address_goes_back_to_the_resolver(india, intake, resolver, gateway,
                                                                             graph_client, stream_redis, tenant):
    first = await intake_agent.answer_turn(intake, await gateway.write_turn(
        "Ravi Nair", "Hi, I'm Ravi Nair. My router is frozen, nothing works.", session="r-1"))
    t = first.ticket
    await handle_ticket_changed(resolver, TicketChanged(tenant=tenant, id=t.id, version=t.version,
                                                        change="handed_off", actor="intake"))
    waiting = await tickets.get_ticket(graph_client, tenant, t.id)
    assert waiting.handoffs[-1].to == "intake" and (await tickets.get_work(graph_client, tenant, t.id)).needs

    answer = await intake_agent.answer_turn(intake, await gateway.write_turn(
        "Ravi Nair", "I live in Koramangala, Bengaluru.", session="r-1"))
    assert "found your line in" in answer.reply.text and "Bengaluru" in answer.reply.text, answer.reply.text
    await lab.inject(graph_client, tenant, kind=lab.FaultKind.ROUTER_FROZEN, customer="Ravi Nair")
    back = await tickets.get_ticket(graph_client, tenant, t.id)
    assert back.handoffs[-1].from_ == "intake" and back.handoffs[-1].to == "resolver"
    (n,) = [c for c in await published(stream_redis, STREAM_TICKETS, tenant, id=t.id)
            if c.actor == "intake" and c.version == back.version]
    await handle_ticket_changed(resolver, n)
    done = await tickets.get_ticket(graph_client, tenant, t.id)
    measured = [e for e in done.timeline if e.event == "line_test"]
    assert measured, [e.event for e in done.timeline]  # measured now that there is a line
    assert done.stage is TicketStage.FIXED
    edges = await desk.ticket_agent_edges(graph_client, tenant, t.id)
    assert len([e for e in edges if e.type == "PICKED_UP"]) == 2


async def test_a_city_another_desk_serves_moves_the_case_there_with_its_history(india, intake, resolver, gateway,
                                                                               graph_client, stream_redis, tenant):
    europe = tenant + "-eu"
    await register(graph_client.redis, europe)
    await world.seed_world(graph_client, europe, "europe")
    await desks.register_desk(graph_client, tenant, "acme", "india")
    await desks.register_desk(graph_client, europe, "acme", "europe")
    first = await intake_agent.answer_turn(intake, await gateway.write_turn(
        "Lena Fischer", "Hi, I'm Lena Fischer. My wifi keeps dropping.", session="l-1"))
    t = first.ticket
    answer = await intake_agent.answer_turn(intake, await gateway.write_turn(
        "Lena Fischer", "I live in Berlin.", session="l-1"))
    assert "Europe desk" in answer.reply.text and "moved your case" in answer.reply.text, answer.reply.text
    # the other desk has her, her facts and her ticket, a line on its network, and the ticket is its resolver's
    assert [f.object for f in await intake.memory.facts(europe, "Lena Fischer") if f.predicate == "lives_in"] == [
        "Berlin"]
    moved = await tickets.get_ticket(graph_client, europe, t.id)
    assert moved.handoffs[-1].to == "resolver" and moved.owner is None
    assert await network.customer_line(graph_client, europe, "Lena Fischer")
    assert [c.change for c in await published(stream_redis, STREAM_TICKETS, europe, id=t.id)] == ["handed_off"]
    # this desk keeps the history and the mark of the move; nothing is connected here
    assert [m["direction"] for m in await case_move.moves_of(graph_client, tenant, "Lena Fischer")] == ["out"]
    assert not await network.customer_line(graph_client, tenant, "Lena Fischer")
    # the other desk's resolver measures her line there; this desk's resolver leaves the ticket alone
    (n,) = await published(stream_redis, STREAM_TICKETS, europe, id=t.id)
    await handle_ticket_changed(resolver, n)
    there = await tickets.get_ticket(graph_client, europe, t.id)
    assert any(e.event == "line_test" for e in there.timeline), [e.event for e in there.timeline]
    await handle_ticket_changed(resolver, TicketChanged(tenant=tenant, id=t.id, version=t.version,
                                                        change="handed_off", actor="intake"))
    here = await tickets.get_ticket(graph_client, tenant, t.id)
    assert not [e for e in here.timeline if e.agent == "resolver" and e.event not in ("picked_up",)]
    assert await tickets.unproven_fixes(graph_client, europe) == {}


async def test_registering_a_second_desk_for_one_region_is_refused(graph_client, tenant):
    await desks.register_desk(graph_client, tenant, "acme-x", "india")
    await desks.register_desk(graph_client, tenant, "acme-x", "india")  # a repeat: nothing changes
    with pytest.raises(AlreadyExists):
        await desks.register_desk(graph_client, tenant + "-2", "acme-x", "india")
    assert await desks.desk_for(graph_client, tenant, "india") is None  # never itself
    assert await desks.region_desk(graph_client, "acme-x", "india") == tenant


def _candidate(name: str, country: str, population: int | None, admin1: str | None = None):
    from relay_graph.desk.catalogue.models import PlaceCandidate, PlacementSource, PlacementStatus

    return PlaceCandidate(name=name, country=country, country_name={"GB": "United Kingdom", "CA": "Canada",
                                                                     "US": "United States"}[country],
                          admin1=admin1, lat=0.0, lon=0.0, population=population, status=PlacementStatus.SERVED,
                          source=PlacementSource.GAZETTEER)


def test_a_name_several_places_share_means_the_far_bigger_one_or_the_desk_asks():
    from services.intake.placing import dominant_candidate, which_place

    london = [_candidate("London", "GB", 8_961_989), _candidate("London", "CA", 383_822)]
    assert dominant_candidate(london).country == "GB"
    # two of a size: no guess, the customer is asked, and the two are told apart
    springfield = [_candidate("Springfield", "US", 169_176, "IL"), _candidate("Springfield", "US", 155_929, "MO")]
    assert dominant_candidate(springfield) is None
    asked = which_place(springfield).text
    assert "Springfield, IL, United States" in asked and "Springfield, MO, United States" in asked
    assert dominant_candidate([_candidate("London", "GB", None), _candidate("London", "CA", None)]) is None
    assert "London, United Kingdom or London, Canada" in which_place(london).text
