"""Every tool's answer validates against the output schema MCP lists for it, exactly as the mcp
client checks structured content (jsonschema, the schema's own metaschema), whatever the shape."""

from __future__ import annotations

from datetime import datetime, timezone

from jsonschema.validators import validator_for

from relay_graph.desk.network import store as network

from relay_graph.desk.tickets import store as tickets
from relay_graph.desk.tickets.models import TicketStage
from relay_graph.tools import TOOLS, Shape, call_tool
from tests import sample_network

T0 = datetime(2026, 9, 5, 10, 0, tzinfo=timezone.utc)


def check(name: str, body: dict) -> None:
    schema = TOOLS[name].output_schema()
    validator = validator_for(schema)
    validator.check_schema(schema)
    errors = [e.message for e in validator(schema).iter_errors(body)]
    assert errors == [], (name, errors[:3])


async def test_every_tools_answer_matches_its_listed_output_schema(make_ctx, graph_client, tenant):
    ctx = make_ctx(tenant, "mcp:schema-check")
    await sample_network.build_sample_network(graph_client, tenant, city="pune", customers=["asha", "bilal"])
    t = await tickets.open_ticket(graph_client, tenant, customer="asha", issue_kind="no internet", summary="down",
                                  agent="intake", at=T0)
    await tickets.hand_off(graph_client, tenant, t.id, from_agent="intake", to_role="resolver", at=T0)
    await tickets.claim(graph_client, tenant, t.id, agent="resolver", replica="resolver-1", at=T0)
    await tickets.set_stage(graph_client, tenant, t.id, stage=TicketStage.FIXING, agent="resolver", at=T0)
    await tickets.record_fix(graph_client, tenant, t.id, issue_kind="no internet", steps=["restart ont"],
                             verified=True, agent="resolver", at=T0)
    await network.open_outage(graph_client, tenant, "pune-olt-1", cause="fibre cut")

    calls = [
        ("remember", {"session": "s1", "customer": "asha", "turns": [{"speaker": "asha", "text": "wifi is down"}]}),
        ("remember_fact", {"subject": "asha", "predicate": "lives_in", "object": "pune"}),
        ("remember_fact", {"subject": "asha", "predicate": "on_plan", "object": "fiber 100"}),
        ("remember_facts", {"facts": [{"subject": "asha", "predicate": "owns_device", "object": "kindle"},
                                      {"subject": "asha", "predicate": "phone", "object": "not a phone"}]}),
        ("retire_fact", {"subject": "asha", "predicate": "on_plan"}),
        ("facts_at", {"subject": "asha", "as_of": "2030-01-01T00:00:00+00:00", "clock": "belief"}),
        ("history", {"subject": "asha"}),
        ("claims", {"subject": "asha", "predicate": "lives_in"}),
        ("recall", {"q": "is the wifi down?", "subject": "asha"}),
        ("ask", {"question": "where does asha live?", "customer": "asha"}),
        ("explain", {"subject": "asha", "predicate": "lives_in"}),
        ("recall_customer", {"customer": "asha"}),
        ("remember_fact", {"subject": "c-00000000000000a1", "predicate": "name", "object": "Asha Verma"}),
        ("find_customers", {"name": "Asha Verma"}),
        ("tickets", {}),
        ("tickets", {"ticket_id": t.id}),
        ("handoff", {"ticket_id": t.id, "to_role": "netops"}),
        ("who_handled", {"ticket_id": t.id}),
        ("past_fixes", {"issue_kind": "no internet"}),
        ("affected_by", {"node": "pune-olt-1"}),
        ("capacity", {"node": "pune-olt-1"}),
        ("customer_line", {"customer": "bilal"}),
        ("why_affected", {"customer": "asha", "node": "pune-pop-1"}),
        ("define_predicate", {"name": "prefers_language", "cardinality": "single"}),
        ("list_predicates", {}),
    ]
    unknown = [
        ("facts_at", {"subject": "zed"}), ("tickets", {"ticket_id": "T-NONE"}), ("capacity", {"node": "nope"}),
        ("explain", {"fact_id": "nope"}), ("past_fixes", {"issue_kind": "alien abduction"}),
    ]
    opened = await call_tool(ctx, "open_task", {"title": "call asha back", "about": "asha"})
    task_id = opened.to_json()["data"]["task"]["task_id"]
    calls += [
        ("open_task", {"title": "check the invoice", "for_agent": "billing"}),
        ("claim_task", {"task_id": task_id}),
        ("complete_task", {"task_id": task_id}),
        ("hand_off_task", {"task_id": (await call_tool(ctx, "open_task", {"title": "x"})).to_json()["data"]["task"]
                           ["task_id"], "to": "billing"}),
        ("list_tasks", {"mine": True}),
    ]
    shapes = {}
    for name, arguments in calls + unknown:
        result = await call_tool(ctx, name, arguments)
        check(name, result.to_json())
        shapes.setdefault(name, set()).add(result.shape)
    assert set(shapes) == set(TOOLS), set(TOOLS) - set(shapes)
    assert all(Shape.ANSWERED in s or Shape.MEMORY in s for n, s in shapes.items()), shapes
