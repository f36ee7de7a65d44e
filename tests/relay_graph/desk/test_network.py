"""The access network against a real FalkorDB: a hand-built network with known answers.

    bb1 (Backbone) <-UPLINK- pop1 (Pop) <-UPLINK- olt1 <-PON- spl1a -DROP-> ont1 <- Alice Rao
                                                                    -DROP-> ont2 <- Bob Das
                                                      <-PON- spl1b -DROP-> ont3 <- Chitra Iyer
                                      <-UPLINK- olt2 <-PON- spl2a -DROP-> ont4 <- Dev Patel
                                                     <- Esha Khan (straight onto the OLT)
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone

import pytest

from relay_graph.desk.network import store as net
from relay_graph.lab.network_gen import generate_network
from relay_graph.runtime.errors import InvalidInput, InvalidTenant, NotFound, StateConflict
from relay_graph.desk.network.models import LinkIn, LinkType, NetNodeIn, NodeKind
from relay_graph.runtime.queries import Query
from relay_graph.desk.queries import network as q
from tests import sample_network
from tests.support import register

T0 = datetime(2026, 9, 5, 10, 0, tzinfo=timezone.utc)

NODES = [
    ("bb1", NodeKind.BACKBONE, 400), ("pop1", NodeKind.POP, 100),
    ("olt1", NodeKind.OLT, 20), ("olt2", NodeKind.OLT, 20),
    ("spl1a", NodeKind.SPLITTER, 2.5), ("spl1b", NodeKind.SPLITTER, 2.5), ("spl2a", NodeKind.SPLITTER, 2.5),
    ("ont1", NodeKind.ONT, 1), ("ont2", NodeKind.ONT, 1), ("ont3", NodeKind.ONT, 1), ("ont4", NodeKind.ONT, 1),
]
LINKS = [
    (LinkType.UPLINK, "pop1", "bb1"), (LinkType.UPLINK, "olt1", "pop1"), (LinkType.UPLINK, "olt2", "pop1"),
    (LinkType.PON, "spl1a", "olt1"), (LinkType.PON, "spl1b", "olt1"), (LinkType.PON, "spl2a", "olt2"),
    (LinkType.DROP, "spl1a", "ont1"), (LinkType.DROP, "spl1a", "ont2"), (LinkType.DROP, "spl1b", "ont3"),
    (LinkType.DROP, "spl2a", "ont4"),
]
HOMES = [("Alice Rao", "ont1"), ("Bob Das", "ont2"), ("Chitra Iyer", "ont3"), ("Dev Patel", "ont4"),
         ("Esha Khan", "olt2")]


async def build(client, tenant):
    nodes = [NetNodeIn(node_id=i, kind=k, name=f"{i} name", capacity_gbps=c) for i, k, c in NODES]
    links = [LinkIn(type=t, source=s, target=d, capacity_gbps=1.0, length_m=100) for t, s, d in LINKS]
    r1 = await net.upsert_nodes(client, tenant, nodes)
    r2 = await net.upsert_links(client, tenant, links)
    await net.attach_customers(client, tenant, HOMES)
    return r1, r2


async def raw(client, tenant, cypher, params=None, read_only=True):
    return await client.run(tenant, Query("test", cypher, read_only), params)


async def counts(client, tenant):
    rows = await raw(client, tenant, "MATCH (n) RETURN count(n) AS n")
    rels = await raw(client, tenant, "MATCH ()-[r]->() RETURN count(r) AS n")
    return rows[0]["n"], rels[0]["n"]


def as_map(affected):
    return {a.customer: a.path for a in affected}


async def test_build_is_idempotent(graph_client, tenant):
    r1, r2 = await build(graph_client, tenant)
    assert (r1.created, r1.updated) == (len(NODES), 0)
    assert (r2.created, r2.updated) == (len(LINKS), 0)
    before = await counts(graph_client, tenant)
    r1, r2 = await build(graph_client, tenant)
    assert (r1.created, r1.updated) == (0, len(NODES))
    assert (r2.created, r2.updated) == (0, len(LINKS))
    assert await counts(graph_client, tenant) == before
    rows = await raw(graph_client, tenant, "MATCH (n:NetNode:Olt:Up {node_id: 'olt1'}) RETURN n.kind AS k")
    assert rows == [{"k": "Olt"}]
    # customers are the facts module's entities: one node per normalised name
    await sample_network.attach_customer(graph_client, tenant, "  alice   RAO ", "ont1")
    rows = await raw(graph_client, tenant,
                     "MATCH (c:Entity:Customer {uid: 'Customer|alice rao'}) RETURN c.name AS name, c.type AS t")
    assert rows == [{"name": "Alice Rao", "t": "Customer"}]


async def test_customers_behind_olt_splitter_pop_with_paths(graph_client, tenant):
    await build(graph_client, tenant)
    assert as_map(await net.customers_behind(graph_client, tenant, "olt1")) == {
        "Alice Rao": ["ont1", "spl1a", "olt1"],
        "Bob Das": ["ont2", "spl1a", "olt1"],
        "Chitra Iyer": ["ont3", "spl1b", "olt1"],
    }
    assert as_map(await net.customers_behind(graph_client, tenant, "spl1a")) == {
        "Alice Rao": ["ont1", "spl1a"],
        "Bob Das": ["ont2", "spl1a"],
    }
    behind_pop = await net.customers_behind(graph_client, tenant, "pop1")
    assert [a.customer for a in behind_pop] == ["Alice Rao", "Bob Das", "Chitra Iyer", "Dev Patel", "Esha Khan"]
    assert as_map(behind_pop)["Dev Patel"] == ["ont4", "spl2a", "olt2", "pop1"]
    assert as_map(behind_pop)["Esha Khan"] == ["olt2", "pop1"]
    assert as_map(await net.customers_behind(graph_client, tenant, "ont3")) == {"Chitra Iyer": ["ont3"]}
    assert len(await net.customers_behind(graph_client, tenant, "bb1")) == 5


async def test_depth_counts_network_links_below_the_node(graph_client, tenant):
    await build(graph_client, tenant)
    names = lambda rows: [a.customer for a in rows]  # noqa: E731
    assert names(await net.customers_behind(graph_client, tenant, "olt1", depth=1)) == []
    assert names(await net.customers_behind(graph_client, tenant, "olt1", depth=2)) == [
        "Alice Rao", "Bob Das", "Chitra Iyer"]
    assert names(await net.customers_behind(graph_client, tenant, "spl1a", depth=1)) == ["Alice Rao", "Bob Das"]
    assert names(await net.customers_behind(graph_client, tenant, "spl1a", depth=0)) == []
    assert names(await net.customers_behind(graph_client, tenant, "ont1", depth=0)) == ["Alice Rao"]
    # Esha hangs straight off olt2, one link below the POP; the ONT customers are three below
    assert names(await net.customers_behind(graph_client, tenant, "pop1", depth=1)) == ["Esha Khan"]
    assert names(await net.customers_behind(graph_client, tenant, "pop1", depth=2)) == ["Esha Khan"]
    assert len(await net.customers_behind(graph_client, tenant, "pop1", depth=3)) == 5
    assert len(await net.customers_behind(graph_client, tenant, "bb1", depth=3)) == 1
    # beyond the prebuilt bounds the unbounded query filters by hops itself
    assert len(await net.customers_behind(graph_client, tenant, "bb1", depth=q.MAX_BOUNDED_DEPTH + 5)) == 5
    with pytest.raises(InvalidInput):
        await net.customers_behind(graph_client, tenant, "olt1", depth=-1)


# Two cities as the generator builds them (seed 3): Navrangpura's exchange has a standby uplink to
# the Chennai hub, Maninagar's and T Nagar's have none; the Ahmedabad hub has a standby uplink to
# the other backbone, the Chennai hub none.
CITIES = [("Ahmedabad", ["Navrangpura", "Maninagar"]), ("Chennai", ["T Nagar"])]
PEOPLE = [("Anil Shah", "Ahmedabad", "Navrangpura"), ("Bina Modi", "Ahmedabad", "Navrangpura"),
          ("Mira Joshi", "Ahmedabad", "Maninagar"), ("Ravi Kumar", "Chennai", "T Nagar")]


async def two_cities(client, tenant):
    s = await generate_network(client, tenant, cities=CITIES, seed=3, customers=PEOPLE)
    navrangpura, maninagar = s.exchanges["Ahmedabad"]["Navrangpura"], s.exchanges["Ahmedabad"]["Maninagar"]
    assert (navrangpura, s.hubs["Chennai"]) in s.backup_links  # the case under test, if the seed changes
    assert {src for src, _ in s.backup_links} == {navrangpura, s.hubs["Ahmedabad"]}
    assert maninagar != navrangpura
    return s


async def test_a_standby_uplink_to_a_hub_that_fails_does_not_make_a_customer_affected(graph_client, tenant):
    s = await two_cities(graph_client, tenant)
    chennai, ahmedabad = s.hubs["Chennai"], s.hubs["Ahmedabad"]
    names = lambda rows: [a.customer for a in rows]  # noqa: E731
    # Anil and Bina's exchange has a line through the Chennai hub (its standby)...
    behind = await net.customers_behind(graph_client, tenant, chennai)
    assert names(behind) == ["Anil Shah", "Bina Modi", "Ravi Kumar"]
    assert as_map(behind)["Anil Shah"] == [s.onts["Anil Shah"], as_map(behind)["Anil Shah"][1],
                                           s.exchanges["Ahmedabad"]["Navrangpura"], chennai]
    # ...but their primary still serves them: a fault of the Chennai hub reaches only Ravi
    assert names(await net.affected_customers(graph_client, tenant, chennai)) == ["Ravi Kumar"]
    await net.set_node_status(graph_client, tenant, chennai, up=False)
    outage = await net.open_outage(graph_client, tenant, chennai, cause="power")
    assert (outage.customers, outage.affected_count) == (["Ravi Kumar"], 1)
    assert await net.open_outages_for_customer(graph_client, tenant, "Anil Shah") == []
    # the primary's hub fails too: now every way up runs through a node that is down
    assert names(await net.affected_customers(graph_client, tenant, ahmedabad)) == [
        "Anil Shah", "Bina Modi", "Mira Joshi"]
    await net.set_node_status(graph_client, tenant, ahmedabad, up=False)
    assert names(await net.affected_customers(graph_client, tenant, chennai)) == [
        "Anil Shah", "Bina Modi", "Ravi Kumar"]
    assert (await net.open_outage(graph_client, tenant, ahmedabad, cause="power")).customers == [
        "Anil Shah", "Bina Modi", "Mira Joshi"]
    # the Chennai outage, refreshed, adds the customers it cuts off now
    refreshed = await net.open_outage(graph_client, tenant, chennai, cause="power")
    assert refreshed.outage_id == outage.outage_id
    assert refreshed.customers == ["Anil Shah", "Bina Modi", "Ravi Kumar"]
    assert {o.node_id for o in await net.open_outages_for_customer(graph_client, tenant, "Anil Shah")} == {
        chennai, ahmedabad}


async def test_a_customer_is_affected_only_when_primary_and_standby_are_both_down(graph_client, tenant):
    s = await two_cities(graph_client, tenant)
    chennai, ahmedabad = s.hubs["Chennai"], s.hubs["Ahmedabad"]
    navrangpura = s.exchanges["Ahmedabad"]["Navrangpura"]
    names = lambda rows: [a.customer for a in rows]  # noqa: E731
    # the primary's hub fails: the standby to Chennai carries Anil and Bina (degraded, not cut off)
    assert names(await net.affected_customers(graph_client, tenant, ahmedabad)) == ["Mira Joshi"]
    assert len(await net.customers_behind(graph_client, tenant, ahmedabad)) == 3
    # the exchange's own primary uplink is cut (a link, not a node): the Chennai hub is their only way
    await net.set_link_status(graph_client, tenant, LinkType.UPLINK, navrangpura, ahmedabad, up=False)
    assert names(await net.affected_customers(graph_client, tenant, chennai)) == [
        "Anil Shah", "Bina Modi", "Ravi Kumar"]
    assert names(await net.affected_customers(graph_client, tenant, ahmedabad)) == ["Mira Joshi"]
    await net.set_link_status(graph_client, tenant, LinkType.UPLINK, navrangpura, ahmedabad, up=True)
    # a down standby link is no way up either
    await net.set_link_status(graph_client, tenant, LinkType.UPLINK, navrangpura, chennai, up=False)
    assert names(await net.affected_customers(graph_client, tenant, ahmedabad)) == [
        "Anil Shah", "Bina Modi", "Mira Joshi"]
    await net.set_link_status(graph_client, tenant, LinkType.UPLINK, navrangpura, chennai, up=True)
    # the exchange itself, their cabinet, their box: no standby helps
    assert names(await net.affected_customers(graph_client, tenant, navrangpura)) == ["Anil Shah", "Bina Modi"]
    assert names(await net.affected_customers(graph_client, tenant, s.onts["Anil Shah"])) == ["Anil Shah"]
    # a backbone: the Ahmedabad hub's standby reaches the other one, Chennai's primary is there
    assert len(await net.customers_behind(graph_client, tenant, "core-1")) == 3
    assert await net.affected_customers(graph_client, tenant, "core-1") == []
    assert names(await net.affected_customers(graph_client, tenant, "core-2")) == ["Ravi Kumar"]
    # depth filters as in customers_behind
    assert await net.affected_customers(graph_client, tenant, chennai, depth=2) == []
    assert names(await net.affected_customers(graph_client, tenant, chennai, depth=3)) == ["Ravi Kumar"]
    with pytest.raises(NotFound):
        await net.affected_customers(graph_client, tenant, "nope")
    with pytest.raises(InvalidInput):
        await net.affected_customers(graph_client, tenant, chennai, depth=-1)


async def test_affected_on_a_single_tree_is_everyone_behind(graph_client, tenant):
    await build(graph_client, tenant)
    for node in ("bb1", "pop1", "olt1", "olt2", "spl1a", "ont3"):
        assert await net.affected_customers(graph_client, tenant, node) == await net.customers_behind(
            graph_client, tenant, node), node
    # already cut off by a fault below: still reached by one above (every way up is down)
    await net.set_link_status(graph_client, tenant, LinkType.PON, "spl1a", "olt1", up=False)
    assert [a.customer for a in await net.affected_customers(graph_client, tenant, "pop1")] == [
        "Alice Rao", "Bob Das", "Chitra Iyer", "Dev Patel", "Esha Khan"]


async def test_customer_line_runs_home_to_core_with_status(graph_client, tenant):
    await build(graph_client, tenant)
    line = await net.customer_line(graph_client, tenant, "alice rao")
    assert [(h.node_id, h.kind) for h in line] == [
        ("ont1", NodeKind.ONT), ("spl1a", NodeKind.SPLITTER), ("olt1", NodeKind.OLT),
        ("pop1", NodeKind.POP), ("bb1", NodeKind.BACKBONE)]
    assert [h.link_type for h in line] == [LinkType.DROP, LinkType.PON, LinkType.UPLINK, LinkType.UPLINK, None]
    assert all(h.status == "up" for h in line)
    assert [h.capacity_gbps for h in line] == [1, 2.5, 20, 100, 400]

    await net.set_node_status(graph_client, tenant, "olt1", up=False, at=T0)
    await net.set_link_status(graph_client, tenant, LinkType.PON, "spl1a", "olt1", up=False)
    line = await net.customer_line(graph_client, tenant, "Alice Rao")
    assert [h.status for h in line] == ["up", "up", "down", "up", "up"]
    assert [h.link_up for h in line] == [True, False, True, True, None]

    esha = await net.customer_line(graph_client, tenant, "Esha Khan")
    assert [h.node_id for h in esha] == ["olt2", "pop1", "bb1"]

    await raw(graph_client, tenant, "CREATE (:Entity:Customer {uid: 'Customer|zoe', name: 'Zoe', type: 'Customer'})",
              read_only=False)
    assert await net.customer_line(graph_client, tenant, "Zoe") == []
    with pytest.raises(NotFound):
        await net.customer_line(graph_client, tenant, "Nobody Here")


async def test_set_node_status_is_idempotent_and_versioned(graph_client, tenant):
    await build(graph_client, tenant)

    async def labels():
        rows = await raw(graph_client, tenant, "MATCH (n:NetNode {node_id: 'olt1'}) RETURN labels(n) AS l, n.status AS s")
        return set(rows[0]["l"]), rows[0]["s"]

    assert (await net.get_node(graph_client, tenant, "olt1")).version == 0
    down = await net.set_node_status(graph_client, tenant, "olt1", up=False, at=T0)
    assert (down.changed, down.version) == (True, 1)
    assert await labels() == ({"NetNode", "Olt"}, "down")
    again = await net.set_node_status(graph_client, tenant, "olt1", up=False)
    assert (again.changed, again.version) == (False, 1)
    up = await net.set_node_status(graph_client, tenant, "olt1", up=True)
    assert (up.changed, up.version) == (True, 2)
    assert await labels() == ({"NetNode", "Olt", "Up"}, "up")
    assert (await net.set_node_status(graph_client, tenant, "olt1", up=True)).changed is False

    # racing replicas: exactly one of them changes it
    results = await asyncio.gather(*[net.set_node_status(graph_client, tenant, "olt2", up=False) for _ in range(6)])
    assert sum(r.changed for r in results) == 1
    assert {r.version for r in results} == {1}

    # re-running the build does not undo a fault
    await build(graph_client, tenant)
    node = await net.get_node(graph_client, tenant, "olt2")
    assert (node.status, node.version) == ("down", 1)


async def test_bad_building_input_changes_nothing(graph_client, tenant):
    await build(graph_client, tenant)
    before = await counts(graph_client, tenant)
    with pytest.raises(StateConflict):  # a node's kind is fixed
        await net.upsert_nodes(graph_client, tenant, [
            NetNodeIn(node_id="new1", kind=NodeKind.ONT, name="n", capacity_gbps=1),
            NetNodeIn(node_id="olt1", kind=NodeKind.POP, name="n", capacity_gbps=1)])
    with pytest.raises(InvalidInput):  # a splitter does not uplink to a backbone
        await net.upsert_links(graph_client, tenant, [LinkIn(type=LinkType.UPLINK, source="spl1a", target="bb1")])
    with pytest.raises(NotFound):
        await net.upsert_links(graph_client, tenant, [LinkIn(type=LinkType.PON, source="spl1a", target="olt9")])
    with pytest.raises(InvalidInput):  # a loop towards the core through existing links
        await net.upsert_links(graph_client, tenant, [
            LinkIn(type=LinkType.PON, source="spl1b", target="spl1a"),
            LinkIn(type=LinkType.PON, source="spl1a", target="spl1b")])
    await net.upsert_nodes(graph_client, tenant, [NetNodeIn(node_id="pop2", kind=NodeKind.POP, name="p", capacity_gbps=1)])
    await net.upsert_links(graph_client, tenant, [LinkIn(type=LinkType.UPLINK, source="pop2", target="pop1")])
    with pytest.raises(InvalidInput):
        await net.upsert_links(graph_client, tenant, [LinkIn(type=LinkType.UPLINK, source="pop1", target="pop2")])
    with pytest.raises(InvalidInput):  # customers hang off an ONT or an OLT
        await sample_network.attach_customer(graph_client, tenant, "Fay Lee", "spl1a")
    with pytest.raises(NotFound):
        await sample_network.attach_customer(graph_client, tenant, "Fay Lee", "ont99")
    with pytest.raises(InvalidInput):
        await net.customers_behind(graph_client, tenant, "bad id with spaces")
    nodes, rels = await counts(graph_client, tenant)
    assert (nodes, rels) == (before[0] + 1, before[1] + 1)  # only pop2 and its uplink


async def test_attach_moves_a_customer(graph_client, tenant):
    await build(graph_client, tenant)
    moved = await sample_network.attach_customer(graph_client, tenant, "Alice Rao", "ont3")
    assert (moved.node_id, moved.previous) == ("ont3", ["ont1"])
    assert await net.customers_behind(graph_client, tenant, "ont1") == []
    assert [a.customer for a in await net.customers_behind(graph_client, tenant, "spl1b")] == [
        "Alice Rao", "Chitra Iyer"]
    assert (await sample_network.attach_customer(graph_client, tenant, "Alice Rao", "ont3")).previous == []


async def test_unknown_node_is_not_found(graph_client, tenant):
    await build(graph_client, tenant)
    for call in (
        net.customers_behind(graph_client, tenant, "nope"),
        net.get_node(graph_client, tenant, "nope"),
        net.set_node_status(graph_client, tenant, "nope", up=False),
        net.open_outage(graph_client, tenant, "nope", cause="cut"),
        net.close_outage(graph_client, tenant, "nope"),
        net.link_tickets_to_outage(graph_client, tenant, "out-nope"),
        net.set_link_status(graph_client, tenant, LinkType.PON, "spl1a", "olt2", up=False),
    ):
        with pytest.raises(NotFound):
            await call
    with pytest.raises(NotFound):
        await net.open_outages_for_customer(graph_client, tenant, "Nobody Here")
    with pytest.raises(InvalidTenant):
        await net.customers_behind(graph_client, "Bad Tenant!", "olt1")


async def test_outage_open_close_is_idempotent_and_affects_customers(graph_client, tenant):
    await build(graph_client, tenant)
    first = await net.open_outage(graph_client, tenant, "olt1", cause="fibre cut", at=T0)
    assert first.created and first.open and first.closed_at is None
    assert (first.node_id, first.node_kind, first.cause, first.opened_at) == ("olt1", NodeKind.OLT, "fibre cut", T0)
    assert first.customers == ["Alice Rao", "Bob Das", "Chitra Iyer"]
    assert first.affected_count == 3
    again = await net.open_outage(graph_client, tenant, "olt1", cause="something else")
    assert (again.outage_id, again.created, again.cause) == (first.outage_id, False, "fibre cut")
    rows = await raw(graph_client, tenant,
                     "MATCH (o:Outage {outage_id: $id})-[:AFFECTS]->(x) RETURN x.node_id AS n, x.name AS c",
                     {"id": first.outage_id})
    assert sorted(r["n"] or r["c"] for r in rows) == ["Alice Rao", "Bob Das", "Chitra Iyer", "olt1"]

    # the customer's own view: only themselves, and the size of it
    mine = await net.open_outages_for_customer(graph_client, tenant, "bob das")
    assert [(o.outage_id, o.customers, o.affected_count) for o in mine] == [(first.outage_id, ["Bob Das"], 3)]
    assert await net.open_outages_for_customer(graph_client, tenant, "Dev Patel") == []

    # a customer attached to the cut part later is added by the next open call
    await net.upsert_nodes(graph_client, tenant, [NetNodeIn(node_id="ont5", kind=NodeKind.ONT, name="o", capacity_gbps=1)])
    await net.upsert_links(graph_client, tenant, [LinkIn(type=LinkType.DROP, source="spl1b", target="ont5")])
    await sample_network.attach_customer(graph_client, tenant, "Gita Sen", "ont5")
    refreshed = await net.open_outage(graph_client, tenant, "olt1", cause="fibre cut")
    assert refreshed.outage_id == first.outage_id and "Gita Sen" in refreshed.customers

    closed = await net.close_outage(graph_client, tenant, "olt1", at=datetime(2026, 9, 5, 12, 0, tzinfo=timezone.utc))
    assert closed is not None and closed.outage_id == first.outage_id
    assert not closed.open and closed.closed_at == datetime(2026, 9, 5, 12, 0, tzinfo=timezone.utc)
    assert await net.close_outage(graph_client, tenant, "olt1") is None
    assert await net.open_outages_for_customer(graph_client, tenant, "Bob Das") == []

    reopened = await net.open_outage(graph_client, tenant, "olt1", cause="power")
    assert reopened.created and reopened.outage_id != first.outage_id


async def test_racing_open_outage_makes_one(graph_client, tenant):
    await build(graph_client, tenant)
    results = await asyncio.gather(*[net.open_outage(graph_client, tenant, "spl2a", cause="cabinet flooded")
                                     for _ in range(6)])
    assert len({o.outage_id for o in results}) == 1
    assert sum(o.created for o in results) == 1
    rows = await raw(graph_client, tenant, "MATCH (o:Outage {node_id: 'spl2a'}) RETURN count(o) AS n")
    assert rows[0]["n"] == 1


async def test_open_tickets_of_affected_customers_are_linked(graph_client, tenant):
    await build(graph_client, tenant)
    await raw(graph_client, tenant, """
        UNWIND $rows AS row
        MATCH (c:Entity {uid: row.uid})
        CREATE (c)-[:HAS_TICKET]->(:Ticket {ticket_id: row.id, stage: row.stage})""",
              {"rows": [{"uid": "Customer|alice rao", "id": "T1", "stage": "reported"},
                        {"uid": "Customer|alice rao", "id": "T2", "stage": "closed"},
                        {"uid": "Customer|bob das", "id": "T3", "stage": "fixing"},
                        {"uid": "Customer|dev patel", "id": "T4", "stage": "reported"}]}, read_only=False)
    outage = await net.open_outage(graph_client, tenant, "olt1", cause="fibre cut")
    assert await net.link_tickets_to_outage(graph_client, tenant, outage.outage_id) == ["T1", "T3"]
    assert await net.link_tickets_to_outage(graph_client, tenant, outage.outage_id) == ["T1", "T3"]
    rows = await raw(graph_client, tenant,
                     "MATCH (o:Outage {outage_id: $id})<-[:CAUSED_BY]-(t:Ticket) RETURN t.ticket_id AS t",
                     {"id": outage.outage_id})
    assert sorted(r["t"] for r in rows) == ["T1", "T3"]
    none = await net.open_outage(graph_client, tenant, "ont3", cause="box")
    assert await net.link_tickets_to_outage(graph_client, tenant, none.outage_id) == []


async def test_tenants_do_not_see_each_others_network(graph_client, tenant):
    other = tenant + "-b"
    await register(graph_client.redis, other)
    await build(graph_client, tenant)
    with pytest.raises(NotFound):
        await net.customers_behind(graph_client, other, "olt1")
    with pytest.raises(NotFound):
        await net.customer_line(graph_client, other, "Alice Rao")
    await net.upsert_nodes(graph_client, other, [NetNodeIn(node_id="olt1", kind=NodeKind.OLT, name="x", capacity_gbps=1)])
    await sample_network.attach_customer(graph_client, other, "Mallory", "olt1")
    await net.open_outage(graph_client, other, "olt1", cause="x")
    assert [a.customer for a in await net.customers_behind(graph_client, other, "olt1")] == ["Mallory"]
    assert [a.customer for a in await net.customers_behind(graph_client, tenant, "olt1")] == [
        "Alice Rao", "Bob Das", "Chitra Iyer"]
    assert await net.open_outages_for_customer(graph_client, tenant, "Alice Rao") == []


async def test_sample_network(graph_client, tenant):
    people = ["Asha", "Bilal", "Chen", "Dana", "Eli"]
    sample = await sample_network.build_sample_network(graph_client, tenant, city="Pune", customers=people)
    assert (sample.backbone, sample.pop) == ("pune-bb-1", "pune-pop-1")
    assert len(sample.olts) == 2 and len(sample.splitters) == 4 and len(sample.onts) == 5
    # round-robin: the first splitter gets customers 1 and 5
    assert [a.customer for a in await net.customers_behind(graph_client, tenant, sample.splitters[0])] == [
        "Asha", "Eli"]
    assert len(await net.customers_behind(graph_client, tenant, sample.backbone)) == 5
    line = await net.customer_line(graph_client, tenant, "Chen")
    assert [h.kind for h in line] == [NodeKind.ONT, NodeKind.SPLITTER, NodeKind.OLT, NodeKind.POP, NodeKind.BACKBONE]
    before = await counts(graph_client, tenant)
    assert await sample_network.build_sample_network(graph_client, tenant, city="pune", customers=people) == sample
    assert await counts(graph_client, tenant) == before


HOT = [
    (q.GET_NODE, {"node_id": "olt1"}),
    (q.NODE_KINDS, {"ids": ["olt1"]}),
    (q.UPWARD_PATHS, {"ids": ["olt1"]}),
    (q.UPSERT_NODES, {"nodes": [{"node_id": "x", "kind": "Olt", "name": "x", "capacity_gbps": 1.0, "up": True}]}),
    (q.UPSERT_LINKS, {"links": [{"type": "PON", "source": "a", "target": "b", "capacity_gbps": None,
                                 "length_m": None, "up": True}]}),
    (q.SET_LINK_STATUS[LinkType.PON], {"source": "a", "target": "b", "up": False, "at_ms": 0}),
    (q.SET_NODE_UP, {"node_id": "olt1", "at_ms": 0}),
    (q.SET_NODE_DOWN, {"node_id": "olt1", "at_ms": 0}),
    (q.ATTACH_CUSTOMERS, {"rows": [{"node_id": "ont1", "uid": "Customer|x", "name": "x", "name_key": "x"}],
                          "access_kinds": ["Ont"]}),
    (q.CUSTOMERS_BEHIND[1], {"node_id": "olt1", "depth": 1}),
    (q.CUSTOMERS_BEHIND[None], {"node_id": "olt1", "depth": None}),
    (q.CUSTOMER_LINE, {"uid": "Customer|alice rao"}),
    (q.OPEN_OUTAGE, {"node_id": "olt1", "outage_id": "o", "at_ms": 0, "cause": "c", "uids": ["Customer|alice rao"]}),
    (q.CLOSE_OUTAGE, {"node_id": "olt1", "at_ms": 0}),
    (q.OUTAGE_VIEW, {"outage_id": "o"}),
    (q.OPEN_OUTAGES_FOR_CUSTOMER, {"uid": "Customer|alice rao"}),
    (q.LINK_TICKETS, {"outage_id": "o", "closed_stages": ["closed"]}),
]


@pytest.mark.parametrize("query,params", HOT, ids=[h[0].name for h in HOT])
async def test_hot_queries_start_from_an_index(graph_client, tenant, query, params):
    await build(graph_client, tenant)
    plan = await graph_client.explain(tenant, query, params)
    assert "Index Scan" in plan, plan
    assert "All Node Scan" not in plan, plan
    assert "Label Scan" not in plan, plan


async def test_degraded_hubs_scans_the_hubs_only(graph_client, tenant):
    # Not a per-request lookup by id: a site's coverage box reads every city hub (a few hundred at most).
    await build(graph_client, tenant)
    plan = await graph_client.explain(tenant, q.DEGRADED_HUBS)
    assert "All Node Scan" not in plan, plan
    scans = [line for line in plan.splitlines() if "Scan" in line]
    assert scans and all(":Pop" in line for line in scans), plan


async def test_the_line_shown_is_the_path_the_network_uses_now(graph_client, tenant):
    """customer_line is the route the lab's line test measures: the primary uplink while it works,
    the standby only while it carries the traffic."""
    from relay_graph.lab import line as lab_line

    s = await two_cities(graph_client, tenant)
    ahmedabad, chennai = s.hubs["Ahmedabad"], s.hubs["Chennai"]
    navrangpura = s.exchanges["Ahmedabad"]["Navrangpura"]

    async def shown() -> list[str]:
        return [h.node_id for h in await net.customer_line(graph_client, tenant, "Anil Shah")]

    async def measured() -> list[str]:
        return list((await lab_line.context(graph_client, tenant, "Anil Shah", with_faults=False)).line.route)

    assert ahmedabad in await shown() and chennai not in await shown()
    assert (await shown())[-len(await measured()):] == await measured()
    await net.set_link_status(graph_client, tenant, LinkType.UPLINK, navrangpura, ahmedabad, up=False)
    assert chennai in await shown() and ahmedabad not in await shown()
    assert (await shown())[-len(await measured()):] == await measured()
    await net.set_link_status(graph_client, tenant, LinkType.UPLINK, navrangpura, ahmedabad, up=True)
    assert ahmedabad in await shown() and chennai not in await shown()
