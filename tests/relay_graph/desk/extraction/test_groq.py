"""The Groq adapter of the Extractor port, through httpx's mock transport: the exact request it
sends, what it does with a malformed answer, rate limits, server errors and timeouts, and the
rules extractor as the last fallback. No test reaches the network."""

from __future__ import annotations

import json

import httpx
import pytest

from relay_graph.memory import registry
from relay_graph.runtime.errors import InvalidInput
from relay_graph.desk.extraction import (
    ExtractionContext,
    Extractor,
    Intent,
    IssueKind,
    RulesExtractor,
    extract,
)
from relay_graph.desk.extraction.fallback import FallbackExtractor, build_extractor
from relay_graph.desk.extraction.groq import GroqExtractor, build_messages, extraction_schema
from relay_graph.desk.llm import CHAT_COMPLETIONS_URL, LLMSettings, LLMUnavailable

from ..llm.fakes import Clock, Groq, completion, error

CTX = ExtractionContext(cities=("Pune", "Mumbai"), plans=("Fiber 300", "Fiber 1000"), routers=("Relay Home Gateway",))
TEXT = "Hi, I'm Asha. I live in Pune and the wifi is slow upstairs since monday"


def answer(facts=(), planned=(), problem=None, intent="report_problem", about_someone_else=False) -> str:
    def fact(f):
        p, o, *rest = f
        return {"predicate": p, "object": o, "valid_from_hint": rest[0] if rest else None,
                "ended": rest[1] if len(rest) > 1 else False}

    return json.dumps({"facts": [fact(f) for f in facts], "planned": [fact(f) for f in planned], "problem": problem,
                       "intent": intent, "about_someone_else": about_someone_else})


GOOD = answer(
    facts=[("name", "Asha"), ("lives_in", "Pune")],
    problem={"kind": "slow_speed", "also": [], "medium": "wifi", "place": "upstairs", "time": "since monday",
             "device": None, "summary": "Slow Wi-Fi upstairs since Monday"},
)


def groq_extractor(groq: Groq, keys=("k1", "k2"), models=("m1", "m2"), clock: Clock | None = None, **kw) -> GroqExtractor:
    clock = clock or Clock()
    return GroqExtractor(list(keys), list(models), groq.transport, sleep=clock.sleep, clock=clock, **kw)


# ---------------------------------------------------------------------------------------------
# The request.


async def test_the_exact_request() -> None:
    groq = Groq(completion(GOOD))
    ex = groq_extractor(groq)
    assert isinstance(ex, Extractor)
    got = await ex.extract(TEXT, CTX)

    assert len(groq.requests) == 1
    req = groq.requests[0]
    assert req.method == "POST"
    assert str(req.url) == CHAT_COMPLETIONS_URL == "https://api.groq.com/openai/v1/chat/completions"
    assert req.headers["authorization"] == "Bearer k1"
    assert req.headers["content-type"] == "application/json"
    body = json.loads(req.content)
    assert body["model"] == "m1"
    assert body["temperature"] == 0
    assert body["messages"] == build_messages(TEXT, CTX)
    system, user = body["messages"]
    assert system["role"] == "system" and "never invent" in system["content"]
    assert user["role"] == "user" and TEXT in user["content"] and "Pune, Mumbai" in user["content"]
    rf = body["response_format"]
    assert rf["type"] == "json_schema"
    assert rf["json_schema"]["name"] == "relay_extraction" and rf["json_schema"]["strict"] is True
    schema = rf["json_schema"]["schema"]
    assert schema == extraction_schema()
    fact = schema["properties"]["facts"]["items"]
    assert fact["properties"]["predicate"]["enum"] == sorted(registry.REGISTRY)
    assert set(fact["required"]) == set(fact["properties"]) and fact["additionalProperties"] is False
    problem = schema["properties"]["problem"]["anyOf"][0]
    assert problem["properties"]["kind"]["enum"] == [k.value for k in IssueKind]
    assert schema["properties"]["intent"]["enum"] == [i.value for i in Intent]
    assert set(schema["required"]) == set(schema["properties"]) and schema["additionalProperties"] is False

    assert [(f.predicate, f.object) for f in got.facts] == [("name", "Asha"), ("lives_in", "Pune")]
    assert got.problem is not None and got.problem.kind is IssueKind.SLOW_SPEED
    assert (got.problem.place, got.problem.time, got.problem.medium) == ("upstairs", "since monday", "wifi")
    assert got.intent is Intent.REPORT_PROBLEM and got.language_hint == "en"


