"""Time expressions in questions, read as windows of time (pure logic)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from relay_graph.memory.time_expressions import DAY_SLACK, needs_reference, windows

REF = datetime(2023, 8, 20, 15, 0, tzinfo=timezone.utc)  # the newest turn in memory


def span(text: str, ref: datetime | None = REF) -> list[tuple[str, str]]:
    out = []
    for w in windows(text, ref):
        start = datetime.fromtimestamp(w.start_ms / 1000, timezone.utc) + DAY_SLACK
        end = datetime.fromtimestamp(w.end_ms / 1000, timezone.utc) - DAY_SLACK
        out.append((start.date().isoformat(), end.date().isoformat()))
    return out


@pytest.mark.parametrize("text, expected", [
    ("When did Caroline go to the support group in May 2023?", [("2023-05-01", "2023-06-01")]),
    ("what happened on 8 May, 2023", [("2023-05-08", "2023-05-09")]),
    ("anything on May 8th 2023?", [("2023-05-08", "2023-05-09")]),
    ("the party on 2023-05-08", [("2023-05-08", "2023-05-09")]),
    ("what did she do in 2022?", [("2022-01-01", "2023-01-01")]),
    ("what did Melanie paint last year?", [("2022-01-01", "2023-01-01")]),
    ("what did we talk about yesterday", [("2023-08-19", "2023-08-20")]),
    ("and on 8 May?", [("2023-05-08", "2023-05-09")]),
    ("what about in September?", [("2022-09-01", "2022-10-01")]),  # the latest September before the reference
    ("plans made last month", [("2023-07-01", "2023-08-01")]),
    ("who called two days ago", [("2023-08-18", "2023-08-19")]),
    ("between March 2022 and May 2023", [("2022-03-01", "2022-04-01"), ("2023-05-01", "2023-06-01")]),
])
def test_expressions_become_windows(text, expected):
    assert span(text) == expected


@pytest.mark.parametrize("text, expected", [
    # REF is Sunday 20 August 2023: a weekday named is the latest one before that day
    ("I went hiking last Saturday", [("2023-08-19", "2023-08-20")]),
    ("on Sunday we baked bread", [("2023-08-13", "2023-08-14")]),
    ("the opening night is tomorrow", [("2023-08-21", "2023-08-22")]),
    ("we move next month", [("2023-09-01", "2023-10-01")]),
    ("the trip is next week", [("2023-08-21", "2023-08-28")]),
])
def test_a_turn_says_times_relative_to_its_own_date(text, expected):
    assert span(text) == expected


def test_last_saturday_said_on_monday_8_may_2023_is_6_may():
    said = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    assert span("Last Saturday I ran a charity race", said) == [("2023-05-06", "2023-05-07")]


@pytest.mark.parametrize("text", ["may I ask what she painted?", "I may go", "she is 2023 years old? no",
                                  "May 5 years pass", "what is the plan"])
def test_words_that_are_not_times(text):
    assert span(text) == []


def test_relative_expressions_need_a_reference():
    assert needs_reference("what did she bake last week?")
    assert needs_reference("on 8 May")  # a day without a year is the latest one
    assert not needs_reference("in May 2023")
    # nothing to read it against: reported, but with an empty span (recall looks in no window)
    assert [(w.text, w.relative, w.end_ms - w.start_ms) for w in windows("what happened yesterday", None)] == [
        ("yesterday", True, 0)]
