"""The desk's answers to what a turn asks, worded from the graph rows the caller read (no I/O).

Each function returns a Part: the answer's kind (ReplyKind) and its Reply (text and the
how-I-know lines of the rows it rests on). Prices are the catalogue's own wording for the
customer's country (`Price.display`, `display_incl_tax`, the tax rate); a recommendation comes
from the plans' own speeds; a tip is an FAQ answer of the tenant's catalogue. With a key the LLM
rewords the joined text, held to the same rows (agents.replies.honest_words)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

from relay_graph.desk.tickets.status import stage_words
from relay_graph.desk.catalogue.models import ExtraOffer, FaqAnswer, PlanOffer, Price
from relay_graph.desk.conversation.templates import Reply, STAGE_WORDING, when
from relay_graph.desk.conversation.asks import Household
from relay_graph.desk.conversation.kinds import ReplyKind
from relay_graph.desk.customers.zone import local_when, zone_named

__all__ = [
    "Part", "addons", "coverage", "faq", "mbps_needed", "no_open_ticket", "not_sold", "plans", "promise_made",
    "reading_noted", "recommend", "services", "tip", "update", "welcome_back", "pick_plan",
]


class Part(NamedTuple):
    kind: ReplyKind
    reply: Reply
    ticket: str | None = None  # the ticket whose stage a status part words (re-read before it is sent)


# What a household uses at once, per person, in Mbps (rounded figures of the usual guidance:
# a 4K stream ~25, online gaming with downloads ~15, a video call ~10, browsing ~10).
PER_PERSON_MBPS = 10
USE_MBPS = {"streaming": 25, "gaming": 15, "work": 10, "uploads": 0}
UPLOAD_NEEDED_MBPS = 100  # creators and large uploads want a symmetric-ish line
DEFAULT_PEOPLE = 2
_USE_WORDS = {"gaming": "game", "streaming": "stream", "work": "work from home", "uploads": "upload a lot"}
_GST = {"IN", "AU", "NZ", "SG", "CA", "MY"}


def _tax_name(country: str) -> str:
    return "GST" if country in _GST else "VAT"


def price_words(p: Price) -> str:
    per = " a month" if p.period == "month" else ""
    if p.tax_rate <= 0:
        return f"{p.display}{per} (no tax on it in {p.country})"
    rate = f"{p.tax_rate * 100:g}%"
    return f"{p.display}{per} + {rate} {_tax_name(p.country)} = {p.display_incl_tax}"


def _plan_line(p: PlanOffer) -> str:
    return f"{p.name} ({p.down_mbps} Mbps down, {p.up_mbps} up): {price_words(p.price)}"


def _plan_ref(p: PlanOffer) -> str:
    return (f"plan {p.offer_id}: {p.name} {p.down_mbps}/{p.up_mbps} Mbps, {p.price.display} per {p.price.period} "
            f"in {p.price.country} ({p.price.display_incl_tax} with tax)")


def _extra_ref(o: ExtraOffer) -> str:
    return f"{o.kind} {o.offer_id}: {o.name}, {o.price.display} per {o.price.period} in {o.price.country}"


def _join(items: Sequence[str]) -> str:
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def plans(offers: Sequence[PlanOffer], country_name: str) -> Part:
    if not offers:
        return Part(ReplyKind.PLANS, Reply(f"I have no plans on file for {country_name} yet, sorry.", []))
    lines = "; ".join(_plan_line(p) for p in offers)
    return Part(ReplyKind.PLANS, Reply(f"Our fibre plans in {country_name}: {lines}.", [_plan_ref(p) for p in offers]))


def addons(offers: Sequence[ExtraOffer], country_name: str, named: Sequence[str] = ()) -> Part:
    """The add-ons sold in the country; only those `named` (offer ids) when the question named any
    that are sold there."""
    if not offers:
        return Part(ReplyKind.ADDONS, Reply(f"There are no add-ons on file for {country_name}.", []))
    asked = [o for o in offers if o.offer_id in named]
    shown = asked or offers
    lines = "; ".join(f"{o.name} ({o.description.rstrip('.')}): {price_words(o.price)}" for o in shown)
    head = f"In {country_name}, on top of any plan" if asked else f"Add-ons in {country_name}, on top of any plan"
    return Part(ReplyKind.ADDONS, Reply(f"{head}: {lines}.", [_extra_ref(o) for o in shown]))


def services(offers: Sequence[ExtraOffer], country_name: str) -> Part:
    if not offers:
        return Part(ReplyKind.SERVICES, Reply(f"There are no one-off services on file for {country_name}.", []))
    lines = "; ".join(f"{o.name}: {price_words(o.price)}" for o in offers)
    return Part(ReplyKind.SERVICES, Reply(f"One-off services in {country_name}: {lines}.",
                                          [_extra_ref(o) for o in offers]))


def mbps_needed(h: Household) -> int:
    people = h.people or DEFAULT_PEOPLE
    return people * (PER_PERSON_MBPS + sum(USE_MBPS.get(u, 0) for u in h.uses))


def pick_plan(offers: Sequence[PlanOffer], h: Household) -> PlanOffer | None:
    """The slowest plan that carries what the household uses at once (and, for heavy uploads, an
    upload of UPLOAD_NEEDED_MBPS); the fastest when none does."""
    if not offers:
        return None
    need = mbps_needed(h)
    up = UPLOAD_NEEDED_MBPS if "uploads" in h.uses else 0
    by_speed = sorted(offers, key=lambda p: (p.down_mbps, p.up_mbps))
    return next((p for p in by_speed if p.down_mbps >= need and p.up_mbps >= up), by_speed[-1])


def recommend(offers: Sequence[PlanOffer], h: Household, country_name: str) -> Part:
    best = pick_plan(offers, h)
    if best is None:
        return Part(ReplyKind.RECOMMENDATION, Reply(f"I have no plans on file for {country_name} yet, sorry.", []))
    uses = _join([_USE_WORDS[u] for u in sorted(h.uses) if not (h.business and u == "work")])
    if h.people:
        who = f"{h.people} {'person' if h.people == 1 else 'people'}" + (f" who {uses}" if uses else "")
    elif h.business:  # a bakery is no home
        who = f"your {h.business}" + (f", where you {uses}" if uses else "")
    else:  # not said: never a number they did not give
        who = f"a home where you {uses}" if uses else "your home"
    assumed = "" if h.people else (f" I have assumed {DEFAULT_PEOPLE} people on the line: tell me how many share it "
                                   "and I will check again.")
    text = (f"For {who}, I would suggest {best.name} ({best.down_mbps} Mbps down, {best.up_mbps} up): together you "
            f"use about {mbps_needed(h)} Mbps at busy times, and {best.name} carries that with room to spare. "
            f"{best.description} In {country_name} it is {price_words(best.price)}.{assumed}")
    return Part(ReplyKind.RECOMMENDATION, Reply(text, [_plan_ref(best)]))


def not_sold(product: str, offers: Sequence[PlanOffer], country_name: str) -> Part:
    names = _join([p.name for p in offers])
    text = f"No, we don't sell {product.strip()}: we are an internet provider."
    if re.match(r"(?i)(?:router|modem)s?$", product.strip()):  # ours comes with every line
        text = f"No, we don't sell {product.strip()} on their own: every line comes with our own router."
    if offers:
        cheapest = min(offers, key=lambda p: p.price.amount)
        text += f" What we sell are fibre internet plans ({names}) from {price_words(cheapest.price)} in {country_name}."
    return Part(ReplyKind.NOT_SOLD, Reply(text, [_plan_ref(p) for p in offers]))


def coverage(place: str | None, served_city: str | None, country_name: str | None, served_cities: Sequence[str]) -> Part:
    """`served_city`: the catalogue's city the place names (None: not one we serve)."""
    if served_city:
        # "Kothrud, Pune": the area the place named, with the served city's own spelling
        where = place.strip() if place and "," in place and served_city in place else served_city
        text = f"Yes, we serve {where}" + (f" in {country_name}." if country_name else ".")
        text += " Tell me your street address and I will check the line there."
        return Part(ReplyKind.COVERAGE, Reply(text, [f"city {served_city}: served"]))
    cities = _join(list(served_cities[:8]))
    if place:
        text = f"I am sorry, {place.strip()} is not on our list of served cities here."
    else:
        text = "Tell me the city and I will check it for you."
    if cities:
        text += f" We serve {cities}" + (" among others." if len(served_cities) > 8 else ".")
    return Part(ReplyKind.COVERAGE, Reply(text, []))


