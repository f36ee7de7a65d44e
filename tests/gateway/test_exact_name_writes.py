"""A write by a customer's exact name lands on that customer (`matched`), a name two customers hold is
409 `ambiguous` with the candidates and writes nothing, and any other name is a subject of its own:
the contract's exact-name rule, over REST and the tools."""

from __future__ import annotations

from relay_graph.runtime.queries import Query

from .helpers import assert_error

KAVYA, OTHER_KAVYA, ARJUN = "c-00000000000000b1", "c-00000000000000b2", "c-00000000000000c1"
SUBJECTS = Query("t_exact_subjects", "MATCH (e:Customer) RETURN e.name AS id ORDER BY id", read_only=True)


async def name(client, tenant, auth, customer, full_name):
    r = await client.post(f"/v1/tenants/{tenant}/facts", headers=auth,
                          json={"subject": customer, "predicate": "name", "object": full_name})
    assert r.status_code == 201, r.text


async def test_a_write_by_a_customers_exact_name_lands_on_that_customer(client, tenant, auth, memory):
    await name(client, tenant, auth, KAVYA, "Kavya Reddy")
    r = await client.post(f"/v1/tenants/{tenant}/facts", headers=auth,
                          json={"subject": "kavya  REDDY", "predicate": "lives_in", "object": "pune"})
    assert r.status_code == 201, r.text
    assert r.json()["matched"] == KAVYA
    facts = (await client.get(f"/v1/tenants/{tenant}/facts", params={"subject": KAVYA}, headers=auth)).json()
    assert {(f["predicate"], f["object"]) for f in facts["facts"]} >= {("lives_in", "pune")}
    assert [r["id"] for r in await memory.client.run(tenant, SUBJECTS)] == [KAVYA]  # no second "Kavya Reddy"
    # one letter apart is someone else: a subject of its own, not matched
    r = await client.post(f"/v1/tenants/{tenant}/facts", headers=auth,
                          json={"subject": "Kavya Reddi", "predicate": "lives_in", "object": "mumbai"})
    assert r.status_code == 201 and r.json()["matched"] is None
    assert [f["object"] for f in (await client.get(f"/v1/tenants/{tenant}/facts", headers=auth, params={
        "subject": KAVYA, "predicate": "lives_in"})).json()["facts"]] == ["pune"]
    # a retirement by the name ends her fact
    r = await client.post(f"/v1/tenants/{tenant}/facts/retire", headers=auth,
                          json={"subject": "Kavya Reddy", "predicate": "lives_in"})
    assert r.status_code == 200 and len(r.json()["retired"]) == 1


async def test_a_name_two_customers_hold_is_ambiguous_and_writes_nothing(client, tenant, auth):
    await name(client, tenant, auth, KAVYA, "Kavya Reddy")
    await name(client, tenant, auth, OTHER_KAVYA, "Kavya Reddy")
    r = await client.post(f"/v1/tenants/{tenant}/facts", headers=auth,
                          json={"subject": "Kavya Reddy", "predicate": "lives_in", "object": "pune"})
    body = assert_error(r, 409, "ambiguous")
    assert {c["id"] for c in body["candidates"]} == {KAVYA, OTHER_KAVYA}
    for who in (KAVYA, OTHER_KAVYA):
        facts = (await client.get(f"/v1/tenants/{tenant}/facts", headers=auth,
                                  params={"subject": who, "predicate": "lives_in"})).json()["facts"]
        assert facts == []


async def test_a_batch_answers_each_subject_by_the_rule(client, tenant, auth):
    await name(client, tenant, auth, KAVYA, "Kavya Reddy")
    await name(client, tenant, auth, OTHER_KAVYA, "Kavya Reddy")
    await name(client, tenant, auth, ARJUN, "Arjun Das")
    r = await client.post(f"/v1/tenants/{tenant}/facts/batch", headers=auth, json={"facts": [
        {"subject": "Arjun Das", "predicate": "lives_in", "object": "delhi"},
        {"subject": "Kavya Reddy", "predicate": "lives_in", "object": "pune"},
        {"subject": "Nobody Yet", "predicate": "lives_in", "object": "goa"}]})
    assert r.status_code == 200, r.text
    arjun, kavya, nobody = r.json()["results"]
    assert arjun["matched"] == ARJUN and nobody["matched"] is None and nobody["outcome"] == "created"
    assert kavya["error"]["code"] == "ambiguous"
    assert r.json()["written"] == 2


async def test_the_tool_follows_the_same_rule(client, tenant, auth):
    await name(client, tenant, auth, ARJUN, "Arjun Das")
    r = await client.post(f"/v1/tenants/{tenant}/tools/remember_fact", headers=auth,
                          json={"subject": "arjun das", "predicate": "phone", "object": "+91 98450 12345"})
    assert r.status_code == 200, r.text
    facts = (await client.get(f"/v1/tenants/{tenant}/facts", headers=auth,
                              params={"subject": ARJUN, "predicate": "phone"})).json()["facts"]
    assert len(facts) == 1
