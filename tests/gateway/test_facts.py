"""Facts over HTTP: create, corroborate, supersede, conflict, settle, retire, and both clocks."""

from __future__ import annotations

import asyncio
import re
from datetime import datetime, timedelta, timezone

import pytest

from .helpers import assert_error, create_agent

OFFSET = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?[+-]\d{2}:\d{2}$")
FACT_KEYS = {"fact_id", "subject", "predicate", "object", "valid_from", "valid_to", "recorded_at", "expired_at",
             "asserted_by", "state"}


def fact(subject="alice rao", predicate="lives_in", obj="pune", **more):
    return {"subject": subject, "predicate": predicate, "object": obj, **more}


@pytest.fixture
def api(client, tenant, auth):
    base = f"/v1/tenants/{tenant}"

    keys: dict[str, dict[str, str]] = {}

    class Api:
        async def key(self, agent):
            """The headers of this tenant's agent `agent` (its key issued on first need)."""
            if agent not in keys:
                keys[agent] = await create_agent(client, tenant, auth, agent)
            return keys[agent]

        async def write(self, body, status=201, as_=None):
            headers = await self.key(as_) if as_ else auth
            r = await client.post(f"{base}/facts", json=body, headers=headers)
            assert r.status_code == status, r.text
            return r.json()

        async def facts(self, subject="alice rao", **params):
            r = await client.get(f"{base}/facts", params={"subject": subject, **params}, headers=auth)
            assert r.status_code == 200, r.text
            return r.json()["facts"]

        async def history(self, subject="alice rao", **params):
            r = await client.get(f"{base}/facts/history", params={"subject": subject, **params}, headers=auth)
            assert r.status_code == 200, r.text
            return r.json()["facts"]

        async def claims(self, subject="alice rao", predicate="lives_in"):
            r = await client.get(f"{base}/claims", params={"subject": subject, "predicate": predicate}, headers=auth)
            assert r.status_code == 200, r.text
            return r.json()

        async def settle(self, conflict_id, body):
            return await client.post(f"{base}/conflicts/{conflict_id}/settle", json=body, headers=auth)

        async def retire(self, body):
            return await client.post(f"{base}/facts/retire", json=body, headers=auth)

    return Api()


def assert_times_have_offsets(view: dict) -> None:
    for key in ("valid_from", "valid_to", "recorded_at", "expired_at"):
        if view[key] is not None:
            assert OFFSET.match(view[key]), (key, view[key])


async def test_create_then_read(api):
    res = await api.write(fact(valid_from="2026-09-05T10:00:00+00:00", source="ep-1"))
    assert res["outcome"] == "created"
    assert res["superseded"] == [] and res["conflict_id"] is None
    [view] = await api.facts()
    assert FACT_KEYS <= set(view)
    assert view["fact_id"] == res["fact_id"]
    assert (view["subject"], view["predicate"], view["object"]) == ("alice rao", "lives_in", "pune")
    assert view["state"] == "current" and view["asserted_by"] == "api" and view["label"] is None
    assert view["valid_from"] == "2026-09-05T10:00:00+00:00"
    assert view["valid_to"] is None and view["expired_at"] is None
    assert_times_have_offsets(view)
    # Names are resolved: case and spacing do not make a second subject.
    assert [f["fact_id"] for f in await api.facts(subject="  Alice   RAO ")] == [res["fact_id"]]
    assert await api.facts(predicate="on_plan") == []


async def test_repeat_corroborates(api):
    first = await api.write(fact())
    again = await api.write(fact(), as_="field-tech")
    assert again["outcome"] == "corroborated"
    assert again["fact_id"] == first["fact_id"]
    assert [f["fact_id"] for f in await api.facts()] == [first["fact_id"]]


async def test_a_new_value_supersedes(api):
    old = await api.write(fact(predicate="prefers_contact", obj="email"))
    new = await api.write(fact(predicate="prefers_contact", obj="phone"), as_="field-tech")
    assert new["outcome"] == "superseded"
    assert new["superseded"] == [old["fact_id"]]
    [current] = await api.facts(predicate="prefers_contact")
    assert current["object"] == "phone"
    states = {f["fact_id"]: f for f in await api.history(predicate="prefers_contact")}
    assert states[old["fact_id"]]["state"] == "superseded"
    assert states[old["fact_id"]]["expired_at"] is not None
    assert states[new["fact_id"]]["state"] == "current"


