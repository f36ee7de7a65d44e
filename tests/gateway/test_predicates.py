"""A tenant's own vocabulary through the API, on the real FalkorDB: PUT/GET/DELETE
/v1/tenants/{t}/predicates, and facts of a tenant's predicates written, superseded, contested,
retired, read on both clocks and recalled like the built-in ones's."""

from __future__ import annotations

from relay_graph.memory.facade import Memory
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.queries import Query

from .helpers import ADMIN, assert_error, assert_needs_own_key, client_for, create_agent, create_tenant, make_app

EDGES = Query("t_predicate_edges", "MATCH (:Entity {uid: $uid})-[e]->(o:Entity) RETURN type(e) AS type, "
                                   "o.name AS name ORDER BY type, name", read_only=True)


async def put(client, tenant, headers, name, **body):
    return await client.put(f"/v1/tenants/{tenant}/predicates/{name}", json=body, headers=headers)


async def write(client, tenant, headers, predicate, obj, subject="alice rao", **extra):
    return await client.post(f"/v1/tenants/{tenant}/facts", headers=headers,
                             json={"subject": subject, "predicate": predicate, "object": obj, **extra})


async def current(client, tenant, headers, predicate, subject="alice rao", **params):
    r = await client.get(f"/v1/tenants/{tenant}/facts", headers=headers,
                         params={"subject": subject, "predicate": predicate, **params})
    assert r.status_code == 200, r.text
    return [f["object"] for f in r.json()["facts"]]


async def test_define_write_supersede_and_read_on_both_clocks(client, tenant, auth):
    r = await put(client, tenant, auth, "prefers_language", cardinality="single",
                  description="the language to write to them in")
    assert r.status_code == 201, r.text
    assert r.json() == {"name": "prefers_language", "builtin": False, "cardinality": "single", "object": "text",
                        "object_type": "Text", "conflict": "supersede", "edge": None,
                        "description": "the language to write to them in", "retired": False}
    again = await put(client, tenant, auth, "prefers_language", cardinality="single",
                      description="the language to write to them in")
    assert again.status_code == 200 and again.json() == r.json()
    changed = await put(client, tenant, auth, "prefers_language", cardinality="single", description="in letters")
    assert changed.status_code == 200 and changed.json()["description"] == "in letters"

    listed = (await client.get(f"/v1/tenants/{tenant}/predicates", headers=auth)).json()
    assert [p["name"] for p in listed["predicates"] if not p["builtin"]] == ["prefers_language"]
    assert {"lives_in", "phone", "has_router"} <= {p["name"] for p in listed["predicates"] if p["builtin"]}
    assert listed["version"] == 2

    first = await write(client, tenant, auth, "prefers_language", "Tamil", valid_from="2026-09-01T00:00:00+00:00")
    assert first.status_code == 201 and first.json()["outcome"] == "created", first.text
    second = await write(client, tenant, auth, "prefers_language", "Hindi", valid_from="2026-09-05T00:00:00+00:00")
    assert second.json()["outcome"] == "superseded" and second.json()["superseded"] == [first.json()["fact_id"]]
    assert await current(client, tenant, auth, "prefers_language") == ["Hindi"]
    assert await current(client, tenant, auth, "prefers_language", as_of="2026-09-03T00:00:00+00:00") == ["Tamil"]
    # on file: nothing before the first write was recorded, Hindi from now on
    assert await current(client, tenant, auth, "prefers_language", as_of="2026-09-03T00:00:00+00:00",
                         clock="belief") == []
    assert await current(client, tenant, auth, "prefers_language", as_of="2199-01-01T00:00:00+00:00",
                         clock="belief") == ["Hindi"]
    history = (await client.get(f"/v1/tenants/{tenant}/facts/history", headers=auth,
                                params={"subject": "alice rao", "predicate": "prefers_language"})).json()["facts"]
    assert [(f["object"], f["state"]) for f in history] == [("Tamil", "superseded"), ("Hindi", "current")]


