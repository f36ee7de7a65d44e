"""relay_client against the real gateway process and FalkorDB: the quickstart's verbs end to end,
and the client's models and paths checked against the gateway's own OpenAPI (a route or field the
server changes fails here)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import httpx
import pytest

from relay_client import Admin, AsyncRelay, Relay, errors, models
from relay_client.calls import Call
from relay_client.verbs import AdminVerbs, MemoryVerbs


@pytest.fixture(scope="module")
def openapi(running_gateway) -> dict:
    return httpx.get(f"{running_gateway.url}/openapi.json", timeout=30).json()


@pytest.fixture
def admin(running_gateway):
    with Admin(url=running_gateway.url, key=running_gateway.admin_key) as admin:
        yield admin


@pytest.fixture
def tenant(admin):
    name = f"cl-{uuid.uuid4().hex[:10]}"
    created = admin.create_tenant(name)
    yield name, created.api_key
    admin.delete_tenant(name)


def test_two_agents_share_a_memory_and_a_person_settles_their_disagreement(admin, tenant):
    name, key = tenant
    team = admin.tenant(name, key)  # the tenant's key: a person's, who settles disagreements
    planner = admin.tenant(name, team.create_agent("planner").api_key)
    crm = admin.tenant(name, team.create_agent("crm-bot").api_key)
    assert set(team.agents().agents) >= {"planner", "crm-bot"}
    since = datetime(2026, 3, 1, tzinfo=timezone.utc)
    first = planner.remember("asha rao", "lives_in", "pune", valid_from=since)
    assert first.outcome == "created"
    assert planner.remember("asha rao", "lives_in", "pune").outcome == "corroborated"
    [fact] = crm.facts("asha rao", "lives_in").facts
    assert (fact.object, fact.asserted_by, fact.valid_from) == ("pune", "planner", since)
    other = crm.remember("asha rao", "lives_in", "mumbai")
    assert other.outcome == "conflict" and other.conflict_id
    claims = planner.claims("asha rao", "lives_in")
    assert claims.conflict_id == other.conflict_id
    assert {c.asserted_by for c in claims.claims} == {"planner", "crm-bot"}
    with pytest.raises(errors.Forbidden):  # an agent cannot settle its own disagreement
        planner.settle(other.conflict_id, other.fact_id, by="planner")
    settled = team.settle(other.conflict_id, other.fact_id, by="maya")
    assert settled.winner == other.fact_id and settled.trust["crm-bot"] > settled.trust["planner"]
    assert [f.object for f in planner.facts("asha rao", "lives_in").facts] == ["mumbai"]
    # the world clock: where she lived a week after the first fact
    then = planner.facts("asha rao", "lives_in", as_of=since + timedelta(days=7), clock="world").facts
    assert [f.object for f in then] == ["pune"]
    retired = planner.retire("asha rao", "lives_in")
    assert retired.retired and planner.facts("asha rao", "lives_in").facts == []
    assert {f.state for f in planner.history("asha rao", "lives_in").facts} >= {"superseded", "retired"}
    for client in (team, planner, crm):
        client.close()


def test_turns_are_remembered_and_recalled_with_their_path(admin, tenant):
    name, key = tenant
    at = datetime(2026, 5, 2, 9, 30, tzinfo=timezone.utc)
    with admin.tenant(name, key) as team:
        ids = team.remember_turns([
            {"session": "s1", "speaker": "Mel", "text": "We adopted a puppy named Luna last Saturday!", "at": at},
            {"session": "s1", "speaker": "Jon", "text": "The bakery opens at six on weekdays.",
             "at": at + timedelta(minutes=1)},
        ]).episode_ids
        assert len(ids) == 2
        recalled = team.recall("what is the name of Mel's dog?", k=2)
        assert recalled.items and recalled.items[0].episode_id == ids[0]
        assert recalled.items[0].speaker == "Mel" and recalled.items[0].at == at


def test_a_sessions_turns_are_read_back_in_order_a_page_at_a_time(admin, tenant):
    name, key = tenant
    with admin.tenant(name, key) as team:
        ids = team.remember_turns([{"session": "notes.a", "speaker": "mel", "text": f"note {i}"} for i in range(3)]
                                  ).episode_ids
        first = team.episodes("notes.a", limit=2)
        rest = team.episodes("notes.a", limit=2, after=first.next)
        assert [e.episode_id for e in first.episodes + rest.episodes] == ids and rest.next is None
        assert [e.text for e in team.episodes(session_prefix="notes.").episodes] == ["note 0", "note 1", "note 2"]
        assert first.episodes[0].agent == "api" and first.episodes[0].recorded_at is not None


def test_the_api_errors_come_back_typed(admin, tenant, running_gateway):
    name, key = tenant
    with admin.tenant(name, key) as team:
        with pytest.raises(errors.InvalidRequest) as refused:
            team.remember("asha rao", "no_such_predicate_here", "x")
        assert refused.value.code == "unknown_predicate" and refused.value.status == 422
    with Relay(name, key="not-a-key", url=running_gateway.url) as stranger:
        with pytest.raises(errors.Unauthorized):
            stranger.facts("asha rao")
    other = f"cl-{uuid.uuid4().hex[:10]}"
    other_key = admin.create_tenant(other).api_key
    try:
        with Relay(name, key=other_key, url=running_gateway.url) as wrong_tenant:
            with pytest.raises(errors.Forbidden):
                wrong_tenant.facts("asha rao")
    finally:
        admin.delete_tenant(other)
    with pytest.raises(errors.Conflict):
        admin.create_tenant(name)


def test_a_team_brings_its_own_words(admin, tenant):
    name, key = tenant
    with admin.tenant(name, key) as team:
        with pytest.raises(errors.UnknownPredicate) as refused:
            team.remember("asha rao", "prefers_language", "tamil")
        assert "PUT" in refused.value.message
        defined = team.define_predicate("prefers_language", "single", description="the language to write in")
        assert (defined.name, defined.builtin, defined.cardinality) == ("prefers_language", False, "single")
        assert team.remember("asha rao", "prefers_language", "tamil").outcome == "created"
        assert team.remember("asha rao", "prefers_language", "hindi").outcome == "superseded"
        assert [f.object for f in team.facts("asha rao", "prefers_language").facts] == ["hindi"]
        assert "prefers_language" in {p.name for p in team.predicates().predicates if not p.builtin}
        team.retire_predicate("prefers_language")
        with pytest.raises(errors.UnknownPredicate):
            team.remember("asha rao", "prefers_language", "tamil")


async def test_the_async_client_writes_and_reads(running_gateway, tenant):
    name, key = tenant
    async with AsyncRelay(name, key=key, url=running_gateway.url) as team:
        written = await team.remember("ravi kumar", "prefers_contact", "email")
        assert written.outcome == "created"
        assert [f.object for f in (await team.facts("ravi kumar")).facts] == ["email"]


class _Recorder(MemoryVerbs, AdminVerbs):
    tenant = "acme"

    def _do(self, call: Call) -> Call:
        return call


def _every_call() -> list[Call]:
    r = _Recorder()
    at = datetime(2026, 1, 1, tzinfo=timezone.utc)
    return [r.remember("a", "lives_in", "b"), r.remember_many([{}]), r.retire("a", "lives_in"), r.facts("a"),
            r.history("a"), r.claims("a", "lives_in"), r.settle("c1", "f1", "maya"),
            r.remember_turn("s", "mel", "hi", at), r.recall("q"),
            r.episodes("s", session_prefix="p", after="c", limit=5), r.create_agent("x"), r.agents(),
            r.delete_agent("x"), AdminVerbs.create_tenant(r, "acme"), AdminVerbs.delete_tenant(r, "acme"),
            r.open_task("t", about="a", for_agent="x"), r.hand_off("t1", "x"), r.claim("t1", replica="r"),
            r.done("t1"), r.task("t1"), r.tasks(state="open", for_agent="x"),
            r.define_predicate("speaks", "multi", object="entity", conflict="supersede", description="d"),
            r.predicates(), r.retire_predicate("speaks")]


def test_every_call_the_client_makes_is_an_operation_of_the_gateway(openapi):
    for call in _every_call():
        assert call.path in openapi["paths"], f"the gateway has no {call.path}"
        operation = openapi["paths"][call.path].get(call.method.lower())
        assert operation is not None, f"the gateway has no {call.method} {call.path}"
        known = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
        assert set(call.params or {}) <= known, f"{call.method} {call.path}: {set(call.params or {}) - known}"
        if isinstance(call.body, dict):
            schema = operation["requestBody"]["content"]["application/json"]["schema"]
            ref = next(s["$ref"] for s in schema.get("anyOf", [schema]) if "$ref" in s)  # an optional body: anyOf
            props = openapi["components"]["schemas"][ref.rsplit("/", 1)[1]]["properties"]
            assert set(call.body) <= set(props), f"{call.path} takes no {set(call.body) - set(props)}"


@pytest.mark.parametrize("model", models.ALL, ids=lambda m: m.__name__)
def test_each_client_model_matches_the_gateways_schema(openapi, model):
    schemas = openapi["components"]["schemas"]
    assert model.__schema__ in schemas, f"the gateway publishes no {model.__schema__}"
    server = schemas[model.__schema__]
    fields = {f.alias or n for n, f in model.model_fields.items()}
    assert fields <= set(server["properties"]), f"the gateway's {model.__schema__} has no {fields - set(server['properties'])}"
    # a field the server now requires is one the client must learn to read (or send)
    required = set(server.get("required", [])) - fields
    assert not required, f"the gateway's {model.__schema__} requires {required}, which the client does not know"