async def test_model_specific_fields_are_only_sent_to_that_model() -> None:
    groq = Groq(completion("not json"), completion(GOOD))
    await groq_extractor(groq, keys=["k1"], models=["openai/gpt-oss-120b", "llama-3.3-70b-versatile"]).extract(TEXT, CTX)
    first, second = groq.bodies()
    assert first["reasoning_effort"] == "low"
    assert "reasoning_effort" not in second


# ---------------------------------------------------------------------------------------------
# Malformed answers.


async def test_invalid_items_are_dropped_and_the_rest_kept() -> None:
    content = answer(
        facts=[
            ("lives_in", "Pune", "since monday"),
            ("has_router", "slow"),  # the registry refuses a symptom as a router model
            ("phone", "call me maybe"),  # not a phone number
            ("lives_in", "Mumbai"),  # not in the message: invented
            ("name", "Asha", "last year"),  # the hint was never said: kept without it
            ("has_issue", "slow_speed"),  # the problem report carries it
        ],
        problem={"kind": "slow_speed", "also": ["slow_speed", "wifi_drops"], "medium": "wifi", "place": "in the attic",
                 "time": "since monday", "device": "tv", "summary": "Slow Wi-Fi"},
    )
    raw = json.loads(content)
    raw["facts"].append({"predicate": "favourite_colour", "object": "blue", "valid_from_hint": None, "ended": False})
    raw["facts"].append({"predicate": "lives_in", "object": "Pune", "valid_from_hint": None, "ended": False, "x": 1})
    raw["facts"].append("lives_in Pune")
    groq = Groq(completion(json.dumps(raw)))
    got = await groq_extractor(groq).extract(TEXT, CTX)
    assert len(groq.requests) == 1
    assert [(f.predicate, f.object, f.valid_from_hint) for f in got.facts] == [
        ("lives_in", "Pune", "since monday"), ("name", "Asha", None)]
    # problem details the message does not hold are dropped; the symptom itself is kept
    assert got.problem is not None
    assert (got.problem.kind, got.problem.also) == (IssueKind.SLOW_SPEED, [IssueKind.WIFI_DROPS])
    assert (got.problem.place, got.problem.time, got.problem.device) == (None, "since monday", None)


async def test_an_invalid_problem_or_intent_does_not_cost_the_facts() -> None:
    content = answer(facts=[("lives_in", "Pune")], problem={"kind": "alien_invasion", "summary": "x"}, intent="dance")
    got = await groq_extractor(Groq(completion(content))).extract(TEXT, CTX)
    assert [(f.predicate, f.object) for f in got.facts] == [("lives_in", "Pune")]
    assert got.problem is None and got.intent is Intent.GIVE_INFO


async def test_catalogue_names_come_back_spelt_as_the_catalogue_does() -> None:
    text = "I moved from Bombay and I'm on fibre 1000 with a relay-home-gateway"
    content = answer(facts=[("lives_in", "bombay", None, True), ("on_plan", "fibre 1000"), ("has_router", "relay home gateway")],
                     intent="give_info")
    got = await groq_extractor(Groq(completion(content))).extract(text, CTX)
    assert [(f.predicate, f.object, f.ended) for f in got.facts] == [
        ("lives_in", "Mumbai", True), ("on_plan", "Fiber 1000", False), ("has_router", "Relay Home Gateway", False)]


@pytest.mark.parametrize("bad", [
    "Sure! Asha lives in Pune.",  # not JSON
    "[1, 2, 3]",  # JSON, not an object
    json.dumps({"answer": "Pune"}),  # none of the schema's fields
    json.dumps({"facts": "Pune"}),  # facts is not a list
    answer(facts=[("favourite_colour", "blue"), ("lives_in", "Atlantis")], intent="shout"),  # nothing survives the checks
])
async def test_a_wholly_malformed_answer_goes_to_the_next_model(bad: str) -> None:
    groq = Groq(completion(bad), completion(GOOD))
    ex = groq_extractor(groq)
    got = await ex.extract(TEXT, CTX)
    assert groq.calls() == [("k1", "m1"), ("k1", "m2")]
    assert [a.outcome for a in ex.chat.attempts] == ["malformed", "ok"]
    assert [f.object for f in got.facts] == ["Asha", "Pune"]


