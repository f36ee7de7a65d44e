"""The provider's world in a tenant (relay_graph.world): a region's catalogue and network seeded
once, homes connected from addresses to a cabinet of the right area, a repeat changing nothing, a
move re-homing the customer, and addresses we cannot serve refused before anything is written."""

from __future__ import annotations

import pytest

from relay_graph import network, world
from relay_graph.catalogue import seeded_regions
from relay_graph.errors import InvalidInput
from relay_graph.queries import Query

pytestmark = pytest.mark.falkordb

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

    moved = await world.connect_home(graph_client, tenant, "asha verma", "Delhi")
    assert moved.city == "Delhi" and moved.customer == "Asha Verma"
    assert moved.node_id != homes["Asha Verma"].node_id and moved.previous == [homes["Asha Verma"].node_id]
    line = await network.customer_line(graph_client, tenant, "Asha Verma")
    assert line[2].node_id == moved.exchange and moved.exchange.startswith("exch-delhi-")


async def test_addresses_we_cannot_serve_change_nothing(graph_client, tenant):
    await world.seed_world(graph_client, tenant, "india", max_cities=3)
    before = await nodes(graph_client, tenant)
    for address, code in (("Springfield", "ambiguous_address"), ("Qwxzv Plonk", "unknown_place")):
        with pytest.raises(InvalidInput) as err:
            await world.connect_homes(graph_client, tenant, [("Good One", "Mumbai"), ("Bad One", address)])
        assert err.value.code == code
    with pytest.raises(InvalidInput) as err:
        await world.seed_world(graph_client, tenant, "atlantis")
    assert err.value.code == "unknown_region"
    assert await nodes(graph_client, tenant) == before
