"""The extraction schema holds only values the predicate registry accepts."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from relay_graph.memory import registry
from relay_graph.desk.extraction.schema import (
    ExtractedFact,
    Extraction,
    Intent,
    IssueKind,
    ProblemReport,
    checked_fact,
    keep_valid_facts,
)


def test_a_fact_is_normalised_by_the_registry_check() -> None:
    assert ExtractedFact(predicate="phone", object="+91 98765-43210").object == "+919876543210"
    assert ExtractedFact(predicate="email", object="Alice@Example.COM").object == "alice@example.com"
    assert ExtractedFact(predicate="prefers_contact", object="WhatsApp").object == "whatsapp"
    assert ExtractedFact(predicate="lives_in", object="  New   Delhi ").object == "New Delhi"


@pytest.mark.parametrize(
    "predicate, obj",
    [
        ("has_router", "slow"),  # a symptom is not a router
        ("has_router", "keeps dropping"),
        ("owns_device", "buffering"),
        ("on_plan", "too slow"),
        ("phone", "12"),
        ("email", "not-an-email"),
        ("prefers_contact", "pigeon"),
        ("name", "R2D2"),
        ("lives_in", ""),
        ("lives_in", "x" * 201),
        ("lives_in", "Pune\x00"),
        ("no_such_predicate", "Pune"),
    ],
)
def test_values_the_registry_refuses_do_not_become_facts(predicate: str, obj: str) -> None:
    with pytest.raises(ValidationError):
        ExtractedFact(predicate=predicate, object=obj)
    assert checked_fact(predicate, obj) is None


def test_every_registry_predicate_is_allowed() -> None:
    samples = {"name": "Alice Rao", "lives_in": "Pune", "on_plan": "Fiber 300", "has_router": "TP-Link Archer C6",
               "owns_device": "tv", "phone": "9876543210", "email": "a@b.co", "has_issue": "slow_speed",
               "prefers_contact": "email", "lives_in_area": "HSR Layout", "household_size": "4",
               "prefers_time": "after 6pm", "wants_plan": "Fiber 300", "answered": "has_router: the grey box"}
    assert set(samples) == set(registry.REGISTRY)
    for predicate, obj in samples.items():
        assert checked_fact(predicate, obj) is not None


def test_facts_are_immutable_and_strict() -> None:
    fact = ExtractedFact(predicate="lives_in", object="Pune", valid_from_hint="last week", ended=True)
    with pytest.raises(ValidationError):
        fact.object = "Mumbai"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        ExtractedFact(predicate="lives_in", object="Pune", confidence=0.9)  # type: ignore[call-arg]


def test_an_untrusted_fact_list_keeps_only_what_validates() -> None:
    raw = [
        {"predicate": "lives_in", "object": "Pune"},
        {"predicate": "has_router", "object": "slow"},
        {"predicate": "made_up", "object": "x"},
        "not even a dict",
        {"predicate": "phone", "object": "+1 (555) 010-9999", "valid_from_hint": "today"},
    ]
    kept = keep_valid_facts(raw)  # type: ignore[arg-type]
    assert [(f.predicate, f.object) for f in kept] == [("lives_in", "Pune"), ("phone", "+15550109999")]


def test_an_extraction_round_trips_through_json() -> None:
    e = Extraction(
        facts=[ExtractedFact(predicate="lives_in", object="Pune")],
        planned=[ExtractedFact(predicate="on_plan", object="Fiber 1000")],
        problem=ProblemReport(kind=IssueKind.SLOW_SPEED, medium="wifi", place="upstairs", time="since monday",
                              device="tv", summary="Slow speed"),
        intent=Intent.REPORT_PROBLEM,
        language_hint="en",
    )
    assert Extraction.model_validate_json(e.model_dump_json()) == e


@pytest.mark.parametrize(
    "bad",
    [
        {"kind": "exploded", "summary": "x"},
        {"kind": "slow_speed", "summary": ""},
        {"kind": "slow_speed", "summary": "x", "medium": "carrier pigeon"},
        {"kind": "slow_speed", "summary": "x", "severity": "high"},
    ],
)
def test_problem_reports_are_strict(bad: dict) -> None:
    with pytest.raises(ValidationError):
        ProblemReport.model_validate(bad)


def test_intents_and_issue_kinds_are_the_agreed_sets() -> None:
    assert {i.value for i in Intent} == {"greeting", "report_problem", "give_info", "ask_status", "confirm_fixed",
                                         "confirm_not_fixed", "move", "plan_change", "off_topic", "other"}
    assert {k.value for k in IssueKind} == {"no_connection", "slow_speed", "wifi_drops", "intermittent",
                                            "no_signal_light", "billing_double_charge", "payment_failed",
                                            "router_frozen", "other"}
    with pytest.raises(ValidationError):
        Extraction(intent="chit_chat")  # type: ignore[arg-type]
