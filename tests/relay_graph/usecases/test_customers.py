"""The customers' use cases (usecases.customers) on the real FalkorDB: each writes through the desk
and records on its call what it owes, announcing nothing itself: a new customer's name its
FactChanged (best effort), a time zone, a home put on a line and a case moved desk nothing in this
desk (the moved tickets' `moved_desk` step is in the ticket workflow's words); bad input is refused
before anything is written."""

from __future__ import annotations

import pytest

from relay_graph.desk.customers import case_move
from relay_graph.desk.network import store as network
from relay_graph.desk.tickets import store as tickets
from relay_graph.lab import world
from relay_graph.runtime.errors import InvalidValue
from relay_graph.runtime.queries import Query
from relay_graph.desk.conversation.site import customer_uid
from relay_graph.usecases import customers
from relay_graph.usecases.context import Call
from tests.support import register

TIME_ZONE = Query("test_time_zone", "MATCH (c:Entity {uid: $uid}) RETURN c.time_zone AS zone", read_only=True)


def owes(call: Call) -> list[tuple[str, str]]:
    return [(n.kind, n.change) for n in call.owed] + [("best effort " + n.kind, n.change) for n in call.told]


async def test_a_new_customer_with_a_name_owes_the_name_fact_and_without_one_nothing(memory, tenant):
    call = Call(memory, tenant, "gateway")
    cid = await customers.create_customer(call, name="Ann Bell")
    assert owes(call) == [("best effort fact_changed", "created")]
    [name] = [f for f in await memory.facts(tenant, cid) if f.predicate == "name"]
    assert name.object == "Ann Bell" and call.told[0].id == name.fact_id and name.asserted_by == "gateway"
    bare = Call(memory, tenant, "gateway")
    other = await customers.create_customer(bare)
    assert other != cid and owes(bare) == []


async def test_a_time_zone_is_kept_owing_nothing_and_a_bad_one_is_refused(memory, tenant):
    call = Call(memory, tenant, "gateway")
    cid = await customers.create_customer(call)
    await customers.set_time_zone(call, cid, "Europe/Lisbon")
    assert owes(call) == []
    with pytest.raises(InvalidValue):
        await customers.set_time_zone(call, cid, "not a zone; DROP")
    [row] = await memory.client.run(tenant, TIME_ZONE, {"uid": customer_uid(cid)})
    assert row["zone"] == "Europe/Lisbon"


async def test_a_home_connected_is_on_a_line_and_owes_nothing(graph_client, memory, tenant):
    await world.seed_world(graph_client, tenant, "india")
    call = Call(memory, tenant, "intake")
    home = await customers.connect_home(call, "Meera Iyer", "Chennai", region="india")
    assert home.city == "Chennai" and owes(call) == []
    hops = await network.customer_line(graph_client, tenant, "Meera Iyer")
    assert hops[0].node_id == home.node_id


async def test_a_case_moved_marks_its_open_ticket_in_the_workflows_words_and_owes_nothing_here(
        graph_client, memory, tenant):
    europe = tenant + "-eu"
    await register(graph_client.redis, europe)
    await world.seed_world(graph_client, tenant, "india")
    await world.seed_world(graph_client, europe, "europe")
    t = await tickets.open_ticket(graph_client, tenant, customer="Lena Fischer", issue_kind="wifi_drops",
                                  summary="my wifi keeps dropping", agent="intake")
    call = Call(memory, tenant, "intake")
    moved = await customers.move_case(call, europe, "Lena Fischer")
    assert (moved.to_region, moved.tickets, moved.tickets_marked) == ("europe", 1, 1) and owes(call) == []
    here = await tickets.get_ticket(graph_client, tenant, t.id)
    assert [(e.event, e.agent, e.detail) for e in here.timeline][-1] == (
        "moved_desk", "intake", "moved to the Europe desk")
    assert (await tickets.get_ticket(graph_client, europe, t.id)).stage is t.stage
    assert [m["direction"] for m in await case_move.moves_of(graph_client, tenant, "Lena Fischer")] == ["out"]
    again = await customers.move_case(call, europe, "Lena Fischer", by="ops-lena")
    assert again.copied == 0 and again.move_id == moved.move_id
