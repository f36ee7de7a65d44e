"""Templated replies: what the desk says when there is no LLM to word it.

Every function takes only values the caller read from the graph (facts, ticket ids, times,
stages) and returns Reply(text, how_i_know): the text the customer sees and the graph facts and
ids it rests on, one line each, e.g. "ticket T-123 (opened 2026-09-05 10:02 UTC by intake)".
A reply names no id that is not in its how_i_know, and never asks for what is already on file
("Tell us once")."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import NamedTuple

from relay_graph.runtime.errors import InvalidInput
from relay_graph.memory.models import FactState, FactView
from relay_graph.desk.network.models import place_in_words


class Reply(NamedTuple):
    text: str
    how_i_know: list[str]


# What to ask for each thing the desk may need; keys are registry predicates, plus the details of
# a problem report that the intake agent may want before opening a ticket.
ASK_WORDING: dict[str, str] = {
    "name": "your name",
    "lives_in": "the city you live in",
    "on_plan": "which plan you are on",
    "has_router": "your router's make and model (printed on the sticker underneath)",
    "owns_device": "which device the problem shows up on",
    "phone": "a phone number we can reach you on",
    "email": "your email address",
    "prefers_contact": "how you would like us to contact you (phone, email, SMS, WhatsApp or this chat)",
    "has_issue": "what is going wrong",
    "household_size": "how many people share the line",
    "prefers_time": "when it suits you best to be contacted",
    "place": "where in your home it happens (for example upstairs)",
    "since": "since when it has been happening",
    "device": "which device it happens on",
}

_SAID: dict[str, str] = {
    "name": "your name is {o}",
    "lives_in": "you live in {o}",
    "on_plan": "you are on {o}",
    "has_router": "your router is a {o}",
    "owns_device": "you have a {o}",
    "phone": "we can reach you on {o}",
    "email": "your email address is {o}",
    "prefers_contact": "you prefer to be contacted by {o}",
    "has_issue": "you reported {o}",
    "lives_in_area": "you live in {o}",
    "household_size": "{o} share the line",
    "prefers_time": "the best time to reach you is {o}",
    "wants_plan": "you would like to move to {o}",
    "answered": "your answer {o}",
}
_ENDED: dict[str, str] = {
    "lives_in": "you no longer live in {o}",
    "on_plan": "you are no longer on {o}",
    "has_router": "you no longer use the {o}",
    "owns_device": "you no longer have the {o}",
    "phone": "{o} is no longer your number",
    "email": "{o} is no longer your email address",
    "prefers_contact": "you would rather not be contacted by {o}",
    "has_issue": "{o} is no longer a problem",
}
_CONTACT_WORDS = {"phone": "phone", "email": "email", "sms": "SMS", "whatsapp": "WhatsApp", "chat": "this chat"}

# What a ticket stage means to the customer. Stages are the ticket workflow's; an unknown one is
# still reported, in its own words.
STAGE_WORDING: dict[str, str] = {
    "new": "is open and waiting for a specialist to pick it up",
    "open": "is open and waiting for a specialist to pick it up",
    "opened": "is open and waiting for a specialist to pick it up",
    "handed_off": "has been handed to our resolver and is waiting to be picked up",
    "picked_up": "has been picked up{by}",
    "assigned": "has been picked up{by}",
    "diagnosing": "is being diagnosed: checks are running on your line{by}",
    "investigating": "is being diagnosed: checks are running on your line{by}",
    "measuring": "is being diagnosed: checks are running on your line{by}",
    "fixing": "is being worked on: a fix is being applied{by}",
    "in_progress": "is being worked on{by}",
    "verifying": "has had a fix applied, and your line is being measured again to prove it worked",
    "awaiting_confirmation": "looks fixed on our side; we are waiting for you to confirm",
    "awaiting_customer": "is waiting for your reply",
    "tech_dispatched": "needs a technician visit, which is booked",
    "escalated": "has been escalated to a specialist{by}",
    "waiting_on_outage": "is linked to an outage our network team is repairing",
    "reopened": "has been reopened and is back with our team",
    "resolved": "is resolved",
    "fixed": "is resolved",
    "closed": "is closed",
}


def when(at: datetime) -> str:
    """A time as replies print it: UTC, to the minute."""
    if not isinstance(at, datetime):
        raise InvalidInput("a time must be a datetime")
    at = at if at.tzinfo else at.replace(tzinfo=timezone.utc)
    return at.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _need(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{what} must be a non-empty string")
    return value.strip()


def _fact_ref(f: FactView) -> str:
    state = "" if f.state is FactState.CURRENT else f", {f.state.value}"
    return f"fact {f.fact_id}: {f.predicate} = {f.object} (recorded {when(f.recorded_at)} by {f.asserted_by}{state})"


def _ticket_ref(ticket_id: str, opened_at: datetime | None = None, opened_by: str | None = None) -> str:
    parts = []
    if opened_at is not None:
        parts.append(f"opened {when(opened_at)}")
    if opened_by:
        parts.append(f"by {opened_by}")
    return f"ticket {ticket_id}" + (f" ({' '.join(parts)})" if parts else "")


def _join(items: Sequence[str]) -> str:
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _object_words(f: FactView) -> str:
    if f.predicate == "prefers_contact":
        return _CONTACT_WORDS.get(f.object, f.object)
    if f.predicate == "answered":  # "has_router: the grey box" -> 'about your router: "the grey box"'
        asked, _, said = f.object.partition(": ")
        return f'to my question about {ASK_WORDING.get(asked, asked.replace("_", " "))}: "{said}"'
    if f.predicate == "household_size":
        return "1 person" if f.object == "1" else f"{f.object} people"
    return f.object


# ---------------------------------------------------------------------------------------------
# Tell us once.


def missing_info(known: Mapping[str, str | None], needed: Iterable[str]) -> list[str]:
    """What of `needed` is not on file, in the order needed, each once. `known` maps a key (a
    predicate, or a problem detail such as "place") to the value on file."""
    out: list[str] = []
    for key in needed:
        value = known.get(key)
        if (value is None or not str(value).strip()) and key not in out:
            out.append(key)
    return out


def ask_for(missing: Sequence[str]) -> str:
    """The question for what is missing; empty when nothing is."""
    wants = [ASK_WORDING.get(m, m.replace("_", " ")) for m in missing]
    if not wants:
        return ""
    return f"Could you tell me {_join(wants)}?"


def _known_from(facts: Iterable[FactView]) -> dict[str, str]:
    known: dict[str, str] = {}
    for f in facts:
        if f.state is FactState.CURRENT and f.valid_to is None:
            known.setdefault(f.predicate, f.object)
    return known


def greeting(on_file: Sequence[FactView], needed: Sequence[str] = ()) -> Reply:
    """Hello, by name when we have it, asking only for what is not on file."""
    known = _known_from(on_file)
    used = [f for f in on_file if f.state is FactState.CURRENT and f.predicate in ({"name"} | set(needed))]
    name = known.get("name")
    hello = f"Hello {name}!" if name else "Hello!"
    question = ask_for(missing_info(known, needed))
    text = f"{hello} {question}" if question else f"{hello} How can I help you today?"
    return Reply(text, [_fact_ref(f) for f in used])


def acknowledge(learnt: Sequence[FactView], ended: Sequence[FactView] = (), *, on_file: Sequence[FactView] = (),
                needed: Sequence[str] = ()) -> Reply:
    """Thanks for what we just wrote down (and what we just closed), then the next question if any.
    `on_file` is everything current for the customer, so nothing known is asked again."""
    said = [_SAID.get(f.predicate, f.predicate.replace("_", " ") + ": {o}").format(o=_object_words(f)) for f in learnt]
    gone = [_ENDED.get(f.predicate, f.predicate.replace("_", " ") + " {o} no longer applies").format(o=_object_words(f))
            for f in ended]
    parts = []
    if said or gone:
        parts.append(f"Thanks, I have noted that {_join(said + gone)}.")
    known = _known_from([*on_file, *learnt])
    for f in ended:  # what was just ended is not on file any more
        if known.get(f.predicate) == f.object:
            known.pop(f.predicate)
    question = ask_for(missing_info(known, needed))
    if question:
        parts.append(question)
    if not parts:
        parts.append("Thanks, I have everything I need for now.")
    return Reply(" ".join(parts), [_fact_ref(f) for f in [*learnt, *ended]])


# ---------------------------------------------------------------------------------------------
# Tickets.


def ticket_opened(ticket_id: str, opened_at: datetime, opened_by: str, issue: str, *,
                  handed_to: str | None = None, handed_at: datetime | None = None) -> Reply:
    """The ticket is open (and, when `handed_to` is given, handed to that agent)."""
    tid = _need(ticket_id, "ticket_id")
    issue = _need(issue, "issue")
    how = [_ticket_ref(tid, opened_at, _need(opened_by, "opened_by"))]
    text = f"I have opened ticket {tid} for this: {issue}."
    if handed_to:
        text += f" It is now with our {handed_to}, who will run checks on your line, and I will keep you posted here."
        how.append(f"handoff of ticket {tid} to {handed_to}" + (f" at {when(handed_at)}" if handed_at else ""))
    return Reply(text, how)


def status_update(ticket_id: str, stage: str, updated_at: datetime, *, owner: str | None = None,
                  latest: str | None = None) -> Reply:
    """Where a ticket stands, in the customer's words, from its stage (and latest timeline event)."""
    tid = _need(ticket_id, "ticket_id")
    stage = _need(stage, "stage")
    key = stage.lower().replace(" ", "_").replace("-", "_")
    wording = STAGE_WORDING.get(key, "is at the stage: " + stage.replace("_", " "))
    wording = wording.replace("{by}", f" by our {owner}" if owner else "")
    text = f"Ticket {tid} {wording} (last update {when(updated_at)})."
    if latest:
        text += f" Latest: {latest.strip()}."
    how = [f"ticket {tid}: stage {stage} (updated {when(updated_at)}" + (f", owner {owner})" if owner else ")")]
    return Reply(text, how)