async def test_a_cut_off_answer_or_a_schema_failure_goes_to_the_next_model() -> None:
    groq = Groq(completion(GOOD[:40], finish="length"), error(400, "json_validate_failed"), completion(GOOD))
    got = await groq_extractor(groq, models=["m1", "m2", "m3"]).extract(TEXT, CTX)
    assert groq.calls() == [("k1", "m1"), ("k1", "m2"), ("k1", "m3")]
    assert got.problem is not None


async def test_a_model_the_api_refuses_gives_way_to_the_next_model() -> None:
    groq = Groq(error(404, "model_not_found"), error(400, "model_decommissioned"), completion(GOOD))
    got = await groq_extractor(groq, models=["gone", "old", "m3"]).extract(TEXT, CTX)
    assert groq.calls() == [("k1", "gone"), ("k1", "old"), ("k1", "m3")]
    assert got.facts


# ---------------------------------------------------------------------------------------------
# Rate limits, server errors, timeouts, keys.


async def test_429_on_one_key_tries_the_next_key_at_once_and_remembers() -> None:
    clock = Clock()
    groq = Groq(error(429, "rate_limit_exceeded", {"retry-after": "30"}), completion(GOOD), completion(GOOD))
    ex = groq_extractor(groq, clock=clock)
    await ex.extract(TEXT, CTX)
    assert groq.calls() == [("k1", "m1"), ("k2", "m1")]
    assert clock.slept == []  # another key was free: no waiting
    await ex.extract(TEXT, CTX)  # k1 is still resting for m1
    assert groq.calls()[-1] == ("k2", "m1")
    clock.now += 31
    groq.responses.append(completion(GOOD))
    await ex.extract(TEXT, CTX)
    assert groq.calls()[-1] == ("k1", "m1")  # rested: back in use


async def test_when_every_key_is_rate_limited_the_next_model_is_tried() -> None:
    groq = Groq(error(429, headers={"retry-after": "60"}), error(429, headers={"retry-after": "60"}), completion(GOOD))
    got = await groq_extractor(groq).extract(TEXT, CTX)
    assert groq.calls() == [("k1", "m1"), ("k2", "m1"), ("k1", "m2")]
    assert got.facts


async def test_a_short_rate_limit_everywhere_is_waited_out_once() -> None:
    clock = Clock()
    limited = [error(429, headers={"retry-after": "1"}) for _ in range(4)]
    groq = Groq(*limited, completion(GOOD))
    got = await groq_extractor(groq, clock=clock).extract(TEXT, CTX)
    assert groq.calls() == [("k1", "m1"), ("k2", "m1"), ("k1", "m2"), ("k2", "m2"), ("k1", "m1")]
    assert clock.slept == [1.0]
    assert got.facts


async def test_a_long_rate_limit_everywhere_is_not_waited_for() -> None:
    clock = Clock()
    groq = Groq(*[error(429, headers={"retry-after": "120"}) for _ in range(4)])
    with pytest.raises(LLMUnavailable):
        await groq_extractor(groq, clock=clock).extract(TEXT, CTX)
    assert len(groq.requests) == 4 and clock.slept == []


async def test_5xx_is_retried_on_the_same_key_and_model_with_backoff() -> None:
    clock = Clock()
    groq = Groq(error(503), error(500), completion(GOOD))
    got = await groq_extractor(groq, clock=clock).extract(TEXT, CTX)
    assert groq.calls() == [("k1", "m1")] * 3
    assert clock.slept == [0.5, 1.0]
    assert got.facts


async def test_a_timeout_is_retried() -> None:
    clock = Clock()
    groq = Groq(httpx.ReadTimeout("slow"), httpx.ConnectError("refused"), completion(GOOD))
    got = await groq_extractor(groq, clock=clock).extract(TEXT, CTX)
    assert groq.calls() == [("k1", "m1")] * 3
    assert got.facts


async def test_after_its_retries_a_failing_model_gives_way_to_the_next() -> None:
    groq = Groq(error(502), error(502), error(502), completion(GOOD))
    got = await groq_extractor(groq).extract(TEXT, CTX)
    assert groq.calls() == [("k1", "m1")] * 3 + [("k1", "m2")]
    assert got.facts


