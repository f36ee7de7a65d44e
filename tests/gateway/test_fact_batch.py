"""POST /v1/tenants/{t}/facts/batch on a real FalkorDB: one result per fact in order, atomic per
fact (a bad one is answered in its slot and writes nothing, the others are written once), a re-sent
batch corroborates, the size limit, embeddings and the live feed."""

from __future__ import annotations

import pytest

from relay_graph.runtime.queries import Query
from relay_graph.runtime.streams import FactChanged

from .helpers import ADMIN, assert_error, client_for, create_tenant, make_app
from .stream_helpers import published

COUNTS = Query("t_batch_counts",
               "MATCH (f:Fact) WITH count(f) AS facts "
               "OPTIONAL MATCH (e:Entity) WITH facts, count(e) AS entities "
               "OPTIONAL MATCH (:Fact)-[p:PHRASED_AS]->(:FactText) RETURN facts, entities, count(p) AS phrased",
               read_only=True)
ABOUT = Query("t_batch_about", "MATCH (e:Entity) WHERE e.name_key = $key RETURN count(e) AS n", read_only=True)
CITIES = ["pune", "mumbai", "delhi", "chennai", "kolkata", "jaipur", "surat", "nagpur", "indore", "bhopal"]
DEVICES = ["kindle", "roku", "echo dot", "pixel 8", "ps5"]


async def counts(graph_client, tenant) -> dict[str, int]:
    rows = await graph_client.run(tenant, COUNTS, {})
    return rows[0] if rows else {"facts": 0, "entities": 0, "phrased": 0}


def good(i: int) -> dict:
    if i % 2:
        return {"subject": f"bulk customer {i:05d}", "predicate": "lives_in", "object": CITIES[i % len(CITIES)]}
    return {"subject": f"bulk customer {i:05d}", "predicate": "owns_device", "object": DEVICES[i % len(DEVICES)],
            "agent": "night-shift", "valid_from": "2026-05-01T10:00:00+05:30"}


# Every kind of bad item, each naming a subject nothing else names, so what it wrote (nothing) shows.
BAD = {
    "missing object": ({"subject": "bad one", "predicate": "lives_in"}, "invalid_fact"),
    "unknown predicate": ({"subject": "bad two", "predicate": "likes_cats", "object": "yes"}, "unknown_predicate"),
    "bad value": ({"subject": "bad three", "predicate": "phone", "object": "not a phone"}, "invalid_value"),
    "extra field": ({"subject": "bad four", "predicate": "lives_in", "object": "pune", "mood": "happy"},
                    "invalid_fact"),
    "no offset": ({"subject": "bad five", "predicate": "lives_in", "object": "pune",
                   "valid_from": "2026-05-01T10:00:00"}, "invalid_fact"),
    "not an object": ("bad six lives in pune", "invalid_fact"),
    "no letters": ({"subject": "!!!", "predicate": "lives_in", "object": "bad seven city"}, "invalid_value"),
    "agent not a label": ({"subject": "bad eight", "predicate": "lives_in", "object": "pune", "agent": "a b"},
                          "invalid_fact"),
}
BAD_NAMES = ["bad one", "bad two", "bad three", "bad four", "bad five", "bad six", "bad seven city", "bad eight"]


def batch_of(n: int, every: int) -> tuple[list, dict[int, str]]:
    """n facts, a bad one of each kind in turn at every `every`-th slot; {slot: expected code}."""
    items, bad_at = [], {}
    kinds = list(BAD.values())
    for i in range(n):
        if i % every == every - 1:
            item, code = kinds[len(bad_at) % len(kinds)]
            bad_at[i] = code
            items.append(item)
        else:
            items.append(good(i))
    return items, bad_at


