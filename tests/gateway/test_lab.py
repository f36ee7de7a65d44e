"""The provider's world and the fault lab over HTTP: capacity, critical nodes and cabling on a
hand-built network with known answers; injecting faults (201, a node going down announced for
netops with the node's version, hidden faults announcing nothing); the scoreboard's shape; seeding
a region's world and connecting homes from addresses; 404s, 409s, 422s and auth.

    bb1 <-100- popA -40 (standby)-> bb2 <-100- popB            (popB has no standby)
               popA <-20- oltA <-10- splA -DROP-> ontA (Asha), ontA2 (Arun)
               popB <-20- oltB <-10- splB -DROP-> ontB (Bilal)
"""

from __future__ import annotations

import pytest

from relay_graph.desk.network import store as net
from relay_graph.desk.network.models import LinkType
from relay_graph.runtime.streams import STREAM_NETWORK, NetworkChanged
from tests import lab_network
from tests.lab_network import LINKS, NODES

from .helpers import assert_error, assert_needs_own_key
from .stream_helpers import published


@pytest.fixture
def base(tenant) -> str:
    return f"/v1/tenants/{tenant}"


@pytest.fixture
async def built(memory, tenant):
    await lab_network.build(memory.client, tenant)


async def test_capacity_over_links_that_are_up(client, base, auth, built, memory, tenant):
    r = await client.get(f"{base}/network/capacity", params={"node": "popA"}, headers=auth)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["node"] == "popA" and body["max_flow_gbps"] == pytest.approx(140.0)  # 100 + the 40 standby
    assert sum(p["gbps"] for p in body["paths"]) == pytest.approx(140.0)
    assert all(p["nodes"][-1] == "popA" for p in body["paths"])
    r = await client.get(f"{base}/network/capacity", params={"node": "ontA"}, headers=auth)
    assert r.json()["max_flow_gbps"] == pytest.approx(1.0)

    await net.set_link_status(memory.client, tenant, LinkType.UPLINK, "popA", "bb1", up=False)
    r = await client.get(f"{base}/network/capacity", params={"node": "popA"}, headers=auth)
    assert r.json()["max_flow_gbps"] == pytest.approx(40.0)
    nominal = await client.get(f"{base}/network/capacity", params={"node": "popA", "nominal": "true"}, headers=auth)
    assert nominal.json()["max_flow_gbps"] == pytest.approx(140.0) and nominal.json()["nominal"] is True

    assert_error(await client.get(f"{base}/network/capacity", params={"node": "nope"}, headers=auth),
                 404, "node_not_found")
    for params in ({}, {"node": "bad node!"}):
        assert_error(await client.get(f"{base}/network/capacity", params=params, headers=auth), 422,
                     "validation_error")


async def test_critical_nodes_and_cabling(client, base, auth, built):
    r = await client.get(f"{base}/network/critical", params={"top": 3}, headers=auth)
    assert r.status_code == 200, r.text
    nodes = r.json()["nodes"]
    assert len(nodes) == 3 and nodes[0]["score"] >= nodes[1]["score"] >= nodes[2]["score"]
    assert {"node_id", "kind", "score", "customers_behind", "path_to_core"} <= set(nodes[0])
    assert_error(await client.get(f"{base}/network/critical", params={"top": 0}, headers=auth), 422,
                 "validation_error")

    r = await client.get(f"{base}/network/cabling", headers=auth)
    assert r.status_code == 200, r.text
    forest = r.json()
    assert forest["trees"] == 1 and forest["nodes"] == len(NODES) and len(forest["edges"]) == len(NODES) - 1
    # ten links join eleven nodes without a cycle (bb1 and bb2 meet only through popA): all are needed
    assert forest["total_length_m"] == pytest.approx(sum(lab_network.link_length(n) for n in range(len(LINKS))))