async def test_disagreement_opens_a_conflict_and_settling_closes_it(api):
    a = await api.write(fact(obj="pune"), as_="retail-desk")
    b = await api.write(fact(obj="mumbai"), as_="field-tech")
    assert b["outcome"] == "conflict"
    conflict_id = b["conflict_id"]
    assert conflict_id
    claims = await api.claims()
    assert claims["conflict_id"] == conflict_id
    assert {c["fact_id"] for c in claims["claims"]} == {a["fact_id"], b["fact_id"]}
    for c in claims["claims"]:
        assert set(c) >= {"fact_id", "object", "asserted_by", "trust", "recorded_at"}
        assert OFFSET.match(c["recorded_at"])
    r = await api.settle(conflict_id, {"fact_id": b["fact_id"], "by": "maya"})
    assert r.status_code == 200, r.text
    settled = r.json()
    assert settled["conflict_id"] == conflict_id and settled["winner"] == b["fact_id"]
    assert settled["losers"] == [a["fact_id"]]
    assert settled["trust"]["field-tech"] > settled["trust"]["retail-desk"]
    after = await api.claims()
    assert after["conflict_id"] is None
    assert after["claims"][0]["fact_id"] == b["fact_id"]
    assert [f["object"] for f in await api.facts()] == ["mumbai"]


async def test_settling_with_unknown_ids_changes_nothing(api):
    a = await api.write(fact(obj="pune"), as_="retail-desk")
    b = await api.write(fact(obj="mumbai"), as_="field-tech")
    r = await api.settle("no-such-conflict", {"fact_id": b["fact_id"], "by": "maya"})
    assert_error(r, 404, "not_found")
    r = await api.settle(b["conflict_id"], {"fact_id": "no-such-fact", "by": "maya"})
    assert 400 <= r.status_code < 500 and r.json()["error"]["code"]
    claims = await api.claims()
    assert claims["conflict_id"] == b["conflict_id"]
    assert {c["fact_id"] for c in claims["claims"]} == {a["fact_id"], b["fact_id"]}


async def test_retire(api):
    res = await api.write(fact(valid_from="2026-01-01T00:00:00+00:00"))
    r = await api.retire({"subject": "alice rao", "predicate": "lives_in",
                          "valid_to": "2026-06-01T00:00:00+00:00"})
    assert r.status_code == 200, r.text
    assert r.json() == {"retired": [res["fact_id"]]}
    assert await api.facts() == []
    [old] = await api.history()
    assert old["state"] == "retired"
    assert old["valid_to"] == "2026-06-01T00:00:00+00:00"
    # While it was true, it still reads as true.
    assert [f["object"] for f in await api.facts(as_of="2026-03-01T00:00:00+00:00")] == ["pune"]
    # Retiring what is not there retires nothing.
    r = await api.retire({"subject": "alice rao", "predicate": "lives_in"})
    assert r.status_code == 200 and r.json() == {"retired": []}


async def test_a_retirement_in_the_future_is_refused_and_the_fact_stays_current(api):
    res = await api.write(fact(obj="pune", valid_from="2025-01-01T00:00:00+00:00"))
    ahead = (datetime.now(timezone.utc) + timedelta(days=400)).isoformat()
    r = await api.retire({"subject": "alice rao", "predicate": "lives_in", "valid_to": ahead})
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_value", r.text
    assert "future" in r.json()["error"]["message"]
    assert [(f["fact_id"], f["state"]) for f in await api.facts()] == [(res["fact_id"], "current")]


