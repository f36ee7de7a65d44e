"""Answering a turn's asks from the graph: the reads each ask needs, then compose.py's words.

`answer_asks` is what the intake agent calls once the turn's facts are filed and its ticket work
is done (so "I live in London now, what do plans cost?" is priced in pounds, and "my wifi is slow,
what should I try?" gets a tip for the ticket just opened). It only reads: the asks that are writes
themselves (a reading noted on the ticket's timeline, a promise kept on the ticket) are done by the
caller's `TicketActs` (the intake agent's: usecases.ticket_opening, on its call), so every write
goes through a use case."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Any, Protocol

from relay_graph.desk import catalogue
from relay_graph.desk.catalogue.models import PlacementStatus

from relay_graph.desk.tickets import store as tickets
from relay_graph.desk.tickets import work as ticket_work
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import NotFound
from relay_graph.desk.extraction.rules import extract
from relay_graph.desk.extraction.schema import Intent
from relay_graph.desk.conversation import compose, on_file, reads
from relay_graph.desk.customers.zone import customer_zone
from relay_graph.desk.conversation.asks import Ask, AskKind, callback_due
from relay_graph.desk.conversation.compose import Part
from relay_graph.desk.conversation.kinds import ASKED_PREFIX, ReplyKind

# Customer-safe tips per kind of problem: FAQ ids of the catalogue, most fitting first. A Wi-Fi
# problem in one part of the home gets the Wi-Fi placement answer before a restart.
TIP_FAQS: dict[str, tuple[str, ...]] = {
    "slow_speed": ("speed-test", "restart-router", "slow-wifi"),
    "wifi_drops": ("slow-wifi", "restart-router"),
    "intermittent": ("restart-router", "speed-test"),
    "router_frozen": ("restart-router",),
    "no_connection": ("restart-router", "red-light"),
    "no_signal_light": ("red-light",),
}
_WIFI_PLACE = re.compile(r"\b(?:wi-?fi|upstairs|downstairs|bedroom|room|floor|garden|kitchen|office)\b", re.I)
TIP_PREFIX = "tip:"
OFFERED_PREFIX = "offered:"  # the plan a reply offered (a recommendation, "the fastest"), for "that one" after
CALLBACK_WITHIN = timedelta(hours=2)
_TOMORROW = re.compile(r"\b(?:tomorrow|tmrw|tmr|tomoro|kal)\b", re.I)
_CLOCK_SAID = re.compile(r"\d\s*[ap]\.?\s?m\b|\d:\d", re.I)  # "10 am", "6pm", "17:30": no 12-hour guess
_MORNING = re.compile(r"\b(?:mornings?|subah|breakfast)\b", re.I)
_TODAY = re.compile(r"\b(?:today|tonight|tnite|aaj)\b", re.I)
CUSTOMER_EVENTS = frozenset({"customer_reading"})
_SERVICE_INTENTS = {Intent.REPORT_PROBLEM, Intent.ASK_STATUS, Intent.CONFIRM_FIXED, Intent.CONFIRM_NOT_FIXED,
                    Intent.MOVE, Intent.GIVE_INFO}


@dataclass
class TicketRef:
    """An open ticket the asks may be about (the newest first)."""

    id: str
    issue: str
    summary: str = ""
    stage: str | None = None  # its stage when read (the workflow's guards read it); None: read it again


class TicketActs(Protocol):
    """The asks that are writes on the customer's open ticket, done by the caller's use cases."""

    async def reading(self, ticket: TicketRef, direction: str, at: datetime) -> bool:
        """Note "it is better/worse now" on the ticket; False: not noted (no such ticket here)."""
        ...

    async def promise(self, ticket: TicketRef, text: str, due: datetime, source: str,
                      at: datetime) -> reads.PromiseView | None:
        """Keep a promise on the ticket; None: not kept (no such ticket here)."""
        ...

    async def want_plan(self, plan: str, source: str, at: datetime) -> bool:
        """Record that the customer asked for `plan` (a `wants_plan` fact, `source` their turn)."""
        ...


@dataclass
class Answered:
    parts: list[Part] = field(default_factory=list)
    rows: list[Any] = field(default_factory=list)  # what the words rest on, for the reply check
    answers: list[str] = field(default_factory=list)  # extra answer labels ("tip:slow-wifi")


_CATALOGUE = {AskKind.PLANS, AskKind.ADDONS, AskKind.SERVICES, AskKind.RECOMMEND, AskKind.NOT_SOLD}


def faq_worth_asking(ask: Ask) -> bool:
    """An FAQ search only for a question that is nothing else the desk handles: no problem, fact or
    ticket question in that sentence."""
    ex = extract(ask.sentence or ask.detail or "")
    return not (ex.problem or ex.facts or ex.planned or ex.intent in _SERVICE_INTENTS)


def _tip_order(ticket: TicketRef, on_file_text: str) -> list[str]:
    order = list(TIP_FAQS.get(ticket.issue, ("restart-router",)))
    if "slow-wifi" in order and _WIFI_PLACE.search(f"{ticket.summary} {on_file_text}"):
        order.remove("slow-wifi")
        order.insert(0, "slow-wifi")
    return order


@dataclass(frozen=True)
class CallbackWindow:
    """When a promised call may come: from `after` (None: from now) until `due`, on the customer's
    clock. `gone_by`: the time of day they named has already passed today, so the window starts
    now (or, for a deadline they wanted today, is the soonest one we can keep), and the reply says so."""

    due: datetime
    after: datetime | None = None
    gone_by: bool = False


def callback_window(detail: str | None, at: datetime, zone: tzinfo = timezone.utc, sentence: str = "") -> CallbackWindow:
    """The window of a callback asked for as `detail` ("before 10", "after 6 pm today") at `at`:
    "after 6" at 19:51 is any time from now (6 pm has come), not 18:00 tomorrow; "before 10 today"
    at 11:00 cannot be kept, so the soonest window is promised and said to be so; a time still
    ahead today, or one said with "tomorrow", is that time."""
    said = f"{detail} {sentence}"
    wants_after = (detail or "").startswith("after")
    tomorrow = bool(_TOMORROW.search(said))
    hm = callback_due(detail)
    local = at.astimezone(zone)
    if hm is None:
        return CallbackWindow(local + CALLBACK_WITHIN)
    named = local.replace(hour=hm[0], minute=hm[1], second=0, microsecond=0)
    if (named <= local and 1 <= hm[0] <= 11 and not tomorrow and not _CLOCK_SAID.search(detail or "")
            and not _MORNING.search(said)):
        # a bare "before 10" said in the evening is 22:00, the next 10 o'clock on a 12-hour clock
        evening = named + timedelta(hours=12)
        named = evening if evening > local else named
    if tomorrow or (named <= local and not (wants_after or _TODAY.search(said))):
        named += timedelta(days=1)  # aware arithmetic is on the wall clock: the same hour the next day
    elif named <= local:
        return CallbackWindow(local + CALLBACK_WITHIN, None, True)
    if wants_after:
        return CallbackWindow(named + CALLBACK_WITHIN, named)
    return CallbackWindow(named)


async def answer_asks(client: GraphClient, tenant: str, *, customer: str, asks: Sequence[Ask], turn_id: str,
                      at: datetime, acts: TicketActs, open_ticket: TicketRef | None, said_before: set[str],
                      on_file_text: str = "", open_tickets: Sequence = ()) -> Answered:
    """Each ask answered in order, from the graph of `tenant` (see the module doc)."""
    out = Answered()
    if not asks:
        return out
    country = None
    if any(a.kind in _CATALOGUE for a in asks):
        country = await reads.customer_country(client, tenant, customer)
    plans: list | None = None

    async def plan_rows() -> list:
        nonlocal plans
        if plans is None:
            plans = await catalogue.plans_for(client, tenant, country.code) if country else []
        return plans

    for ask in asks:
        k = ask.kind
        if k in _CATALOGUE:
            await _catalogue_ask(out, client, tenant, ask, country, plan_rows)
        elif k is AskKind.COVERAGE:
            out.parts.append(await _coverage(client, tenant, ask.detail))
        elif k is AskKind.FAQ and faq_worth_asking(ask):
            question = ask.detail or ask.sentence
            found = await catalogue.faq(client, tenant, question, limit=1)
            if found and found[0].score >= catalogue.faq_floor(question):
                out.parts.append(compose.faq(found[0]))
                out.rows += found
        elif k in _ON_FILE:
            await _on_file_ask(out, client, tenant, customer, ask, at, open_tickets)
        elif k is AskKind.PLAN_REQUEST:
            await _plan_request(out, client, tenant, ask, country or await reads.customer_country(client, tenant, customer),
                                acts, turn_id, at, said_before)
        elif k is AskKind.TIP:
            await _tip(out, client, tenant, open_ticket, on_file_text, said_before)
        elif k in (AskKind.READING, AskKind.CALLBACK) and open_ticket is not None:
            zone = await customer_zone(client, tenant, customer) if k is AskKind.CALLBACK else timezone.utc
            await _ticket_ask(out, acts, ask, open_ticket, turn_id, at, zone)
        elif k is AskKind.CALLBACK:
            out.parts.append(compose.no_open_ticket(ReplyKind.PROMISE))
        # UPDATE is the ticket work's (intake's status words with the last step)
    return out


async def _coverage(client: GraphClient, tenant: str, place: str | None) -> Part:
    """Whether we serve a place, from the footprint (a served city by name, else the place as the
    placement reads it: one of our areas is served). Never moves anyone's line."""
    hit = await reads.served_city(client, tenant, place) if place else None
    if hit is None and place:
        try:
            p = await catalogue.place(client, tenant, place)
        except Exception:  # a place name the placement refuses is "not on our list", not an error
            p = None
        if p is not None and p.status is PlacementStatus.SERVED and p.city:
            return compose.coverage(f"{p.area}, {p.city}" if p.area else p.city, p.city, None, [])
    names = [] if hit else await reads.served_city_names(client, tenant)
    return compose.coverage(place, hit[0] if hit else None, hit[1] if hit else None, names)


