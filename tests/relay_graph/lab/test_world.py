"""The provider's world in a tenant (relay_graph.lab.world): a region's catalogue and network seeded
once, homes connected from addresses to a cabinet of the right area, a repeat changing nothing, a
move re-homing the customer, and addresses we cannot serve refused before anything is written."""

from __future__ import annotations

import pytest

from relay_graph.desk.network import store as network
from relay_graph.lab import world
from relay_graph.desk.network.homes import connect_home, connect_homes
from relay_graph.desk.catalogue import seeded_regions
from relay_graph.runtime.errors import InvalidInput
from relay_graph.runtime.queries import Query

COUNT = Query("t_world_count", "MATCH (n:NetNode) RETURN count(n) AS n", read_only=True)


async def nodes(client, tenant) -> int:
    return (await client.run(tenant, COUNT))[0]["n"]


async def test_seed_connect_repeat_and_move(graph_client, tenant):
    first = await world.seed_world(graph_client, tenant, "india", max_cities=4,
                                   customers=[("Asha Verma", "Mumbai"), ("Ravi Nair", "Delhi")])
    assert await seeded_regions(graph_client, tenant) == {"india": 1}
    assert first.cities == 4 and first.nodes_created == first.nodes
    homes = {h.customer: h for h in first.customers}
    assert homes["Asha Verma"].city == "Mumbai" and homes["Asha Verma"].area == "Mumbai Central"
    line = await network.customer_line(graph_client, tenant, "Asha Verma")
    assert [h.node_id for h in line[:3]] == [homes["Asha Verma"].node_id, homes["Asha Verma"].cabinet,
                                             homes["Asha Verma"].exchange]
    total = await nodes(graph_client, tenant)
    assert total == first.nodes + 2

    again = await world.seed_world(graph_client, tenant, "india", max_cities=4, customers=[("Asha Verma", "Mumbai")])
    assert again.nodes_created == 0 and again.customers[0] == homes["Asha Verma"]
    assert await nodes(graph_client, tenant) == total

    moved = await connect_home(graph_client, tenant, "asha verma", "Delhi")
    assert moved.city == "Delhi" and moved.customer == "Asha Verma"
    assert moved.node_id != homes["Asha Verma"].node_id and moved.previous == [homes["Asha Verma"].node_id]
    line = await network.customer_line(graph_client, tenant, "Asha Verma")
    assert line[2].node_id == moved.exchange and moved.exchange.startswith("exch-delhi-")


async def test_addresses_we_cannot_serve_change_nothing(graph_client, tenant):
    await world.seed_world(graph_client, tenant, "india", max_cities=3)
    before = await nodes(graph_client, tenant)
    for address, code in (("Springfield", "ambiguous_address"), ("Qwxzv Plonk", "unknown_place")):
        with pytest.raises(InvalidInput) as err:
            await connect_homes(graph_client, tenant, [("Good One", "Mumbai"), ("Bad One", address)])
        assert err.value.code == code
    with pytest.raises(InvalidInput) as err:
        await world.seed_world(graph_client, tenant, "atlantis")
    assert err.value.code == "unknown_region"
    assert await nodes(graph_client, tenant) == before


SNAPSHOT_NODES = Query("t_world_nodes", "MATCH (n) RETURN labels(n) AS labels, properties(n) AS props", read_only=True)
SNAPSHOT_EDGES = Query("t_world_edges", "MATCH (a)-[r]->(b) RETURN id(a) AS a, type(r) AS type, id(b) AS b, "
                       "properties(r) AS props", read_only=True)


async def snapshot(client, tenant):
    rows = [*(await client.run(tenant, SNAPSHOT_NODES)), *(await client.run(tenant, SNAPSHOT_EDGES))]
    return sorted(repr(sorted(r.items())) for r in rows)


async def test_a_seeded_network_is_never_rewired(graph_client, tenant):
    first = await world.seed_world(graph_client, tenant, "india", max_cities=3)
    before = await snapshot(graph_client, tenant)
    for change in ({"seed": "another"}, {"seed": 7}, {"max_cities": 4}, {"seed": "india", "max_cities": 2}):
        with pytest.raises(world.WorldSeeded) as err:
            await world.seed_world(graph_client, tenant, "india", **change)
        assert err.value.status == 409 and "seeded" in err.value.message
        assert await snapshot(graph_client, tenant) == before
    # the same call, or one that leaves seed and max_cities out, repeats it and changes nothing
    for again in ({"max_cities": 3}, {}, {"seed": "india", "max_cities": 3}):
        summary = await world.seed_world(graph_client, tenant, "india", **again)
        assert summary.nodes_created == 0 and summary.nodes == first.nodes and summary.links == first.links
        assert await snapshot(graph_client, tenant) == before


async def test_a_network_seeded_with_a_seed_is_repeated_without_it(graph_client, tenant):
    first = await world.seed_world(graph_client, tenant, "india", seed=42, max_cities=2)
    before = await snapshot(graph_client, tenant)
    again = await world.seed_world(graph_client, tenant, "india")
    assert (again.seed, again.nodes_created, again.cities) == ("42", 0, first.cities)
    assert await snapshot(graph_client, tenant) == before
