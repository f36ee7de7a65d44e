"""Real conversation text goes in and comes back byte for byte; what cannot be stored (NUL, unpaired
surrogates), a control character in an identifier and a time outside the documented years are
refused with 422 naming the field and write nothing; the OpenAPI states those same rules."""

from __future__ import annotations

import json

import pytest

from relay_graph.memory.inputs import IDENTIFIER_PATTERN, NAME_PATTERN, TEXT_PATTERN, TIME_PATTERN
from tests import reads

from .helpers import assert_error

# A LoCoMo-like turn: line breaks, a tab, a family emoji made with zero-width joiners, a
# right-to-left mark and Arabic, a flag (regional indicators), a variation selector.
TURN = ("Hey Mel!\nGuess what \u2014 I went to the support group yesterday.\n\n"
        "\tIt was powerful \U0001F469\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466 "
        "\u200Fمرحبا\u200E and \U0001F3F3\uFE0F\u200D\U0001F308 \U0001F1EE\U0001F1F3\r\nbye ")
AT = "2023-05-08T13:56:00+00:00"


def _raw(body: dict) -> bytes:
    """JSON with every non-ASCII character escaped (what many clients send)."""
    return json.dumps(body, ensure_ascii=True).encode()


async def test_a_locomo_turn_is_stored_and_recalled_byte_for_byte(client, tenant, auth, memory):
    turn = {"session": "conv-26:session_1", "speaker": "Caroline", "text": TURN, "at": AT, "id": "D1:3"}
    r = await client.post(f"/v1/tenants/{tenant}/episodes", json={"episodes": [turn]}, headers=auth)
    assert r.status_code == 201, r.text
    assert r.json()["episode_ids"] == ["D1:3"]
    stored = await reads.get_episode(memory.client, tenant, "D1:3")
    assert stored["text"].encode() == TURN.encode()

    r = await client.get(f"/v1/tenants/{tenant}/recall", headers=auth,
                         params={"q": "support group yesterday", "session": "conv-26:session_1"})
    assert r.status_code == 200, r.text
    [item] = [i for i in r.json()["items"] if i["episode_id"] == "D1:3"]
    assert item["text"].encode() == TURN.encode()
    assert r.content.decode().count("\\u200d") + r.content.decode().count("\u200d") >= 3  # joiners kept


async def test_the_text_a_fact_came_from_reads_back_as_written(client, tenant, auth):
    turn = {"session": "conv-26:session_1", "speaker": "Caroline", "text": TURN, "at": AT, "id": "D1:3"}
    assert (await client.post(f"/v1/tenants/{tenant}/episodes", json={"episodes": [turn]},
                              headers=auth)).status_code == 201
    r = await client.post(f"/v1/tenants/{tenant}/facts", headers=auth, json={
        "subject": "caroline", "predicate": "lives_in", "object": "pune", "agent": "intake", "source": "D1:3"})
    assert r.status_code == 201, r.text
    r = await client.post(f"/v1/tenants/{tenant}/tools/explain", headers=auth, json={"fact_id": r.json()["fact_id"]})
    assert r.status_code == 200, r.text
    [explained] = r.json()["data"]["explanations"]
    assert explained["fact"]["source"] == "D1:3"
    [episode] = explained["derived_from"]
    assert episode["text"].encode() == TURN.encode()


async def test_a_chat_turn_keeps_its_text(client, tenant, auth, memory):
    r = await client.post(f"/v1/tenants/{tenant}/chat", json={"customer": "Caroline", "text": TURN}, headers=auth)
    assert r.status_code == 202, r.text
    stored = await reads.get_episode(memory.client, tenant, r.json()["episode_id"])
    assert stored["text"].encode() == TURN.encode()


EP = {"session": "s1", "speaker": "alice", "text": "hello", "at": AT}