async def test_a_refused_key_is_dropped_for_good() -> None:
    groq = Groq(error(401, "invalid_api_key"), completion(GOOD), completion(GOOD))
    ex = groq_extractor(groq)
    await ex.extract(TEXT, CTX)
    await ex.extract(TEXT, CTX)
    assert groq.calls() == [("k1", "m1"), ("k2", "m1"), ("k2", "m1")]


async def test_the_rules_extractor_is_the_last_fallback() -> None:
    groq = Groq(*[error(500) for _ in range(6)])
    chain = FallbackExtractor([groq_extractor(groq), RulesExtractor()])
    got = await chain.extract(TEXT, CTX)
    # transient errors: 3 tries per model, then the next model; then the rules
    assert groq.calls() == [("k1", "m1")] * 3 + [("k1", "m2")] * 3
    assert chain.last_used == "RulesExtractor"
    assert got == extract(TEXT, CTX)


async def test_malformed_everywhere_falls_back_to_the_rules() -> None:
    groq = Groq(completion("no"), completion("{}"))
    chain = FallbackExtractor([groq_extractor(groq), RulesExtractor()])
    got = await chain.extract(TEXT, CTX)
    assert len(groq.requests) == 2 and chain.last_used == "RulesExtractor"
    assert got == extract(TEXT, CTX)


async def test_the_chain_uses_groq_when_it_answers() -> None:
    chain = FallbackExtractor([groq_extractor(Groq(completion(GOOD))), RulesExtractor()])
    got = await chain.extract(TEXT, CTX)
    assert chain.last_used == "GroqExtractor" and got.problem is not None and got.problem.summary == "Slow Wi-Fi upstairs since Monday"


async def test_bad_input_is_refused_without_a_request_or_a_fallback() -> None:
    groq = Groq()
    chain = FallbackExtractor([groq_extractor(groq), RulesExtractor()])
    with pytest.raises(InvalidInput):
        await chain.extract(None, CTX)  # type: ignore[arg-type]
    assert groq.requests == []


async def test_an_empty_message_needs_no_request() -> None:
    groq = Groq()
    got = await groq_extractor(groq).extract("   ", CTX)
    assert groq.requests == [] and got.facts == [] and got.problem is None


# ---------------------------------------------------------------------------------------------
# Which extractor a process gets.


class _ProcessSettings:
    def __init__(self, groq_key: str | None) -> None:
        self.groq_key = groq_key


def test_without_a_key_nothing_calls_groq(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    monkeypatch.delenv("RELAY_GROQ_API_KEY", raising=False)
    from relay_graph.runtime.agents.settings import AgentSettings

    assert isinstance(build_extractor(AgentSettings()), RulesExtractor)
    assert isinstance(build_extractor(_ProcessSettings(None)), RulesExtractor)
    assert isinstance(build_extractor(_ProcessSettings("  ")), RulesExtractor)
    assert isinstance(build_extractor(None), RulesExtractor)
    assert not LLMSettings.from_settings(None).enabled


def test_with_a_key_groq_comes_first_and_the_rules_last(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "gsk_one, gsk_two")
    from relay_graph.runtime.agents.settings import AgentSettings

    chain = build_extractor(AgentSettings())
    assert isinstance(chain, FallbackExtractor)
    groq, rules = chain.extractors
    assert isinstance(groq, GroqExtractor) and isinstance(rules, RulesExtractor)
    assert groq.chat.key_count == 2
    assert "gsk_one" not in repr(LLMSettings.from_settings(AgentSettings()))  # keys never show in logs


async def test_built_chain_sends_each_key_it_was_given() -> None:
    groq = Groq(error(429), completion(GOOD))
    clock = Clock()
    chain = build_extractor(_ProcessSettings("gsk_a,gsk_b"), transport=groq.transport, sleep=clock.sleep, clock=clock)
    got = await chain.extract(TEXT, CTX)
    assert [k for k, _ in groq.calls()] == ["gsk_a", "gsk_b"]
    assert [m for _, m in groq.calls()] == [LLMSettings().extract_models[0]] * 2
    assert got.facts
    await chain.aclose()  # type: ignore[attr-defined]
