"""Honest replies: a reply may name only the tickets, invoices, outages, facts and other records
the graph returned for this turn.

`check_reply` finds every identifier a reply mentions and reports those not in the allowed set;
`honest_reply` keeps an (LLM-worded) candidate only when it is clean, else the templated reply
built from the graph rows. Deterministic, no I/O.

What counts as an identifier (the formats relay_graph writes, and the ones a model likes to make up):

| shape                                   | examples                                   |
|-----------------------------------------|--------------------------------------------|
| ticket ids (tickets.py: "T-" + hex, or  | T-1A2B3C4D5E6F, T-1, T-ALICE1, T-CANARY    |
|   a caller's own "T-..." id)            |                                            |
| outage, procedure, visit, promise,      | out-3f9a..., proc-..., visit-..., pr-...,  |
|   episode, session and turn ids         | ep_..., s-<hex>, t-<hex>                   |
| fact ids and other long hex / uuids     | 9f0c2d... (16+ hex with a digit), uuids    |
| prefixed record numbers                 | INV-2024-0042, TKT-5512, SR#8812, CASE-991 |
| "#" numbers                             | #48213                                     |
| any token right after a record word     | ticket 4821, invoice no. 7731, outage ID   |
|   (ticket, case, invoice, bill, outage, |   A9-77, reference: XK2231, account 99812  |
|   fact, visit, order, reference, id...) |                                            |
|   when it holds a digit or is PREFIX-x  |                                            |

Numbers that are not identifiers pass: speeds ("300 Mbps"), times ("10:02", "2 hours ago"),
dates, prices, plan names ("Fiber 1000"), router models ("Archer C6"). With `allowed_values`
given, money amounts and the provider's plan names are checked too: a price or a "Fiber 500" the
rows do not hold is invented.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from enum import Enum
from typing import Any

from pydantic import BaseModel

from relay_graph.desk.catalogue.brand import PRODUCT_LINE
from relay_graph.desk.catalogue.geo import place_key, world
from relay_graph.desk.conversation.templates import Reply
from relay_graph.desk.customers.zone import UTC_STAMP

_TOKEN = r"[A-Za-z0-9](?:[._:/-]?[A-Za-z0-9])*"

_SHAPES: list[re.Pattern[str]] = [
    # tickets.py: "T-" + 12 upper hex by default; callers may choose their own "T-..." ids
    re.compile(r"(?<![\w-])T-(?=[A-Za-z0-9._:-]*\d|[A-Z0-9_]{2,}(?![\w-]))[A-Za-z0-9](?:[._:-]?[A-Za-z0-9])*"),
    # network.py outages, tickets.py procedures and visits, episodes.py, chat.py sessions and turns
    re.compile(r"(?<![\w-])(?:out|proc|visit|pr|[st])-(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{6,}(?![\w-])"),
    re.compile(r"(?<![\w-])ep_[0-9a-fA-F]{6,}(?![\w-])"),
    # fact ids (uuid4 hex) and anything like them; uuids with dashes
    re.compile(r"(?<![\w-])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![\w-])"),
    re.compile(r"(?<![\w-])(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{16,}(?![\w-])"),
    re.compile(r"(?<![\w-])\d{13,}(?![\w-])"),  # account and card numbers are no one's to invent
    # record numbers with the prefixes desks use
    re.compile(r"(?<![\w-])(?:INV|TKT|TCK|TIX|SR|INC|CASE|REF|ORD|REQ|CMP|BILL|RCPT|TXN|OUT|VIS|APT|ACC|ACCT|CUST)"
               r"[-_#/]?\d[A-Za-z0-9]*(?:[-_/][A-Za-z0-9]+)*(?![\w-])", re.I),
    re.compile(r"(?<![\w#])#\s?(?=[A-Za-z0-9-]*\d)[A-Za-z0-9][A-Za-z0-9-]{2,}"),
]

_RECORD_WORDS = (r"tickets?|case|incident|complaint|request|invoice|bill|receipt|outage|fault|facts?|episode|visit"
                 r"|appointment|booking|reference|ref|order|transaction|txn|account|customer|docket|record|id")
_ANCHORED = re.compile(
    rf"\b(?:{_RECORD_WORDS})\b\s*(?P<marker>(?:(?:number|no\.?|num|nr\.?|id|#|ref)\s*)?[:#]?)\s*(?P<id>{_TOKEN})",
    re.I,
)
_UNIT_AFTER = re.compile(
    r"\s*(?:%|mbps|mb/s|gbps|kbps|mb|gb|tb|ghz|mhz|ms|s\b|sec|secs|seconds?|mins?|minutes?|hours?|hrs?|days?|weeks?"
    r"|months?|years?|am\b|pm\b|utc|times?|devices?|rooms?|people|of\b|out\s+of|x\b)",
    re.I,
)
_PREFIXED = re.compile(r"^[A-Z]{1,6}[-_][A-Za-z0-9]+")
_DATE_OR_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}|^\d{1,2}:\d{2}|^\d{1,2}/\d{1,2}(?:/\d{2,4})?$|^\d{1,2}(?:st|nd|rd|th)$",
                           re.I)

# The provider's plan names ("Fiber 300"): with allowed values given, a plan the rows do not hold is
# invented (a model that offers "Fiber 500" sells what the catalogue does not have).
_PLAN_NAME = re.compile(rf"\b{re.escape(PRODUCT_LINE)}\s+\d+\b", re.I)

_AMOUNT = re.compile(
    r"(?:(?:₹|rs\.?|inr|\$|usd|€|eur|£|gbp)\s?(?P<a>\d[\d,]*(?:\.\d+)?))"
    r"|(?:(?P<b>\d[\d,]*(?:\.\d+)?)\s?(?:₹|rupees|rs\b|inr|usd|dollars|eur|euros?|gbp|pounds))",
    re.I,
)


def id_key(ident: str) -> str:
    """How identifiers compare: case, a leading "#" and trailing punctuation aside."""
    return ident.strip().lstrip("#").strip().rstrip(".,;:!?)").casefold()


def _anchored_id(m: re.Match[str], text: str) -> str | None:
    ident = m.group("id")
    after = text[m.end():]
    has_digit = any(c.isdigit() for c in ident)
    if _DATE_OR_TIME.match(ident) or (has_digit and _UNIT_AFTER.match(after)):
        return None  # "outage 2 hours ago", "visit 2026-09-05", "fact 300 Mbps"
    if has_digit:
        if ident.isdigit() and len(ident) < 3 and not m.group("marker").strip():
            return None  # "ticket 2 of 3"; "ticket #2" and "ticket no. 2" still count
        return ident
    if _PREFIXED.match(ident):
        return ident  # "ticket T-CANARY", "case AB-CD"
    return None


def find_ids(text: str) -> list[str]:
    """Every identifier the text mentions, as written, each once, in order of appearance."""
    if not isinstance(text, str) or not text:
        return []
    hits: list[tuple[int, int, str]] = []
    for rx in _SHAPES:
        for m in rx.finditer(text):
            hits.append((m.start(), m.end(), m.group(0)))
    for m in _ANCHORED.finditer(text):
        ident = _anchored_id(m, text)
        if ident is not None:
            hits.append((m.start("id"), m.end("id"), ident))
    hits.sort(key=lambda h: (h[0], -(h[1] - h[0])))
    out: list[str] = []
    seen: set[str] = set()
    last_end = -1
    for start, end, ident in hits:
        if start < last_end:
            continue  # inside an identifier already taken ("ticket T-1": one id, not two)
        last_end = end
        key = id_key(ident)
        if key and key not in seen:
            seen.add(key)
            out.append(ident.strip())
    return out


def _decimal(raw: str) -> Decimal | None:
    try:
        return Decimal(raw.replace(",", ""))
    except InvalidOperation:
        return None


def _numbers_in(values: Iterable[str]) -> set[Decimal]:
    out: set[Decimal] = set()
    for v in values:
        for raw in re.findall(r"\d[\d,]*(?:\.\d+)?", v):
            d = _decimal(raw)
            if d is not None:
                out.add(d.normalize())
    return out


# ---------------------------------------------------------------------------------------------
# Times, stages and places: a reworded reply may say only what the rows (and the draft) hold.

_CLOCK = re.compile(r"(?<![\d:])(?P<h>[01]?\d|2[0-3])(?::(?P<m>[0-5]\d))?\s*(?P<ap>[ap]\.?m\.?)?(?![\d:])", re.I)
_ZONE_NAMES = re.compile(r"\b(?:UTC|GMT|IST|BST|CET|CEST|EST|EDT|PST|PDT|SGT|AEST|AEDT)\b")
# Claims about where a ticket stands: each may be made only when the rows or the draft make it.
_CLAIMS: dict[str, re.Pattern[str]] = {
    "closed": re.compile(r"\b(?:is|was|been|now)\s+(?:closed|resolved)\b", re.I),
    "fixed": re.compile(r"\b(?:is|was|been|has\s+been)\s+(?:fixed|repaired|sorted)\b", re.I),
    "visited": re.compile(r"\btechnician\s+(?:has\s+)?(?:visited|came|come|was\s+here|checked)\b", re.I),
    "cancelled": re.compile(r"\b(?:is|was|been)\s+cancel+ed\b", re.I),
    "booked": re.compile(r"\b(?:is|was|been)\s+(?:booked|scheduled)\b", re.I),
    "escalated": re.compile(r"\bescalated\b", re.I),
    "outage": re.compile(r"\b(?:outage|known\s+fault)\b", re.I),
}
_PLACE = re.compile(r"\b(?:in|at|to|from|near)\s+(?P<p>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+){0,2})")


def _clock_times(text: str) -> set[tuple[int, int]]:
    """Clock times written with minutes ("10:00") or am/pm ("10 am"): a bare number is no time."""
    out: set[tuple[int, int]] = set()
    for m in _CLOCK.finditer(text):
        if m.group("m") is None and m.group("ap") is None:
            continue
        h, mi = int(m.group("h")), int(m.group("m") or 0)
        ap = (m.group("ap") or "").lower().replace(".", "")
        h = h + 12 if ap == "pm" and h < 12 else 0 if ap == "am" and h == 12 else h
        out.add((h, mi))
    return out


def _places(text: str) -> set[str]:
    """The gazetteer's cities a sentence puts something in, at, to or from."""
    geo = world()  # built once per process, on the first reply that names a place
    out: set[str] = set()
    for m in _PLACE.finditer(text):
        words = m.group("p").split()
        for n in range(len(words), 0, -1):  # "Pune Central" before "Pune"
            key = place_key(" ".join(words[:n]))
            if key and geo.lookup(key)[0]:
                out.add(key)
                break
    return out