@pytest.mark.parametrize("change, field", [
    ({"session": "s\x001"}, "session"),
    ({"id": "ep\x00"}, "id"),
    ({"reply_to": "t-1\x00"}, "reply_to"),
    ({"ticket_id": "T-\x00"}, "ticket_id"),
    ({"id": "ep\x851"}, "id"),  # a C1 control: refused, never dropped (ep1 and ep\x851 stay apart)
    ({"id": "ep 1\n"}, "id"),
    ({"session": " s1"}, "session"),
    ({"text": "hi\x00there"}, "text"),
    ({"text": " \n\t "}, "text"),
    ({"speaker": "ali\x00ce"}, "speaker"),
    ({"at": "9999-12-31T23:00:00-14:00"}, "at"),
    ({"at": "1899-12-31T23:00:00+00:00"}, "at"),
    ({"at": 1_700_000_000}, "at"),  # a number is not an ISO 8601 time
])
async def test_bad_episode_fields_are_422_naming_the_field_and_write_nothing(client, tenant, auth, memory,
                                                                           change, field):
    r = await client.post(f"/v1/tenants/{tenant}/episodes", json={"episodes": [EP, {**EP, **change}]}, headers=auth)
    body = assert_error(r, 422, "validation_error")
    assert f"body.episodes.1.{field}" in body["error"]["message"], body
    assert not await memory.client.graph_exists(tenant)


async def test_an_unpaired_surrogate_is_422_naming_the_field(client, tenant, auth, memory):
    body = _raw({"episodes": [{**EP, "text": "broken \ud83d here"}]})
    r = await client.post(f"/v1/tenants/{tenant}/episodes", content=body,
                          headers={**auth, "content-type": "application/json"})
    message = assert_error(r, 422, "validation_error")["error"]["message"]
    assert "body.episodes.0.text" in message and "unicode" in message
    r = await client.post(f"/v1/tenants/{tenant}/chat", content=_raw({"customer": "x", "text": "a\udc00"}),
                          headers={**auth, "content-type": "application/json"})
    assert "body.text" in assert_error(r, 422, "validation_error")["error"]["message"]
    assert not await memory.client.graph_exists(tenant)


@pytest.mark.parametrize("method, path, kwargs, where", [
    ("get", "recall", {"params": {"q": "x", "session": "s\x00"}}, "query.session"),
    ("get", "recall", {"params": {"q": "x\x00"}}, "query.q"),
    ("get", "facts", {"params": {"subject": "ali\x00ce"}}, "query.subject"),
    ("get", "facts", {"params": {"subject": "alice", "as_of": "1700000000"}}, "query.as_of"),
    ("get", "facts", {"params": {"subject": "alice", "as_of": "9999-12-31T23:00:00-14:00"}}, "query.as_of"),
    ("post", "chat", {"json": {"customer": "alice", "text": "hi", "session": "s\x00"}}, "body.session"),
    ("post", "chat", {"json": {"customer": "alice", "text": "hi\x00"}}, "body.text"),
    ("post", "conflicts/c%00/settle", {"json": {"fact_id": "f", "by": "maya"}}, "path.id"),
    ("post", "conflicts/c-1/settle", {"json": {"fact_id": "f\x00", "by": "maya"}}, "body.fact_id"),
    ("get", "tickets/T-%01", {}, "path.id"),
    ("post", "tools/explain", {"json": {"fact_id": "f\x00"}}, "fact_id"),
    ("post", "world", {"json": {"seed": True}}, "body.seed"),
    ("post", "world", {"json": {"customers": [{"customer": "a", "address": "x" * 201}]}}, "address"),
    ("post", "lab/faults", {"json": {"seed": False}}, "body.seed"),
])
async def test_bad_identifiers_and_values_are_422_not_500(client, tenant, auth, method, path, kwargs, where):
    r = await client.request(method, f"/v1/tenants/{tenant}/{path}", headers=auth, **kwargs)
    assert r.status_code == 422, r.text
    assert where in r.json()["error"]["message"], r.text


