"""The tool catalogue over plain HTTP: GET /v1/tenants/{t}/tools lists it with its JSON schemas,
POST /v1/tenants/{t}/tools/{name} calls one with its arguments as the body."""

from __future__ import annotations

from relay_graph.tools import TOOLS

from .helpers import ADMIN, assert_error, create_agent, create_tenant


async def test_list_tools_gives_every_tool_with_its_schemas(client, tenant, auth):
    r = await client.get(f"/v1/tenants/{tenant}/tools", headers=auth)
    assert r.status_code == 200, r.text
    listed = {t["name"]: t for t in r.json()["tools"]}
    assert set(listed) == set(TOOLS)
    assert listed["facts_at"]["input_schema"] == TOOLS["facts_at"].input_schema()
    assert listed["remember_fact"]["writes"] is True and listed["facts_at"]["writes"] is False


async def test_call_a_tool_as_a_named_agent_and_read_it_back(client, tenant, auth):
    crm = await create_agent(client, tenant, auth, "crm-sync")
    r = await client.post(f"/v1/tenants/{tenant}/tools/remember_fact", params={"agent": "eu-batch"}, headers=crm,
                          json={"subject": "pia", "predicate": "lives_in", "object": "pune",
                                "valid_from": "2026-01-05T10:00:00+05:30"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["tool"] == "remember_fact" and body["shape"] == "answered"
    assert body["data"]["asserted_by"] == "crm-sync" and body["data"]["outcome"] == "created"

    r = await client.post(f"/v1/tenants/{tenant}/tools/facts_at", headers=auth, json={"subject": "PIA"})
    [f] = r.json()["data"]["facts"]
    assert (f["object"], f["asserted_by"], f["valid_from"]) == ("pune", "crm-sync", "2026-01-05T04:30:00+00:00")
    assert f["label"] == "eu-batch"  # `agent` is only a sub-label under the key's agent
    assert r.json()["how_i_know"][0].startswith(f"fact {f['fact_id']}: pia lives_in = pune")

    r = await client.post(f"/v1/tenants/{tenant}/tools/recall_customer", headers=auth, json={"customer": "nobody"})
    assert r.status_code == 200
    assert (r.json()["shape"], r.json()["data"], r.json()["unknown"]) == (
        "unknown_name", None, [{"argument": "customer", "kind": "customer", "name": "nobody"}])


async def test_unknown_tools_and_bad_arguments_are_refused_with_the_error_shape(client, tenant, auth):
    assert_error(await client.post(f"/v1/tenants/{tenant}/tools/drop_all", headers=auth, json={}), 404,
                 "unknown_tool")
    r = await client.post(f"/v1/tenants/{tenant}/tools/facts_at", headers=auth,
                          json={"subject": "pia", "predicate": "Lives At"})
    assert "predicate: String should match pattern" in assert_error(r, 422, "invalid_arguments")["error"]["message"]
    # the tenant's vocabulary answers a predicate it does not have, saying how to register it
    r = await client.post(f"/v1/tenants/{tenant}/tools/remember_fact", headers=auth,
                          json={"subject": "pia", "predicate": "lives_at", "object": "goa"})
    body = assert_error(r, 422, "unknown_predicate")
    assert "unknown predicate 'lives_at'" in body["error"]["message"]
    assert "PUT /v1/tenants/{t}/predicates/lives_at" in body["error"]["message"]
    # the writer is the caller, never an argument
    r = await client.post(f"/v1/tenants/{tenant}/tools/remember_fact", headers=auth,
                          json={"subject": "pia", "predicate": "lives_in", "object": "goa", "agent": "intake"})
    assert "agent: Extra inputs are not permitted" in assert_error(r, 422, "invalid_arguments")["error"]["message"]
    assert_error(await client.post(f"/v1/tenants/{tenant}/tools/facts_at", headers=auth, json=["pia"]), 422,
                 "validation_error")


async def test_arguments_have_the_json_types_their_schema_states(client, tenant, auth):
    # Strict: a boolean is not a number, a number is not a boolean, a string of digits is not a number.
    for name, args, where in (("affected_by", {"node": "pune-olt-1", "depth": False}, "depth"),
                              ("affected_by", {"node": "pune-olt-1", "depth": "2"}, "depth"),
                              ("capacity", {"node": "pune-olt-1", "nominal": 0}, "nominal"),
                              ("capacity", {"node": "pune-olt-1", "nominal": "true"}, "nominal"),
                              ("tickets", {"open_only": 1}, "open_only"),
                              ("recall", {"q": "router", "k": True}, "k")):
        r = await client.post(f"/v1/tenants/{tenant}/tools/{name}", headers=auth, json=args)
        assert f"{where}: " in assert_error(r, 422, "invalid_arguments")["error"]["message"], (name, args)
    # A body, when there is one, is an object: `null` is not "no arguments".
    r = await client.post(f"/v1/tenants/{tenant}/tools/tickets", headers={**auth, "Content-Type": "application/json"},
                          content=b"null")
    assert_error(r, 422, "validation_error")
    # What JSON can only send as a string is still read from it: a time, an enum's value.
    r = await client.post(f"/v1/tenants/{tenant}/tools/remember_fact", headers=auth, json={
        "subject": "pia", "predicate": "lives_in", "object": "pune", "valid_from": "2026-01-01T00:00:00+00:00"})
    assert r.status_code == 200, r.text
    r = await client.post(f"/v1/tenants/{tenant}/tools/facts_at", headers=auth, json={
        "subject": "pia", "as_of": "2150-01-05T10:00:00+05:30", "clock": "belief"})
    assert r.status_code == 200, r.text
    assert (r.json()["data"]["clock"], r.json()["data"]["as_of"]) == ("belief", "2150-01-05T10:00:00+05:30")
    assert [f["object"] for f in r.json()["data"]["facts"]] == ["pune"]
    assert (await client.post(f"/v1/tenants/{tenant}/tools/tickets", headers=auth)).status_code == 200  # no body
    # A whole number is an integer in JSON Schema however it is written (5.0); 5.5 is not.
    r = await client.post(f"/v1/tenants/{tenant}/tools/tickets", headers=auth, json={"open_only": True, "limit": 5.0})
    assert r.status_code == 200, r.text
    r = await client.post(f"/v1/tenants/{tenant}/tools/tickets", headers=auth, json={"limit": 5.5})
    assert "limit: " in assert_error(r, 422, "invalid_arguments")["error"]["message"]


async def test_tools_need_the_tenants_own_key(client, tenant, auth):
    assert_error(await client.get(f"/v1/tenants/{tenant}/tools"), 401, "unauthorized")
    other = await create_tenant(client, tenant + "-x")
    assert_error(await client.get(f"/v1/tenants/{tenant}/tools", headers=other), 403, "forbidden")
    assert_error(await client.post(f"/v1/tenants/{tenant}/tools/facts_at", headers=other, json={"subject": "pia"}),
                 403, "forbidden")
    assert_error(await client.get(f"/v1/tenants/{tenant}/tools", headers=ADMIN), 403, "forbidden")


async def test_mcp_answers_not_ready_until_the_lifespan_runs_it(client, auth):
    # the in-process app is called without its lifespan; the real process is tested in test_mcp.py
    assert_error(await client.post("/mcp", headers=auth, json={}), 503, "not_ready")
