"""Agents have identities: agent keys per tenant, the key's agent is the writer (a request's
`agent` only a sub-label), the desk's agents are reserved, and trust cannot be borrowed."""

from __future__ import annotations

import pytest

from relay_graph.memory import facts
from relay_graph.memory.models import FactInput
from relay_graph.runtime.queries import Query

from .helpers import ADMIN, assert_error, bearer, create_agent, create_tenant

WRITERS = Query("t_agents_writers", "MATCH (a:Agent)-[:WROTE]->(:Episode) RETURN collect(DISTINCT a.name) AS names",
                read_only=True)
DESK = ["intake", "resolver", "netops", "gateway", "simulator"]


async def write(client, tenant, headers, **body):
    r = await client.post(f"/v1/tenants/{tenant}/facts", json=body, headers=headers)
    assert r.status_code == 201, r.text
    return r.json()


async def current(client, tenant, headers, subject):
    r = await client.get(f"/v1/tenants/{tenant}/facts", params={"subject": subject}, headers=headers)
    assert r.status_code == 200, r.text
    return r.json()["facts"]


async def test_an_agent_key_is_shown_once_and_names_its_agent(client, tenant, auth):
    planner = await create_agent(client, tenant, auth, "planner")
    assert planner != auth
    assert_error(await client.post(f"/v1/tenants/{tenant}/agents", json={"agent": "planner"}, headers=auth),
                 409, "already_exists")
    r = await client.get(f"/v1/tenants/{tenant}/agents", headers=auth)
    assert r.status_code == 200 and r.json() == {"agents": ["planner"]}
    await write(client, tenant, planner, subject="asha rao", predicate="lives_in", object="pune")
    [f] = await current(client, tenant, auth, "asha rao")
    assert (f["asserted_by"], f["label"]) == ("planner", None)


@pytest.mark.parametrize("name", DESK + ["api", "net-ops", "re_solver", "in.take", "a-p-i"])
async def test_the_desks_agents_and_api_are_reserved(client, tenant, auth, name):
    r = await client.post(f"/v1/tenants/{tenant}/agents", json={"agent": name}, headers=auth)
    assert_error(r, 403, "reserved_agent")
    assert (await client.get(f"/v1/tenants/{tenant}/agents", headers=auth)).json() == {"agents": []}


@pytest.mark.parametrize("name", ["Night Shift", "mcp:claude", "planner/night", "", "x" * 49,
                                  "resolver.", "api-", "intake_", ".resolver", "planner."])
async def test_an_agent_id_that_is_not_an_id_is_422(client, tenant, auth, name):
    assert_error(await client.post(f"/v1/tenants/{tenant}/agents", json={"agent": name}, headers=auth),
                 422, "validation_error")


async def test_only_the_tenant_key_issues_agent_keys(client, tenant, auth):
    planner = await create_agent(client, tenant, auth, "planner")
    assert_error(await client.post(f"/v1/tenants/{tenant}/agents", json={"agent": "scout"}, headers=planner),
                 403, "forbidden")
    assert_error(await client.post(f"/v1/tenants/{tenant}/agents", json={"agent": "scout"}, headers=ADMIN),
                 403, "forbidden")
    assert (await client.get(f"/v1/tenants/{tenant}/agents", headers=auth)).json() == {"agents": ["planner"]}


async def test_a_tenant_key_cannot_write_as_a_desk_agent(client, tenant, auth, graph_client):
    for name in DESK:
        res = await write(client, tenant, auth, subject=f"{name} customer", predicate="lives_in", object="pune",
                          agent=name)
        [f] = await current(client, tenant, auth, f"{name} customer")
        # the writer is the key's (`api`); the name given is only a label under it
        assert (f["fact_id"], f["asserted_by"], f["label"]) == (res["fact_id"], "api", name)
    r = await client.post(f"/v1/tenants/{tenant}/tools/remember_fact", params={"agent": "resolver"}, headers=auth,
                          json={"subject": "tool customer", "predicate": "lives_in", "object": "pune"})
    assert r.status_code == 200 and r.json()["data"]["asserted_by"] == "api"
    r = await client.post(f"/v1/tenants/{tenant}/episodes", headers=auth, json={"episodes": [
        {"session": "s1", "speaker": "ops", "text": "note", "at": "2026-09-05T10:00:00+00:00", "agent": "intake"}]})
    assert r.status_code == 201, r.text
    assert (await graph_client.run(tenant, WRITERS, {}))[0]["names"] == ["api"]


async def test_an_agent_key_cannot_write_as_another_agent(client, tenant, auth):
    planner = await create_agent(client, tenant, auth, "planner")
    await create_agent(client, tenant, auth, "scout")
    for other in ("scout", "resolver", "api"):
        await write(client, tenant, planner, subject=f"c {other}", predicate="lives_in", object="goa", agent=other)
        [f] = await current(client, tenant, auth, f"c {other}")
        assert (f["asserted_by"], f["label"]) == ("planner", other)
    # naming itself is no label at all; a sub-label of its own is kept
    await write(client, tenant, planner, subject="c self", predicate="lives_in", object="goa", agent="planner")
    await write(client, tenant, planner, subject="c night", predicate="lives_in", object="goa", agent="night-shift")
    assert [(f["asserted_by"], f["label"]) for f in await current(client, tenant, auth, "c self")] == [("planner", None)]
    assert [(f["asserted_by"], f["label"]) for f in await current(client, tenant, auth, "c night")] == [
        ("planner", "night-shift")]


