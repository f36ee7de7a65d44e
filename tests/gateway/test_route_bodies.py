"""The route-body contract: every operation /openapi.json publishes is called with valid inputs on
the real gateway (the app on the session's FalkorDB, its streams and the embedding model), and each
answer's body is validated against the schema /openapi.json gives for that path, method and status.

The operations come from the published document, the inputs from CALLS (one entry per operationId,
in the order they run: the deleting ones last). A route added without an entry fails
`test_every_operation_has_an_example`; a body that is not what its schema says fails
`test_every_route_answers_what_its_schema_says`. Schemathesis (test_schemathesis.py) throws
generated inputs at the same document; this test makes sure each route is reached with inputs
that succeed, which generated ones rarely do past the first 404."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

import pytest
from jsonschema import Draft202012Validator

from .helpers import ADMIN, create_agent, create_tenant
from .test_tickets import fixed_ticket

pytestmark = pytest.mark.falkordb

# Every operation's path template and inputs come from here; `s` is the scenario's state (ids the
# setup and earlier calls made). `auth`: whose key goes in the header: "tenant" (the scenario
# tenant's key), "admin", or None (the customer-site routes: the session cookie is the key).


@dataclass
class Call:
    inputs: Callable[["Scenario"], dict[str, Any]] = lambda s: {}
    auth: str | None = "tenant"
    path: Callable[["Scenario"], dict[str, str]] = lambda s: {"t": s.tenant}


@dataclass
class Scenario:
    tenant: str
    key: dict[str, str]
    spare: str = ""  # a tenant the admin routes may reset and delete
    europe: str = ""
    europe_key: str = ""
    customer: str = "asha verma"
    node: str = ""
    ticket: str = "T-ROUTES1"
    my_ticket: str = "T-ROUTES2"
    conflict: str = ""
    fact: str = ""
    agent: str = "planner"
    session: str = ""
    query: str = ""
    run: str = ""  # a logged run whose parameters were kept
    profile_run: str = ""  # a logged read whose parameters were kept
    answers: dict[str, Any] = field(default_factory=dict)


def _tool(arguments: Callable[[Scenario], dict[str, Any]]) -> Call:
    return Call(lambda s: {"json": arguments(s)})


def _task(s: Scenario) -> str:
    return s.answers["open_task_v1_tenants__t__tasks_post"]["task_id"]


def _tool_task(s: Scenario) -> str:
    return s.answers["tool_open_task"]["data"]["task"]["task_id"]


def _spare(s: Scenario) -> dict[str, str]:
    return {"tenant": s.spare}


CALLS: dict[str, Call] = {
    "healthz_healthz_get": Call(auth=None),
    "readyz_readyz_get": Call(auth=None),
    "asyncapi_asyncapi_json_get": Call(auth=None),
    "create_tenant_v1_tenants_post": Call(lambda s: {"json": {"tenant": f"rb-{uuid.uuid4().hex[:10]}", "world": False}},
                                          auth="admin", path=lambda s: {}),
    "create_agent_v1_tenants__t__agents_post": Call(lambda s: {"json": {"agent": "scribe"}}),
    "list_agents_v1_tenants__t__agents_get": Call(),
    "delete_agent_v1_tenants__t__agents__agent__delete": Call(path=lambda s: {"t": s.tenant, "agent": "scribe"}),
    "get_limits_v1_tenants__t__limits_get": Call(),
    "put_limits_v1_tenants__t__limits_put": Call(lambda s: {"json": {"batch_max_facts": 500}}, auth="admin"),
    "define_predicate_v1_tenants__t__predicates__name__put": Call(
        lambda s: {"json": {"cardinality": "multi", "object": "entity", "description": "languages they speak"}},
        path=lambda s: {"t": s.tenant, "name": "speaks"}),
    "list_predicates_v1_tenants__t__predicates_get": Call(),
    "retire_predicate_v1_tenants__t__predicates__name__delete": Call(path=lambda s: {"t": s.tenant, "name": "speaks"}),
    "write_fact_v1_tenants__t__facts_post": Call(lambda s: {"json": {
        "subject": s.customer, "predicate": "prefers_contact", "object": "email",
        "valid_from": "2025-01-01T00:00:00+00:00"}, "headers": {"Idempotency-Key": "rb-fact-1"}}),
    "write_facts_batch_v1_tenants__t__facts_batch_post": Call(lambda s: {"json": {"facts": [
        {"subject": s.customer, "predicate": "owns_device", "object": "router x1"},
        {"subject": s.customer, "predicate": "no_such_predicate", "object": "x"}]}}),
    "read_facts_v1_tenants__t__facts_get": Call(lambda s: {"params": {"subject": s.customer}}),
    "fact_history_v1_tenants__t__facts_history_get": Call(lambda s: {"params": {"subject": s.customer}}),
    "claims_v1_tenants__t__claims_get": Call(lambda s: {"params": {"subject": s.customer, "predicate": "lives_in"}}),
    "settle_v1_tenants__t__conflicts__id__settle_post": Call(lambda s: {"json": {"fact_id": s.fact, "by": "maya"}},
                                                             path=lambda s: {"t": s.tenant, "id": s.conflict}),
    "retire_fact_v1_tenants__t__facts_retire_post": Call(lambda s: {"json": {
        "subject": s.customer, "predicate": "owns_device", "object": "router x1"}}),
    "write_episodes_v1_tenants__t__episodes_post": Call(lambda s: {"json": {"episodes": [{
        "session": "rb-s1", "speaker": "Asha", "customer": s.customer, "text": "my router blinks red",
        "at": "2025-02-01T10:00:00+00:00"}]}}),
    "list_episodes_v1_tenants__t__episodes_get": Call(lambda s: {"params": {"session": "rb-s1", "limit": 5}}),
    "recall_v1_tenants__t__recall_get": Call(lambda s: {"params": {"q": "router blinks"}}),
    "open_task_v1_tenants__t__tasks_post": Call(lambda s: {"json": {"title": "call back", "about": s.customer}}),
    "list_tasks_v1_tenants__t__tasks_get": Call(lambda s: {"params": {"state": "open"}}),
    "get_task_v1_tenants__t__tasks__id__get": Call(path=lambda s: {"t": s.tenant, "id": _task(s)}),
    "hand_off_v1_tenants__t__tasks__id__handoff_post": Call(lambda s: {"json": {"to": "api"}},
                                                            path=lambda s: {"t": s.tenant, "id": _task(s)}),
    "claim_v1_tenants__t__tasks__id__claim_post": Call(lambda s: {"json": {"replica": "r1"}},
                                                       path=lambda s: {"t": s.tenant, "id": _task(s)}),
    "done_v1_tenants__t__tasks__id__done_post": Call(path=lambda s: {"t": s.tenant, "id": _task(s)}),
    "find_customers_v1_tenants__t__customers_get": Call(lambda s: {"params": {"name": s.customer}}),
    "chat_v1_tenants__t__chat_post": Call(lambda s: {"json": {"name": "Ravi Nair", "text": "my internet is slow"}}),
    "seed_world_v1_tenants__t__world_post": Call(lambda s: {"json": {"region": "india"}}),
    "connect_home_v1_tenants__t__customers__c__line_post": Call(
        lambda s: {"json": {"address": "Koramangala, Bengaluru"}}, path=lambda s: {"t": s.tenant, "c": "ravi nair"}),
    "customer_line_v1_tenants__t__customers__c__line_get": Call(path=lambda s: {"t": s.tenant, "c": s.customer}),
    "affected_v1_tenants__t__network_affected_get": Call(lambda s: {"params": {"node": s.node}}),
    "capacity_v1_tenants__t__network_capacity_get": Call(lambda s: {"params": {"node": s.node}}),
    "critical_v1_tenants__t__network_critical_get": Call(lambda s: {"params": {"top": 3}}),
    "cabling_v1_tenants__t__network_cabling_get": Call(),
    "set_node_status_v1_tenants__t__network_nodes__node_id__status_post": Call(
        lambda s: {"json": {"up": True}}, path=lambda s: {"t": s.tenant, "node_id": s.node}),
    "inject_fault_v1_tenants__t__lab_faults_post": Call(lambda s: {"json": {"kind": "router_frozen",
                                                                            "customer": "ravi nair"}}),
    "scoreboard_v1_tenants__t__lab_scoreboard_get": Call(),
    "list_tickets_v1_tenants__t__tickets_get": Call(),
    "get_ticket_v1_tenants__t__tickets__id__get": Call(path=lambda s: {"t": s.tenant, "id": s.ticket}),
    "confirm_v1_tenants__t__tickets__id__confirm_post": Call(lambda s: {"json": {"fixed": True}},
                                                             path=lambda s: {"t": s.tenant, "id": s.ticket}),
    "move_case_v1_tenants__t__cases_move_post": Call(lambda s: {"json": {
        "customer": s.customer, "to_tenant": s.europe, "to_tenant_key": s.europe_key}}),
    "list_tools_v1_tenants__t__tools_get": Call(),
    "tool_affected_by": _tool(lambda s: {"node": s.node}),
    "tool_ask": _tool(lambda s: {"question": "where does asha live?"}),
    "tool_capacity": _tool(lambda s: {"node": s.node}),
    "tool_claims": _tool(lambda s: {"subject": s.customer, "predicate": "lives_in"}),
    "tool_customer_line": _tool(lambda s: {"customer": s.customer}),
    "tool_explain": _tool(lambda s: {"fact_id": s.fact}),
    "tool_facts_at": _tool(lambda s: {"subject": s.customer}),
    "tool_find_customers": _tool(lambda s: {"name": s.customer}),
    "tool_handoff": _tool(lambda s: {"ticket_id": s.ticket, "to_role": "resolver"}),
    "tool_history": _tool(lambda s: {"subject": s.customer}),
    "tool_past_fixes": _tool(lambda s: {"issue_kind": "no internet"}),
    "tool_recall": _tool(lambda s: {"q": "router"}),
    "tool_recall_customer": _tool(lambda s: {"customer": s.customer}),
    "tool_remember": _tool(lambda s: {"session": "rb-s2", "turns": [{"speaker": "Asha", "text": "thanks"}]}),
    "tool_remember_fact": _tool(lambda s: {"subject": s.customer, "predicate": "phone", "object": "+91 98450 00000"}),
    "tool_remember_facts": _tool(lambda s: {"facts": [{"subject": s.customer, "predicate": "email",
                                                       "object": "asha@example.com"}]}),
    "tool_retire_fact": _tool(lambda s: {"subject": s.customer, "predicate": "phone"}),
    "tool_define_predicate": _tool(lambda s: {"name": "seats", "cardinality": "single", "object": "number"}),
    "tool_list_predicates": _tool(lambda s: {}),
    "tool_tickets": _tool(lambda s: {"customer": s.customer}),
    "tool_who_handled": _tool(lambda s: {"ticket_id": s.ticket}),
    "tool_why_affected": _tool(lambda s: {"customer": s.customer, "node": s.node}),
    "tool_open_task": _tool(lambda s: {"title": "send the form", "for_agent": "api"}),
    "tool_hand_off_task": _tool(lambda s: {"task_id": _tool_task(s), "to": "api"}),
    "tool_claim_task": _tool(lambda s: {"task_id": _tool_task(s)}),
    "tool_complete_task": _tool(lambda s: {"task_id": _task(s)}),
    "tool_list_tasks": _tool(lambda s: {"mine": True}),
    # the customer site: the session cookie (set by POST /me/session) is the key
    "set_site_v1_tenants__t__site_put": Call(lambda s: {"json": {"open": True}}),
    "start_session_v1_tenants__t__me_session_post": Call(auth=None),
    "me_v1_tenants__t__me_get": Call(auth=None),
    "my_chat_v1_tenants__t__me_chat_post": Call(lambda s: {"json": {"text": "is there an outage?"}}, auth=None),
    "my_conversations_v1_tenants__t__me_conversations_get": Call(auth=None),
    "my_conversation_v1_tenants__t__me_conversations__session_id__get": Call(
        auth=None, path=lambda s: {"t": s.tenant, "session_id": s.session}),
    "my_tickets_v1_tenants__t__me_tickets_get": Call(auth=None),
    "my_ticket_v1_tenants__t__me_tickets__id__get": Call(auth=None, path=lambda s: {"t": s.tenant, "id": s.my_ticket}),
    "my_confirm_v1_tenants__t__me_tickets__id__confirm_post": Call(
        lambda s: {"json": {"fixed": False}}, auth=None, path=lambda s: {"t": s.tenant, "id": s.my_ticket}),
    "my_facts_v1_tenants__t__me_facts_get": Call(auth=None),
    "my_line_v1_tenants__t__me_line_get": Call(auth=None),
    "my_plans_v1_tenants__t__me_plans_get": Call(lambda s: {"params": {"country": "IN"}}, auth=None),
    "my_coverage_v1_tenants__t__me_coverage_get": Call(auth=None),
    "start_judge_v1_site_judge_post": Call(auth=None, path=lambda s: {}),
    # the console
    "whoami_v1_console_whoami_get": Call(path=lambda s: {}),
    "graph_v1_console_tenants__t__graph_get": Call(),
    "conflicts_v1_console_tenants__t__conflicts_get": Call(),
    "knowledge_v1_console_tenants__t__knowledge_get": Call(),
    "database_v1_console_tenants__t__database_get": Call(),
    "queries_v1_console_tenants__t__queries_get": Call(),
    "query_plan_v1_console_tenants__t__queries__name__plan_get": Call(
        lambda s: {"params": {"run": s.run}}, path=lambda s: {"t": s.tenant, "name": s.query}),
    "query_profile_v1_console_tenants__t__queries_runs__run__profile_get": Call(
        path=lambda s: {"t": s.tenant, "run": s.profile_run}),
    "map_of_network_v1_console_tenants__t__network_map_get": Call(),
    "crossings_v1_console_tenants__t__tickets__id__crossings_get": Call(path=lambda s: {"t": s.tenant, "id": s.ticket}),
    "search_v1_console_tenants__t__search_get": Call(lambda s: {"params": {"q": s.customer}}),
    "neighbourhood_v1_console_tenants__t__customers__c__neighbourhood_get": Call(
        path=lambda s: {"t": s.tenant, "c": s.customer}),
    "clocks_v1_console_tenants__t__customers__c__clocks_get": Call(path=lambda s: {"t": s.tenant, "c": s.customer}),
    "query_summary_v1_console_tenants__t__queries_summary_get": Call(lambda s: {"params": {"housekeeping": "true"}}),
    "experts_v1_console_tenants__t__tickets__id__experts_get": Call(path=lambda s: {"t": s.tenant, "id": s.ticket}),
    "simulator_v1_console_tenants__t__simulator_get": Call(),
    "compare_systems_v1_console_tenants__t__compare_post": Call(lambda s: {"json": {
        "question": "Where does Asha Verma live?", "customer": s.customer}}),
    "control_simulator_v1_console_tenants__t__simulator_put": Call(lambda s: {"json": {"running": True, "speed": 2}}),
    "simulator_status_v1_console_tenants__t__simulator_status_put": Call(lambda s: {"json": {
        "state": "playing", "round": 0, "sim_hours": 1.5, "speed": 2, "control_version": 1,
        "doing": [{"customer": "c-1", "what": "say: hello", "since_ms": 1}]}}),
    "benchmarks_v1_console_benchmarks_get": Call(path=lambda s: {}),
    "isolation_v1_console_isolation_post": Call(lambda s: {"json": {"tenant": s.tenant, "word": "pomegranate"}},
                                                auth="admin", path=lambda s: {}),
    # the admin routes, on a tenant of their own (the last ones delete it)
    "recent_queries_v1_admin_queries_get": Call(auth="admin", path=lambda s: {}),
    "stats_v1_admin_tenants__tenant__stats_get": Call(auth="admin", path=_spare),
    "create_snapshot_v1_admin_tenants__tenant__snapshots_post": Call(lambda s: {"json": {"name": "rb-snap"}},
                                                                     auth="admin", path=_spare),
    "list_snapshots_v1_admin_tenants__tenant__snapshots_get": Call(auth="admin", path=_spare),
    "restore_snapshot_v1_admin_tenants__tenant__snapshots__name__restore_post": Call(
        auth="admin", path=lambda s: {"tenant": s.spare, "name": "rb-snap"}),
    "forget_v1_admin_tenants__tenant__forget_post": Call(lambda s: {"json": {"customer": "asha verma"}},
                                                         auth="admin", path=_spare),
    "reset_v1_admin_tenants__tenant__reset_post": Call(lambda s: {"json": {"confirm": s.spare}},
                                                       auth="admin", path=_spare),
    "delete_snapshot_v1_admin_tenants__tenant__snapshots__name__delete": Call(
        auth="admin", path=lambda s: {"tenant": s.spare, "name": "rb-snap"}),
    "delete_v1_admin_tenants__tenant__delete_post": Call(lambda s: {"json": {"confirm": s.spare}},
                                                         auth="admin", path=_spare),
}


def _operations(document: dict[str, Any]) -> dict[str, tuple[str, str, dict[str, Any]]]:
    return {op["operationId"]: (method, path, op)
            for path, ops in document["paths"].items() for method, op in ops.items()}


def _validator(document: dict[str, Any], op: dict[str, Any], status: int) -> Draft202012Validator | None:
    """The published schema of this answer (references resolved in the document), or None when
    the operation documents no JSON body for that status."""
    answer = op["responses"].get(str(status))
    assert answer is not None, f"status {status} is not documented for {op['operationId']}"
    schema = answer.get("content", {}).get("application/json", {}).get("schema")
    if schema is None:
        return None
    return Draft202012Validator({**schema, "components": document["components"]},
                                format_checker=Draft202012Validator.FORMAT_CHECKER)


async def test_every_operation_has_an_example(client):
    published = set(_operations((await client.get("/openapi.json")).json()))
    assert published - set(CALLS) == set(), "routes without an example in CALLS"
    assert set(CALLS) - published == set(), "CALLS names operations the gateway does not publish"


async def _setup(client, memory, tenant: str, key: dict[str, str]) -> Scenario:
    s = Scenario(tenant=tenant, key=key)
    s.spare = f"rb-{uuid.uuid4().hex[:10]}"
    spare_key = await create_tenant(client, s.spare)
    r = await client.post(f"/v1/tenants/{s.spare}/facts", headers=spare_key,  # a graph to snapshot
                          json={"subject": "asha verma", "predicate": "lives_in", "object": "Pune"})
    assert r.status_code == 201, r.text
    s.europe = f"rb-{uuid.uuid4().hex[:10]}"
    europe_key = await create_tenant(client, s.europe)
    s.europe_key = europe_key["Authorization"].removeprefix("Bearer ")
    r = await client.post(f"/v1/tenants/{s.europe}/world", json={"region": "europe", "max_cities": 1},
                          headers=europe_key)
    assert r.status_code == 200, r.text
    r = await client.post(f"/v1/tenants/{tenant}/world", json={
        "region": "india", "max_cities": 3,
        "customers": [{"customer": s.customer, "address": "Koramangala, Bengaluru"}]}, headers=key)
    assert r.status_code == 200, r.text
    line = (await client.get(f"/v1/tenants/{tenant}/customers/{s.customer}/line", headers=key)).json()["line"]
    s.node = line[1]["node_id"]
    # a disagreement to settle: two agents' different cities for the customer
    facts = []
    for agent, city in (("retail-desk", "Pune"), ("field-tech", "Mumbai")):
        r = await client.post(f"/v1/tenants/{tenant}/facts", headers=await create_agent(client, tenant, key, agent),
                              json={"subject": s.customer, "predicate": "lives_in", "object": city})
        assert r.status_code == 201, r.text
        facts.append(r.json())
    s.conflict, s.fact = facts[1]["conflict_id"], facts[1]["fact_id"]
    assert s.conflict
    await fixed_ticket(memory.client, tenant, s.customer, s.ticket)
    return s


async def test_every_route_answers_what_its_schema_says(client, memory, tenant, auth):
    document = (await client.get("/openapi.json")).json()
    operations = _operations(document)
    s = await _setup(client, memory, tenant, auth)
    failures: list[str] = []
    for operation_id, call in CALLS.items():
        method, template, op = operations[operation_id]
        if operation_id == "my_ticket_v1_tenants__t__me_tickets__id__get":
            customer = s.answers["start_session_v1_tenants__t__me_session_post"]["customer"]
            await fixed_ticket(memory.client, tenant, customer, s.my_ticket)
        if operation_id == "my_conversation_v1_tenants__t__me_conversations__session_id__get":
            s.session = s.answers["my_chat_v1_tenants__t__me_chat_post"]["session"]
        if operation_id == "query_plan_v1_console_tenants__t__queries__name__plan_get":
            runs = s.answers["queries_v1_console_tenants__t__queries_get"]["queries"]
            kept = [r for r in runs if r["kept_parameters"]][-1]
            s.query, s.run = kept["query"], kept["id"]
            s.profile_run = [r for r in runs if r["profilable"]][-1]["id"]
        kwargs = call.inputs(s)
        headers = {**({"tenant": s.key, "admin": ADMIN}.get(call.auth or "", {})), **kwargs.pop("headers", {})}
        r = await client.request(method.upper(), template.format(**call.path(s)), headers=headers, **kwargs)
        where = f"{method.upper()} {template} ({operation_id}): {r.status_code}"
        if not 200 <= r.status_code < 300:
            failures.append(f"{where} is not a success: {r.text[:300]}")
            continue
        validator = _validator(document, op, r.status_code)
        if validator is None:
            if r.content:
                failures.append(f"{where} has a body its schema does not document")
            continue
        body = r.json()
        s.answers[operation_id] = body
        errors = sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
        failures += [f"{where} at {'/'.join(map(str, e.absolute_path)) or 'the body'}: {e.message[:300]}"
                     for e in errors[:5]]
    assert not failures, "\n".join(failures)


def test_a_body_that_breaks_its_schema_is_caught():
    # The validator this test relies on refuses what the schema does not allow.
    document = {"components": {"schemas": {"M": {"type": "object", "required": ["id"],
                                                 "properties": {"id": {"type": "string"}}}}}}
    op = {"operationId": "x", "responses": {"200": {"content": {"application/json": {
        "schema": {"$ref": "#/components/schemas/M"}}}}}}
    validator = _validator(document, op, 200)
    assert validator is not None and validator.is_valid({"id": "a"})
    assert not validator.is_valid({"id": 1}) and not validator.is_valid({})
