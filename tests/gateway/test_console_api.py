"""The console's routes (/v1/console/...) on a real FalkorDB: who a key is, the tenant's graph by
band with both clocks, open conflicts, the database figures with indexes, the query log with
EXPLAIN plans, and the live socket that takes its key in the first message. A tenant's key sees
only its own tenant; the admin key sees any tenant that exists."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from relay_graph.usecases.console import band_of, kind_of, named_queries

from .helpers import ADMIN, assert_error, create_agent, create_tenant
from .stream_helpers import served

RECV_GUARD_S = 15  # a guard against hanging, not a speed assertion
REPO = Path(__file__).resolve().parents[2]


def test_bands_and_kinds_of_labels():
    assert band_of(["Entity", "Customer"]) == "semantic"
    assert band_of(["Fact", "Superseded"]) == "semantic"
    assert band_of(["Episode", "CustomerMessage"]) == "episodic"
    assert band_of(["Conflict"]) == "disagreement"
    assert band_of(["Entity", "Ticket"]) == "procedural"
    assert band_of(["NetNode", "Olt", "Up"]) == "network"
    assert kind_of(["Entity", "Customer"]) == "Customer"
    assert kind_of(["Fact", "Current"]) == "Fact"
    # Every statement of queries/ is there by its name, so the query log's names all have a plan.
    assert "facts_current" in named_queries() and "console_graph_nodes" in named_queries()


async def test_whoami_for_a_tenant_key_and_for_the_admin_key(client, tenant):
    auth = await create_tenant(client, tenant)
    r = await client.get("/v1/console/whoami", headers=auth)
    assert r.json() == {"admin": False, "tenant": tenant, "agent": "api", "tenants": [tenant]}
    r = await client.get("/v1/console/whoami", headers=ADMIN)
    assert r.json()["admin"] is True and tenant in r.json()["tenants"]
    assert_error(await client.get("/v1/console/whoami", headers={"Authorization": "Bearer nope-nope-nope"}), 401,
                 "unauthorized")


async def test_the_graph_has_every_band_and_both_clocks(client, tenant):
    auth = await create_tenant(client, tenant)
    base = f"/v1/tenants/{tenant}"
    old = (await client.post(f"{base}/facts", headers=auth, json={
        "subject": "Asha Verma", "predicate": "lives_in", "object": "Mumbai",
        "valid_from": "2026-01-01T00:00:00+00:00"})).json()
    new = (await client.post(f"{base}/facts", headers=auth, json={
        "subject": "Asha Verma", "predicate": "lives_in", "object": "Pune",
        "valid_from": "2026-06-01T00:00:00+00:00"})).json()
    r = await client.get(f"/v1/console/tenants/{tenant}/graph", headers=auth)
    assert r.status_code == 200, r.text
    g = r.json()
    nodes = {n["id"]: n for n in g["nodes"]}
    assert {old["fact_id"], new["fact_id"]} <= set(nodes)
    was, now = nodes[old["fact_id"]], nodes[new["fact_id"]]
    assert (was["kind"], was["band"], was["name"]) == ("Fact", "semantic", "lives_in: Mumbai")
    assert "Superseded" in was["labels"] and "Current" in now["labels"]
    assert was["valid_to_ms"] == now["valid_from_ms"]  # the world clock: Mumbai until Pune
    assert was["expired_at_ms"] is not None and now["expired_at_ms"] is None  # the belief clock
    # An episode is named by its text, cut in Python (never mid-character).
    text = "नमस्ते 🙂 " * 30
    r = await client.post(f"{base}/episodes", headers=auth, json={"episodes": [
        {"session": "s-1", "speaker": "Asha Verma", "id": "e-hindi", "text": text, "at": "2026-06-02T00:00:00+00:00"}]})
    assert r.status_code == 201, r.text
    g = (await client.get(f"/v1/console/tenants/{tenant}/graph", headers=auth)).json()
    nodes = {n["id"]: n for n in g["nodes"]}
    assert (nodes["e-hindi"]["band"], nodes["e-hindi"]["name"]) == ("episodic", text[:120])
    assert nodes["e-hindi"]["at_ms"] is not None
    customer = nodes[now["subject"]]
    assert customer["kind"] == "Customer" and customer["name"].lower() == "asha verma"
    edges = {(e["source"], e["type"], e["target"]) for e in g["edges"]}
    assert (new["fact_id"], "SUPERSEDES", old["fact_id"]) in edges
    assert all(e["source"] in nodes and e["target"] in nodes for e in g["edges"])
    # The bound: one node asked, one node given, and it says the rest was left off.
    small = (await client.get(f"/v1/console/tenants/{tenant}/graph", params={"limit": 1}, headers=auth)).json()
    assert len(small["nodes"]) == 1 and small["truncated"] is True
    # The admin sees it too; another tenant's key does not; a tenant that does not exist is 404.
    assert (await client.get(f"/v1/console/tenants/{tenant}/graph", headers=ADMIN)).json()["nodes"]
    other = await create_tenant(client, tenant + "-x")
    assert_error(await client.get(f"/v1/console/tenants/{tenant}/graph", headers=other), 403, "forbidden")
    assert_error(await client.get(f"/v1/console/tenants/{tenant}-none/graph", headers=ADMIN), 404, "not_found")
    assert_error(await client.get(f"/v1/console/tenants/{tenant}/graph", params={"limit": 0}, headers=auth), 422,
                 "validation_error")


async def test_open_conflicts_list_until_settled(client, tenant):
    auth = await create_tenant(client, tenant)
    base = f"/v1/tenants/{tenant}"
    a = await create_agent(client, tenant, auth, "retail-desk")
    b = await create_agent(client, tenant, auth, "field-tech")
    await client.post(f"{base}/facts", headers=a, json={"subject": "alice rao", "predicate": "lives_in", "object": "pune"})
    second = (await client.post(f"{base}/facts", headers=b, json={
        "subject": "alice rao", "predicate": "lives_in", "object": "mumbai"})).json()
    assert second["outcome"] == "conflict"
    got = (await client.get(f"/v1/console/tenants/{tenant}/conflicts", headers=auth)).json()["conflicts"]
    assert [(c["conflict_id"], c["predicate"], c["subject_name"]) for c in got] == [
        (second["conflict_id"], "lives_in", "alice rao")]
    r = await client.post(f"{base}/conflicts/{second['conflict_id']}/settle", headers=auth,
                          json={"fact_id": second["fact_id"], "by": "maya"})
    assert r.status_code == 200, r.text
    assert (await client.get(f"/v1/console/tenants/{tenant}/conflicts", headers=auth)).json()["conflicts"] == []


async def test_database_figures_queries_and_plans(client, tenant):
    auth = await create_tenant(client, tenant)
    await client.post(f"/v1/tenants/{tenant}/facts", headers=auth, json={
        "subject": "Asha Verma", "predicate": "lives_in", "object": "Pune"})
    await client.get(f"/v1/tenants/{tenant}/facts", params={"subject": "Asha Verma"}, headers=auth)
    db = (await client.get(f"/v1/console/tenants/{tenant}/database", headers=auth)).json()
    assert db["stats"]["nodes"]["Fact"] == 1 and db["stats"]["memory_mb"] is not None
    assert any(i["label"] == "Fact" and "fact_id" in i["properties"] for i in db["indexes"])
    assert all(i["status"] for i in db["indexes"])
    queries = (await client.get(f"/v1/console/tenants/{tenant}/queries", headers=auth)).json()["queries"]
    assert queries and {q["tenant"] for q in queries} == {tenant}  # this tenant's only
    assert all(q["ms"] >= 0 and q["at_ms"] > 0 and q["rows"] >= 0 for q in queries)
    name = next(q["query"] for q in queries if q["query"].startswith("facts_"))
    plan = (await client.get(f"/v1/console/tenants/{tenant}/queries/{name}/plan", headers=auth)).json()
    assert plan["query"] == name and plan["cypher"] and plan["plan"]
    assert any("Index Scan" in line or "Node By" in line for line in plan["plan"]), plan["plan"]
    assert_error(await client.get(f"/v1/console/tenants/{tenant}/queries/no_such_query/plan", headers=auth), 404,
                 "query_not_found")


async def test_the_console_socket_takes_its_key_in_the_first_message(app, client, tenant, stream_redis):
    auth = await create_tenant(client, tenant)
    other = await create_tenant(client, tenant + "-o")
    key = auth["Authorization"][7:]
    async with served(app) as host:
        url = f"ws://{host}/v1/console/tenants/{tenant}/live"
        async with connect(url) as ws:
            await ws.send(json.dumps({"token": key}))
            assert json.loads(await asyncio.wait_for(ws.recv(), RECV_GUARD_S)) == {"kind": "ready", "tenant": tenant}
            r = await client.post(f"/v1/tenants/{tenant}/facts", headers=auth, json={
                "subject": "Asha Verma", "predicate": "lives_in", "object": "Pune"})
            event = json.loads(await asyncio.wait_for(ws.recv(), RECV_GUARD_S))
            assert (event["kind"], event["id"]) == ("fact", r.json()["fact_id"])
        async with connect(url) as ws:  # the admin key may watch any tenant
            await ws.send(json.dumps({"token": ADMIN["Authorization"][7:]}))
            assert json.loads(await asyncio.wait_for(ws.recv(), RECV_GUARD_S))["kind"] == "ready"
        for first, code in ((json.dumps({"token": other["Authorization"][7:]}), 4403),
                            (json.dumps({"token": "not-a-key-at-all"}), 4401), ("hello", 4401)):
            async with connect(url) as ws:
                await ws.send(first)
                with pytest.raises(ConnectionClosed) as closed:
                    await asyncio.wait_for(ws.recv(), RECV_GUARD_S)
                assert closed.value.rcvd.code == code, first


async def test_the_isolation_demo_finds_the_word_only_where_it_was_written(client, tenant, stream_redis):
    auth = await create_tenant(client, tenant)
    for other in ("-b", "-c"):
        other_auth = await create_tenant(client, tenant + other)
        # Something of their own in the others, so there is a graph to search.
        await client.post(f"/v1/tenants/{tenant}{other}/facts", headers=other_auth, json={
            "subject": "Asha Verma", "predicate": "lives_in", "object": "Pune"})
    assert_error(await client.post("/v1/console/isolation", headers=auth, json={"tenant": tenant, "word": "zanzibar"}),
                 403, "forbidden")
    r = await client.post("/v1/console/isolation", headers=ADMIN, json={"tenant": tenant, "word": "Zanzibar"})
    assert r.status_code == 200, r.text
    body = r.json()
    findings = {f["tenant"]: f for f in body["findings"]}
    control = findings[tenant]
    assert control["wrote"] and control["recall_hits"] >= 1 and control["cypher_hits"] >= 1
    assert control["live_events"] == 1
    for other in (tenant + "-b", tenant + "-c"):
        assert findings[other] == {"tenant": other, "wrote": False, "recall_hits": 0, "cypher_hits": 0,
                                   "live_events": 0, "found": False}
    assert body["isolated"] is True and body["findings"][0]["tenant"] == tenant
    assert_error(await client.post("/v1/console/isolation", headers=ADMIN, json={"tenant": tenant + "-none",
                                                                                 "word": "zanzibar"}), 404, "not_found")
    assert_error(await client.post("/v1/console/isolation", headers=ADMIN, json={"tenant": tenant, "word": "a b"}),
                 422, "validation_error")


async def test_knowledge_flows_count_what_one_agent_read_of_anothers(client, tenant):
    auth = await create_tenant(client, tenant)
    base = f"/v1/tenants/{tenant}"
    intake = await create_agent(client, tenant, auth, "billing-desk")
    resolver = await create_agent(client, tenant, auth, "field-tech")
    for subject in ("Asha Verma", "Ravi Kumar"):
        r = await client.post(f"{base}/facts", headers=intake, json={
            "subject": subject, "predicate": "lives_in", "object": "Pune"})
        assert r.status_code == 201, r.text
    for _ in range(2):
        await client.get(f"{base}/facts", params={"subject": "Asha Verma"}, headers=resolver)
    await client.get(f"{base}/facts", params={"subject": "Ravi Kumar"}, headers=resolver)
    await client.get(f"{base}/facts", params={"subject": "Ravi Kumar"}, headers=intake)  # its own: not a flow
    flows = (await client.get(f"/v1/console/tenants/{tenant}/knowledge", headers=auth)).json()["flows"]
    assert [(f["writer"], f["reader"], f["facts"], f["reads"]) for f in flows] == [("billing-desk", "field-tech", 2, 3)]


async def test_benchmarks_are_the_latest_results_on_file(client, tenant, tmp_path):
    from services.gateway.routers.console_bench import latest

    auth = await create_tenant(client, tenant)
    body = (await client.get("/v1/console/benchmarks", headers=auth)).json()
    on_file = json.loads((REPO / "bench" / "results" / "memory.json").read_text())
    assert {a["type"] for a in body["memory"]["by_type"]} == set(on_file["summary"]["by_type"])
    assert all(0 <= a["relay"] <= 1 and 0 <= a["vector"] <= 1 for a in body["memory"]["by_type"])
    assert body["suite"]["rows"] and body["render"] is not None
    assert latest(tmp_path).model_dump() == {"suite": None, "memory": None, "render": None}  # never run: null
    assert_error(await client.get("/v1/console/benchmarks"), 401, "unauthorized")


async def test_the_query_log_has_every_processs_queries_and_profiles_a_logged_read(client, tenant, graph_settings):
    """Another process's GraphClient (its own connections, named as the resolver) writes its runs to
    the tenant's shared log on the same server; the console lists them beside the gateway's own."""
    from relay_graph.desk.network import store as net
    from relay_graph.desk.network.models import NetNodeIn, NodeKind
    from relay_graph.runtime.db import GraphClient
    from relay_graph.runtime.query_log import SharedQueryLog

    auth = await create_tenant(client, tenant)
    await client.post(f"/v1/tenants/{tenant}/facts", headers=auth, json={
        "subject": "Asha Verma", "predicate": "lives_in", "object": "Pune"})
    other = GraphClient(graph_settings)
    other.shared_log = SharedQueryLog(other.redis, size=200, flush_s=0.05, process="resolver")
    read = named_queries()["console_find_word"]
    try:
        assert (await other.run(tenant, read, {"word": "pune"}))[0]["hits"] >= 1
        await other.run(tenant, named_queries()["console_graph_nodes"], {"limit": 10**6, "pad": "x" * 5000})
        await net.upsert_nodes(other, tenant, [NetNodeIn(node_id="olt-q", kind=NodeKind.OLT, name="olt-q",
                                                         capacity_gbps=10)])
    finally:
        await other.close()  # writes out what it still holds
    runs = (await client.get(f"/v1/console/tenants/{tenant}/queries", headers=auth)).json()["queries"]
    assert {r["process"] for r in runs} >= {"resolver"} and {r["tenant"] for r in runs} == {tenant}
    mine = [r for r in runs if r["process"] == "resolver"]
    assert [(r["query"], r["read_only"], r["profilable"]) for r in mine[:2]] == [
        ("console_find_word", True, True), ("console_graph_nodes", True, False)]  # parameters too large to keep
    assert mine[0]["rows"] == 1 and mine[1]["rows"] >= 1
    writes = [r for r in mine[2:] if not r["read_only"]]
    assert writes and not any(r["profilable"] for r in writes)
    assert runs == sorted(runs, key=lambda r: r["id"].split("-")[0])  # newest last
    # The gateway's own queries are there too, up to this request (it writes its own out first).
    assert any(r["query"].startswith("facts_") and r["process"] != "resolver" for r in runs)

    profile = (await client.get(f"/v1/console/tenants/{tenant}/queries/runs/{mine[0]['id']}/profile",
                                headers=auth)).json()
    assert (profile["query"], profile["process"], profile["parameters"]) == ("console_find_word", "resolver",
                                                                             {"word": "pune"})
    assert any("Records produced" in line for line in profile["plan"]), profile["plan"]
    for run, code in ((mine[1]["id"], "not_profilable"), (writes[0]["id"], "not_profilable")):
        assert_error(await client.get(f"/v1/console/tenants/{tenant}/queries/runs/{run}/profile", headers=auth),
                     422, code)
    # EXPLAIN with the values a run ran with; without them a plan that needs one (a LIMIT's) is refused.
    explained = (await client.get(f"/v1/console/tenants/{tenant}/queries/console_find_word/plan",
                                  params={"run": mine[0]["id"]}, headers=auth)).json()
    assert explained["plan"][0] == "Results" and not any("Records produced" in line for line in explained["plan"])
    assert_error(await client.get(f"/v1/console/tenants/{tenant}/queries/console_graph_nodes/plan",
                                  params={"run": mine[0]["id"]}, headers=auth), 404, "query_not_found")
    assert_error(await client.get(f"/v1/console/tenants/{tenant}/queries/outbox_pending/plan", headers=auth), 422,
                 "not_plannable")
    assert_error(await client.get(f"/v1/console/tenants/{tenant}/queries/runs/1-0/profile", headers=auth), 404,
                 "query_not_found")
    assert_error(await client.get(f"/v1/console/tenants/{tenant}/queries/runs/latest/profile", headers=auth), 422,
                 "validation_error")
    # Stream ids are two unsigned 64-bit numbers: a larger one is refused here, before Redis sees it.
    for run in (f"{2**64}-0", f"1-{2**64}", "99999999999999999999-0"):
        assert_error(await client.get(f"/v1/console/tenants/{tenant}/queries/runs/{run}/profile", headers=auth),
                     422, "validation_error")
        assert_error(await client.get(f"/v1/console/tenants/{tenant}/queries/console_find_word/plan",
                                      params={"run": run}, headers=auth), 422, "validation_error")
    assert_error(await client.get(f"/v1/console/tenants/{tenant}/queries/runs/{2**64 - 1}-0/profile", headers=auth),
                 404, "query_not_found")
    other_key = await create_tenant(client, tenant + "-q")
    assert_error(await client.get(f"/v1/console/tenants/{tenant}/queries", headers=other_key), 403, "forbidden")


async def test_crossings_on_one_ticket_and_who_has_worked_on_similar_issues(client, tenant, graph_client):
    from datetime import datetime, timezone

    from relay_graph.desk.tickets import store as tickets
    from relay_graph.desk.tickets.models import TicketStage

    from relay_graph.memory import facts
    from relay_graph.memory.models import FactInput

    auth = await create_tenant(client, tenant)
    # The desk's agents write and read from their own processes (their names are reserved for keys).
    lives = (await facts.write_fact(graph_client, tenant, FactInput(
        subject="Asha Verma", predicate="lives_in", object="Pune", agent="intake"))).fact_id
    await facts.write_fact(graph_client, tenant, FactInput(  # the resolver's own: not a crossing
        subject="Asha Verma", predicate="has_router", object="Nokia G-240", agent="resolver"))
    await facts.read_facts(graph_client, tenant, "Asha Verma", reader="resolver")  # before the ticket

    async def fixed(tid: str, customer: str, issue: str, agent: str, steps: list[str], tech: str | None = None):
        await tickets.open_ticket(graph_client, tenant, customer=customer, issue_kind=issue, summary=issue,
                                  agent="intake", ticket_id=tid)
        await tickets.hand_off(graph_client, tenant, tid, from_agent="intake", to_role="resolver")
        assert await tickets.claim(graph_client, tenant, tid, agent=agent, replica=f"{agent}-1")
        if tech:
            await tickets.schedule_visit(graph_client, tenant, tid, technician=tech, at=datetime.now(timezone.utc),
                                         agent=agent)
        await tickets.record_fix(graph_client, tenant, tid, issue_kind=issue, steps=steps, verified=True, agent=agent)
        await tickets.set_stage(graph_client, tenant, tid, stage=TicketStage.FIXED, agent=agent)

    await fixed("T-OLD1", "Ravi Kumar", "no internet", "resolver", ["restart_ont"], tech="Meena")
    await fixed("T-OLD2", "Bilal Khan", "router frozen", "night-resolver", ["restart_ont", "reset_router"])
    await fixed("T-OLD3", "Arun Rao", "slow wifi", "wifi-desk", ["change_channel"])  # nothing in common
    await tickets.open_ticket(graph_client, tenant, customer="Asha Verma", issue_kind="no internet",
                              summary="no internet", agent="intake", ticket_id="T-NOW")
    await tickets.hand_off(graph_client, tenant, "T-NOW", from_agent="intake", to_role="resolver")
    assert await tickets.claim(graph_client, tenant, "T-NOW", agent="resolver", replica="resolver-1")
    for _ in range(2):  # on the ticket: the resolver reads what intake learnt about her
        await facts.read_facts(graph_client, tenant, "Asha Verma", reader="resolver")

    got = (await client.get(f"/v1/console/tenants/{tenant}/tickets/T-NOW/crossings", headers=auth)).json()
    assert [(c["writer"], c["reader"], c["fact_id"], c["predicate"], c["object"], c["reads"], c["current"])
            for c in got["crossings"]] == [("intake", "resolver", lives, "lives_in", "Pune", 3, True)]
    # T-OLD1's resolver read nothing about Ravi: no crossings there
    assert (await client.get(f"/v1/console/tenants/{tenant}/tickets/T-OLD1/crossings",
                             headers=auth)).json()["crossings"] == []

    who = (await client.get(f"/v1/console/tenants/{tenant}/tickets/T-NOW/experts", headers=auth)).json()
    assert who["issue"] == "no internet"
    experts = {e["expert"]: e for e in who["experts"]}
    assert set(experts) == {"resolver", "intake", "technician Meena", "night-resolver"}  # not wifi-desk
    assert (experts["resolver"]["tickets"], experts["resolver"]["fixed"], experts["resolver"]["why"]) == (
        1, 1, ["same issue"])
    assert experts["night-resolver"]["why"] == ["shared fix"] and experts["night-resolver"]["issues"] == [
        "router frozen"]
    assert experts["intake"]["tickets"] == 2 and sorted(experts["intake"]["why"]) == ["same issue", "shared fix"]
    assert who["experts"][0]["expert"] == "intake"  # two similar tickets fixed
    assert_error(await client.get(f"/v1/console/tenants/{tenant}/tickets/T-NONE/experts", headers=auth), 404,
                 "not_found")
    other = await create_tenant(client, tenant + "-x")
    assert_error(await client.get(f"/v1/console/tenants/{tenant}/tickets/T-NOW/crossings", headers=other), 403,
                 "forbidden")


async def test_the_network_map_places_hubs_and_exchanges_at_the_footprints_coordinates(client, tenant, graph_client):
    from relay_graph.desk.network import store as network
    from relay_graph.desk.catalogue.footprint import footprint

    made = await client.post("/v1/tenants", json={"tenant": tenant}, headers=ADMIN)  # with its default world
    assert made.status_code == 201, made.text
    auth = {"Authorization": f"Bearer {made.json()['api_key']}"}
    m = (await client.get(f"/v1/console/tenants/{tenant}/network/map", headers=auth)).json()
    nodes = {n["node_id"]: n for n in m["nodes"]}
    mumbai = next(c for c in footprint().cities_in("india") if c.name == "Mumbai")
    hub = next(n for n in m["nodes"] if n["name"] == "Mumbai hub")
    assert (hub["kind"], hub["lat"], hub["lon"], hub["placed"], hub["up"]) == ("Pop", mumbai.lat, mumbai.lon,
                                                                             "gazetteer", True)
    area = next(a for a in mumbai.areas if a.kind == "locality")
    exchange = next(n for n in m["nodes"] if n["name"] == f"{area.name} exchange (Mumbai)")
    assert (exchange["kind"], exchange["lat"], exchange["lon"]) == ("Olt", area.lat, area.lon)
    cores = [n for n in m["nodes"] if n["kind"] == "Backbone"]
    assert cores and all(n["placed"] == "centre of its hubs" for n in cores)
    assert m["unplaced"] == 0 and len([n for n in m["nodes"] if n["kind"] == "Pop"]) == len(footprint().cities_in("india"))
    assert any(link["source"] == exchange["node_id"] and link["target"] == hub["node_id"] for link in m["links"])
    assert all(link["source"] in nodes and link["target"] in nodes for link in m["links"])
    assert m["outages"] == []
    # A hub goes down (as the lab or netops marks it): the map says so, and lists the outage once declared.
    r = await client.post(f"/v1/tenants/{tenant}/network/nodes/{hub['node_id']}/status", headers=auth,
                          json={"up": False, "by": "test"})
    assert r.status_code == 200, r.text
    m = (await client.get(f"/v1/console/tenants/{tenant}/network/map", headers=auth)).json()
    assert next(n for n in m["nodes"] if n["node_id"] == hub["node_id"])["up"] is False
    outage = await network.open_outage(graph_client, tenant, hub["node_id"], cause="test")  # as netops declares
    m = (await client.get(f"/v1/console/tenants/{tenant}/network/map", headers=auth)).json()
    assert [(o["outage_id"], o["node_id"], o["cause"]) for o in m["outages"]] == [
        (outage.outage_id, hub["node_id"], "test")]
    assert m["outages"][0]["customers"] == len(outage.customers)
    assert_error(await client.get(f"/v1/console/tenants/{tenant}-none/network/map", headers=ADMIN), 404, "not_found")


async def test_the_simulator_control_and_its_report(client, tenant):
    auth = await create_tenant(client, tenant)
    url = f"/v1/console/tenants/{tenant}/simulator"
    assert (await client.get(url, headers=auth)).json() == {"tenant": tenant, "control": None, "status": None}
    first = (await client.put(url, headers=auth, json={"running": False, "speed": 0.5})).json()
    second = (await client.put(url, headers=ADMIN, json={"running": True, "speed": 8})).json()
    assert (first["version"], second["version"], second["running"], second["speed"]) == (1, 2, True, 8.0)
    for bad in ({"running": True, "speed": 9}, {"running": True, "speed": 0.25}, {"running": True},
                {"running": True, "speed": 2, "extra": 1}, {"running": 0, "speed": 2}, {"running": True, "speed": True}):
        assert_error(await client.put(url, headers=auth, json=bad), 422, "validation_error")
    report = {"state": "playing", "round": 1, "sim_hours": 3.5, "speed": 8, "control_version": 2, "events": 4,
              "turns": 3, "tickets": 1, "errors": 0,
              "doing": [{"customer": "c-1", "what": "say: my router blinks red", "since_ms": 1}]}
    r = await client.put(url + "/status", headers=auth, json=report)
    assert r.status_code == 200 and r.json()["live"] is True, r.text
    got = (await client.get(url, headers=auth)).json()
    assert got["control"]["version"] == 2 and got["status"]["doing"] == report["doing"]
    assert got["status"]["state"] == "playing" and got["status"]["live"] is True
    for bad in ({**report, "state": "dancing"}, {**report, "errors": False},
                {**report, "doing": [{"customer": "c-1", "what": "x", "since_ms": True}]}):
        assert_error(await client.put(url + "/status", headers=auth, json=bad), 422, "validation_error")
    other = await create_tenant(client, tenant + "-s")
    assert_error(await client.put(url, headers=other, json={"running": False, "speed": 1}), 403, "forbidden")
    assert (await client.get(url, headers=auth)).json()["control"]["running"] is True  # unchanged


async def test_the_same_question_of_relay_and_of_the_vector_store_side_by_side(client, tenant):
    auth = await create_tenant(client, tenant)
    base = f"/v1/tenants/{tenant}"
    r = await client.post(f"{base}/episodes", headers=auth, json={"episodes": [
        {"session": "s-1", "speaker": "Asha Verma", "customer": "Asha Verma", "id": "e-1",
         "at": "2026-01-02T10:00:00+00:00", "text": "I live in Mumbai, Bandra West."},
        {"session": "s-2", "speaker": "Asha Verma", "customer": "Asha Verma", "id": "e-2",
         "at": "2026-06-03T10:00:00+00:00", "text": "I've moved to Pune last week."},
        {"session": "s-3", "speaker": "Ravi Kumar", "customer": "Ravi Kumar", "id": "e-3",
         "at": "2026-06-04T10:00:00+00:00", "text": "I live in Delhi."}]})
    assert r.status_code == 201, r.text
    for town, source, since in (("Mumbai", "e-1", "2026-01-01"), ("Pune", "e-2", "2026-06-01")):
        r = await client.post(f"{base}/facts", headers=auth, json={
            "subject": "Asha Verma", "predicate": "lives_in", "object": town, "source": source,
            "valid_from": f"{since}T00:00:00+00:00"})
        assert r.status_code == 201, r.text
    got = (await client.post(f"/v1/console/tenants/{tenant}/compare", headers=auth,
                             json={"question": "Where does Asha Verma live?", "customer": "Asha Verma"})).json()
    assert got["relay"]["answer"] == "lives_in = Pune"  # the current fact first
    assert got["relay"]["evidence"][0]["state"] == "current"
    vector = got["vector"]
    assert [e["text"] for e in vector["evidence"]] == ["Asha Verma: I've moved to Pune last week.",
                                                      "Asha Verma: I live in Mumbai, Bandra West."]  # newest first
    assert vector["answer"] in {e["text"] for e in vector["evidence"]}  # its nearest turn, Ravi's never
    assert all(0 <= e["score"] <= 1 for e in vector["evidence"]) and vector["ms"] >= 0
    none = (await client.post(f"/v1/console/tenants/{tenant}/compare", headers=auth,
                              json={"question": "Where does Nobody live?", "customer": "Nobody Atall"})).json()
    assert none["vector"] == {**none["vector"], "answer": None, "evidence": []}
    assert_error(await client.post(f"/v1/console/tenants/{tenant}/compare", headers=auth,
                                   json={"question": " ", "customer": "Asha Verma"}), 422, "validation_error")


async def test_experts_on_a_ticket_whose_issue_nobody_has_fixed_yet(client, tenant, graph_client):
    # No ticket of the issue is FIXED_BY a procedure: there are no fix steps to share, and the
    # people on the other open ticket of the same issue are still the ones who worked on it.
    from relay_graph.desk.tickets import store as tickets

    auth = await create_tenant(client, tenant)
    for tid, customer in (("T-A", "Asha Verma"), ("T-B", "Ravi Kumar")):
        await tickets.open_ticket(graph_client, tenant, customer=customer, issue_kind="no dial tone",
                                  summary="no dial tone", agent="intake", ticket_id=tid)
    r = await client.get(f"/v1/console/tenants/{tenant}/tickets/T-A/experts", headers=auth)
    assert r.status_code == 200, r.text
    assert r.json()["issue"] == "no dial tone"
    assert [(e["expert"], e["tickets"], e["fixed"], e["why"], e["ticket_ids"]) for e in r.json()["experts"]] == [
        ("intake", 1, 0, ["same issue"], ["T-B"])]
    await tickets.open_ticket(graph_client, tenant, customer="Arun Rao", issue_kind="no signal at all",
                              summary="no signal", agent="intake", ticket_id="T-ALONE")
    r = await client.get(f"/v1/console/tenants/{tenant}/tickets/T-ALONE/experts", headers=auth)
    assert r.status_code == 200, r.text
    assert r.json()["experts"] == []
