"""Time expressions in a question, as windows of time to look in: "in May 2023", "on 8 May 2023",
"May 8th", "in 2022", "2023-05-08", "yesterday", "last week", "last month", "last year",
"three weeks ago", "this year", "last Saturday", "tomorrow", "next month".

Absolute expressions need nothing else. Relative ones ("yesterday", "last year") and dates without
a year ("on 8 May", "in May") are read against a reference time: in recall that is the newest turn
in memory (the conversation's "now"), not the wall clock, because a memory of turns from 2023 asked
"what happened last week?" means the last week of that conversation. A date without a year is the
latest such date not after the reference.

Windows are half-open [start, end) in UTC milliseconds. Day windows are widened by `DAY_SLACK` on
both sides: a turn's time carries its own offset, and "8 May" in Mumbai starts on 7 May in UTC.
Pure logic: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from relay_graph.runtime.times import ms_of

DAY_SLACK = timedelta(hours=14)

MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october november december".split())}
MONTHS |= {m[:3]: i for m, i in list(MONTHS.items())} | {"sept": 9}
_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "couple of": 2, "few": 3}
_NUM = r"(?P<num>\d{1,2}|" + "|".join(sorted(NUMBERS, key=len, reverse=True)) + r")"
UNITS = ("day", "week", "month", "year")
WEEKDAYS = {d: i for i, d in enumerate("monday tuesday wednesday thursday friday saturday sunday".split())}

# Most specific first: a span of text taken by one pattern is not read again by a later one.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<mnum>[01]\d)-(?P<day>[0-3]\d)\b")),
    ("day_month_year", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b")),
    ("month_day_year", re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b")),
    ("month_year", re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b")),
    ("day_month", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b")),
    ("month_day", re.compile(rf"\b{_MONTH}\s+{_DAY}\b(?!\s*(?:years?|months?|weeks?|days?|hours?|minutes?)\b)")),
    ("in_month", re.compile(rf"\b(?:in|during|since|until|last|this|early|mid|late)\s+{_MONTH}\b")),
    ("year", re.compile(rf"\b(?:in|during|of|since|until|year|from|by)\s+{_YEAR}\b")),
    ("ago", re.compile(rf"\b{_NUM}\s+(?P<unit>day|week|month|year)s?\s+ago\b")),
    ("relative", re.compile(r"\b(?P<rel>yesterday|today|tonight|tomorrow|last\s+(?:night|weekend|week|month|year)|"
                            r"this\s+(?:morning|weekend|week|month|year)|next\s+(?:week|month|year)|"
                            r"the\s+day\s+before\s+yesterday)\b")),
    # "last Saturday" / "on Saturday" said on Monday 8 May: the latest Saturday before that day
    ("weekday", re.compile(r"\b(?:last|on|this\s+past|past)\s+(?P<wd>" + "|".join(WEEKDAYS) + r")\b")),
]


@dataclass(frozen=True)
class Window:
    """A span of time a question names: [start_ms, end_ms) and the words that named it."""

    start_ms: int
    end_ms: int
    text: str
    relative: bool

    def label(self) -> str:
        a = datetime.fromtimestamp(self.start_ms / 1000, timezone.utc).date()
        b = datetime.fromtimestamp(self.end_ms / 1000, timezone.utc).date()
        return f"'{self.text}' ({a} .. {b})"


def needs_reference(text: str) -> bool:
    """Whether a question's time expressions are read against a reference time."""
    return any(w.relative for w in windows(text, reference=None))


def _day(y: int, m: int, d: int) -> tuple[datetime, datetime] | None:
    try:
        start = datetime(y, m, d, tzinfo=timezone.utc)
    except ValueError:
        return None
    return start - DAY_SLACK, start + timedelta(days=1) + DAY_SLACK


def _month(y: int, m: int) -> tuple[datetime, datetime]:
    start = datetime(y, m, 1, tzinfo=timezone.utc)
    end = datetime(y + (m == 12), m % 12 + 1, 1, tzinfo=timezone.utc)
    return start - DAY_SLACK, end + DAY_SLACK


def _year(y: int) -> tuple[datetime, datetime]:
    return (datetime(y, 1, 1, tzinfo=timezone.utc) - DAY_SLACK,
            datetime(y + 1, 1, 1, tzinfo=timezone.utc) + DAY_SLACK)


def _latest_year(ref: datetime, m: int, d: int = 1) -> int:
    """The year of the latest month m (day d) not after the reference."""
    return ref.year if (m, d) <= (ref.month, ref.day) else ref.year - 1


