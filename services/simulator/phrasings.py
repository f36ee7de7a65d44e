"""What simulated customers say: templates with variation, each message carrying what it means.

Every function takes a seeded `random.Random` and the values the customer knows, and returns an
`Utterance`: the text sent to the desk and the `Expect` it should be read as (the facts it
states or ends, what it plans, the kind of problem it reports). The expectations are what the
storyline knows to be true; tests/services/simulator/test_phrasings.py runs the desk's rules
extractor over every message the simulator can emit and checks it reads exactly that, so a
phrasing the desk does not understand never enters the repertoire.

Variation comes from openers, word order, synonyms, time phrases, punctuation and, for messages
that name nobody, a casual all-lower-case style. The same rng state gives the same words."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class FactExpect:
    predicate: str
    object: str
    ended: bool = False


@dataclass(frozen=True)
class Expect:
    """What a message means, as the storyline wrote it."""

    facts: tuple[FactExpect, ...] = ()
    planned: tuple[FactExpect, ...] = ()
    problem: str | None = None  # an IssueKind value
    intent: str | None = None  # checked only when set (confirmations, status questions)


@dataclass(frozen=True)
class Utterance:
    text: str
    expect: Expect = field(default_factory=Expect)


def _pick(rng: random.Random, options):
    return options[rng.randrange(len(options))]


def _sentence(text: str) -> str:
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text[-1:] in ".!?" else text + "."


def _join(rng: random.Random, sentences: list[str]) -> str:
    return " ".join(_sentence(s) for s in sentences if s)


def _casual(rng: random.Random, text: str, *, names_nobody: bool) -> str:
    """Sometimes the way people type on a phone: all lower case, no final full stop. Only for
    messages that name nobody (a lower-case name is not one the desk may guess at)."""
    if names_nobody and rng.random() < 0.2:
        return text.lower().rstrip(".")
    return text


# ---------------------------------------------------------------- pieces

OPENERS = ("Hi", "Hello", "Hi there", "Good morning", "Good evening", "Hey", "Hi team", "")
TIME_SINCE = ("since this morning", "since last night", "since yesterday", "for two days", "since Monday",
              "for a few hours", "")


def _opener(rng: random.Random) -> str:
    o = _pick(rng, OPENERS)
    return f"{o}, " if o else ""


def introduce(rng: random.Random, name: str) -> tuple[str, FactExpect]:
    form = _pick(rng, ("I'm {n}", "this is {n}", "my name is {n}", "I am {n}"))
    return form.format(n=name), FactExpect("name", name)


def lives(rng: random.Random, city: str) -> tuple[str, FactExpect]:
    form = _pick(rng, ("I live in {c}", "we live in {c}", "we're based in {c}", "I'm living in {c}",
                       "we are based in {c}", "I live in {c} now"))
    return form.format(c=city), FactExpect("lives_in", city)


def on_plan(rng: random.Random, plan: str) -> tuple[str, FactExpect]:
    form = _pick(rng, ("I'm on the {p} plan", "we have the {p} plan", "my plan is {p}", "we're on {p}",
                       "I have the {p} plan"))
    return form.format(p=plan), FactExpect("on_plan", plan)


def router_is(rng: random.Random, router: str) -> tuple[str, FactExpect]:
    form = _pick(rng, ("my router is a {r}", "the router is a {r}", "we use a {r} router", "our router is a {r}"))
    return form.format(r=router), FactExpect("has_router", router)


def phone_is(rng: random.Random, phone: str) -> tuple[str, FactExpect]:
    form = _pick(rng, ("you can reach me on {p}", "my number is {p}", "my phone number is {p}",
                       "the best number for me is {p}"))
    return form.format(p=phone), FactExpect("phone", phone)


SYMPTOMS: dict[str, tuple[str, ...]] = {
    "no_signal_light": (
        "the LOS light on my fibre box is red {t}",
        "there's a red light on the fibre box {t}",
        "the light on my fibre box is blinking red {t}",
        "the LOS light is flashing red {t}",
        "the box shows a red LOS light {t}",
    ),
    "no_connection": (
        "the internet is down {t}",
        "we have no internet at all {t}",
        "I can't get online {t}",
        "the connection has been down {t}",
        "there is no connection {t}, nothing loads",
        "our fibre is not working {t}",
    ),
    "slow_speed": (
        "the internet is really slow {t}",
        "speeds are terrible {t}, I'm only getting 20 mbps",
        "everything keeps buffering {t}",
        "pages take forever to load {t}",
        "the connection is sluggish {t}",
    ),
    "wifi_drops": (
        "the wifi keeps dropping in the bedroom {t}",
        "our wifi keeps disconnecting upstairs {t}",
        "the wifi signal is weak in the living room {t}",
        "the wifi keeps cutting out in the study {t}",
    ),
    "intermittent": (
        "the connection keeps dropping every few minutes {t}",
        "our internet keeps dropping out {t}",
        "the internet keeps going down and coming back {t}",
        "the line is unstable {t}, it randomly disconnects",
    ),
    "router_frozen": (
        "my router keeps rebooting {t}",
        "the router is stuck and won't respond {t}",
        "the router is frozen {t}",
        "our router keeps restarting {t}",
    ),
    "billing_double_charge": (
        "I was charged twice for this month's bill",
        "I see a double charge on my card this month",
        "you took the payment two times this month",
        "my card was debited twice for the same bill",
        "there are two charges for the same month on my statement",
    ),
}


def symptom(rng: random.Random, kind: str) -> str:
    t = _pick(rng, TIME_SINCE)
    return _tidy(_pick(rng, SYMPTOMS[kind]).format(t=t))


def _tidy(text: str) -> str:
    """Spaces as a person types them, whatever slots were left empty."""
    return re.sub(r"\s+([,.!?])", r"\1", " ".join(text.split()))


# ---------------------------------------------------------------- whole messages


def first_contact(rng: random.Random, *, name: str, city: str, plan: str | None = None, router: str | None = None,
                  phone: str | None = None, problem: str | None = None) -> Utterance:
    """A new customer's first message: who they are and where they live, maybe their plan,
    router and number, maybe a problem."""
    facts: list[FactExpect] = []
    who, f = introduce(rng, name)
    facts.append(f)
    where, f = lives(rng, city)
    facts.append(f)
    first = _opener(rng) + who + _pick(rng, (" and ", ", ")) + where
    sentences = [first]
    extras = []
    if plan:
        text, f = on_plan(rng, plan)
        extras.append(text)
        facts.append(f)
    if router:
        text, f = router_is(rng, router)
        extras.append(text)
        facts.append(f)
    if extras:
        sentences.append(" and ".join(extras) if len(extras) == 2 and rng.random() < 0.5 else extras[0])
        if len(extras) == 2 and " and " not in sentences[-1]:
            sentences.append(extras[1])
    if problem:
        sentences.append(symptom(rng, problem))
    if phone:
        text, f = phone_is(rng, phone)
        sentences.append(text)
        facts.append(f)
    return Utterance(_join(rng, sentences), Expect(facts=tuple(facts), problem=problem))


def report(rng: random.Random, kind: str, *, name: str | None = None) -> Utterance:
    """A known customer reports a problem (sometimes saying who they are again)."""
    facts: tuple[FactExpect, ...] = ()
    sentences = []
    if name and rng.random() < 0.3:
        sentences.append(_opener(rng) + _pick(rng, ("it's {n} again", "this is {n} again")).format(n=name))
        facts = (FactExpect("name", name),)
        body = symptom(rng, kind)
    else:
        body = _opener(rng) + symptom(rng, kind)
    sentences.append(body)
    if rng.random() < 0.3:
        sentences.append(_pick(rng, ("Can you help?", "Please help.", "Can someone look into it?",
                                     "Please sort it out.")))
    text = _join(rng, sentences)
    return Utterance(_casual(rng, text, names_nobody=not facts), Expect(facts=facts, problem=kind))


# Moves and plan changes carry no past time ("last week"): the desk stamps each turn with the real
# time it arrives, and a simulated fortnight passes in minutes, so "we moved last week" would date
# the move before the customer's first message and file it as history rather than news.


def moved(rng: random.Random, *, old: str, new: str) -> Utterance:
    forms = (
        ("we moved to {new}", False),
        ("I've relocated to {new}", False),
        ("just moved to {new}", False),
        ("we've moved house to {new}", False),
        ("we have just moved to {new}, the new flat is lovely", False),
        ("I moved from {old} to {new}", True),
        ("I no longer live in {old}, we moved to {new}", True),
    )
    form, ends_old = _pick(rng, forms)
    body = _tidy(form.format(old=old, new=new))
    lead = _pick(rng, ("Quick update: ", "Just to let you know, ", "FYI ", "Some news: ", _opener(rng)))
    text = _join(rng, [lead + body])
    facts = [FactExpect("lives_in", new)]
    if ends_old:
        facts.insert(0, FactExpect("lives_in", old, ended=True))
    return Utterance(_casual(rng, text, names_nobody=True), Expect(facts=tuple(facts)))


def plan_changed(rng: random.Random, *, old: str, new: str) -> Utterance:
    forms = (
        ("I switched to the {new} plan", "fact", False),
        ("we upgraded to {new}", "fact", False),
        ("I changed my plan to {new}", "fact", False),
        ("I switched from {old} to {new}", "fact", True),
        ("I'd like to switch to the {new} plan", "planned", False),
        ("I'd like to upgrade to {new} please", "planned", False),
        ("could you move me to the {new} plan?", "planned", False),
    )
    form, how, ends_old = _pick(rng, forms)
    text = _join(rng, [_opener(rng) + form.format(old=old, new=new)])
    if how == "planned":
        return Utterance(text, Expect(planned=(FactExpect("on_plan", new),)))
    facts = [FactExpect("on_plan", new)]
    if ends_old:
        facts.insert(0, FactExpect("on_plan", old, ended=True))
    return Utterance(_casual(rng, text, names_nobody=True), Expect(facts=tuple(facts)))


def new_router(rng: random.Random, *, old: str | None, new: str) -> Utterance:
    forms = [
        ("I got a new router, it's a {new}", False),
        ("my new router is a {new}", False),
        ("we bought a {new} router", False),
    ]
    if old:
        forms.append(("I replaced my old {old} with a {new}", True))
    form, ends_old = _pick(rng, forms)
    text = _join(rng, [_opener(rng) + form.format(old=old, new=new)])
    facts = [FactExpect("has_router", new)]
    if ends_old:
        facts.insert(0, FactExpect("has_router", old, ended=True))
    return Utterance(text, Expect(facts=tuple(facts)))


# ---------------------------------------------------------------- answers and follow-ups


def answer_phone(rng: random.Random, phone: str) -> Utterance:
    form = _pick(rng, ("Sure, it's {p}.", "You can reach me on {p}.", "My number is {p}.", "It's {p}.",
                       "Sure - my phone number is {p}."))
    return Utterance(form.format(p=phone), Expect(facts=(FactExpect("phone", phone),)))


def answer_router(rng: random.Random, router: str) -> Utterance:
    form = _pick(rng, ("It's a {r}.", "My router is a {r}.", "The sticker says {r}.", "We use a {r} router."))
    return Utterance(form.format(r=router), Expect(facts=(FactExpect("has_router", router),)))


def answer_city(rng: random.Random, city: str) -> Utterance:
    form = _pick(rng, ("I live in {c}.", "We live in {c}.", "We're based in {c}."))
    return Utterance(form.format(c=city), Expect(facts=(FactExpect("lives_in", city),)))


def answer_plan(rng: random.Random, plan: str) -> Utterance:
    form = _pick(rng, ("I'm on the {p} plan.", "We have the {p} plan.", "My plan is {p}."))
    return Utterance(form.format(p=plan), Expect(facts=(FactExpect("on_plan", plan),)))


def answer_name(rng: random.Random, name: str) -> Utterance:
    form = _pick(rng, ("My name is {n}.", "I'm {n}.", "It's {n}."))
    return Utterance(form.format(n=name), Expect(facts=(FactExpect("name", name),)))


def works_now(rng: random.Random) -> Utterance:
    text = _pick(rng, ("Yes, it works now, thanks!", "All good now, thank you.", "Yes - everything is working again.",
                       "Yep, that fixed it.", "Yes, it's working now. Thanks!", "Thanks, all good now."))
    return Utterance(_casual(rng, text, names_nobody=True), Expect(intent="confirm_fixed"))


def still_broken(rng: random.Random) -> Utterance:
    text = _pick(rng, ("No, it's still not working.", "Still the same problem I'm afraid.",
                       "No, it still doesn't work.", "Sorry, still not working."))
    return Utterance(text, Expect(problem="other", intent="confirm_not_fixed"))


def ask_status(rng: random.Random) -> Utterance:
    text = _pick(rng, ("Any update on my ticket?", "What's the status of my ticket?", "Is anyone working on my ticket?",
                       "Hi again. Any news on my ticket?", "Hello, any update on my ticket please?"))
    return Utterance(text, Expect(intent="ask_status"))


ANSWERS = {
    "phone": answer_phone,
    "has_router": answer_router,
    "lives_in": answer_city,
    "on_plan": answer_plan,
    "name": answer_name,
}