async def test_a_node_fault_is_injected_and_announced_for_netops(client, base, auth, built, tenant, stream_redis):
    r = await client.post(f"{base}/lab/faults", json={"kind": "cut_street_cable", "node": "splA"}, headers=auth)
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["fault_id"].startswith("flt-") and body["customer"] is None
    (change,) = body["visible"]
    assert (change["node_id"], change["up"]) == ("splA", False)
    announced = await published(stream_redis, STREAM_NETWORK, tenant)
    assert [(type(n), n.id, n.change, n.version, n.actor) for n in announced] == [
        (NetworkChanged, "splA", "down", change["version"], "lab")]
    line = (await client.get(f"{base}/customers/Asha/line", headers=auth)).json()["line"]
    assert {h["node_id"]: h["status"] for h in line}["splA"] == "down"

    # a fault in a home shows nowhere on the network: nothing to announce, and the kind stays hidden
    r = await client.post(f"{base}/lab/faults", json={"kind": "router_frozen", "customer": "Bilal"}, headers=auth)
    assert r.status_code == 201, r.text
    assert r.json()["visible"] == [] and r.json()["customer"] == "Bilal" and "kind" not in r.json()
    assert len(await published(stream_redis, STREAM_NETWORK, tenant)) == 1


async def test_blind_faults_and_the_scoreboard(client, base, auth, built):
    r = await client.get(f"{base}/lab/scoreboard", headers=auth)
    assert r.status_code == 200
    assert r.json() == {"faults": 0, "diagnosed_right": 0, "fixed": 0, "fixed_proven": 0, "rows": []}
    ids = []
    for seed in (1, 2):
        r = await client.post(f"{base}/lab/faults", json={"seed": seed}, headers=auth)  # blind
        assert r.status_code == 201, r.text
        ids.append(r.json()["fault_id"])
    r = await client.post(f"{base}/lab/faults", json={}, headers=auth)  # blind and unseeded
    assert r.status_code in (201, 422), r.text  # 422 only when no customer is left to strike
    board = (await client.get(f"{base}/lab/scoreboard", headers=auth)).json()
    assert board["faults"] >= 2 and [row["fault_id"] for row in board["rows"]][:2] == ids
    row = board["rows"][0]
    assert {"fault_id", "kind", "customer", "target", "started_at", "tickets", "diagnoses", "diagnosed_right",
            "fixed", "fixed_by", "fixed_proven", "minutes_to_fix"} <= set(row)
    assert row["started_at"].endswith("+00:00") and row["diagnosed_right"] is False and row["fixed"] is False


async def test_lab_refusals(client, base, auth, built, tenant, stream_redis):
    await client.post(f"{base}/lab/faults", json={"kind": "payment_failed", "customer": "Arun"}, headers=auth)
    for body, status, code in [
        ({"kind": "gremlins"}, 422, "validation_error"),
        ({"kind": "router_frozen", "extra": 1}, 422, "validation_error"),
        ({"customer": "Asha", "node": "splA"}, 422, "invalid_input"),
        ({"kind": "router_frozen", "customer": "Arun"}, 409, "fault_active"),
        ({"customer": "Nobody Here"}, 404, "customer_not_found"),
        ({"node": "nowhere"}, 404, "node_not_found"),
        ({"kind": "hub_link_down", "node": "splA"}, 422, "fault_not_applicable"),
    ]:
        assert_error(await client.post(f"{base}/lab/faults", json=body, headers=auth), status, code)
    board = (await client.get(f"{base}/lab/scoreboard", headers=auth)).json()
    assert board["faults"] == 1 and await published(stream_redis, STREAM_NETWORK, tenant) == []


async def test_a_tenant_without_customers_has_nobody_to_strike(client, base, auth):
    assert_error(await client.post(f"{base}/lab/faults", json={}, headers=auth), 404, "no_customers")