def plan_requested(plan: PlanOffer, country_name: str) -> Part:
    """A plan change asked for: on file, and what happens next (nothing changes until staff confirm)."""
    text = (f"I have put in your request to move to {plan.name} ({plan.down_mbps} Mbps down, {plan.up_mbps} up, "
            f"{price_words(plan.price)} in {country_name}). Nothing changes yet: our team confirms the change and "
            "the date it starts with you, and your bill moves to the new price from then.")
    return Part(ReplyKind.PLAN_REQUESTED, Reply(text, [_plan_ref(plan)]))


def faq(answer: FaqAnswer) -> Part:
    return Part(ReplyKind.FAQ, Reply(answer.answer, [f"faq {answer.faq_id}: {answer.question}"]))


def tip(answer: FaqAnswer, ticket_id: str) -> Part:
    text = f"While we work on ticket {ticket_id}, one thing that is safe to try: {answer.answer}"
    return Part(ReplyKind.TIP, Reply(text, [f"faq {answer.faq_id}: {answer.question}", f"ticket {ticket_id}"]))


def no_open_ticket(what: ReplyKind) -> Part:
    if what is ReplyKind.TIP:
        text = "Tell me what is going wrong with your connection and I will suggest something safe to try."
    elif what is ReplyKind.PROMISE:  # a call asked for with nothing open to call about: said, not dropped
        text = ("You have no open ticket with us, so there is no technician call to book. Tell me what is going "
                "wrong and I will open one.")
    else:
        text = "You have no open tickets with us at the moment. How can I help?"
    return Part(ReplyKind.NO_TICKETS if what is not ReplyKind.TIP else ReplyKind.CLARIFY, Reply(text, []))


