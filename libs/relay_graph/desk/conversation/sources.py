"""A reply's sources in the customer's words: the same rows as its `how_i_know` (ids, for staff and
agents), each worded without ids and on the customer's clock ("from your message on 5 Dec",
"measured on your line at 12:19"). Pure: the lines' shapes are templates.py's and the agents'."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime, timezone, tzinfo

from relay_graph.desk.conversation.reply_check import find_ids
from relay_graph.desk.customers.zone import UTC_STAMP, local_when, localised

_ID = r"\S+"
_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"^fact {_ID}: (?P<p>\w+) = (?P<o>.+?) \(recorded (?P<at>[^)]*?) by (?P<by>[\w-]+)"), "fact"),
    (re.compile(rf"^ticket (?P<t>{_ID}) \(opened (?P<at>[^)]*?)(?: by [\w-]+)?\)"), "opened"),
    (re.compile(rf"^ticket (?P<t>{_ID}): stage (?P<s>\w+) \(updated (?P<at>[^),]*)"), "stage"),
    (re.compile(rf"^ticket (?P<t>{_ID}): re-measured .*"), "measured"),
    (re.compile(rf"^technician visit {_ID} for ticket (?P<t>{_ID}): (?P<who>[^,]+), (?P<at>.+?) to "), "visit"),
    (re.compile(rf"^outage {_ID} on (?P<area>.+?) \(opened (?P<at>[^)]*)\)"), "outage"),
    (re.compile(rf"^faq {_ID}: (?P<q>.+)$"), "faq"),
    (re.compile(rf"^(?:plan|addon|service|extra) {_ID}: (?P<what>.+)$"), "offer"),
    (re.compile(r"^network: home box"), "line"),
    (re.compile(rf"^visit {_ID}: (?P<status>\w+)$"), "visit_status"),
    (re.compile(rf"^promise {_ID} on ticket (?P<t>{_ID}): due (?P<at>\d{{4}}-\d\d-\d\d \d\d:\d\d UTC)(?P<kept>, not kept)?"),
     "promise"),
    # what is on file, as on_file.py words its rows: "fact lives_in = Bengaluru (recorded 5 Dec 2026)"
    (re.compile(r"^fact (?P<p>[a-z_]+) = (?P<o>.+?)(?: \((?P<rest>[^()]*)\))?$"), "on_file"),
]


def _at(stamp: str, zone: tzinfo) -> str:
    m = UTC_STAMP.search(stamp or "")
    if not m:
        return ""
    y, mo, d, h, mi = (int(x) for x in m.groups())
    return local_when(datetime(y, mo, d, h, mi, tzinfo=timezone.utc), zone)


def _day(stamp: str, zone: tzinfo) -> str:
    said = _at(stamp, zone)
    return said.split(",")[0] if said else "earlier"


def source_words(line: str, zone: tzinfo) -> str:
    """One how-I-know line in the customer's words."""
    for rx, kind in _RULES:
        m = rx.search(line)
        if not m:
            continue
        g = m.groupdict()
        if kind == "fact":
            origin = "from your message" if g["by"] == "intake" else f"noted by our {g['by']}"
            return f"{g['p'].replace('_', ' ')}: {g['o']} ({origin} on {_day(g['at'], zone)})"
        if kind == "opened":
            return f"ticket {g['t']}, opened {_at(g['at'], zone)}"
        if kind == "stage":
            return f"ticket {g['t']}: {g['s'].replace('_', ' ')}, updated {_at(g['at'], zone)}"
        if kind == "measured":
            return f"measured on your line for ticket {g['t']}"
        if kind == "visit":
            return f"the technician visit booked for {_at(g['at'], zone)} ({g['who']})"
        if kind == "outage":
            return f"a known fault at {g['area']} since {_at(g['at'], zone)}"
        if kind == "visit_status":
            return f"the technician visit: {g['status']}"
        if kind == "promise":
            missed = ", not kept yet" if g["kept"] else ""
            return f"our promise on ticket {g['t']}, due {_at(g['at'], zone)}{missed}"
        if kind == "on_file":
            rest = f" ({localised(g['rest'], zone)})" if g["rest"] else ""
            return f"{g['p'].replace('_', ' ')}: {g['o']}{rest}"
        if kind == "faq":
            return f"our help article: {g['q']}"
        if kind == "offer":
            return f"our price list: {g['what']}"
        return "your line on file"
    return _without_ids(localised(line, zone))


def _without_ids(text: str) -> str:
    for ident in find_ids(text):
        if not ident.upper().startswith("T-"):  # a ticket id is the customer's own reference
            text = text.replace(ident, "").replace("()", "")
    return re.sub(r"\s{2,}", " ", text).strip(" :,")


def sources_in_words(how_i_know: Iterable[str], zone: tzinfo) -> list[str]:
    """Every line in the customer's words, each once, in order (a line that was nothing but ids
    says nothing to a customer: left out; a ticket id is theirs to quote)."""
    out: list[str] = []
    for line in how_i_know:
        said = source_words(str(line), zone)
        if said and (" " in said or said.upper().startswith("T-")) and said not in out:
            out.append(said)
    return out