def _relative(rel: str, ref: datetime) -> tuple[datetime, datetime] | None:
    rel = " ".join(rel.split())
    day = datetime(ref.year, ref.month, ref.day, tzinfo=timezone.utc)
    week = day - timedelta(days=day.weekday())  # Monday
    if rel in ("today", "tonight", "this morning"):
        return day - DAY_SLACK, day + timedelta(days=1) + DAY_SLACK
    if rel in ("yesterday", "last night"):
        return day - timedelta(days=1) - DAY_SLACK, day + DAY_SLACK
    if rel == "the day before yesterday":
        return day - timedelta(days=2) - DAY_SLACK, day - timedelta(days=1) + DAY_SLACK
    if rel in ("this week", "this weekend"):
        return week - DAY_SLACK, day + timedelta(days=1) + DAY_SLACK
    if rel == "last week":
        return week - timedelta(days=7) - DAY_SLACK, week + DAY_SLACK
    if rel == "last weekend":
        sat = week - timedelta(days=2)
        return sat - DAY_SLACK, week + DAY_SLACK
    if rel == "this month":
        return _month(ref.year, ref.month)
    if rel == "last month":
        return _month(ref.year - (ref.month == 1), (ref.month - 2) % 12 + 1)
    if rel == "tomorrow":
        return day + timedelta(days=1) - DAY_SLACK, day + timedelta(days=2) + DAY_SLACK
    if rel == "next week":
        return week + timedelta(days=7) - DAY_SLACK, week + timedelta(days=14) + DAY_SLACK
    if rel == "next month":
        return _month(ref.year + (ref.month == 12), ref.month % 12 + 1)
    if rel == "next year":
        return _year(ref.year + 1)
    if rel == "this year":
        return _year(ref.year)
    if rel == "last year":
        return _year(ref.year - 1)
    return None


def _weekday(name: str, ref: datetime) -> tuple[datetime, datetime]:
    day = datetime(ref.year, ref.month, ref.day, tzinfo=timezone.utc)
    back = (day.weekday() - WEEKDAYS[name] - 1) % 7 + 1  # 1..7 days back: never the reference day itself
    at = day - timedelta(days=back)
    return at - DAY_SLACK, at + timedelta(days=1) + DAY_SLACK


def _ago(num: str, unit: str, ref: datetime) -> tuple[datetime, datetime]:
    n = int(num) if num.isdigit() else NUMBERS[" ".join(num.split())]
    day = datetime(ref.year, ref.month, ref.day, tzinfo=timezone.utc)
    if unit == "day":
        at = day - timedelta(days=n)
        return at - DAY_SLACK, at + timedelta(days=1) + DAY_SLACK
    if unit == "week":  # "two weeks ago": the week around that day
        at = day - timedelta(weeks=n)
        return at - timedelta(days=4), at + timedelta(days=4)
    if unit == "month":
        m = (ref.month - 1 - n) % 12 + 1
        y = ref.year + (ref.month - 1 - n) // 12
        return _month(y, m)
    return _year(ref.year - n)


def windows(text: str, reference: datetime | None) -> list[Window]:
    """The windows a text names, in the order they appear. Relative expressions are returned only
    with a reference (without one they are reported with an empty span, for `needs_reference`)."""
    low = text.casefold()
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, Window]] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(low):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            span = _span(kind, m, reference)
            if span is None:
                continue
            taken.append((m.start(), m.end()))
            relative = span == ()
            start, end = (0, 0) if relative else (ms_of(span[0]), ms_of(span[1]))
            found.append((m.start(), Window(start, end, text[m.start():m.end()], relative or _is_relative(kind))))
    return [w for _, w in sorted(found, key=lambda x: x[0])]


def _is_relative(kind: str) -> bool:
    return kind in ("day_month", "month_day", "in_month", "ago", "relative", "weekday")


def _span(kind: str, m: re.Match[str], ref: datetime | None):
    """(start, end) for a match; () for a relative one without a reference; None for no date."""
    g = m.groupdict()
    month = MONTHS.get(g["month"]) if g.get("month") else None
    if kind == "iso":
        return _day(int(g["year"]), int(g["mnum"]), int(g["day"]))
    if kind in ("day_month_year", "month_day_year"):
        return _day(int(g["year"]), month, int(g["day"]))
    if kind == "month_year":
        return _month(int(g["year"]), month)
    if kind == "year":
        return _year(int(g["year"]))
    if ref is None:
        return ()
    ref = ref.astimezone(timezone.utc)
    if kind in ("day_month", "month_day"):
        day = int(g["day"])
        if not 1 <= day <= 31:
            return None
        return _day(_latest_year(ref, month, day), month, day)
    if kind == "in_month":
        return _month(_latest_year(ref, month), month)
    if kind == "ago":
        return _ago(g["num"], g["unit"], ref)
    if kind == "weekday":
        return _weekday(g["wd"], ref)
    return _relative(g["rel"], ref)


__all__ = ["Window", "windows", "needs_reference", "DAY_SLACK"]