async def test_a_fact_past_the_years_is_refused_and_the_subject_still_reads(client, tenant, auth):
    url = f"/v1/tenants/{tenant}/facts"
    fact = {"subject": "alice rao", "predicate": "lives_in", "object": "pune", "agent": "intake"}
    for bad in ("9999-12-31T23:00:00-14:00", "0001-01-01T00:00:00+14:00", "2200-01-01T00:00:00+00:00"):
        r = await client.post(url, json={**fact, "valid_from": bad}, headers=auth)
        assert "body.valid_from" in assert_error(r, 422, "validation_error")["error"]["message"]
        r = await client.post(f"{url}/retire", json={**fact, "valid_to": bad}, headers=auth)
        assert_error(r, 422, "validation_error")
    # The ends of the range, with the widest offsets, are stored and read back as written.
    for i, edge in enumerate(("1900-01-01T00:00:00+14:00", "2199-12-31T23:59:59.999000-14:00")):
        r = await client.post(url, json={**fact, "subject": f"edge {i}", "valid_from": edge}, headers=auth)
        assert r.status_code == 201, r.text
        r = await client.get(url, params={"subject": f"edge {i}", "as_of": edge}, headers=auth)
        assert r.status_code == 200, r.text
        [f] = r.json()["facts"]
        from datetime import datetime
        assert datetime.fromisoformat(f["valid_from"]) == datetime.fromisoformat(edge)
    r = await client.get(url, params={"subject": "alice rao"}, headers=auth)
    assert r.status_code == 200 and r.json()["facts"] == []


async def test_recall_of_today_works_next_to_a_turn_at_the_last_year(client, tenant, auth):
    turns = [{**EP, "id": "late", "text": "we will meet at the lake", "at": "2199-12-31T23:59:00-14:00"},
             {**EP, "id": "now", "text": "we met at the lake today", "at": AT}]
    r = await client.post(f"/v1/tenants/{tenant}/episodes", json={"episodes": turns}, headers=auth)
    assert r.status_code == 201, r.text
    r = await client.get(f"/v1/tenants/{tenant}/recall", params={"q": "what happened at the lake today?"},
                         headers=auth)
    assert r.status_code == 200, r.text


async def test_the_openapi_states_the_same_rules(client):
    doc = (await client.get("/openapi.json")).json()
    schemas = doc["components"]["schemas"]

    def prop(model, name):
        p = schemas[model]["properties"][name]
        return p if "anyOf" not in p else next(x for x in p["anyOf"] if x.get("type") != "null")

    assert prop("EpisodeBody", "session")["pattern"] == IDENTIFIER_PATTERN
    assert prop("EpisodeBody", "id")["pattern"] == IDENTIFIER_PATTERN
    assert prop("EpisodeBody", "reply_to")["pattern"] == IDENTIFIER_PATTERN
    assert prop("EpisodeBody", "text")["pattern"] == TEXT_PATTERN
    assert prop("EpisodeBody", "at")["pattern"] == TIME_PATTERN
    assert prop("ChatBody", "text")["pattern"] == TEXT_PATTERN
    assert prop("SettleBody", "fact_id")["pattern"] == IDENTIFIER_PATTERN
    address = prop("WorldCustomer", "address")
    assert (address["maxLength"], address["pattern"]) == (200, NAME_PATTERN)
    seed_types = {t.get("type") for t in schemas["WorldBody"]["properties"]["seed"]["anyOf"]}
    assert seed_types == {"integer", "string", "null"}  # not boolean
    as_of = next(p for p in doc["paths"]["/v1/tenants/{t}/facts"]["get"]["parameters"] if p["name"] == "as_of")
    as_of_schema = next(x for x in as_of["schema"]["anyOf"] if x.get("type") != "null")
    assert (as_of_schema["format"], as_of_schema["pattern"]) == ("date-time", TIME_PATTERN)
    # every operation that takes a JSON body documents the 400 for a body that is not JSON
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            if "requestBody" in op:
                assert "400" in op["responses"], (method, path)