async def test_trust_ranked_claims_cannot_be_moved_by_a_caller_that_is_not_the_agent(client, tenant, auth,
                                                                                     graph_client):
    field_tech = await create_agent(client, tenant, auth, "field-tech")

    # The desk's resolver (its own process, not HTTP) wins a settled conflict: its trust goes up.
    await facts.write_fact(graph_client, tenant, FactInput(subject="kiran", predicate="has_router",
                                                           object="tp-link archer", agent="resolver"))
    lost = await write(client, tenant, field_tech, subject="kiran", predicate="has_router", object="netgear r6")
    assert lost["outcome"] == "conflict"
    r = await client.get(f"/v1/tenants/{tenant}/claims", params={"subject": "kiran", "predicate": "has_router"},
                         headers=auth)
    winner = next(c for c in r.json()["claims"] if c["asserted_by"] == "resolver")
    # an agent cannot settle its own dispute (and raise its own trust): a person settles, with the tenant key
    mine = next(c for c in r.json()["claims"] if c["asserted_by"] == "field-tech")
    r = await client.post(f"/v1/tenants/{tenant}/conflicts/{lost['conflict_id']}/settle", headers=field_tech,
                          json={"fact_id": mine["fact_id"], "by": "field-tech"})
    assert_error(r, 403, "forbidden")
    r = await client.post(f"/v1/tenants/{tenant}/conflicts/{lost['conflict_id']}/settle", headers=auth,
                          json={"fact_id": winner["fact_id"], "by": "maya"})
    assert r.status_code == 200, r.text
    trust = r.json()["trust"]
    assert trust["resolver"] > trust["field-tech"]

    # The resolver's value for another customer. Neither the tenant key nor another agent's key,
    # naming "resolver", can replace it (as the resolver itself would) or rank with its trust.
    await facts.write_fact(graph_client, tenant, FactInput(subject="lata", predicate="has_router",
                                                           object="tp-link archer", agent="resolver"))
    for headers, writer, router in ((auth, "api", "dlink x"), (field_tech, "field-tech", "asus y")):
        res = await write(client, tenant, headers, subject="lata", predicate="has_router", object=router,
                          agent="resolver")
        assert res["outcome"] == "conflict", res
        r = await client.get(f"/v1/tenants/{tenant}/claims", params={"subject": "lata", "predicate": "has_router"},
                             headers=auth)
        ranked = r.json()["claims"]
        assert ranked[0]["asserted_by"] == "resolver" and ranked[0]["object"] == "tp-link archer"
        assert ranked[0]["trust"] == trust["resolver"]
        mine = next(c for c in ranked if c["fact_id"] == res["fact_id"])
        assert mine["asserted_by"] == writer and mine["trust"] < ranked[0]["trust"]
    assert [f["object"] for f in await current(client, tenant, auth, "lata")] == ["tp-link archer"]


async def test_an_agent_key_of_one_tenant_is_403_on_another(client, tenant, auth):
    other = tenant + "-b"
    other_key = await create_tenant(client, other)
    planner = await create_agent(client, tenant, auth, "planner")
    body = {"subject": "asha rao", "predicate": "lives_in", "object": "pune"}
    for method, path, kwargs in (
        ("POST", "/facts", {"json": body}),
        ("POST", "/facts/batch", {"json": {"facts": [body]}}),
        ("GET", "/facts", {"params": {"subject": "asha rao"}}),
        ("POST", "/agents", {"json": {"agent": "scout"}}),
        ("GET", "/limits", {}),
        ("POST", "/tools/remember_fact", {"json": body}),
    ):
        r = await client.request(method, f"/v1/tenants/{other}{path}", headers=planner, **kwargs)
        assert_error(r, 403, "forbidden")
    assert await current(client, other, other_key, "asha rao") == []
    assert (await client.get(f"/v1/tenants/{other}/agents", headers=other_key)).json() == {"agents": []}
    # a key that was never issued is 401
    assert_error(await client.get(f"/v1/tenants/{tenant}/agents", headers=bearer("not-an-agent-key")),
                 401, "unauthorized")


async def test_a_revoked_agent_key_is_401_and_a_new_one_writes_as_the_same_agent(client, tenant, auth):
    planner = await create_agent(client, tenant, auth, "planner")
    await write(client, tenant, planner, subject="old key customer", predicate="lives_in", object="pune")
    assert_error(await client.delete(f"/v1/tenants/{tenant}/agents/planner", headers=planner), 403, "forbidden")
    r = await client.delete(f"/v1/tenants/{tenant}/agents/planner", headers=auth)
    assert r.status_code == 204, r.text
    assert_error(await client.get(f"/v1/tenants/{tenant}/agents", headers=planner), 401, "unauthorized")
    assert_error(await client.delete(f"/v1/tenants/{tenant}/agents/planner", headers=auth), 404, "not_found")
    assert (await client.get(f"/v1/tenants/{tenant}/agents", headers=auth)).json() == {"agents": []}
    renewed = await create_agent(client, tenant, auth, "planner")
    await write(client, tenant, renewed, subject="new key customer", predicate="lives_in", object="pune")
    for subject in ("old key customer", "new key customer"):
        assert [f["asserted_by"] for f in await current(client, tenant, auth, subject)] == ["planner"]