async def test_multi_values_entity_edges_and_retiring_a_value(client, tenant, auth, graph_client):
    assert (await put(client, tenant, auth, "speaks", cardinality="multi", object="entity")).status_code == 201
    for lang in ("tamil", "english"):
        assert (await write(client, tenant, auth, "speaks", lang)).json()["outcome"] == "created"
    assert sorted(await current(client, tenant, auth, "speaks")) == ["english", "tamil"]
    edges = await graph_client.run(tenant, EDGES, {"uid": "Customer|alice rao"})
    assert [[e["type"], e["name"]] for e in edges] == [["SPEAKS", "english"], ["SPEAKS", "tamil"]]
    r = await client.post(f"/v1/tenants/{tenant}/facts/retire", headers=auth,
                          json={"subject": "alice rao", "predicate": "speaks", "object": "english"})
    assert r.status_code == 200 and len(r.json()["retired"]) == 1
    assert await current(client, tenant, auth, "speaks") == ["tamil"]


async def test_keep_both_opens_a_conflict_between_two_agent_keys(client, tenant, auth):
    scout = await create_agent(client, tenant, auth, "scout")
    analyst = await create_agent(client, tenant, auth, "analyst")
    # an agent key may define a predicate too
    r = await put(client, tenant, scout, "favourite_team", cardinality="single", object="entity", conflict="keep_both")
    assert r.status_code == 201 and r.json()["edge"] == "FAVOURITE_TEAM"
    assert (await write(client, tenant, scout, "favourite_team", "rovers")).json()["outcome"] == "created"
    contested = (await write(client, tenant, analyst, "favourite_team", "united")).json()
    assert contested["outcome"] == "conflict" and contested["conflict_id"]
    claims = (await client.get(f"/v1/tenants/{tenant}/claims", headers=auth,
                               params={"subject": "alice rao", "predicate": "favourite_team"})).json()
    assert sorted(c["asserted_by"] for c in claims["claims"]) == ["analyst", "scout"]
    assert claims["conflict_id"] == contested["conflict_id"]
    r = await client.post(f"/v1/tenants/{tenant}/conflicts/{contested['conflict_id']}/settle", headers=auth,
                          json={"fact_id": contested["fact_id"], "by": "dana"})
    assert r.status_code == 200, r.text
    assert await current(client, tenant, auth, "favourite_team") == ["united"]


async def test_numbers_and_times_are_checked_and_kept_in_one_form(client, tenant, auth):
    assert (await put(client, tenant, auth, "seats", cardinality="single", object="number")).status_code == 201
    assert (await put(client, tenant, auth, "renews_at", cardinality="single", object="time")).status_code == 201
    assert (await write(client, tenant, auth, "seats", "12.50")).status_code == 201
    assert (await write(client, tenant, auth, "seats", "1.25e1")).json()["outcome"] == "corroborated"
    assert (await write(client, tenant, auth, "renews_at", "2026-10-01T12:00:00+05:30")).status_code == 201
    assert await current(client, tenant, auth, "seats") == ["12.5"]
    assert await current(client, tenant, auth, "renews_at") == ["2026-10-01T06:30:00+00:00"]
    for predicate, bad in [("seats", "twelve"), ("renews_at", "next tuesday"), ("renews_at", "2026-10-01T12:00:00")]:
        body = assert_error(await write(client, tenant, auth, predicate, bad), 422, "invalid_value")
        assert bad in body["error"]["message"]
    assert await current(client, tenant, auth, "seats") == ["12.5"]  # nothing changed


