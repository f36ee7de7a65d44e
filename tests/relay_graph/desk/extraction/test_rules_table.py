"""The rules extractor against a table of customer messages: what each must yield, what it must
not, and how the message is read (problem fields, intent). Pure logic: no graph, no model."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from relay_graph.memory.entities import name_key
from relay_graph.desk.extraction import ExtractionContext, Intent, IssueKind, RulesExtractor
from relay_graph.desk.extraction.schema import Extraction

CATALOGUE = ExtractionContext(
    cities=("Pune", "Mumbai", "Chennai", "New Delhi", "Lisbon"),
    plans=("Fiber 100", "Fiber 300", "Fiber 1000"),
    routers=("Nokia G-140W-C", "Relay Home Gateway"),
)
NO_CATALOGUE = ExtractionContext()

ANY = "*"  # in a must-not: no value at all for that predicate


@dataclass
class Case:
    text: str
    facts: tuple = ()  # (predicate, object) current, or (predicate, object, "ended")
    not_facts: tuple = ()  # (predicate, object) that must not be there (ANY: none at all), any state
    planned: tuple = ()  # (predicate, object) the customer wants, not yet true
    hints: dict = field(default_factory=dict)  # (predicate, object) -> valid_from_hint
    problem: dict | None = None  # fields the problem must have; {} = no problem at all
    intent: Intent | None = None
    exact: bool = False  # facts must be exactly these
    else_: bool = False  # asks about someone else
    ctx: ExtractionContext = CATALOGUE
    lang: str | None = None


NO_PROBLEM: dict = {}

CASES = [
    # --- names ------------------------------------------------------------------------------
    Case("Hi, I'm Alice Rao", facts=(("name", "Alice Rao"),), intent=Intent.GIVE_INFO, exact=True),
    Case("my name is alice rao and I live in Pune", facts=(("name", "Alice Rao"), ("lives_in", "Pune")), exact=True),
    Case("This is Bob Smith from Mumbai.", facts=(("name", "Bob Smith"),), not_facts=(("lives_in", ANY),)),
    Case("I'm Dr. Meera Iyer, calling about my bill", facts=(("name", "Meera Iyer"),)),
    Case("I'm Not Happy with the service", not_facts=(("name", ANY),), problem=NO_PROBLEM),
    Case("This is ridiculous, the internet is down again", not_facts=(("name", ANY),),
         problem={"kind": IssueKind.NO_CONNECTION}),
    Case("It's Monday and still no internet", not_facts=(("name", ANY),), problem={"kind": IssueKind.NO_CONNECTION},
         intent=Intent.CONFIRM_NOT_FIXED),
    Case("Thanks for the help.\nRegards, Alice Rao", facts=(("name", "Alice Rao"),)),
    # the name first, then the word that says it is the speaker
    Case("Hi, Esha Rao here.\nI moved to Mumbai last week.", facts=(("name", "Esha Rao"), ("lives_in", "Mumbai"))),
    Case("Ravi Nair speaking, my internet is down", facts=(("name", "Ravi Nair"),),
         problem={"kind": IssueKind.NO_CONNECTION}),
    Case("Hello, Meera this side. Wifi is slow", facts=(("name", "Meera"),)),
    Case("Internet here is very slow", not_facts=(("name", ANY),)),
    Case("Pune here has had no internet since morning", not_facts=(("name", ANY),)),
    Case("The Nokia router here keeps restarting", not_facts=(("name", ANY),)),
    # asking whose account this is gets the careful answer: it reads as asking about someone
    Case("Is this Alice Rao's account?", not_facts=(("name", ANY),), else_=True),
    # --- where they live, moves --------------------------------------------------------------
    Case("I live in Pune", facts=(("lives_in", "Pune"),), intent=Intent.GIVE_INFO, exact=True),
    Case("we moved to Mumbai last week", facts=(("lives_in", "Mumbai"),), hints={("lives_in", "Mumbai"): "last week"},
         intent=Intent.MOVE, exact=True),
    Case("I no longer live in Pune", facts=(("lives_in", "Pune", "ended"),), exact=True),
    Case("I used to live in Delhi", facts=(("lives_in", "Delhi", "ended"),), exact=True),
    Case("I don't live in Pune anymore, we're in Mumbai now", facts=(("lives_in", "Pune", "ended"),)),
    Case("relocating to Chennai next month", planned=(("lives_in", "Chennai"),), not_facts=(("lives_in", ANY),),
         hints={("lives_in", "Chennai"): "next month"}, intent=Intent.MOVE),
    Case("We moved from Pune to Mumbai on the 5th",
         facts=(("lives_in", "Pune", "ended"), ("lives_in", "Mumbai")), hints={("lives_in", "Mumbai"): "on the 5th"},
         intent=Intent.MOVE, exact=True),
    Case("just moved to a new flat in Lisbon", facts=(("lives_in", "Lisbon"),), intent=Intent.MOVE),
    Case("I live in Koregaon Park, Pune", facts=(("lives_in", "Pune"),), not_facts=(("lives_in", "Koregaon Park"),)),
    Case("we live in new delhi", facts=(("lives_in", "New Delhi"),), not_facts=(("lives_in", "Delhi"),)),
    Case("I live in Bangalore", facts=(("lives_in", "Bengaluru"),), ctx=NO_CATALOGUE),
    Case("We just moved to São Paulo", facts=(("lives_in", "São Paulo"),), ctx=NO_CATALOGUE),
    Case("we've lived in Pune for 5 years", facts=(("lives_in", "Pune"),), not_facts=()),
    Case("I lived in Delhi for ten years", facts=(("lives_in", "Delhi", "ended"),)),
    Case("my brother moved to Chennai", not_facts=(("lives_in", ANY),)),
    Case("I'm in Pune for the weekend", not_facts=(("lives_in", ANY),)),
    Case("Do you have coverage in Chennai?", not_facts=(("lives_in", ANY),), problem=NO_PROBLEM),
    Case("If I move to Chennai, can I keep my plan?", exact=True),
    Case("we haven't moved to Mumbai yet", not_facts=(("lives_in", "Mumbai"),)),
    Case("I live in fear of the next outage", not_facts=(("lives_in", ANY),)),
    # --- plans -------------------------------------------------------------------------------
    Case("I'm on Fiber 300", facts=(("on_plan", "Fiber 300"),), exact=True),
    Case("switched to the 1000 plan", facts=(("on_plan", "Fiber 1000"),), intent=Intent.PLAN_CHANGE, exact=True),
    Case("upgrade me to fiber 1000", planned=(("on_plan", "Fiber 1000"),), not_facts=(("on_plan", ANY),),
         intent=Intent.PLAN_CHANGE),
    Case("Can I switch to the Fiber 100 plan?", planned=(("on_plan", "Fiber 100"),), not_facts=(("on_plan", ANY),),
         intent=Intent.PLAN_CHANGE),
    Case("Do you have Fiber 1000 in Pune?", not_facts=(("on_plan", ANY), ("lives_in", ANY)), intent=Intent.PLAN_CHANGE),
    Case("I used to be on Fiber 100 but I upgraded to Fiber 300 in March",
         facts=(("on_plan", "Fiber 100", "ended"), ("on_plan", "Fiber 300")), hints={("on_plan", "Fiber 300"): "in march"}),
    Case("I'm not on Fiber 300 anymore", facts=(("on_plan", "Fiber 300", "ended"),), exact=True),
    Case("I'm on the phone with my bank", not_facts=(("on_plan", ANY), ("owns_device", ANY))),
    Case("I'm on 4G right now because the fibre is down", not_facts=(("on_plan", ANY),),
         problem={"kind": IssueKind.NO_CONNECTION}),
    Case("my plan is too slow for gaming", not_facts=(("on_plan", ANY),), problem={"kind": IssueKind.SLOW_SPEED}),
    Case("I pay for 300 mbps but only get 20", facts=(("on_plan", "Fiber 300"),), problem={"kind": IssueKind.SLOW_SPEED}),
    Case("I'm on the Fiber 500 plan", facts=(("on_plan", "Fiber 500"),), ctx=NO_CATALOGUE),
    # --- routers -----------------------------------------------------------------------------
    Case("my router is a TP-Link Archer C6", facts=(("has_router", "TP-Link Archer C6"),), exact=True),
    Case("Nokia G-140W-C router, lights look normal", facts=(("has_router", "Nokia G-140W-C"),)),
    Case("my router is slow", not_facts=(("has_router", ANY),), problem={"kind": IssueKind.SLOW_SPEED}),
    Case("my router is old", not_facts=(("has_router", ANY),)),
    Case("my router is in the living room", not_facts=(("has_router", ANY),)),
    Case("my router is blinking red", not_facts=(("has_router", ANY),), problem={"kind": IssueKind.NO_SIGNAL_LIGHT}),
    Case("I got a new Netgear Nighthawk RAX50 router yesterday", facts=(("has_router", "Netgear Nighthawk RAX50"),),
         hints={("has_router", "Netgear Nighthawk RAX50"): "yesterday"}),
    Case("I replaced my Netgear with a TP-Link Archer C6",
         facts=(("has_router", "Netgear", "ended"), ("has_router", "TP-Link Archer C6")), exact=True),
    Case("my Huawei phone won't connect to wifi", not_facts=(("has_router", ANY),), facts=(("owns_device", "phone"),),
         problem={"kind": IssueKind.NO_CONNECTION, "device": "phone", "medium": "wifi"}),
    Case("Is my router a TP-Link?", not_facts=(("has_router", ANY),)),
    Case("my neighbour's router is a Netgear", not_facts=(("has_router", ANY),)),
    # --- devices -----------------------------------------------------------------------------
    Case("I have two laptops and a PS5", facts=(("owns_device", "laptop"), ("owns_device", "ps5")), exact=True),
    Case("I sold my PS5", facts=(("owns_device", "ps5", "ended"),), exact=True),
    Case("I don't have internet on my laptop", facts=(("owns_device", "laptop"),),
         not_facts=(("owns_device", "laptop", "ended"),)),
    Case("please call me on my mobile number 98765 43210", facts=(("phone", "9876543210"),),
         not_facts=(("owns_device", ANY),)),
    # --- phone, email, contact preference ----------------------------------------------------
    Case("my number is +91 98765 43210 and email Alice.Rao@Example.com",
         facts=(("phone", "+919876543210"), ("email", "alice.rao@example.com")), exact=True),
    Case("call me on 9876543210", facts=(("phone", "9876543210"), ("prefers_contact", "phone")), exact=True),
    Case("prefer email please", facts=(("prefers_contact", "email"),), exact=True),
    Case("whatsapp me", facts=(("prefers_contact", "whatsapp"),), exact=True),
    Case("please don't call me, email me at priya.s@example.in instead",
         facts=(("prefers_contact", "phone", "ended"), ("prefers_contact", "email"), ("email", "priya.s@example.in"))),
    Case("I'm on the phone with my bank, can you text me instead?", facts=(("prefers_contact", "sms"),)),
    Case("my account number is 1234567890", not_facts=(("phone", ANY),)),
    Case("I was charged 1499 twice on 2024-05-03", not_facts=(("phone", ANY),),
         problem={"kind": IssueKind.BILLING_DOUBLE_CHARGE}, intent=Intent.REPORT_PROBLEM),
    Case("my wife's number is 9876501234", not_facts=(("phone", ANY),)),
    Case("Is bob@example.com on your records?", not_facts=(("email", ANY),)),
    # --- problems ----------------------------------------------------------------------------
    Case("wifi slow upstairs since Monday on the TV", facts=(("owns_device", "tv"),),
         problem={"kind": IssueKind.SLOW_SPEED, "medium": "wifi", "place": "upstairs", "time": "since monday",
                  "device": "tv"}, intent=Intent.REPORT_PROBLEM, hints={("owns_device", "tv"): None}),
    Case("my laptop keeps disconnecting from the wifi",
         problem={"kind": IssueKind.WIFI_DROPS, "device": "laptop"}, intent=Intent.REPORT_PROBLEM),
    Case("the internet keeps dropping every few minutes",
         problem={"kind": IssueKind.INTERMITTENT, "time": "every few minutes"}),
    Case("the PS5 is laggy in the evenings", facts=(("owns_device", "ps5"),),
         problem={"kind": IssueKind.SLOW_SPEED, "device": "ps5", "time": "in the evenings"}),
    Case("Hi! My name's Priya Sharma. My router is a Nokia G-140W-C and the LOS light is blinking red since last night.",
         facts=(("name", "Priya Sharma"), ("has_router", "Nokia G-140W-C")),
         problem={"kind": IssueKind.NO_SIGNAL_LIGHT, "time": "since last night"}, intent=Intent.REPORT_PROBLEM),
    Case("internet is down since yesterday", problem={"kind": IssueKind.NO_CONNECTION, "time": "since yesterday"}),
    Case("I was charged twice this month", problem={"kind": IssueKind.BILLING_DOUBLE_CHARGE}),
    Case("my payment failed, card declined", problem={"kind": IssueKind.PAYMENT_FAILED}),
    Case("the router is frozen, nothing works", problem={"kind": IssueKind.ROUTER_FROZEN}),
    Case("weak wifi in the bedroom", problem={"kind": IssueKind.WIFI_DROPS, "place": "bedroom"}),
    Case("the Netflix app on the TV shows an error", problem={"kind": IssueKind.OTHER, "device": "tv"}),
    Case("hola, mi internet no funciona desde ayer", problem={"kind": IssueKind.NO_CONNECTION}, lang="es"),
    Case("mera internet nahi chal raha hai", problem={"kind": IssueKind.NO_CONNECTION}, lang="hi"),
    Case("no problem, thanks", problem=NO_PROBLEM),
    Case("If it gets slow again I'll let you know", problem=NO_PROBLEM),
    # --- confirmations, status, the rest -----------------------------------------------------
    Case("it works now, thanks!", problem=NO_PROBLEM, intent=Intent.CONFIRM_FIXED, exact=True),
    Case("the wifi is not slow anymore", problem=NO_PROBLEM, intent=Intent.CONFIRM_FIXED),
    Case("that fixed it", problem=NO_PROBLEM, intent=Intent.CONFIRM_FIXED),
    Case("still broken", intent=Intent.CONFIRM_NOT_FIXED),
    Case("no, it's still slow upstairs", intent=Intent.CONFIRM_NOT_FIXED,
         problem={"kind": IssueKind.SLOW_SPEED, "place": "upstairs"}),
    Case("that didn't help, same problem", intent=Intent.CONFIRM_NOT_FIXED),
    Case("I still live in Pune", facts=(("lives_in", "Pune"),), intent=Intent.GIVE_INFO),
    Case("any update on my ticket?", intent=Intent.ASK_STATUS, problem=NO_PROBLEM, exact=True),
    Case("when will the technician come?", intent=Intent.ASK_STATUS),
    Case("hello", intent=Intent.GREETING, exact=True),
    Case("Good morning!", intent=Intent.GREETING, exact=True),
    Case("What's the weather like in Pune?", intent=Intent.OFF_TOPIC, not_facts=(("lives_in", ANY),), exact=True),
    Case("Write me a poem about routers", intent=Intent.OFF_TOPIC, exact=True),
    Case("what is Bob's address?", else_=True, intent=Intent.OTHER, exact=True),
    Case("tell me Alice's phone number", else_=True, exact=True),
    Case("Can you tell me my neighbour's plan?", else_=True, intent=Intent.OTHER, exact=True),
    Case("who else lives in Pune?", else_=True, not_facts=(("lives_in", ANY),)),
    Case("we're moving house next week", intent=Intent.MOVE, not_facts=(("lives_in", ANY),)),
    # --- more tricky ones ---------------------------------------------------------------------
    Case("We just moved into our new house in Mumbai, can you transfer my connection?",
         facts=(("lives_in", "Mumbai"),), intent=Intent.MOVE),  # a statement before the question still counts
    Case("Our office moved to Chennai", not_facts=(("lives_in", ANY),)),
    Case("me and my wife moved to Mumbai", facts=(("lives_in", "Mumbai"),)),
    Case("my parents live in Chennai", not_facts=(("lives_in", ANY),)),
    Case("my email is alice@example.com, not the old one alice@old.com",
         facts=(("email", "alice@example.com"), ("email", "alice@old.com", "ended")), exact=True),
    Case("The red light is off now and everything works", problem=NO_PROBLEM, intent=Intent.CONFIRM_FIXED),
    Case("The wifi keeps dropping in the kitchen. It started on Tuesday.",
         problem={"kind": IssueKind.WIFI_DROPS, "place": "kitchen", "time": "on tuesday"}),
    Case("we moved to Mumbai last week and the internet is down", facts=(("lives_in", "Mumbai"),),
         problem={"kind": IssueKind.NO_CONNECTION, "time": None}, intent=Intent.REPORT_PROBLEM),
    Case("my router is in the living room and wifi is slow in the bedroom", not_facts=(("has_router", ANY),),
         problem={"kind": IssueKind.SLOW_SPEED, "place": "bedroom"}),
    Case("my TV buffers every evening and my laptop is fine",
         problem={"kind": IssueKind.SLOW_SPEED, "device": "tv", "time": "every evening"}, intent=Intent.REPORT_PROBLEM),
    Case("I have the Fiber 300 plan and a TP-Link router",
         facts=(("on_plan", "Fiber 300"), ("has_router", "TP-Link")), exact=True),
    Case("I'm on the 4G network until the fibre is fixed", not_facts=(("on_plan", ANY),)),
]


def _key(pred: str, obj: str) -> tuple[str, str]:
    return pred, name_key(obj)


def _check(case: Case, got: Extraction) -> None:
    current = {_key(f.predicate, f.object) for f in got.facts if not f.ended}
    ended = {_key(f.predicate, f.object) for f in got.facts if f.ended}
    every = current | ended  # planned items are not facts; they are checked on their own
    expected_current = {_key(p, o) for p, o, *rest in case.facts if not rest}
    expected_ended = {_key(p, o) for p, o, *rest in case.facts if rest}
    assert expected_current <= current, f"missing current facts: {expected_current - current}; got {got.facts}"
    assert expected_ended <= ended, f"missing ended facts: {expected_ended - ended}; got {got.facts}"
    if case.exact:
        assert current == expected_current and ended == expected_ended, f"unexpected facts: {got.facts}"
        assert {_key(p, o) for p, o in case.planned} == {_key(f.predicate, f.object) for f in got.planned}
    for pred, obj, *state in case.not_facts:
        if obj == ANY:
            assert not any(k[0] == pred for k in every), f"{pred} must not be read from {case.text!r}: {got}"
        elif state:
            assert _key(pred, obj) not in ended, f"{pred}={obj} must not be ended: {got.facts}"
        else:
            assert _key(pred, obj) not in every, f"{pred}={obj} must not be read from {case.text!r}: {got}"
    planned = {_key(f.predicate, f.object) for f in got.planned}
    assert {_key(p, o) for p, o in case.planned} <= planned, f"planned: {got.planned}"
    for (pred, obj), hint in case.hints.items():
        match = [f for f in got.facts + got.planned if _key(f.predicate, f.object) == _key(pred, obj)]
        assert match and match[0].valid_from_hint == hint, f"hint for {pred}={obj}: {match}"
    if case.problem == NO_PROBLEM and case.problem is not None:
        assert got.problem is None, f"no problem expected in {case.text!r}: {got.problem}"
    elif case.problem:
        assert got.problem is not None, f"a problem expected in {case.text!r}"
        for name, value in case.problem.items():
            assert getattr(got.problem, name) == value, f"problem.{name}: {got.problem}"
    if case.exact and case.problem is None:
        assert got.problem is None, f"no problem expected in {case.text!r}: {got.problem}"
    if case.intent is not None:
        assert got.intent is case.intent, f"intent of {case.text!r}: {got.intent}"
    assert got.about_someone_else is case.else_
    if case.lang:
        assert got.language_hint == case.lang


@pytest.mark.parametrize("case", CASES, ids=[c.text[:48] for c in CASES])
async def test_message_reads_as_expected(case: Case) -> None:
    got = await RulesExtractor().extract(case.text, case.ctx)
    _check(case, got)


def test_the_table_is_big_enough() -> None:
    assert len(CASES) >= 60
    assert len({c.text for c in CASES}) == len(CASES)


@pytest.mark.parametrize("said", ["My internet is not working properly since this morning.",
                                  "the wifi isn't working properly at all", "tv box never working normally"])
async def test_a_negated_working_fine_is_a_problem_not_a_fix(said):
    assert (await RulesExtractor().extract(said, ExtractionContext())).intent is not Intent.CONFIRM_FIXED


@pytest.mark.parametrize("said", ["do you have any plan that's good for working from home?",
                                  "which of your plans is fine for two gamers?", "is 5G ok now for streaming?"])
async def test_a_question_with_a_fine_or_good_in_it_confirms_no_fix(said):
    # an open ticket awaiting "is it fixed?" must not be closed by a question about something else
    assert (await RulesExtractor().extract(said, ExtractionContext())).intent is not Intent.CONFIRM_FIXED
