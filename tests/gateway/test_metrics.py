"""GET /metrics on the gateway app (in-process, on the session's FalkorDB): Prometheus text that
prometheus_client parses, no key needed, requests counted under their route's template and never
their raw path (no tenant in any label)."""

from __future__ import annotations

from relay_graph.runtime.metrics import snapshot
from relay_graph.runtime.streams import STREAMS

from tests.metrics_text import parse, value

CLAIMS = "/v1/tenants/{t}/claims"


async def test_metrics_need_no_key_and_parse(client):
    r = await client.get("/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    assert parse(r.text)  # prometheus_client's parser takes it
    assert "/metrics" not in (await client.get("/openapi.json")).json()["paths"]


async def test_a_request_is_counted_under_its_route_template_without_the_tenant(client, auth, tenant):
    labels = {"route": CLAIMS, "method": "GET", "status_class": "2xx"}
    before = value(parse((await client.get("/metrics")).text), "relay_http_requests_total", **labels) or 0
    r = await client.get(f"/v1/tenants/{tenant}/claims", params={"subject": "x", "predicate": "lives_in"},
                         headers=auth)
    assert r.status_code == 200, r.text
    refused = await client.get(f"/v1/tenants/{tenant}/claims", params={"subject": "x"})  # no key: 401
    assert refused.status_code == 401
    text = (await client.get("/metrics")).text
    samples = parse(text)
    assert value(samples, "relay_http_requests_total", **labels) == before + 1
    assert value(samples, "relay_http_requests_total", route=CLAIMS, method="GET", status_class="4xx") >= 1
    assert value(samples, "relay_http_request_duration_seconds_count", **labels) >= 1
    assert tenant not in text, "a tenant's name in the metrics"


async def test_a_path_no_route_matches_is_one_series(client):
    for path in ("/no/such/thing-1", "/no/such/thing-2"):
        assert (await client.get(path)).status_code == 404
    text = (await client.get("/metrics")).text
    assert "thing-1" not in text and "thing-2" not in text
    assert value(parse(text), "relay_http_requests_total", route="unmatched", status_class="4xx") >= 2


async def test_the_snapshot_reads_every_group_of_the_streams(stream_redis):
    # A group made here, from the stream's end (no entry is added: the session's consumers would get it).
    stream = STREAMS[-1]
    group = "metrics-probe"
    await stream_redis.xgroup_create(stream, group, id="$", mkstream=True)
    try:
        reading = await snapshot.read(stream_redis, count_graphs=None)
        points = {name: {tuple(sorted(labels.items())): v for labels, v in rows}
                  for name, rows in reading.points.items()}
        key = (("group", group), ("stream", stream))
        assert points["relay_stream_lag_messages"][key] == 0
        assert points["relay_stream_pending_messages"][key] == 0
        assert points["relay_stream_consumers"][key] == 0
        assert set(points["relay_stream_dead_letter_messages"]) == {(("stream", s),) for s in STREAMS}
        assert points["relay_falkordb_used_memory"][()] > 0
        mine = await snapshot.read(stream_redis, streams=[stream], groups={"intake"}, server=False)
        assert all(labels.get("group") in (None, "intake") for rows in mine.points.values() for labels, _ in rows)
        assert "relay_falkordb_used_memory" not in mine.points
    finally:
        await stream_redis.xgroup_destroy(stream, group)


async def test_mcp_requests_are_counted_under_their_own_routes(client, tenant):
    # no key (and, in-process without the lifespan, no MCP session manager): refused, still on its route
    got = {route: (await client.post(path, json={})).status_code
           for route, path in (("/mcp", "/mcp"), ("/v1/tenants/{t}/mcp", f"/v1/tenants/{tenant}/mcp"))}
    text = (await client.get("/metrics")).text
    samples = parse(text)
    for route, status in got.items():
        assert status >= 400
        assert value(samples, "relay_http_requests_total", route=route, method="POST",
                     status_class=f"{status // 100}xx") >= 1
    assert tenant not in text