_ON_FILE = {AskKind.ABOUT_ME, AskKind.HISTORY, AskKind.ERASE}


async def _on_file_ask(out: Answered, client: GraphClient, tenant: str, customer: str, ask: Ask, at: datetime,
                       open_tickets: Sequence) -> None:
    """What is on their file, what it said before, what an erasure would remove (then asked)."""
    if ask.kind is AskKind.ABOUT_ME:
        out.parts.append(await on_file.about_me(client, tenant, customer, open_tickets, only=ask.detail))
    elif ask.kind is AskKind.HISTORY:
        out.parts.append(await on_file.history(client, tenant, customer, ask.detail or "lives_in", ask.sentence, at))
    else:
        out.parts.append(await on_file.erase_preview(client, tenant, customer, open_tickets))
        out.answers.append(ASKED_PREFIX + "erase")


def plan_named(detail: str, plans: Sequence) -> object | None:
    """The catalogue plan "the 300 one", "fiber 1000", "the cheapest" names, else None."""
    said = detail.lower()
    if not plans:
        return None
    if re.search(r"cheap|basic|smallest", said):
        return min(plans, key=lambda p: p.price.amount)
    if re.search(r"fast|top|biggest", said):
        return max(plans, key=lambda p: p.down_mbps)
    m = re.search(r"(\d+(?:\.\d)?)\s*(g)?", said)
    if m:
        mbps = float(m.group(1)) * (1000 if m.group(2) else 1)
        return next((p for p in plans if p.down_mbps == mbps), None)
    return next((p for p in plans if p.name.lower() in said or said in p.name.lower()), None)