async def test_seeding_a_world_and_connecting_homes(client, base, auth):
    r = await client.post(f"{base}/world", json={"region": "india", "customers": [
        {"customer": "Asha Verma", "address": "Mumbai"}, {"customer": "Ravi Nair", "address": "Pune"}]},
        headers=auth)
    assert r.status_code == 200, r.text
    world = r.json()
    assert world["region"] == "india" and world["catalogue_seeded"] is True and world["nodes_created"] > 0
    assert world["cities"] >= 10 and world["exchanges"] > world["cities"]
    homes = {h["customer"]: h for h in world["customers"]}
    assert homes["Asha Verma"]["city"] == "Mumbai" and homes["Ravi Nair"]["city"] == "Pune"
    line = (await client.get(f"{base}/customers/Asha Verma/line", headers=auth)).json()["line"]
    assert [h["kind"] for h in line] == ["Ont", "Splitter", "Olt", "Pop", "Backbone"]
    assert line[0]["node_id"] == homes["Asha Verma"]["node_id"] and line[2]["node_id"] == homes["Asha Verma"]["exchange"]

    again = (await client.post(f"{base}/world", json={"region": "india"}, headers=auth)).json()
    assert again["nodes_created"] == 0 and again["catalogue_seeded"] is False and again["nodes"] == world["nodes"]
    assert_error(await client.post(f"{base}/world", json={"region": "india", "seed": 2}, headers=auth),
                 409, "world_seeded")

    r = await client.post(f"{base}/customers/Kiran Rao/line", json={"address": "Koramangala, Bengaluru"}, headers=auth)
    assert r.status_code == 200, r.text
    assert r.json()["city"] == "Bengaluru" and r.json()["node_id"].startswith("ont-")
    # the lab can now strike any of them
    r = await client.post(f"{base}/lab/faults", json={"customer": "Kiran Rao", "kind": "router_frozen"}, headers=auth)
    assert r.status_code == 201, r.text


async def test_world_refusals_change_nothing(client, base, auth):
    r = await client.post(f"{base}/world", json={"region": "atlantis"}, headers=auth)
    assert "body.region" in assert_error(r, 422, "validation_error")["error"]["message"]  # the schema lists them
    await client.post(f"{base}/world", json={"region": "india"}, headers=auth)
    for address, code in (("Springfield", "ambiguous_address"), ("Qwxzv Plonk", "unknown_place")):
        r = await client.post(f"{base}/world", json={"region": "india", "customers": [
            {"customer": "Good One", "address": "Mumbai"}, {"customer": "Bad One", "address": address}]}, headers=auth)
        assert_error(r, 422, code)
    assert_error(await client.get(f"{base}/customers/Good One/line", headers=auth), 404, "customer_not_found")
    assert_error(await client.post(f"{base}/customers/Bad One/line", json={}, headers=auth), 422, "validation_error")


ROUTES = [
    ("POST", "/v1/tenants/{t}/lab/faults", {"json": {}}),
    ("GET", "/v1/tenants/{t}/lab/scoreboard", {}),
    ("GET", "/v1/tenants/{t}/network/capacity", {"params": {"node": "popA"}}),
    ("GET", "/v1/tenants/{t}/network/critical", {}),
    ("GET", "/v1/tenants/{t}/network/cabling", {}),
    ("POST", "/v1/tenants/{t}/world", {"json": {"region": "india"}}),
    ("POST", "/v1/tenants/{t}/customers/alice/line", {"json": {"address": "Mumbai"}}),
]


@pytest.mark.parametrize("method,path,kwargs", ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
async def test_routes_need_the_tenants_own_key(client, tenant, auth, method, path, kwargs):
    await assert_needs_own_key(client, tenant, method, path.format(t=tenant), **kwargs)


async def test_openapi_documents_the_world_and_the_lab(client):
    paths = (await client.get("/openapi.json")).json()["paths"]
    for method, path, _ in ROUTES:
        shape = path.replace("alice", "{c}")
        assert method.lower() in paths[shape], shape
    fault = paths["/v1/tenants/{t}/lab/faults"]["post"]
    assert "201" in fault["responses"] and "blind" in fault["summary"]


async def test_a_fault_for_a_customer_by_exact_name_strikes_that_customer(client, base, auth):
    """The exact-name rule of writes holds for the lab: "Meera Iyer" is the customer whose name it is."""
    r = await client.post(f"{base}/world", headers=auth, json={"region": "india", "max_cities": 2, "customers": [
        {"customer": "c-00000000000000d1", "address": "Mumbai"}]})
    assert r.status_code == 200, r.text
    r = await client.post(f"{base}/facts", headers=auth,
                          json={"subject": "c-00000000000000d1", "predicate": "name", "object": "Meera Iyer"})
    assert r.status_code == 201, r.text
    r = await client.post(f"{base}/lab/faults", json={"customer": "meera iyer", "kind": "router_frozen"}, headers=auth)
    assert r.status_code == 201, r.text
    assert r.json()["customer"] == "c-00000000000000d1"
