"""The network over HTTP, on the sample city: a customer's line, who a node reaches, and marking a
node down/up (announced once per change on the real network stream)."""

from __future__ import annotations

import pytest

from relay_graph.desk.network import store as network
from relay_graph.lab.network_gen import generate_network
from relay_graph.runtime.streams import STREAM_NETWORK, NetworkChanged
from tests import sample_network

from .helpers import assert_error
from .stream_helpers import published

CUSTOMERS = ["alice rao", "bob iyer", "chen li", "dana kapoor", "erin shah"]


@pytest.fixture
def base(tenant) -> str:
    return f"/v1/tenants/{tenant}"


@pytest.fixture
async def city(memory, tenant):
    return await sample_network.build_sample_network(memory.client, tenant, city="pune", customers=CUSTOMERS)


async def test_line_from_home_to_core(client, base, auth, city):
    r = await client.get(f"{base}/customers/Alice Rao/line", headers=auth)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["customer"] == "Alice Rao"
    ont = city.onts["alice rao"]
    splitter = city.splitter_of[ont]
    assert [h["node_id"] for h in body["line"]] == [ont, splitter, city.olts[0], city.pop, city.backbone]
    assert [h["kind"] for h in body["line"]] == ["Ont", "Splitter", "Olt", "Pop", "Backbone"]
    assert all(h["status"] == "up" and h["capacity_gbps"] > 0 for h in body["line"])
    assert [h["link_type"] for h in body["line"]] == ["DROP", "PON", "UPLINK", "UPLINK", None]


async def test_line_of_an_unknown_customer_is_404(client, base, auth, city):
    assert_error(await client.get(f"{base}/customers/nobody%20at%20all/line", headers=auth), 404, "customer_not_found")


async def test_affected_by_depth(client, base, auth, city):
    olt = city.olts[0]
    behind = sorted(c for c, ont in city.onts.items() if city.splitter_of[ont] in (f"{olt}-spl-a", f"{olt}-spl-b"))
    assert behind  # the sample deals customers over both OLTs

    r = await client.get(f"{base}/network/affected", params={"node": olt}, headers=auth)
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["node"] == olt
    assert [c["customer"] for c in got["customers"]] == behind
    for c in got["customers"]:
        ont = city.onts[c["customer"]]
        assert c["path"] == [ont, city.splitter_of[ont], olt]

    # depth counts links below the node: an OLT's customers are two links down.
    for depth, expected in ((0, []), (1, []), (2, behind), (5, behind)):
        r = await client.get(f"{base}/network/affected", params={"node": olt, "depth": depth}, headers=auth)
        assert [c["customer"] for c in r.json()["customers"]] == expected, depth

    r = await client.get(f"{base}/network/affected", params={"node": city.backbone}, headers=auth)
    assert [c["customer"] for c in r.json()["customers"]] == sorted(CUSTOMERS)


async def test_affected_errors(client, base, auth, city):
    assert_error(await client.get(f"{base}/network/affected", params={"node": "pune-olt-9"}, headers=auth),
                 404, "node_not_found")
    for params in ({}, {"node": "bad node!"}, {"node": city.pop, "depth": -1}, {"node": city.pop, "depth": "x"}):
        assert_error(await client.get(f"{base}/network/affected", params=params, headers=auth), 422,
                     "validation_error")


async def test_node_down_is_announced_once_and_up_again(client, base, auth, tenant, city, stream_redis, memory):
    olt = city.olts[1]
    url = f"{base}/network/nodes/{olt}/status"
    r = await client.post(url, json={"up": False}, headers=auth)
    assert r.status_code == 200, r.text
    down = r.json()
    assert down["node_id"] == olt and down["up"] is False and down["changed"] is True

    again = await client.post(url, json={"up": False}, headers=auth)
    assert again.json() == {**down, "changed": False}

    announced = await published(stream_redis, STREAM_NETWORK, tenant)
    assert [(type(n), n.id, n.change, n.version, n.actor) for n in announced] == [
        (NetworkChanged, olt, "down", down["version"], "staff")]

    # The line shows it.
    customer = next(c for c, ont in city.onts.items() if city.splitter_of[ont].startswith(olt))
    line = (await client.get(f"{base}/customers/{customer}/line", headers=auth)).json()["line"]
    assert {h["node_id"]: h["status"] for h in line}[olt] == "down"

    r = await client.post(url, json={"up": True, "by": "netops-oncall"}, headers=auth)
    assert r.json()["changed"] is True and r.json()["version"] == down["version"] + 1
    announced = await published(stream_redis, STREAM_NETWORK, tenant)
    assert [(n.change, n.version, n.actor) for n in announced] == [
        ("down", down["version"], "staff"), ("up", down["version"] + 1, "netops-oncall")]
    assert (await network.get_node(memory.client, tenant, olt)).status == "up"