async def _plan_request(out: Answered, client: GraphClient, tenant: str, ask: Ask, country, acts: TicketActs,
                        turn_id: str, at: datetime, said_before: set[str] = frozenset()) -> None:
    """"Book the 300 one": the plan it names is recorded as asked for, and what happens next said.
    "That one" is the plan the desk offered last in the session (its "offered:" label)."""
    plans = await catalogue.plans_for(client, tenant, country.code) if country else []
    detail = ask.detail or ""
    if re.match(r"(?i)(?:that|this)\s", detail):
        last = [x for x in getattr(said_before, "last", ()) if x.startswith(OFFERED_PREFIX)]
        earlier = sorted(x for x in said_before if x.startswith(OFFERED_PREFIX))
        detail = (last or earlier or [""])[-1][len(OFFERED_PREFIX):]
    plan = plan_named(detail, plans)
    if plan is None:
        names = ", ".join(p.name for p in plans)
        out.parts.append(Part(ReplyKind.CLARIFY, compose.Reply(
            f"Which plan would you like? We have {names}." if names else "Which plan would you like?", [])))
        return
    if await acts.want_plan(plan.name, turn_id, at):
        out.parts.append(compose.plan_requested(plan, country.name))
        out.rows.append(plan)


_NO_CATALOGUE = Part(ReplyKind.CLARIFY, compose.Reply(
    "I cannot see our price list for your area just now. Tell me the city you live in and I will check.", []))


