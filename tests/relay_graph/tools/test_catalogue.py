"""The catalogue itself: every tool registered once with typed input and output, JSON schemas for
MCP, argument validation before anything runs, and the caller's identity from the context."""

from __future__ import annotations

import pytest

from relay_graph.runtime.errors import InvalidInput, InvalidTenant, NotFound
from relay_graph.memory.facade import Memory
from relay_graph.tools import TOOLS, Call, UnknownTool, call_tool, mcp_agent_name, tool_specs
from relay_graph.tools.mcp_server import mcp_tool

REQUIRED = {"remember", "remember_fact", "recall", "ask", "explain", "tickets", "handoff", "recall_customer",
            "facts_at", "claims", "who_handled", "affected_by", "capacity", "past_fixes"}


def test_every_required_tool_is_registered_with_typed_models_and_schemas():
    assert REQUIRED <= set(TOOLS)
    for name, t in TOOLS.items():
        assert t.name == name and len(t.description) > 20, name
        schema = t.input_schema()
        assert schema["type"] == "object" and schema.get("additionalProperties") is False, name
        out = t.output_schema()
        assert out["type"] == "object"
        assert {"tool", "shape", "data", "how_i_know", "unknown"} <= set(out["properties"]), name
        assert out["required"] == ["tool", "shape"], name
    assert [s["name"] for s in tool_specs()] == sorted(TOOLS)


def test_mcp_listing_carries_the_same_schemas_and_write_hints():
    for t in TOOLS.values():
        listed = mcp_tool(t)
        assert listed.input_schema == t.input_schema()
        assert listed.output_schema == t.output_schema()
        assert listed.annotations.read_only_hint is (not t.writes)
    assert {n for n, t in TOOLS.items() if t.writes} == {"remember", "remember_fact", "remember_facts", "retire_fact",
                                                                     "handoff", "define_predicate", "open_task", "hand_off_task",
                                                                     "claim_task", "complete_task"}


def test_predicates_are_described_in_the_schema():
    # a pattern, not an enum: a tenant's own predicates are defined at run time (define_predicate)
    prop = TOOLS["remember_fact"].input_schema()["properties"]["predicate"]
    assert "enum" not in prop and prop["pattern"] == "^[a-z][a-z0-9_]{1,47}$"
    assert "lives_in" in prop["description"] and "on_plan" in prop["description"]
    assert "PUT /v1/tenants/{t}/predicates/{name}" in prop["description"]


@pytest.mark.parametrize("raw, expected", [
    ("Claude Desktop", "mcp:claude-desktop"),
    ("  my agent/v2 (beta) ", "mcp:my-agent-v2-beta"),
    ("résumé bot", "mcp:r-sum-bot"),
    ("x" * 200, "mcp:" + "x" * 60),
    ("///", "mcp:client"),
    (None, "mcp:client"),
])
def test_mcp_agent_names_are_sanitised_and_prefixed(raw, expected):
    name = mcp_agent_name(raw)
    assert name == expected
    assert len(name) <= 64


def test_a_configured_name_wins_over_the_client_name_and_is_prefixed_too():
    assert mcp_agent_name("Claude Desktop", "Billing Bot") == "mcp:billing-bot"
    assert mcp_agent_name("Claude Desktop", "intake") == "mcp:intake"  # never the desk's own intake


def test_context_refuses_a_bad_tenant_or_agent(graph_client, embedder):
    memory = Memory(graph_client, embedder)
    with pytest.raises(InvalidTenant):
        Call(memory, "Bad Tenant!", "api")
    with pytest.raises(InvalidInput):
        Call(memory, "acme", "not an agent")


async def test_unknown_tool_is_not_found_and_nothing_runs(ctx, recorder):
    with pytest.raises(UnknownTool) as exc:
        await call_tool(ctx, "drop_database", {})
    assert isinstance(exc.value, NotFound) and exc.value.code == "unknown_tool" and exc.value.status == 404
    assert "facts_at" in exc.value.message
    assert recorder.ran == []


@pytest.mark.parametrize("name, arguments, mentions", [
    ("facts_at", {}, "subject: Field required"),
    ("facts_at", {"subject": "alice rao", "tenant": "other"}, "tenant: Extra inputs are not permitted"),
    ("facts_at", {"subject": "alice rao", "agent": "intake"}, "agent: Extra inputs are not permitted"),
    ("facts_at", {"subject": "alice rao", "predicate": "Lives At"}, "predicate: String should match pattern"),
    ("facts_at", {"subject": "alice rao", "as_of": "2026-09-05T10:00:00"}, "as_of"),
    ("facts_at", {"subject": "alice rao", "clock": "wall"}, "clock"),
    ("facts_at", {"subject": ""}, "subject: String should have at least 1 character"),
    ("recall", {"q": "where?", "k": 0}, "k: Input should be greater than or equal to 1"),
    ("recall", {"q": "where?", "k": "ten"}, "k:"),
    ("capacity", {"node": "pune olt 1; MATCH (n) DETACH DELETE n"}, "node: String should match pattern"),
    ("explain", {}, "give fact_id, or subject and predicate"),
    ("explain", {"fact_id": "f1", "subject": "alice rao", "predicate": "lives_in"}, "not both"),
    ("remember", {"session": "s1", "turns": []}, "episodes: List should have at least 1 item"),
    ("remember_fact", {"subject": "alice rao", "predicate": "lives_in"}, "object: Field required"),
    ("handoff", {"ticket_id": "T-1", "to_role": "the resolver please"}, "to_role"),
])
async def test_bad_arguments_are_refused_before_any_query(ctx, recorder, name, arguments, mentions):
    with pytest.raises(InvalidInput) as exc:
        await call_tool(ctx, name, arguments)
    assert exc.value.code == "invalid_arguments" and exc.value.status == 422
    assert exc.value.message.startswith(f"invalid arguments for {name}: ")
    assert mentions in exc.value.message, exc.value.message
    assert recorder.ran == []


async def test_arguments_must_be_an_object(ctx, recorder):
    with pytest.raises(InvalidInput, match="must be a JSON object"):
        await call_tool(ctx, "facts_at", ["alice rao"])  # type: ignore[arg-type]
    assert recorder.ran == []