def confirm_fixed_request(ticket_id: str, fix: str, fixed_at: datetime, fixed_by: str) -> Reply:
    """We believe it is fixed: ask the customer to confirm."""
    tid = _need(ticket_id, "ticket_id")
    fix = _need(fix, "fix")
    text = (f"Good news on ticket {tid}: {fix}, and our checks since then look healthy. "
            "Is everything working for you now? Please reply yes or no.")
    return Reply(text, [f"ticket {tid}: fix '{fix}' applied {when(fixed_at)} by {_need(fixed_by, 'fixed_by')}"])


def confirmation_received(ticket_id: str, fixed: bool, stage: str, at: datetime) -> Reply:
    """The answer to a confirm request, as recorded on the ticket."""
    tid = _need(ticket_id, "ticket_id")
    if fixed:
        text = f"Great, thank you for confirming. Ticket {tid} is now closed."
    else:
        text = (f"I am sorry it is still not right. Ticket {tid} is reopened and back with our team; "
                "we will try a different fix.")
    return Reply(text, [f"ticket {tid}: stage {_need(stage, 'stage')} (updated {when(at)})"])


def _hours(span) -> str:
    hours = round(span.total_seconds() / 3600)
    return "the hour" if hours <= 1 else f"{hours} hours"


def technician_dispatched(ticket_id: str, visit_id: str, technician: str, window_start: datetime,
                          window_end: datetime) -> Reply:
    tid = _need(ticket_id, "ticket_id")
    vid = _need(visit_id, "visit_id")
    tech = _need(technician, "technician")
    if window_end < window_start:
        raise InvalidInput("window_end is before window_start")
    text = (f"A technician is booked for ticket {tid}: {tech} will visit on {when(window_start)} (within "
            f"{_hours(window_end - window_start)}). Please make sure someone is home to let them in.")
    return Reply(text, [f"technician visit {vid} for ticket {tid}: {tech}, {when(window_start)} to {when(window_end)}"])


