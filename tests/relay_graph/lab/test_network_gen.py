"""Generating a region's network: deterministic for a seed, shaped core -> hub -> exchange -> cabinet
-> home box, standby uplinks where promised, idempotent, and refusing bad input without writing."""

from __future__ import annotations

import pytest

from relay_graph.desk.network import store as net
from relay_graph.runtime.errors import InvalidInput
from relay_graph.desk.network.homes import slug
from relay_graph.lab.network_gen import generate_network
from relay_graph.desk.network.models import NodeKind
from relay_graph.runtime.queries import Query
from tests.support import register

CITIES = [("Pune", ["Kothrud", "Baner", "Hadapsar"]), ("Mumbai", ["Andheri", "Bandra"]), ("Nashik", []),
          ("São Paulo", ["Pinheiros"])]
PEOPLE = [("Alice Rao", "Pune", "Kothrud"), ("Bob Das", "mumbai", "ANDHERI"), ("Chen Li", "Nashik", "Central"),
          ("Dev Patel", "Pune", "Hadapsar"), ("Esha Khan", "São Paulo", "Pinheiros"), ("Farid", "Mumbai", "Bandra")]
SHAPE = [NodeKind.ONT, NodeKind.SPLITTER, NodeKind.OLT, NodeKind.POP, NodeKind.BACKBONE]


async def dump(client, tenant):
    """The whole network as plain, ordered data (independent of the algorithms module)."""
    nodes = await client.run(tenant, Query(
        "t", "MATCH (n:NetNode) RETURN n.node_id AS id, n.kind AS kind, n.name AS name, "
        "n.capacity_gbps AS cap, n:Up AS up ORDER BY id", True))
    links = await client.run(tenant, Query(
        "t", "MATCH (a:NetNode)-[r]->(b:NetNode) RETURN type(r) AS type, a.node_id AS s, b.node_id AS t, "
        "r.capacity_gbps AS cap, r.length_m AS len, r.backup AS backup, r.up AS up ORDER BY type, s, t", True))
    homes = await client.run(tenant, Query(
        "t", "MATCH (c:Customer)-[:CONNECTED_VIA]->(a:NetNode) RETURN c.name AS c, a.node_id AS a ORDER BY c", True))
    return nodes, links, homes


def test_slug_is_ascii_and_stable():
    assert slug("São Paulo") == "sao-paulo"
    assert slug("  Zürich  Nord ") == "zurich-nord"
    tokyo = slug("東京")
    assert tokyo.startswith("x") and tokyo == slug("東京") and tokyo != slug("大阪")


async def test_same_seed_same_network_other_seed_another(graph_client, tenant):
    await register(graph_client.redis, tenant + "-b", tenant + "-c")
    a = await generate_network(graph_client, tenant, cities=CITIES, seed=42, customers=PEOPLE)
    b = await generate_network(graph_client, tenant + "-b", cities=CITIES, seed=42, customers=PEOPLE)
    c = await generate_network(graph_client, tenant + "-c", cities=CITIES, seed=43, customers=PEOPLE)
    assert a == b
    assert await dump(graph_client, tenant) == await dump(graph_client, tenant + "-b")
    assert await dump(graph_client, tenant) != await dump(graph_client, tenant + "-c")
    assert a.hubs == c.hubs and a.exchanges == c.exchanges  # names, not the seed, make ids