def reading_noted(direction: str, ticket_id: str, at: datetime) -> Part:
    if direction == "better":
        text = (f"Good to hear it is a bit better. I have noted that on ticket {ticket_id}, so our checks take it "
                "into account; we will not close it until it is fully right.")
    else:
        text = f"Sorry it is worse. I have noted that on ticket {ticket_id} and our team will see it straight away."
    return Part(ReplyKind.READING, Reply(text, [f"ticket {ticket_id}: customer reading '{direction}' at {when(at)}"]))


def _stage_words(stage: str, owner: str | None) -> str:
    key = stage_words(stage).lower().replace(" ", "_").replace("-", "_")
    return STAGE_WORDING.get(key, "is at the stage: " + stage.replace("_", " ")).replace(
        "{by}", f" by our {owner}" if owner else "")


def update(ticket_id: str, stage: str, updated_at: datetime, owner: str | None, last_event: str | None,
           last_detail: str | None, last_at: datetime | None, visit: Any = None) -> Part:
    """Where a ticket stands; `visit` a booked TechVisit (its own time, `at`, is the one said)."""
    text = f"Ticket {ticket_id} {_stage_words(stage, owner)} (last update {when(updated_at)})."
    how = [f"ticket {ticket_id}: stage {stage} (updated {when(updated_at)})"]
    if visit is not None:
        text += f" A technician, {visit.technician}, is booked to visit you on {when(visit.at)}."
        how.append(f"technician visit {visit.visit_id} for ticket {ticket_id}: {visit.technician}, {when(visit.at)}")
    if last_event and not (visit is not None and last_event in _VISIT_STEPS):
        step = last_event.replace("_", " ")
        text += f" The last step was {step}" + (f": {last_detail.strip().rstrip('.')}" if last_detail else "")
        text += f" ({when(last_at)})." if last_at else "."
        how.append(f"ticket {ticket_id}: timeline {last_event}" + (f" at {when(last_at)}" if last_at else ""))
    return Part(ReplyKind.UPDATE, Reply(text, how))