async def test_cardinality_cannot_change_while_facts_exist_not_even_through_a_delete(client, tenant, auth):
    await put(client, tenant, auth, "speaks", cardinality="multi")
    await write(client, tenant, auth, "speaks", "tamil")
    await write(client, tenant, auth, "speaks", "hindi", subject="bob shah")
    body = assert_error(await put(client, tenant, auth, "speaks", cardinality="single"), 409, "cardinality_in_use")
    assert "has 2 facts" in body["error"]["message"]
    # object and conflict apply to later writes and may change
    r = await put(client, tenant, auth, "speaks", cardinality="multi", object="entity", conflict="keep_both")
    assert r.status_code == 200 and r.json()["object"] == "entity"
    assert (await client.delete(f"/v1/tenants/{tenant}/predicates/speaks", headers=auth)).status_code == 204
    assert_error(await put(client, tenant, auth, "speaks", cardinality="single"), 409, "cardinality_in_use")
    assert (await put(client, tenant, auth, "speaks", cardinality="multi")).status_code == 201


async def test_delete_retires_without_deleting_facts(client, tenant, auth):
    await put(client, tenant, auth, "prefers_language", cardinality="single")
    written = (await write(client, tenant, auth, "prefers_language", "tamil")).json()
    planner = await create_agent(client, tenant, auth, "planner")
    assert_error(await client.delete(f"/v1/tenants/{tenant}/predicates/prefers_language", headers=planner), 403,
                 "tenant_key_required")
    assert (await client.delete(f"/v1/tenants/{tenant}/predicates/prefers_language", headers=auth)).status_code == 204
    assert (await client.delete(f"/v1/tenants/{tenant}/predicates/prefers_language", headers=auth)).status_code == 204
    body = assert_error(await write(client, tenant, auth, "prefers_language", "hindi"), 422, "unknown_predicate")
    assert "retired" in body["error"]["message"]
    r = await client.get(f"/v1/tenants/{tenant}/facts", headers=auth,
                         params={"subject": "alice rao", "predicate": "prefers_language"})
    assert [f["fact_id"] for f in r.json()["facts"]] == [written["fact_id"]]
    listed = (await client.get(f"/v1/tenants/{tenant}/predicates", headers=auth)).json()["predicates"]
    assert [(p["name"], p["retired"]) for p in listed if not p["builtin"]] == [("prefers_language", True)]
    assert_error(await client.delete(f"/v1/tenants/{tenant}/predicates/never_defined", headers=auth), 404,
                 "not_found")


async def test_built_in_names_and_bad_names_are_refused(client, tenant, auth):
    body = assert_error(await put(client, tenant, auth, "lives_in", cardinality="multi"), 409, "builtin_predicate")
    assert "built-in" in body["error"]["message"]
    assert_error(await client.delete(f"/v1/tenants/{tenant}/predicates/lives_in", headers=auth), 409,
                 "builtin_predicate")
    assert_error(await put(client, tenant, auth, "about", cardinality="multi"), 422, "reserved_predicate_name")
    assert (await put(client, tenant, auth, "Bad-Name", cardinality="multi")).status_code == 422
    assert (await put(client, tenant, auth, "seats", cardinality="several")).status_code == 422
    assert (await put(client, tenant, auth, "seats", object="number")).status_code == 422  # cardinality required
    assert (await put(client, tenant, auth, "seats", cardinality="single", colour="red")).status_code == 422
    listed = (await client.get(f"/v1/tenants/{tenant}/predicates", headers=auth)).json()["predicates"]
    assert [p for p in listed if not p["builtin"]] == []


async def test_only_the_tenants_keys_reach_its_vocabulary(client, tenant, auth):
    await assert_needs_own_key(client, tenant, "PUT", f"/v1/tenants/{tenant}/predicates/seats",
                               json={"cardinality": "single"})
    assert_error(await client.get(f"/v1/tenants/{tenant}/predicates", headers=ADMIN), 403, "forbidden")
    assert_error(await client.get(f"/v1/tenants/{tenant}/predicates"), 401, "unauthorized")
    assert_error(await client.delete(f"/v1/tenants/{tenant}/predicates/seats", headers=ADMIN), 403, "forbidden")


