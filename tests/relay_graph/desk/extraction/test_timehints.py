"""Time as customers say it: found in a message, resolved against when they said it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from relay_graph.desk.extraction.timehints import TIME_RE, resolve_hint

NOW = datetime(2026, 9, 9, 15, 30, tzinfo=timezone.utc)  # a Wednesday
DAY = lambda y, m, d, h=0, mi=0: datetime(y, m, d, h, mi, tzinfo=timezone.utc)  # noqa: E731


@pytest.mark.parametrize(
    "hint, expected",
    [
        ("since monday", DAY(2026, 9, 7)),
        ("on monday", DAY(2026, 9, 7)),
        ("wednesday", DAY(2026, 9, 2)),  # today's weekday means a week back: people say "today" otherwise
        ("yesterday", DAY(2026, 9, 8)),
        ("since last night", DAY(2026, 9, 8)),
        ("today", DAY(2026, 9, 9)),
        ("since this morning", DAY(2026, 9, 9)),
        ("last week", DAY(2026, 8, 31)),
        ("last month", DAY(2026, 8, 1)),
        ("next week", DAY(2026, 9, 14)),
        ("next month", DAY(2026, 10, 1)),
        ("from next monday", DAY(2026, 9, 14)),
        ("since the weekend", DAY(2026, 9, 5)),
        ("3 days ago", NOW - timedelta(days=3)),
        ("for two weeks", NOW - timedelta(days=14)),
        ("for the past 3 days", NOW - timedelta(days=3)),
        ("for the last 2 hours", NOW - timedelta(hours=2)),
        ("in two weeks", NOW + timedelta(days=14)),
        ("since the 5th", DAY(2026, 9, 5)),
        ("the 20th", DAY(2026, 8, 20)),  # the 20th is still ahead this month: last month's
        ("since 20 august", DAY(2026, 8, 20)),
        ("since august 20", DAY(2026, 8, 20)),
        ("on 5th march", DAY(2026, 3, 5)),
        ("in march", DAY(2026, 3, 1)),
        ("since december", DAY(2025, 12, 1)),  # a month still ahead this year was last year's
        ("since 2023", DAY(2023, 1, 1)),
        ("2024-05-03", DAY(2024, 5, 3)),
        ("since 10am", DAY(2026, 9, 9, 10)),
        ("since 5pm", DAY(2026, 9, 8, 17)),  # 5pm today has not happened yet
    ],
)
def test_hints_resolve_relative_to_when_they_were_said(hint: str, expected: datetime) -> None:
    assert resolve_hint(hint, NOW) == expected


@pytest.mark.parametrize("hint", [None, "", "every evening", "in the evenings", "at night", "recently", "for a while",
                                  "since then", "since 25pm", "on 31st february", "gibberish"])
def test_vague_recurring_or_impossible_hints_give_none(hint: str | None) -> None:
    assert resolve_hint(hint, NOW) is None


def test_a_naive_now_is_taken_as_utc() -> None:
    assert resolve_hint("yesterday", NOW.replace(tzinfo=None)) == DAY(2026, 9, 8)


def test_a_hint_keeps_the_time_zone_of_now() -> None:
    ist = timezone(timedelta(hours=5, minutes=30))
    got = resolve_hint("yesterday", datetime(2026, 9, 9, 1, 0, tzinfo=ist))
    assert got == datetime(2026, 9, 8, 0, 0, tzinfo=ist)


@pytest.mark.parametrize(
    "text, phrase",
    [
        ("wifi slow upstairs since Monday on the TV", "since Monday"),
        ("we moved to Mumbai last week", "last week"),
        ("down for 3 days now", "for 3 days"),
        ("it drops every few minutes", "every few minutes"),
        ("we moved on the 5th", "on the 5th"),
        ("I'm on 1 gig", None),  # "on 1" is not a date
        ("may I ask something", None),
        ("the 1000 plan", None),
    ],
)
def test_time_phrases_are_found_in_text(text: str, phrase: str | None) -> None:
    m = TIME_RE.search(text)
    assert (m.group(0) if m else None) == phrase
