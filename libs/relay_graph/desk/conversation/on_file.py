"""What a customer may ask of their own file, answered from the memory: what is on it now and
when each thing was learnt ("what do you know about me?"), what it said before or on a given day
("where did you have me before?", "what plan was I on in March?"), and what an erasure would
remove ("delete my data", asked before anything is deleted).

Reads only (the memory's facts on the world clock, its history, the customer's open tickets as the
caller read them); the words are made here from those rows, in plain words without ids. May use
relay_graph.memory (reads), the desk's models and templates."""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from datetime import datetime, timezone

from relay_graph.desk.conversation.compose import Part
from relay_graph.desk.conversation.kinds import ReplyKind
from relay_graph.desk.conversation.templates import Reply
from relay_graph.desk.tickets.issues import issue_kind
from relay_graph.memory import facts as memory_facts
from relay_graph.memory.models import FactState, FactView
from relay_graph.runtime.db import GraphClient

# What a customer's file says, in the order it is told, with its words.
SHOWN: dict[str, str] = {
    "name": "your name: {o}",
    "lives_in": "your city: {o}",
    "lives_in_area": "your area: {o}",
    "on_plan": "your plan: {o}",
    "wants_plan": "a plan change you asked for: {o}",
    "has_router": "your router: {o}",
    "owns_device": "a device of yours: {o}",
    "phone": "your phone number: {o}",
    "email": "your email address: {o}",
    "prefers_contact": "how you like to be contacted: {o}",
    "prefers_time": "when to reach you: {o}",
    "household_size": "people sharing the line: {o}",
}
HISTORY_WORDS: dict[str, str] = {
    "lives_in": "city", "on_plan": "plan", "has_router": "router", "phone": "phone number", "email": "email address",
}
_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m} | {
    m.lower(): i for i, m in enumerate(calendar.month_abbr) if m}
_MONTH = re.compile(r"\b(?:in|during|on|back\s+in|around)?\s*(?P<m>" + "|".join(sorted(_MONTHS, key=len, reverse=True))
                    + r")\b(?:\s+(?P<y>\d{4}))?", re.I)


def day(at: datetime) -> str:
    """A day in words ("5 Dec 2026")."""
    return f"{at.day} {at.strftime('%b %Y')}"


def _current(rows: Sequence[FactView]) -> list[FactView]:
    return [f for f in rows if f.state is FactState.CURRENT and f.valid_to is None and f.predicate in SHOWN]


def _line(f: FactView) -> str:
    return SHOWN[f.predicate].format(o=f.object) + f" (since {day(f.recorded_at)})"


def _issue_words(issue: str) -> str:
    return issue_kind(issue).replace("_", " ")


# One thing asked about ("which city do you have me in?") and what on file says it.
_ONE: dict[str, tuple[str, ...]] = {"lives_in": ("lives_in", "lives_in_area")}


async def about_me(client: GraphClient, tenant: str, customer: str, open_tickets: Sequence,
                   only: str | None = None) -> Part:
    """Everything current on the customer's file, each with the day we learnt it, and their open
    tickets in words; with `only` (a predicate), that one thing."""
    rows = _current(await memory_facts.read_facts(client, tenant, customer))
    rows.sort(key=lambda f: (list(SHOWN).index(f.predicate), f.recorded_at))
    if only is not None:
        rows = [f for f in rows if f.predicate in _ONE.get(only, (only,))]
        how = [f"fact {f.predicate} = {f.object} (recorded {day(f.recorded_at)})" for f in rows]
        what = HISTORY_WORDS.get(only, only.replace("_", " "))
        if not rows:
            return Part(ReplyKind.ON_FILE, Reply(f"I have no {what} on file for you yet: tell me and I will note it.", how))
        said = "; ".join(_line(f) for f in rows)
        return Part(ReplyKind.ON_FILE, Reply(f"On file I have {said}. Tell me if that is wrong and I will correct it.",
                                             how))
    said = [_line(f) for f in rows]
    said += [f"an open ticket about {_issue_words(t.issue)} (opened {day(t.opened_at)})"
             for t in open_tickets if getattr(t, "opened_at", None)]
    how = [f"fact {f.predicate} = {f.object} (recorded {day(f.recorded_at)})" for f in rows]
    if not said:
        return Part(ReplyKind.ON_FILE, Reply("I have nothing on file about you yet beyond this conversation.", how))
    text = "This is what I have on file about you: " + "; ".join(said) + "."
    text += " Tell me if anything is wrong and I will correct it, or ask me to delete your data."
    return Part(ReplyKind.ON_FILE, Reply(text, how))