async def test_node_status_errors_change_nothing(client, base, auth, tenant, city, stream_redis):
    assert_error(await client.post(f"{base}/network/nodes/pune-olt-9/status", json={"up": False}, headers=auth),
                 404, "node_not_found")
    for body in ({}, {"up": "no"}, {"up": 0}, {"up": None}, {"up": False, "why": "x"}):
        assert_error(await client.post(f"{base}/network/nodes/{city.pop}/status", json=body, headers=auth),
                     422, "validation_error")
    assert await published(stream_redis, STREAM_NETWORK, tenant) == []


DESK_ROUTES = [
    ("POST", "/v1/tenants/{t}/chat", {"json": {"customer": "alice", "text": "hi"}}),
    ("GET", "/v1/tenants/{t}/tickets", {}),
    ("GET", "/v1/tenants/{t}/tickets/T-1", {}),
    ("POST", "/v1/tenants/{t}/tickets/T-1/confirm", {"json": {"fixed": True}}),
    ("GET", "/v1/tenants/{t}/customers/alice/line", {}),
    ("GET", "/v1/tenants/{t}/network/affected", {"params": {"node": "pune-pop-1"}}),
    ("POST", "/v1/tenants/{t}/network/nodes/pune-pop-1/status", {"json": {"up": False}}),
]


@pytest.mark.parametrize("method,path,kwargs", DESK_ROUTES, ids=[f"{m} {p}" for m, p, _ in DESK_ROUTES])
async def test_desk_routes_need_the_tenants_own_key(client, tenant, auth, method, path, kwargs):
    from .helpers import assert_needs_own_key

    await assert_needs_own_key(client, tenant, method, path.format(t=tenant), **kwargs)


async def test_openapi_lists_the_desk_paths(client):
    paths = (await client.get("/openapi.json")).json()["paths"]
    for method, path, _ in DESK_ROUTES + [("GET", "/asyncapi.json", {})]:
        shape = path.replace("T-1", "{id}").replace("alice", "{c}").replace("pune-pop-1", "{node_id}")
        assert method.lower() in paths[shape], shape
    assert "standby uplink" in paths["/v1/tenants/{t}/network/affected"]["get"]["description"]
    assert "heartbeat" in paths["/readyz"]["get"]["description"]


async def test_affected_leaves_out_customers_a_standby_uplink_serves(client, base, auth, memory, tenant):
    # seed 3: Navrangpura's exchange has a standby uplink to the Chennai hub, T Nagar's has none
    region = await generate_network(
        memory.client, tenant, cities=[("Ahmedabad", ["Navrangpura"]), ("Chennai", ["T Nagar"])], seed=3,
        customers=[("Anil Shah", "Ahmedabad", "Navrangpura"), ("Ravi Kumar", "Chennai", "T Nagar")])
    chennai = region.hubs["Chennai"]
    assert (region.exchanges["Ahmedabad"]["Navrangpura"], chennai) in region.backup_links
    r = await client.get(f"{base}/network/affected", params={"node": chennai}, headers=auth)
    assert r.status_code == 200, r.text
    assert [c["customer"] for c in r.json()["customers"]] == ["Ravi Kumar"]
    # with the primary's hub down as well, the Chennai hub is Anil's only way up
    await network.set_node_status(memory.client, tenant, region.hubs["Ahmedabad"], up=False)
    r = await client.get(f"{base}/network/affected", params={"node": chennai}, headers=auth)
    assert [c["customer"] for c in r.json()["customers"]] == ["Anil Shah", "Ravi Kumar"]