def invented_claims(text: str, allowed_values: Iterable[str]) -> list[str]:
    """The times, time zones, ticket stages and steps, and places `text` states that none of the
    allowed values (the rows' strings and the draft's text) states: "10:30" when the visit is at
    10:00, "UTC" to a customer whose draft speaks IST, "the technician visited" before the visit is
    done, "your ticket is closed" while it is open, "Pune" when the rows name Bengaluru."""
    held = "\n".join(v for v in allowed_values if isinstance(v, str))
    # The staff's UTC stamps (how-I-know lines) hold an instant, not words a customer may read:
    # the customer's draft words it on their own clock (customers.zone.localised).
    clock = UTC_STAMP.sub(" ", held)
    out = [f"{h:02d}:{m:02d}" for h, m in sorted(_clock_times(text) - _clock_times(clock))]
    out += sorted(set(_ZONE_NAMES.findall(text)) - set(_ZONE_NAMES.findall(clock)))
    out += [name for name, rx in _CLAIMS.items() if rx.search(text) and not rx.search(held)]
    if _PLACE.search(text):
        folded = f" {place_key(held)} "
        out += sorted(p for p in _places(text) if f" {p} " not in folded)
    return out


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    invented: list[str] = field(default_factory=list)


def check_reply(text: str, allowed_ids: Iterable[str], allowed_values: Iterable[str] | None = None) -> CheckResult:
    """Which identifiers in `text` the graph did not return (`allowed_ids`, compared without case).
    An identifier written inside one of `allowed_values` (a router model, a plan name the rows
    hold) is allowed too; with `allowed_values` given, so must be every money amount."""
    if not isinstance(text, str):
        return CheckResult(False, ["<not text>"])
    allowed = {id_key(a) for a in allowed_ids if isinstance(a, str) and a.strip()}
    values = [v for v in (allowed_values or ()) if isinstance(v, str)]
    value_tokens = {id_key(t) for v in values for t in re.findall(_TOKEN, v)} | {id_key(v) for v in values}
    invented = [i for i in find_ids(text) if id_key(i) not in allowed and id_key(i) not in value_tokens]
    if allowed_values is not None:
        plans = {" ".join(m.group(0).lower().split()) for v in values for m in _PLAN_NAME.finditer(v)}
        invented += [m.group(0) for m in _PLAN_NAME.finditer(text) if " ".join(m.group(0).lower().split()) not in plans]
        invented += invented_claims(text, values)
        known = _numbers_in(values)
        for m in _AMOUNT.finditer(text):
            d = _decimal(m.group("a") or m.group("b"))
            if d is None or d.normalize() not in known:
                invented.append(m.group(0).strip())
    return CheckResult(not invented, invented)


