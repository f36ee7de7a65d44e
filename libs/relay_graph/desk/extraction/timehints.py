"""Time as customers say it ("since monday", "last week", "3 days ago"): finding the phrase in a
message, and turning it into a datetime relative to when the message was written, so the caller
can pass an event time (valid_from / valid_to) that is not simply "now"."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from relay_graph.desk.extraction.lexicon import MONTH_ABBR, MONTHS, WEEKDAYS

_WD = "|".join(WEEKDAYS)
_MON = "|".join(sorted({*MONTHS, *MONTH_ABBR} - {"may"}, key=len, reverse=True))
_MON_ALL = _MON + "|may"
_NUMW = r"(?:\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a\s+couple\s+of|couple\s+of|a\s+few|few|several)"
_UNIT = r"(?:minutes?|mins?|hours?|hrs?|days?|nights?|weeks?|months?|years?)"
_ORD = r"\d{1,2}(?:st|nd|rd|th)?"
_PART = r"(?:morning|afternoon|evening|night)"
_DATE = (rf"(?:{_ORD}\s+(?:of\s+)?(?:{_MON_ALL})\b|(?:{_MON_ALL})\s+{_ORD}\b|the\s+{_ORD}\b|\d{{4}}-\d{{2}}-\d{{2}}"
         rf"|(?:early\s+|late\s+|mid\s+)?(?:{_MON})\b|\d{{4}}\b)")
_POINT = (rf"(?:(?:last|this|next)\s+(?:{_WD}|week(?:end)?|month|year|{_PART})|yesterday(?:\s+{_PART})?|today"
          rf"|tonight|tomorrow|the\s+weekend|{_WD}(?:\s+{_PART})?|{_NUMW}\s+{_UNIT}\s+ago|{_DATE}"
          rf"|\d{{1,2}}(?::\d{{2}})?\s*(?:am|pm)|then)")

TIME_RE = re.compile(
    rf"\b(?:since\s+(?:the\s+)?(?:{_POINT}|(?:the\s+)?(?:storm|outage|update|upgrade|move|visit|power\s+cut|reboot|restart))"
    rf"|(?:for|over)\s+(?:the\s+)?(?:(?:last|past)\s+)?{_NUMW}\s+{_UNIT}"
    rf"|(?:for|over)\s+(?:the\s+)?(?:last|past)\s+(?:{_UNIT}|while)"
    rf"|for\s+a\s+while|all\s+(?:day|night|week|weekend)"
    rf"|{_NUMW}\s+{_UNIT}\s+ago"
    rf"|(?:every|each)\s+(?:day|night|evening|morning|afternoon|weekend|hour|{_WD}|few\s+{_UNIT}|{_NUMW}\s+{_UNIT})"
    rf"|(?:in\s+the|at)\s+(?:evenings?|mornings?|afternoons?|nights?)|at\s+night"
    rf"|(?:from|starting|as\s+of)\s+(?:next\s+|this\s+)?(?:{_WD}|week|month|{_DATE}|tomorrow)"
    rf"|in\s+{_NUMW}\s+{_UNIT}"
    rf"|on\s+the\s+{_ORD}(?:\s+of)?(?:\s+(?:{_MON_ALL}))?\b|on\s+\d{{1,2}}(?:st|nd|rd|th)\b(?:\s+of)?(?:\s+(?:{_MON_ALL}))?\b"
    rf"|on\s+{_ORD}(?:\s+of)?\s+(?:{_MON_ALL})\b|on\s+(?:{_MON_ALL})\s+{_ORD}\b"
    rf"|(?:on|last|this|next|early|late)\s+(?:the\s+)?(?:{_WD}|week(?:end)?|month|year|{_PART})"
    rf"|in\s+(?:{_MON_ALL}|\d{{4}})\b"
    rf"|yesterday(?:\s+{_PART})?|this\s+{_PART}|last\s+night|today|tonight|tomorrow|recently|just\s+now)\b",
    re.I,
)


def normalise(phrase: str) -> str:
    return " ".join(phrase.lower().split())


_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple of": 2, "a couple of": 2,
            "few": 3, "a few": 3, "several": 3}
_UNIT_DAYS = {"minute": 1 / 1440, "min": 1 / 1440, "hour": 1 / 24, "hr": 1 / 24, "day": 1, "night": 1,
              "week": 7, "month": 30, "year": 365}
_FUTURE = re.compile(r"\b(next|tomorrow|in\s+\S+\s+\w+$|from|starting|as of|coming)\b")
_RECURRING = re.compile(r"\b(every|each|in the|at night|all (day|night|week|weekend)|for a while|recently|just now|"
                        r"since then|then)\b")


def _number(word: str) -> float | None:
    word = " ".join(word.split())
    if word.isdigit():
        return float(word)
    return _NUMBERS.get(word)


def _unit_days(unit: str) -> float:
    unit = unit.rstrip("s")
    return _UNIT_DAYS.get(unit, 1)


def _day(dt: datetime) -> datetime:
    return dt.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_number(word: str) -> int | None:
    word = word.lower()
    for i, name in enumerate(MONTHS, start=1):
        if word == name or (len(word) >= 3 and name.startswith(word)):
            return i
    return None


def resolve_hint(hint: str | None, now: datetime) -> datetime | None:
    """The moment a hint points at, relative to `now` (when the customer wrote it). Day-level hints
    give the start of that day in now's time zone; "3 hours ago" keeps the hour. Recurring or vague
    phrases ("every evening", "recently") give None: the caller keeps its own default.

    A bare weekday means its most recent past occurrence (a week back when it is today: people
    say "today" otherwise). Dates without a year that would lie in the future are taken as last
    year's, unless the hint looks forward ("next week", "from the 5th", "in two weeks")."""
    if not hint:
        return None
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    h = normalise(hint)
    if _RECURRING.search(h) and not re.search(r"\bsince (the )?(storm|outage|update|upgrade|move|visit)", h):
        return None
    future = bool(_FUTURE.search(h))
    h = re.sub(r"^(since|from|starting|as of|on|in|for|over)\s+", "", h)
    h = re.sub(r"^the\s+", "", h)
    today = _day(now)

    if m := re.fullmatch(rf"(?:(?:last|past)\s+)?({_NUMW})\s+({_UNIT})(?:\s+ago)?", h):
        n = _number(m.group(1))
        if n is None:
            return None
        delta = timedelta(days=n * _unit_days(m.group(2)))
        return now + delta if future else now - delta
    if h in ("today", "tonight", "this morning", "this afternoon", "this evening", "this night"):
        return today
    if h.startswith("yesterday") or h == "last night":
        return today - timedelta(days=1)
    if h == "weekend":  # "since the weekend": the Saturday just gone
        return today - timedelta(days=(today.weekday() - 5) % 7 or 7)
    if h == "tomorrow":
        return today + timedelta(days=1)
    if m := re.fullmatch(r"(last|this|next)\s+(week|weekend|month|year)", h):
        which, span = m.groups()
        if span == "week":
            monday = today - timedelta(days=today.weekday())
            return {"last": monday - timedelta(days=7), "this": monday, "next": monday + timedelta(days=7)}[which]
        if span == "weekend":
            back = (today.weekday() - 5) % 7 or 7
            sat = today - timedelta(days=back)
            return {"last": sat, "this": sat + timedelta(days=7) if today.weekday() < 5 else sat,
                    "next": sat + timedelta(days=7)}[which]
        if span == "month":
            first = today.replace(day=1)
            if which == "last":
                return (first - timedelta(days=1)).replace(day=1)
            if which == "next":
                return (first + timedelta(days=32)).replace(day=1)
            return first
        first = today.replace(month=1, day=1)
        return {"last": first.replace(year=first.year - 1), "this": first, "next": first.replace(year=first.year + 1)}[which]
    if m := re.fullmatch(rf"(?:last|past)\s+({_UNIT})", h):
        return now - timedelta(days=_unit_days(m.group(1)))
    if m := re.fullmatch(r"(\d{1,2})(?::(\d{2}))?\s*(am|pm)", h):
        hour, minute = int(m.group(1)), int(m.group(2) or 0)
        if not 1 <= hour <= 12 or minute > 59:
            return None
        hour = hour % 12 + (12 if m.group(3) == "pm" else 0)
        at = today.replace(hour=hour, minute=minute)
        return at - timedelta(days=1) if at > now and not future else at
    if m := re.fullmatch(rf"(?:(last|this|next)\s+)?({_WD})(?:\s+{_PART})?", h):
        which, name = m.groups()
        wd = WEEKDAYS.index(name)
        if which == "next" or (future and which != "last"):
            ahead = (wd - today.weekday()) % 7 or 7
            return today + timedelta(days=ahead)
        back = (today.weekday() - wd) % 7 or 7
        return today - timedelta(days=back)
    if m := re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", h):
        try:
            return today.replace(year=int(m.group(1)), month=int(m.group(2)), day=int(m.group(3)))
        except ValueError:
            return None
    if m := re.fullmatch(r"(\d{4})", h):
        return today.replace(year=int(m.group(1)), month=1, day=1)
    day = month = None
    if m := re.fullmatch(rf"(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?(?:\s+({_MON_ALL}))?", h):
        day, month = int(m.group(1)), _month_number(m.group(2)) if m.group(2) else None
    elif m := re.fullmatch(rf"({_MON_ALL})\s+(\d{{1,2}})(?:st|nd|rd|th)?", h):
        day, month = int(m.group(2)), _month_number(m.group(1))
    elif m := re.fullmatch(rf"(?:early\s+|late\s+|mid\s+)?({_MON_ALL})", h):
        day, month = 1, _month_number(m.group(1))
    if day is not None:
        try:
            if month is None:  # "the 5th": this month, or last month if still ahead
                when = today.replace(day=day)
                if when > today and not future:
                    prev = today.replace(day=1) - timedelta(days=1)
                    when = prev.replace(day=day)
                return when
            when = today.replace(month=month, day=day)
            if when > today and not future:
                when = when.replace(year=when.year - 1)
            elif when < today and future:
                when = when.replace(year=when.year + 1)
            return when
        except ValueError:
            return None
    return None