def address_wanted(ticket_id: str) -> Part:
    """Where a ticket stands that waits for the customer's address: no line on file, so nothing is
    being checked (the resolver asked, and handed it back to the desk)."""
    return Part(ReplyKind.UPDATE, Reply(
        f"Ticket {ticket_id} is waiting for your address: we have no line on file for you, so we cannot test "
        "it yet. Could you tell me your address (the area and the city)?",
        [f"ticket {ticket_id}: waiting for the customer's address (no line on file)"]))


# steps the booked visit's own sentence already says (their detail would repeat it, at booking time)
_VISIT_STEPS = frozenset({"technician_dispatched", "visit_scheduled", "dispatch_technician", "tech_dispatched"})


_OUTCOME = {
    "closed": "was fixed and closed", "fixed": "was fixed on our side and waits for your confirmation",
    "technician_dispatched": "has a technician visit booked",
}


def welcome_back(name: str | None, ticket_id: str | None, summary: str | None, stage: str | None,
                 at: datetime | None, promise: str | None, promise_due: datetime | None) -> Part:
    hello = f"Welcome back, {name}!" if name else "Welcome back!"
    how: list[str] = []
    said = ""
    if ticket_id and stage:
        key = stage.lower()
        outcome = _OUTCOME.get(key) or "is still open: it " + _stage_words(stage, None)
        said = f" Last time, ticket {ticket_id}" + (f" ({summary.strip().rstrip('.')})" if summary else "") + f" {outcome}"
        said += f" ({when(at)})." if at else "."
        how.append(f"ticket {ticket_id}: stage {stage}" + (f" (updated {when(at)})" if at else ""))
    if promise:
        said += f" We promised: {promise.strip().rstrip('.')}" + (f", by {when(promise_due)}." if promise_due else ".")
        how.append(f"promise: {promise}" + (f" due {when(promise_due)}" if promise_due else ""))
    return Part(ReplyKind.WELCOME_BACK, Reply(hello + said, how))


def promise_made(promise_id: str, text: str, due: datetime, ticket_id: str, after: datetime | None = None,
                 gone_by: bool = False) -> Part:
    """`after`: the call is not to come before it (they said "after 7"), so the promise is a window.
    `gone_by`: the time they named has passed today; the promise is the soonest window, and says so."""
    window = f"between {when(after)} and {when(due)}" if after is not None else f"before {when(due)}"
    body = f"{text.strip().rstrip('.')} {window}; I have put that promise on ticket {ticket_id}."
    if gone_by:
        body = f"That time has already gone by today, so the soonest I can promise: {body[0].lower()}{body[1:]}"
    return Part(ReplyKind.PROMISE, Reply(body[0].upper() + body[1:],
                                         [f"promise {promise_id} on ticket {ticket_id}: due {when(due)}"]))


def promise_overdue(promise_id: str, text: str, due: datetime, due_zone: str | None, ticket_id: str) -> Part:
    """An open promise whose due time has passed: owned up to, in the zone it was made in."""
    zone = zone_named(due_zone)
    said = local_when(due, zone) if zone is not None else when(due)
    what = text.strip().rstrip(".")
    what = what[0].lower() + what[1:] if what else "call you"
    body = (f"I am sorry: we promised that {what} before {said}, and that has not happened yet. "
            f"I have chased it on ticket {ticket_id}.")
    return Part(ReplyKind.PROMISE_OVERDUE, Reply(body, [f"promise {promise_id} on ticket {ticket_id}: due {when(due)}, "
                                                        "not kept"]))
