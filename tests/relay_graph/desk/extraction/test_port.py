"""The Extractor port, and what the catalogue context changes."""

from __future__ import annotations

import random

import pytest
from pydantic import ValidationError

from relay_graph.memory import registry
from relay_graph.runtime.errors import InvalidInput
from relay_graph.desk.extraction import ExtractionContext, Extractor, RulesExtractor, extract
from relay_graph.desk.extraction.rules import MAX_FACTS


def test_the_rules_extractor_implements_the_port() -> None:
    assert isinstance(RulesExtractor(), Extractor)


def test_context_is_frozen_and_takes_lists() -> None:
    ctx = ExtractionContext(cities=["Pune"], plans=["Fiber 300"])
    assert ctx.cities == ("Pune",)
    with pytest.raises(ValidationError):
        ctx.cities = ("Mumbai",)  # type: ignore[misc]
    with pytest.raises(ValidationError):
        ExtractionContext(towns=("Pune",))  # type: ignore[call-arg]


@pytest.mark.parametrize(
    "text, predicate, expected",
    [
        ("we just moved to GOTHAM CITY", "lives_in", "Gotham City"),  # a catalogue city, spelt as the catalogue does
        ("I live in gotham city", "lives_in", "Gotham City"),
        ("I live in Metropolis", "lives_in", "Metropolis"),
        ("I'm on the fibre max 2000 plan", "on_plan", "Fiber Max 2000"),
        ("I'm on the 2000 plan", "on_plan", "Fiber Max 2000"),  # by its speed, when one plan has it
        ("my router is a relay home gateway", "has_router", "Relay Home Gateway"),
        ("I have the Relay-Home-Gateway", "has_router", "Relay Home Gateway"),
    ],
)
async def test_catalogue_names_are_recognised_case_insensitively_and_multi_word(text, predicate, expected) -> None:
    ctx = ExtractionContext(cities=("Gotham City", "Metropolis"), plans=("Fiber Max 2000", "Fiber 300"),
                            routers=("Relay Home Gateway",))
    got = await RulesExtractor().extract(text, ctx)
    assert [(f.predicate, f.object) for f in got.facts] == [(predicate, expected)]


def test_without_a_catalogue_the_built_in_cities_still_work() -> None:
    got = extract("We moved from Bombay to Kuala Lumpur last month")
    assert {(f.predicate, f.object, f.ended) for f in got.facts} == {
        ("lives_in", "Mumbai", True), ("lives_in", "Kuala Lumpur", False)}


def test_an_unknown_lower_case_place_is_not_guessed() -> None:
    assert extract("i live in smalltown").facts == []
    assert [f.object for f in extract("I live in Smalltown").facts] == ["Smalltown"]


def test_text_that_is_not_a_string_is_refused() -> None:
    with pytest.raises(InvalidInput):
        extract(None)  # type: ignore[arg-type]


def test_empty_and_blank_messages_read_as_nothing() -> None:
    for text in ("", "   ", "\n\n", "?!", "\x00\x01"):
        got = extract(text)
        assert got.facts == [] and got.planned == [] and got.problem is None


FRAGMENTS = [
    "I live in Pune", "my router is slow", "my router is a TP-Link Archer C6", "call me on 98765 43210",
    "wifi drops upstairs", "since monday", "I no longer live in Delhi", "upgrade me to fiber 1000", "?", ".", ",",
    "and", "not", "used to", "my neighbour's", "email me at a@b.co", "\n", "PS5", "red light", "I'm Alice Rao",
    "moved to", "on the", "'s", "anymore", "if", "the 1000 plan", "ÄÖÜ", "日本語", "😀", "12345", "- ", "Mr.",
]


@pytest.mark.parametrize("seed", range(40))
def test_random_messages_never_raise_and_only_yield_registry_valid_facts(seed: int) -> None:
    rng = random.Random(seed)
    text = " ".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 40)))
    got = extract(text)
    for fact in got.facts + got.planned:
        p = registry.get(fact.predicate)
        assert p.check(registry.clean_text(fact.object)) == fact.object
        if fact.predicate == "has_router":
            assert "slow" not in fact.object.lower()


def test_a_huge_message_is_read_up_to_the_limit_and_bounded() -> None:
    text = "call me on +91 98765 4321%d. " % 0 + " ".join(f"my number is +44 7700 9{i:05d}" for i in range(3000))
    got = extract(text)
    assert len(got.facts) <= MAX_FACTS
