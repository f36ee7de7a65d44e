"""The turn rules (pure logic): what a turn of a conversation states about its speaker, dated."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from relay_graph.memory.turn_facts import extract

MONDAY = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)


def facts(text: str, speaker: str = "Melanie") -> list[tuple[str, str]]:
    return [(f.predicate, f.object) for f in extract(text, speaker, MONDAY)]


@pytest.mark.parametrize("text, expected", [
    ("My dog Biscuit keeps chewing my shoes.", [("has_pet", "Biscuit")]),
    ("Our cat, Oliver, sleeps all day.", [("has_pet", "Oliver")]),
    ("We adopted a puppy named Luna!", [("has_pet", "Luna")]),
    ("My older sister Anna called me.", [("knows", "Anna")]),
    ("I went to Paris with my husband, Mark.", [("visited", "Paris"), ("knows", "Mark")]),
    ("Our trip to New York was amazing", [("visited", "New York")]),
    ("I'm originally from Sweden.", [("comes_from", "Sweden")]),
    ('I loved "Becoming Nicole" so much.', [("mentioned", "Becoming Nicole")]),
    ("I just signed up for a pottery class yesterday.", [("does", "pottery class")]),
    ("We went camping with the kids.", [("does", "camping")]),
])
def test_first_person_statements_become_facts_about_the_speaker(text, expected):
    assert facts(text) == expected


@pytest.mark.parametrize("text", [
    "My dog loves long walks.",  # no name after it
    "I love seeing you happy.",  # how, not what
    "I went to the store on Monday.",  # lower case: no place name
    "Hey Caroline! My friend Melanie says hi.",  # the speaker is never their own object
])
def test_what_names_nothing_is_left_alone(text):
    assert [f for f in facts(text) if f[1] == "Melanie" or f[0] in ("has_pet", "visited", "does")] == []


def test_a_fact_is_dated_by_the_time_its_turn_says():
    # "last Saturday" said on Monday 8 May 2023 is 6 May; a turn that says no time dates its facts itself
    (adopted,) = extract("Last Saturday we adopted a puppy named Luna.", "Melanie", MONDAY)
    assert adopted.valid_from == datetime(2023, 5, 6, tzinfo=timezone.utc)
    (walked,) = extract("My dog Luna loves the beach.", "Melanie", MONDAY)
    assert walked.valid_from == MONDAY