async def test_an_unknown_predicate_says_how_to_register_it(client, tenant, auth):
    body = assert_error(await write(client, tenant, auth, "prefers_language", "tamil"), 422, "unknown_predicate")
    message = body["error"]["message"]
    assert "PUT /v1/tenants/{t}/predicates/prefers_language" in message and '"cardinality"' in message
    batch = await client.post(f"/v1/tenants/{tenant}/facts/batch", headers=auth, json={"facts": [
        {"subject": "alice rao", "predicate": "prefers_language", "object": "tamil"},
        {"subject": "alice rao", "predicate": "lives_in", "object": "pune"}]})
    assert [r.get("error", {}).get("code") for r in batch.json()["results"]] == ["unknown_predicate", None]


async def test_two_tenants_define_one_name_differently(client, tenant, auth):
    other = tenant + "-b"
    other_key = await create_tenant(client, other)
    await put(client, tenant, auth, "rating", cardinality="single", object="number")
    await put(client, other, other_key, "rating", cardinality="multi", object="entity")
    assert_error(await write(client, tenant, auth, "rating", "good"), 422, "invalid_value")
    assert (await write(client, tenant, auth, "rating", "4.0")).status_code == 201
    assert (await write(client, other, other_key, "rating", "good")).status_code == 201
    assert (await write(client, other, other_key, "rating", "kind")).status_code == 201
    assert await current(client, tenant, auth, "rating") == ["4"]
    assert sorted(await current(client, other, other_key, "rating")) == ["good", "kind"]
    theirs = (await client.get(f"/v1/tenants/{other}/predicates", headers=other_key)).json()["predicates"]
    assert [(p["name"], p["cardinality"]) for p in theirs if not p["builtin"]] == [("rating", "multi")]
    third = tenant + "-c"
    third_key = await create_tenant(client, third)
    assert_error(await write(client, third, third_key, "rating", "4"), 422, "unknown_predicate")


async def test_a_second_gateway_sees_a_new_predicate_on_its_next_write(client, tenant, auth, gateway_settings,
                                                                       graph_settings, memory):
    second_client = GraphClient(graph_settings)
    second = make_app(gateway_settings, Memory(second_client, memory.embedder))
    try:
        async with client_for(second) as there:
            assert_error(await write(there, tenant, auth, "prefers_language", "tamil"), 422, "unknown_predicate")
            assert (await put(client, tenant, auth, "prefers_language", cardinality="single")).status_code == 201
            r = await write(there, tenant, auth, "prefers_language", "tamil")
            assert r.status_code == 201 and r.json()["outcome"] == "created", r.text
    finally:
        await second.state.deps.aclose()
        await second_client.close()


async def test_recall_finds_a_fact_of_a_tenant_predicate(client, tenant, auth):
    await put(client, tenant, auth, "prefers_language", cardinality="single")
    await write(client, tenant, auth, "prefers_language", "tamil")
    await write(client, tenant, auth, "lives_in", "pune")
    r = await client.get(f"/v1/tenants/{tenant}/recall", headers=auth,
                         params={"q": "which language does she prefer?", "subject": "alice rao", "k": 3})
    assert r.status_code == 200, r.text
    assert [(f["predicate"], f["object"]) for f in r.json()["facts"]][0] == ("prefers_language", "tamil")


async def test_the_openapi_describes_predicates_as_a_pattern(client):
    spec = (await client.get("/openapi.json")).json()
    schema = spec["components"]["schemas"]["FactBody"]["properties"]["predicate"]
    assert schema["pattern"] == "^[a-z][a-z0-9_]{1,47}$" and "enum" not in schema
    assert "lives_in" in schema["description"] and "PUT /v1/tenants/{t}/predicates/{name}" in schema["description"]
    paths = spec["paths"]["/v1/tenants/{t}/predicates/{name}"]
    assert {"put", "delete"} <= set(paths) and "get" in spec["paths"]["/v1/tenants/{t}/predicates"]