async def test_ten_thousand_facts_with_bad_ones_in_their_slots(gateway_settings, memory, graph_client, tenant):
    settings = gateway_settings.model_copy(update={"batch_max_facts": 10_000, "max_body_bytes": 8 * 1024 * 1024})
    app = make_app(settings, memory)
    try:
        async with client_for(app) as c:
            headers = await create_tenant(c, tenant)
            # something on file before: the batch must leave it as it was
            r = await c.post(f"/v1/tenants/{tenant}/facts", headers=headers,
                             json={"subject": "kept customer", "predicate": "lives_in", "object": "pune"})
            assert r.status_code == 201, r.text
            before = await counts(graph_client, tenant)

            items, bad_at = batch_of(10_000, 97)
            r = await c.post(f"/v1/tenants/{tenant}/facts/batch", json={"facts": items}, headers=headers, timeout=600)
            assert r.status_code == 200, r.text
            body = r.json()
            results = body["results"]
            assert len(results) == 10_000
            n_good = 10_000 - len(bad_at)
            assert (body["written"], body["failed"]) == (n_good, len(bad_at))
            for i, res in enumerate(results):
                if i in bad_at:
                    assert set(res) == {"error"} and res["error"]["code"] == bad_at[i], (i, res)
                    assert res["error"]["message"]
                else:
                    assert res["outcome"] == "created", (i, res)
            ids = [res["fact_id"] for i, res in enumerate(results) if i not in bad_at]
            assert len(set(ids)) == n_good

            after = await counts(graph_client, tenant)
            # every good fact written once, each with its vector; its subject new (one entity each,
            # plus the few cities and devices); nothing of a bad one
            assert after["facts"] - before["facts"] == n_good
            assert after["phrased"] - before["phrased"] == n_good
            for name in BAD_NAMES:
                assert (await graph_client.run(tenant, ABOUT, {"key": name}))[0]["n"] == 0, name
            new_entities = after["entities"] - before["entities"]
            assert n_good < new_entities <= n_good + len(CITIES) + len(DEVICES)

            # read back through the API, with the writer and its sub-label
            for i in (0, 1, 9_998):
                r = await c.get(f"/v1/tenants/{tenant}/facts", params={"subject": f"bulk customer {i:05d}"},
                                headers=headers)
                [f] = r.json()["facts"]
                assert f["object"] == items[i]["object"] and f["asserted_by"] == "api"
                assert f["label"] == items[i].get("agent")
            r = await c.get(f"/v1/tenants/{tenant}/facts", params={"subject": "kept customer"}, headers=headers)
            assert [f["object"] for f in r.json()["facts"]] == ["pune"]

            # the same batch again: every good fact corroborates, nothing new is written
            r = await c.post(f"/v1/tenants/{tenant}/facts/batch", json={"facts": items}, headers=headers, timeout=600)
            assert r.status_code == 200, r.text
            again = r.json()["results"]
            for i, res in enumerate(again):
                if i in bad_at:
                    assert res["error"]["code"] == bad_at[i]
                else:
                    assert (res["outcome"], res["fact_id"]) == ("corroborated", results[i]["fact_id"]), (i, res)
            assert await counts(graph_client, tenant) == after
    finally:
        await app.state.deps.aclose()


async def test_facts_of_one_slot_in_one_batch_go_in_order(client, tenant, auth):
    items = [
        {"subject": "meera", "predicate": "lives_in", "object": "pune", "valid_from": "2026-01-01T00:00:00+00:00"},
        {"subject": "meera", "predicate": "lives_in", "object": "pune"},
        {"subject": "meera", "predicate": "lives_in", "object": "goa", "valid_from": "2026-03-01T00:00:00+00:00"},
    ]
    r = await client.post(f"/v1/tenants/{tenant}/facts/batch", json={"facts": items}, headers=auth)
    assert r.status_code == 200, r.text
    first, second, third = r.json()["results"]
    assert first["outcome"] == "created"
    assert (second["outcome"], second["fact_id"]) == ("corroborated", first["fact_id"])
    assert third["outcome"] == "superseded" and third["superseded"] == [first["fact_id"]]


async def test_a_batch_is_announced_on_the_live_feed(client, tenant, auth, stream_redis):
    items = [{"subject": "zoya", "predicate": "lives_in", "object": "pune"},
             {"subject": "zoya", "predicate": "phone", "object": "call me maybe"},
             {"subject": "zoya", "predicate": "owns_device", "object": "kindle"}]
    r = await client.post(f"/v1/tenants/{tenant}/facts/batch", json={"facts": items}, headers=auth)
    assert r.status_code == 200, r.text
    results = r.json()["results"]
    assert "error" in results[1]
    seen = await published(stream_redis, FactChanged.stream, tenant)
    assert sorted((n.id, n.change, n.actor) for n in seen) == sorted(
        (res["fact_id"], "created", "api") for res in (results[0], results[2]))


async def test_over_the_batch_limit_is_413_and_writes_nothing(client, tenant, auth, graph_client):
    items = [good(i) for i in range(1_001)]  # the default limit is 1,000
    r = await client.post(f"/v1/tenants/{tenant}/facts/batch", json={"facts": items}, headers=auth)
    body = assert_error(r, 413, "batch_too_large")
    assert "1000" in body["error"]["message"]
    assert await counts(graph_client, tenant) == {"facts": 0, "entities": 0, "phrased": 0}


async def test_the_batch_limit_is_per_tenant(client, tenant, auth, graph_client):
    other = tenant + "-o"
    other_key = await create_tenant(client, other)
    r = await client.put(f"/v1/tenants/{tenant}/limits", json={"batch_max_facts": 3}, headers=ADMIN)
    assert r.status_code == 200, r.text
    items = [good(i) for i in range(4)]
    assert_error(await client.post(f"/v1/tenants/{tenant}/facts/batch", json={"facts": items}, headers=auth),
                 413, "batch_too_large")
    assert (await client.post(f"/v1/tenants/{tenant}/facts/batch", json={"facts": items[:3]},
                              headers=auth)).status_code == 200
    r = await client.post(f"/v1/tenants/{other}/facts/batch", json={"facts": items}, headers=other_key)
    assert r.status_code == 200 and r.json()["written"] == 4


@pytest.mark.parametrize("payload", [{"facts": []}, {"facts": "lives_in"}, {}, {"facts": [], "more": 1}, []])
async def test_a_body_that_is_not_a_batch_is_422(client, tenant, auth, graph_client, payload):
    r = await client.post(f"/v1/tenants/{tenant}/facts/batch", json=payload, headers=auth)
    assert_error(r, 422, "validation_error")
    assert await counts(graph_client, tenant) == {"facts": 0, "entities": 0, "phrased": 0}