async def _catalogue_ask(out: Answered, client: GraphClient, tenant: str, ask: Ask, country,
                         plan_rows: Callable[[], Awaitable[list]]) -> None:
    """Plans, a recommendation, a product we do not sell, add-ons, services: from the catalogue of
    the customer's country (said once when there is none)."""
    k = ask.kind
    if country is None:
        if _NO_CATALOGUE not in out.parts:
            out.parts.append(_NO_CATALOGUE)
        return
    if k in (AskKind.PLANS, AskKind.RECOMMEND, AskKind.NOT_SOLD):
        rows = await plan_rows()
        if k is AskKind.PLANS:
            part = compose.plans(rows, country.name)
            named = plan_named(ask.sentence, rows) if re.search(r"(?i)cheap|fast|top|basic|smallest|biggest",
                                                                ask.sentence) else None
            if named is not None:
                out.answers.append(OFFERED_PREFIX + named.name)
        elif k is AskKind.RECOMMEND:
            part = compose.recommend(rows, ask.household or compose.Household(), country.name)
            best = compose.pick_plan(rows, ask.household or compose.Household())
            if best is not None:  # "ok, that one" in a later turn is this plan
                out.answers.append(OFFERED_PREFIX + best.name)
            if not (ask.household and ask.household.people):  # it asks how many share the line
                out.answers.append(ASKED_PREFIX + "household_size")
        else:
            part = compose.not_sold(ask.detail or "that", rows, country.name)
    elif k is AskKind.ADDONS:
        rows = await catalogue.addons_for(client, tenant, country.code)
        part = compose.addons(rows, country.name, (ask.detail or "").split(","))
    else:
        rows = await catalogue.services_for(client, tenant, country.code)
        part = compose.services(rows, country.name)
    out.parts.append(part)
    out.rows += rows


async def _tip(out: Answered, client: GraphClient, tenant: str, ticket: TicketRef | None, on_file_text: str,
               said_before: set[str]) -> None:
    """A safe tip for the open ticket's kind of problem, one not given this session if there is one."""
    if ticket is None:
        out.parts.append(compose.no_open_ticket(ReplyKind.TIP))
        return
    order = _tip_order(ticket, on_file_text)
    fresh = [f for f in order if TIP_PREFIX + f not in said_before] or order
    for faq_id in fresh:
        answer = await reads.faq_by_id(client, tenant, faq_id)
        if answer is not None:
            out.parts.append(compose.tip(answer, ticket.id))
            out.rows.append(answer)
            out.answers.append(TIP_PREFIX + faq_id)
            return


async def _ticket_ask(out: Answered, acts: TicketActs, ask: Ask, ticket: TicketRef, turn_id: str,
                      at: datetime, zone: tzinfo = timezone.utc) -> None:
    """A reading ("it's a bit better now") or a callback ("call me before 10") on the open ticket."""
    if ask.kind is AskKind.READING:
        direction = ask.detail or "better"
        if await acts.reading(ticket, direction, at):
            out.parts.append(compose.reading_noted(direction, ticket.id, at))
        return
    window = callback_window(ask.detail, at, zone, ask.sentence or "")
    text = "A technician will call you"
    promise = await acts.promise(ticket, text, window.due, turn_id, at)
    if promise is not None:
        out.parts.append(compose.promise_made(promise.promise_id, text, window.due, ticket.id, after=window.after,
                                              gone_by=window.gone_by))
        out.rows.append(promise)


async def update_parts(client: GraphClient, tenant: str, ticket_ids: Sequence[str], limit: int = 3,
                       now: datetime | None = None) -> tuple[list[Part], list]:
    """Where each open ticket stands: its stage in words, its last step (the customer's wording of
    it when the timeline has one), and a booked technician visit's own day and time (the visit's
    `at`, never when it was booked; templates print UTC, the reply is worded in the customer's zone)."""
    parts: list[Part] = []
    rows: list = []
    for tid in list(ticket_ids)[:limit]:
        try:
            t = await tickets.get_ticket(client, tenant, tid)
        except NotFound:
            continue
        if (await tickets.get_work(client, tenant, t.id)).needs == ticket_work.NEEDS_ADDRESS:
            # the resolver handed it back: nothing is being checked until the customer says where they are
            parts.append(compose.address_wanted(t.id))
            rows.append(t)
            continue
        # the desk's last step, not the customer's own notes
        steps = [e for e in t.timeline if e.event not in CUSTOMER_EVENTS]
        last = steps[-1] if steps else None
        visits = [v for v in await tickets.visits_of(client, tenant, t.id) if v.status == "scheduled"
                  and (now is None or v.at >= now - VISIT_RUNS)]
        parts.append(compose.update(t.id, t.stage.value, t.updated_at, t.owner, last.event if last else None,
                                    (last.customer or last.detail) if last else None, last.at if last else None,
                                    visit=visits[0] if visits else None))
        rows.append(t)
        rows += visits[:1]
    return parts, rows


VISIT_RUNS = timedelta(hours=4)  # a booked visit is still "the" visit while it may be under way
