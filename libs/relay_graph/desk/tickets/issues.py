"""What a customer's problem is called in the graph: the Issue entity a `has_issue` fact points at.

An Issue is its kind with the details the customer named: the device, the place and the time
("wifi_drops on the tv upstairs since 2026-09-07"). Entities are resolved by name, so two reports
become one Issue only when all of these agree; two customers whose Wi-Fi drops, one on the TV
upstairs since Monday and one on a laptop in the kitchen since Friday, have two issues, however
alike the words. Objects of writes are never matched fuzzily (a write addresses the exact key),
so "upstairs" and "upstars" do not meet either.

A relative time ("since yesterday") means a different day for every report; callers pass the date
it resolved to when they can.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import TYPE_CHECKING

from relay_graph.memory.entities import name_key
from relay_graph.memory.models import RetireInput
from relay_graph.memory.registry import MAX_VALUE_CHARS, clean_text

if TYPE_CHECKING:
    from relay_graph.memory.facade import Memory
    from relay_graph.memory.models import FactView

DETAIL_CHARS = 60  # each detail's share of the name; the kind always fits


def issue_name(kind: str, *, device: str | None = None, place: str | None = None,
               time: str | date | datetime | None = None) -> str:
    """`issue_name("wifi_drops", device="tv", place="upstairs", time="since monday")`
    -> "wifi_drops on the tv upstairs since monday". A date or datetime becomes "since <date>"."""
    parts = [clean_text(kind, "issue kind")]
    if device:
        d = _detail(device)
        parts.append(d if d.split()[0] in ("on", "with") else f"on the {d.removeprefix('the ').removeprefix('my ')}")
    if place:
        p = _detail(place)
        parts.append(p if p.split()[0] in ("upstairs", "downstairs", "outside", "everywhere", "at", "in", "on")
                     else f"in the {p.removeprefix('the ').removeprefix('my ')}")
    if time:
        parts.append(f"since {_day(time)}" if isinstance(time, (date, datetime)) else _detail(time))
    return " ".join(parts)[:MAX_VALUE_CHARS]


def issue_kind(name: str) -> str:
    """The kind an issue name starts with ("wifi_drops on the tv" -> "wifi_drops"); a bare kind
    is its own kind."""
    return clean_text(name, "issue").split(" ", 1)[0]


def _detail(text: str) -> str:
    return " ".join(clean_text(text, "issue detail").lower().split())[:DETAIL_CHARS]


def _day(when: date | datetime) -> str:
    return (when.date() if isinstance(when, datetime) else when).isoformat()


async def close_issues(memory: "Memory", tenant: str, customer: str, kind: str, *, agent: str,
                       at: datetime | None = None, current: "list[FactView] | None" = None) -> list[str]:
    """A fix the customer confirmed: their current issues of that kind (whatever details they
    named) end at `at`. `current`: the customer's current facts when the caller has just read them
    (else they are read here). Returns the retired fact ids; none is fine (nothing was on file)."""
    want = name_key(clean_text(kind, "issue kind"))
    if current is None:
        current = await memory.facts(tenant, customer, "has_issue")
    retired: list[str] = []
    for f in (f for f in current if f.predicate == "has_issue"):
        key = name_key(f.object)  # the kind, then the details (issue_name); a kind may be words too
        if key == want or key.startswith(want + " "):
            retired += await memory.retire_fact(tenant, RetireInput(
                subject=customer, predicate="has_issue", object=f.object, agent=agent, valid_to=at))
    return retired