async def test_as_of_on_both_clocks(api):
    await api.write(fact(obj="pune", valid_from="2026-01-01T00:00:00+00:00"))
    [first] = await api.history()
    learnt = datetime.fromisoformat(first["recorded_at"])
    while datetime.now(timezone.utc) <= learnt:  # the second write is learnt strictly later (ms clock)
        await asyncio.sleep(0.001)
    await api.write(fact(obj="mumbai", valid_from="2026-03-01T05:30:00+05:30"))

    async def objects(**params):
        return [f["object"] for f in await api.facts(**params)]

    # World clock: what was true then.
    assert await objects() == ["mumbai"]
    assert await objects(as_of="2025-12-31T23:59:00+00:00", clock="world") == []
    assert await objects(as_of="2026-02-01T00:00:00+00:00", clock="world") == ["pune"]
    assert await objects(as_of="2026-02-28T23:59:00-01:00", clock="world") == ["mumbai"]  # = 03-01 00:59 UTC
    assert await objects(as_of="2026-04-01T00:00:00+00:00") == ["mumbai"]  # world is the default

    # Belief clock: what was on file then.
    versions = sorted(await api.history(), key=lambda f: f["recorded_at"])
    assert [f["object"] for f in versions] == ["pune", "mumbai"]
    first_learnt, second_learnt = versions[0]["recorded_at"], versions[1]["recorded_at"]
    assert await objects(as_of="2020-01-01T00:00:00+00:00", clock="belief") == []
    assert await objects(as_of=first_learnt, clock="belief") == ["pune"]
    assert await objects(as_of=second_learnt, clock="belief") == ["mumbai"]


async def test_the_reader_recorded_is_the_keys_agent(api, client, tenant):
    written = await api.write(fact())
    planner = await api.key("planner")
    # `agent` in the query no longer names the reader: a caller cannot read as (and so speak for) another agent.
    r = await client.get(f"/v1/tenants/{tenant}/facts", params={"subject": "alice rao", "agent": "netops"},
                         headers=planner)
    assert r.status_code == 200 and len(r.json()["facts"]) == 1
    r = await client.post(f"/v1/tenants/{tenant}/tools/explain", json={"fact_id": written["fact_id"]},
                          headers=planner)
    assert r.status_code == 200, r.text
    [explained] = r.json()["data"]["explanations"]
    readers = {c["agent"] for c in explained["consulted_by"]}
    assert "planner" in readers and "netops" not in readers


async def test_the_issue_13_report_a_write_never_lands_on_a_name_spelt_alike(client, tenant, auth, api):
    asha = await api.write(fact("asha rao", obj="pune"))
    esha = await api.write(fact("esha rao", obj="delhi"))
    assert (asha["outcome"], esha["outcome"], esha["superseded"]) == ("created", "created", [])
    assert [f["object"] for f in await api.facts("asha rao")] == ["pune"]
    assert [f["object"] for f in await api.facts("esha rao")] == ["delhi"]
    base = f"/v1/tenants/{tenant}"
    # a misspelling close to one of them is read as that one, and says so
    r = (await client.get(f"{base}/facts", params={"subject": "ashaa rao"}, headers=auth)).json()
    assert [f["object"] for f in r["facts"]] == ["pune"] and r["ambiguous"] is None
    assert r["matched"] == {"asked": "ashaa rao", "id": "asha rao", "name": "asha rao", "how": "fuzzy"}
    # close to both: nothing is read, the answer asks which
    for path, extra in (("/facts", {}), ("/facts/history", {}), ("/claims", {"predicate": "lives_in"})):
        r = (await client.get(base + path, params={"subject": "isha rao", **extra}, headers=auth)).json()
        assert r["matched"] is None and r["ambiguous"]["message"] == "did you mean asha rao or esha rao?", path
        assert sorted(c["id"] for c in r["ambiguous"]["candidates"]) == ["asha rao", "esha rao"]
    r = (await client.get(f"{base}/recall", params={"q": "where do they live?", "subject": "isha rao"},
                          headers=auth)).json()
    assert r["shape"] == "ambiguous" and len(r["ambiguous"]["candidates"]) == 2


async def test_the_openapi_documents_what_a_read_matched(client):
    spec = (await client.get("/openapi.json")).json()
    schemas = spec["components"]["schemas"]
    assert {"asked", "id", "name", "how"} <= set(schemas["Matched"]["properties"])
    assert {"asked", "message", "candidates"} <= set(schemas["Ambiguous"]["properties"])
    for name in ("FactsResult", "ClaimsView", "RecallResult", "CustomersAnswer"):
        assert {"matched", "ambiguous"} <= set(schemas[name]["properties"]), name
    assert "/v1/tenants/{t}/customers" in spec["paths"]
    chat = schemas["ChatBody"]["properties"]
    assert "customer" not in schemas["ChatBody"].get("required", []) and "name" in chat
    assert "customer" in schemas["ChatAccepted"]["required"]