# ---------------------------------------------------------------------------------------------
# What the rows allow.

_ID_KEY = re.compile(r"(?:^|_)(?:id|ids|uid)$|^(?:ticket|outage|visit|episode|fact|procedure|invoice|session|turn)"
                     r"(?:_id)?$", re.I)


def _strings(value: Any, key: str | None = None, ids: set[str] | None = None, texts: list[str] | None = None,
             depth: int = 0) -> None:
    assert ids is not None and texts is not None
    if depth > 8:
        return
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if isinstance(value, Reply):
        _strings(value.text, None, ids, texts, depth + 1)
        _strings(value.how_i_know, None, ids, texts, depth + 1)
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            _strings(v, str(k), ids, texts, depth + 1)
        return
    if isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            _strings(v, key, ids, texts, depth + 1)
        return
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, (datetime, date)):
        return
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        texts.append(str(value))
        return
    if isinstance(value, str):
        texts.append(value)
        if key is not None and _ID_KEY.search(key) and value.strip():
            ids.add(value.strip())
        ids.update(find_ids(value))


def allowed_from(*sources: Any) -> tuple[set[str], list[str]]:
    """(allowed ids, allowed values) from graph rows: dicts, pydantic models, Replies, lists of
    them, nested. Ids are the values of id-named fields (`id`, `ticket_id`, `fact_id`, ...) and
    every identifier written in any string; values are every string and number."""
    ids: set[str] = set()
    texts: list[str] = []
    for s in sources:
        _strings(s, None, ids, texts)
    return ids, texts


def honest_reply(candidate_text: str | None, fallback: Reply, allowed_ids: Iterable[str],
                 allowed_values: Iterable[str] | None = None) -> Reply:
    """The candidate, with the fallback's how-I-know lines, when it names nothing the graph did not
    return; else the fallback. The fallback is built from the graph rows, so what it names is
    allowed too."""
    if not isinstance(candidate_text, str) or not candidate_text.strip():
        return fallback
    own_ids, own_values = allowed_from(fallback)
    values = None if allowed_values is None else [*allowed_values, *own_values]
    result = check_reply(candidate_text, {*allowed_ids, *own_ids}, values)
    if not result.ok:
        return fallback
    return Reply(candidate_text.strip(), list(fallback.how_i_know))