# ---------------------------------------------------------------------------------------------
# Outages and refusals.


def outage_notice(outage_id: str, area: str, opened_at: datetime, *, cause: str | None = None,
                  eta: datetime | None = None, ticket_id: str | None = None) -> Reply:
    """A known outage reaches this customer: say so before they troubleshoot anything."""
    oid = _need(outage_id, "outage_id")
    area = place_in_words(_need(area, "area"))  # a home box's name carries its customer's id
    # the cause is the network team's words (node kinds and ids): for the staff lines only
    text = f"There is a known fault at {area} since {when(opened_at)}, on the way to your home."
    text += " Our network team is already working on it"
    text += f" and expects service back by {when(eta)}." if eta else "."
    text += " There is no need to restart your router."
    how = [f"outage {oid} on {area} (opened {when(opened_at)})" + (f": {cause.strip()}" if cause and cause.strip() else "")]
    if ticket_id:
        tid = _need(ticket_id, "ticket_id")
        text += f" I have linked it to your ticket {tid}."
        how.append(f"ticket {tid} linked to outage {oid}")
    return Reply(text, how)


def fault_notice(node_id: str, area: str, status: str, since: datetime | None, *, ticket_id: str | None = None) -> Reply:
    """A node on this customer's line is down or degraded and no outage is open on it yet: said as
    plainly, before any troubleshooting."""
    area = _need(area, "area")
    text = f"There is a known fault at {area}" + (f" since {when(since)}" if since else "") + ", on the way to your home."
    text += " Our network team is on it, so there is no need to restart your router."
    how = [f"network node {_need(node_id, 'node_id')} ({area}): {status}" + (f" since {when(since)}" if since else "")]
    if ticket_id:
        text += f" Your ticket {_need(ticket_id, 'ticket_id')} stays open until it is repaired."
        how.append(f"ticket {ticket_id}")
    return Reply(text, how)


def refuse_other_customer() -> Reply:
    return Reply(
        "I am sorry, I can only discuss your own account. I cannot look up or share anything about "
        "another customer. Is there something about your own service I can help with?",
        [],
    )


def refuse_off_topic() -> Reply:
    return Reply(
        "I can only help with your internet service: connection problems, plans, billing, moving home "
        "and visits. Is there anything about your service I can do for you?",
        [],
    )