async def test_shape_capacities_and_lengths(graph_client, tenant):
    s = await generate_network(graph_client, tenant, cities=CITIES, seed=7, customers=PEOPLE)
    assert s.backbones == ["core-1", "core-2"]  # more than one city: two backbones
    assert set(s.hubs) == {c for c, _ in CITIES}
    assert s.exchanges["Nashik"] == {"Central": "exch-nashik-central"}
    assert s.exchanges["São Paulo"] == {"Pinheiros": "exch-sao-paulo-pinheiros"}
    assert {a for a in s.exchanges["Pune"]} == {"Kothrud", "Baner", "Hadapsar"}
    assert all(2 <= len(cabs) <= 4 for cabs in s.cabinets.values())
    assert set(s.cabinets) == {x for areas in s.exchanges.values() for x in areas.values()}
    assert len(s.onts) == len(PEOPLE)

    nodes, links, homes = await dump(graph_client, tenant)
    assert len(nodes) == s.nodes and len(links) == s.links
    assert all(n["cap"] > 0 and n["up"] for n in nodes)
    assert all(x["cap"] > 0 and x["len"] > 0 and x["up"] for x in links)
    assert s.cable_m == pytest.approx(sum(x["len"] for x in links))
    kinds = {n["id"]: NodeKind(n["kind"]) for n in nodes}
    assert sum(k is NodeKind.POP for k in kinds.values()) == len(CITIES)

    # every customer's line runs home box -> their area's cabinet -> exchange -> hub -> core
    for name, city, area in PEOPLE:
        line = await net.customer_line(graph_client, tenant, name)
        assert [h.kind for h in line] == SHAPE
        exch = next(x for c, areas in s.exchanges.items() if c.lower() == city.lower()
                    for a, x in areas.items() if a.lower() == area.lower())
        assert line[0].node_id == s.onts[name]
        assert line[1].node_id in s.cabinets[exch] and line[2].node_id == exch
        assert all(h.status == "up" for h in line)
    assert [h["c"] for h in homes] == sorted(p[0] for p in PEOPLE)

    # standby uplinks: the first city's hub has one, the second city's has none, and a standby is
    # smaller than the primary it stands in for
    by_source = {}
    for x in links:
        if x["type"] == "UPLINK":
            by_source.setdefault(x["s"], []).append(x)
    assert [x["backup"] for x in sorted(by_source[s.hubs["Pune"]], key=lambda x: x["backup"])] == [False, True]
    assert [x["backup"] for x in by_source[s.hubs["Mumbai"]]] == [False]
    for ups in by_source.values():
        primary = [x for x in ups if not x["backup"]]
        assert len(primary) == 1
        assert all(x["cap"] < primary[0]["cap"] for x in ups if x["backup"])
    assert sorted((x["s"], x["t"]) for x in links if x["backup"]) == [tuple(p) for p in s.backup_links]


async def test_rerun_changes_nothing_and_additions_do_not_reshuffle(graph_client, tenant):
    first = await generate_network(graph_client, tenant, cities=CITIES, seed=5, customers=PEOPLE[:3])
    before = await dump(graph_client, tenant)
    again = await generate_network(graph_client, tenant, cities=CITIES, seed=5, customers=PEOPLE[:3])
    assert (again.nodes_created, again.links_created) == (0, 0)
    assert await dump(graph_client, tenant) == before

    more = await generate_network(graph_client, tenant, cities=CITIES, seed=5, customers=PEOPLE)
    assert more.nodes_created == len(PEOPLE) - 3 and more.links_created == len(PEOPLE) - 3
    assert {k: more.onts[k] for k in first.onts} == first.onts
    after = await dump(graph_client, tenant)
    assert {tuple(sorted(x.items())) for x in before[1]} <= {tuple(sorted(x.items())) for x in after[1]}


async def test_one_city_region(graph_client, tenant):
    s = await generate_network(graph_client, tenant, cities=[("Goa", [])], seed=1, customers=[("Zoe", "goa", "central")])
    assert len(s.backbones) in (1, 2)
    assert s.exchanges == {"Goa": {"Central": "exch-goa-central"}}
    assert [h.kind for h in await net.customer_line(graph_client, tenant, "Zoe")] == SHAPE


@pytest.mark.parametrize("cities,customers,code", [
    (CITIES, [("Alice Rao", "Pune", "Nowhere")], "unknown_area"),
    (CITIES, [("Alice Rao", "Atlantis", "Kothrud")], "unknown_area"),
    (CITIES, [("Alice Rao", "Pune", "Kothrud"), ("alice  rao", "Pune", "Baner")], "invalid_input"),
    ([("Pune", ["A"]), ("PUNE", ["B"])], [], "invalid_input"),
    ([], [], "invalid_input"),
    ([("Pune", "Kothrud")], [], "invalid_input"),
])
async def test_bad_input_writes_nothing(graph_client, tenant, cities, customers, code):
    with pytest.raises(InvalidInput) as err:
        await generate_network(graph_client, tenant, cities=cities, seed=1, customers=customers)
    assert err.value.code == code
    nodes, links, homes = await dump(graph_client, tenant)
    assert (nodes, links, homes) == ([], [], [])