def month_asked(sentence: str, at: datetime) -> datetime | None:
    """The end of the month a question names ("in March": the last March up to now), else None."""
    m = _MONTH.search(sentence or "")
    if not m:
        return None
    month = _MONTHS[m.group("m").lower()]
    year = int(m.group("y")) if m.group("y") else (at.year if month <= at.month else at.year - 1)
    last = calendar.monthrange(year, month)[1]
    end = datetime(year, month, last, 23, 59, tzinfo=timezone.utc)
    return min(end, at)


async def history(client: GraphClient, tenant: str, customer: str, predicate: str, sentence: str,
                  at: datetime) -> Part:
    """What the file said on a day the question names (the world clock: what was true then), else
    what it said before the current value, from the history."""
    what = HISTORY_WORDS.get(predicate, predicate.replace("_", " "))
    when = month_asked(sentence, at)
    if when is not None:
        rows = await memory_facts.read_facts(client, tenant, customer, predicate, as_of=when)
        # what was true then by the world clock, whatever has happened to it since
        then = [f for f in rows if f.valid_from <= when and (f.valid_to is None or f.valid_to > when)]
        label = f"{calendar.month_name[when.month]} {when.year}"
        if not then:
            return Part(ReplyKind.HISTORY, Reply(f"I have no {what} on file for you in {label}.", []))
        f = then[0]
        return Part(ReplyKind.HISTORY, Reply(
            f"In {label} your {what} was {f.object} (true from {day(f.valid_from)}, as you told us).",
            [f"fact {f.predicate} = {f.object} valid from {day(f.valid_from)} (as of {day(when)})"]))
    rows = await memory_facts.history(client, tenant, customer, predicate)
    return Part(ReplyKind.HISTORY, _before(rows, what))


def _before(rows: Sequence[FactView], what: str) -> Reply:
    now = [f for f in rows if f.state is FactState.CURRENT and f.valid_to is None]
    past = [f for f in rows if f not in now and (f.valid_to is None or f.valid_to > f.valid_from)]
    past.sort(key=lambda f: f.valid_from)
    if not past:
        have = f" Your {what} on file is {now[-1].object}." if now else ""
        return Reply(f"I have no earlier {what} on file for you.{have}", [])
    said = [f"{f.object} (from {day(f.valid_from)}" + (f" to {day(f.valid_to)})" if f.valid_to else ")") for f in past]
    text = f"Before, we had your {what} as " + ", then ".join(said) + "."
    if now:
        text += f" Now it is {now[-1].object} (since {day(now[-1].valid_from)})."
    how = [f"fact {f.predicate} = {f.object} ({f.state.value})" for f in [*past, *now]]
    return Reply(text, how)


async def erase_preview(client: GraphClient, tenant: str, customer: str, open_tickets: Sequence) -> Part:
    """What an erasure removes, asked before anything is deleted (the caller records the question)."""
    rows = _current(await memory_facts.read_facts(client, tenant, customer))
    kept = sorted({SHOWN[f.predicate].split(":")[0].replace("your ", "").replace("a ", "") for f in rows})
    items = (", ".join(kept) + ", " if kept else "") + "our conversations with you, your tickets"
    if open_tickets:
        items += f" (including {len(open_tickets)} still open, which would be closed)"
    text = (f"I can delete your personal data: {items}, and your customer record. This cannot be undone, and "
            "this chat will end. Shall I go ahead? Reply yes to delete it, or no to keep it.")
    return Part(ReplyKind.ERASE_ASKED, Reply(text, [f"fact {f.predicate} on file" for f in rows]))


__all__ = ["HISTORY_WORDS", "SHOWN", "about_me", "day", "erase_preview", "history", "month_asked"]
