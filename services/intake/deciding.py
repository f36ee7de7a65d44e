"""Intake's decisions about a turn, pure: what the turn is about (a verdict on a fix, a problem, a
question about a ticket), what an issue is called, when what the customer said became true, and the
reply's words (`Words`: its parts in order, each with its answer kind) with what to ask.

No I/O: every function here takes what agent.py read and returns what it decides, so the choices
are tested without a graph. May use relay_graph.desk (its models, templates and pure rules)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from relay_graph.desk.conversation import ASKED_PREFIX, Ask, AskKind, Household, Part, ReplyKind, compose
from relay_graph.desk.conversation import guardrails
from relay_graph.desk.conversation import templates as replies
from relay_graph.desk.conversation.reads import Returning
from relay_graph.desk.extraction import Extraction, Intent, IssueKind, ProblemReport, resolve_hint
from relay_graph.desk.extraction.language import language_hint
from relay_graph.desk.tickets.issues import issue_kind, issue_name
from relay_graph.desk.tickets.models import TicketStage, TicketSummary
from relay_graph.desk.tickets.status import ticket_status
from relay_graph.desk.tickets.store import issue_key
from relay_graph.memory.models import FactState, FactView

AGENT = "intake"
HANDOFF_TO = "resolver"
CUSTOMER = "customer"  # who confirms a fix, on the ticket's timeline

# What the desk needs on file before it can work a kind of problem (registry predicates).
NEEDED: dict[str, tuple[str, ...]] = {
    IssueKind.NO_CONNECTION.value: ("phone",),
    IssueKind.NO_SIGNAL_LIGHT.value: ("phone",),
    IssueKind.SLOW_SPEED.value: ("has_router",),
    IssueKind.WIFI_DROPS.value: ("has_router",),
    IssueKind.INTERMITTENT.value: ("has_router",),
    IssueKind.ROUTER_FROZEN.value: ("has_router",),
}

_YES = re.compile(r"^\W*(yes|yeah|yea|ya|yep|yup|sure|it does|all good|works|haan|ha|han|oui|si|sí|ja)\b", re.I)
_NO = re.compile(r"^\W*(no|nope|nah|not really|still no)\b", re.I)


@dataclass
class Words:
    """The reply's parts in order, each with its answer kind (recorded on the reply)."""

    parts: list[Part] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # extra answer labels: "ask:has_router", "tip:slow-wifi"

    def add(self, kind: ReplyKind, reply: replies.Reply | None, ticket: str | None = None) -> None:
        if reply is not None and reply.text:
            self.parts.append(Part(kind, reply, ticket))

    def extend(self, parts: list[Part]) -> None:
        for p in parts:
            self.add(p.kind, p.reply, p.ticket)

    @property
    def text(self) -> str:
        return " ".join(p.reply.text for p in self.parts)

    @property
    def how(self) -> list[str]:
        out: list[str] = []
        for p in self.parts:
            out += [h for h in p.reply.how_i_know if h not in out]
        return out

    @property
    def answers(self) -> tuple[str, ...]:
        kinds = list(dict.fromkeys(p.kind.value for p in self.parts))
        return tuple(kinds + [x for x in self.labels if x not in kinds])


@dataclass(frozen=True)
class Plan:
    """What the turn is about, decided from what was read."""

    mine: TicketSummary | None  # the ticket this turn opened before (a redelivery)
    awaiting: list[TicketSummary]  # tickets waiting for the customer's word on a fix
    verdict: bool | None  # their word on it: True works, False still broken, None no word
    on_problem: bool  # a problem to work: an open ticket's status, else a new ticket
    wants_update: bool  # "any update?"


def plan(turn_ticket_id: str, extraction: Extraction, text: str, asks: list[Ask],
         open_tickets: list[TicketSummary]) -> Plan:
    mine = next((t for t in open_tickets if t.id == turn_ticket_id), None)
    awaiting = [t for t in open_tickets if t.stage is TicketStage.FIXED and t.id != turn_ticket_id]
    verdict = verdict_of(extraction, text, awaiting) if mine is None else None
    if verdict is None and mine is None and not awaiting and works_now(extraction, asks):
        # "it started working on its own": their word closes the open ticket, whatever stage it is in
        awaiting, verdict = [t for t in open_tickets if t.id != turn_ticket_id][:1], True
        verdict = verdict if awaiting else None
    problem = extraction.problem
    on_problem = verdict is None and problem is not None and (mine is not None or extraction.intent in (
        Intent.REPORT_PROBLEM, Intent.CONFIRM_NOT_FIXED) or problem.kind is not IssueKind.OTHER)
    if any(a.kind is AskKind.READING for a in asks) and problem is not None and problem.kind is IssueKind.OTHER:
        on_problem = False  # "it's a bit better now" is a reading on the open ticket, not a new problem
    wants_update = extraction.intent is Intent.ASK_STATUS or any(a.kind is AskKind.UPDATE for a in asks)
    return Plan(mine, awaiting, verdict, on_problem, wants_update)


def merged_asks(rewritten: list[Ask], said: list[Ask]) -> list[Ask]:
    """The asks of a mixed-language turn's English rewrite, then those only its own words carry
    ("mere baare me kya pata hai": the rewrite loses what the romanised words asked)."""
    kinds = {a.kind for a in rewritten}
    return rewritten + [a for a in said if a.kind not in kinds and a.kind is not AskKind.FAQ]


def works_now(extraction: Extraction, asks: list[Ask]) -> bool:
    """"It's working now", with no problem beside it and no other question about the line."""
    return (extraction.intent is Intent.CONFIRM_FIXED and extraction.problem is None
            and not any(a.kind in (AskKind.READING, AskKind.UPDATE, AskKind.TIP) for a in asks))


_ELSEWHERE = re.compile(
    r"\b(?:my|our)\s+(?:parents|mum|mom|dad|father|mother|brother|sister|son|daughter|friend|friends|cousin|uncle|aunt"
    r"|in-?laws|grand\w+|relatives?|family)\s+(?:\w+\s+)?(?:stay|stays|live|lives|living|staying|is|are|moved)\b", re.I)


def about_elsewhere(asks: list[Ask], extraction: Extraction, text: str) -> bool:
    """The turn asks about another place (coverage, someone else's home), not the customer's own."""
    return (any(a.kind is AskKind.COVERAGE for a in asks) or extraction.about_someone_else
            or bool(_ELSEWHERE.search(text)))


def yes_or_no(text: str) -> bool | None:
    """A plain yes or no ("yes please delete it", "no, keep it"), else None."""
    if _NO.match(text) or re.search(r"\b(?:keep|don't|do\s+not|cancel|stop)\b", text, re.I):
        return False
    if _YES.match(text) or re.search(r"^\W*(?:ok(?:ay)?|go\s+ahead|do\s+it|please\s+do|confirm(?:ed)?|delete)\b", text, re.I):
        return True
    return None


def follow_ups(asks: list[Ask], learnt: list[FactView], current: list[FactView]) -> list[Ask]:
    """A recommendation uses the household size on file; one made on an assumed household is made
    again when the number it asked for was just given."""
    size = next((f.object for f in [*learnt, *current] if f.predicate == "household_size"
                 and f.state is FactState.CURRENT), None)
    if size is None:
        return asks
    people = int(size)
    out = [Ask(a.kind, a.detail, Household(people, a.household.uses if a.household else frozenset()), a.sentence)
           if a.kind is AskKind.RECOMMEND and not (a.household and a.household.people) else a for a in asks]
    if any(f.predicate == "household_size" for f in learnt) and not any(a.kind is AskKind.RECOMMEND for a in out):
        out.append(Ask(AskKind.RECOMMEND, household=Household(people)))
    return out


def verdict_of(extraction: Extraction, text: str, awaiting: list[TicketSummary]) -> bool | None:
    """The customer's answer to "is it working now?", when a ticket is waiting for it."""
    if not awaiting:
        return None
    if extraction.intent is Intent.CONFIRM_FIXED:
        return True
    if extraction.intent is Intent.CONFIRM_NOT_FIXED:
        return False
    problem = extraction.problem
    if problem is not None and (problem.kind is IssueKind.OTHER or issue_key(problem.kind.value) == awaiting[0].issue):
        return False  # the same problem again: the fix did not hold
    if problem is None and extraction.intent in (Intent.OTHER, Intent.GREETING):
        if _NO.match(text):
            return False
        if _YES.match(text):
            return True
    return None


def opening_words(before: Returning | None, on_file: list[FactView], guard: guardrails.Guard,
                  extraction: Extraction) -> Words:
    """What the reply starts with: a welcome back (a session's first turn of a returning customer),
    an apology beside an insult, a refusal to talk about someone else."""
    words = Words()
    if before is not None and before.sessions_before > 0:
        name = next((f.object for f in on_file if f.predicate == "name" and f.state is FactState.CURRENT), None)
        words.extend([compose.welcome_back(name, before.ticket_id, before.summary, before.stage, before.updated_at,
                                           before.promise, before.promise_due)])
    if guard.kind is guardrails.GuardKind.ABUSE:  # an insult beside a real request: sorry, then help
        words.add(ReplyKind.APOLOGY, replies.Reply("I am sorry for the trouble; let me sort it out.", []))
    if extraction.about_someone_else:
        words.add(ReplyKind.REFUSED_OTHER_CUSTOMER, replies.refuse_other_customer())
    return words


def to_ask(current: list[FactView], needed: tuple[str, ...], open_tickets: list[TicketSummary],
           said_before: set[str], handed_off: bool) -> list[str]:
    """What to ask for: what the problem needs (or, with no new problem, what the customer's open
    tickets still need, so a later turn can fill the gaps) minus what is on file; once per session,
    again only when this turn's new ticket needs it for its next step."""
    known = {f.predicate: f.object for f in current if f.state is FactState.CURRENT and f.valid_to is None}
    if not needed:
        for t in open_tickets:
            needed += tuple(p for p in NEEDED.get(t.issue, ()) if p not in needed)
    missing = replies.missing_info(known, needed)
    return [m for m in missing if ASKED_PREFIX + m not in said_before or handed_off]


_THANKS = re.compile(r"^\W*(?:thanks?|thank\s*(?:you|u)|thx|ty|cheers|much\s+appreciated)\b", re.I)


def closing_words(words: Words, *, learnt: list[FactView], ended: list[FactView], current: list[FactView],
                  asked: list[str], extraction: Extraction, asks: list[Ask],
                  open_tickets: list[TicketSummary], text: str = "") -> None:
    """What the reply ends with: what was noted, what is asked for; with nothing else to say, a
    greeting, a steer back, where the tickets stand or a request to say more."""
    if learnt or ended:
        words.add(ReplyKind.NOTED, replies.acknowledge(learnt, ended, on_file=current))
    if asked:
        words.add(ReplyKind.ASK, replies.Reply(replies.ask_for(asked), []))
        words.labels += [ASKED_PREFIX + m for m in asked]
    if words.parts:
        return
    if extraction.intent is Intent.GREETING:
        words.add(ReplyKind.GREETING, replies.greeting(current))
    elif extraction.intent is Intent.OFF_TOPIC:
        words.add(ReplyKind.OFF_TOPIC, replies.refuse_off_topic())
    elif extraction.intent in (Intent.CONFIRM_FIXED, Intent.CONFIRM_NOT_FIXED) and open_tickets:
        for t in open_tickets:
            words.add(ReplyKind.TICKET_STATUS, ticket_status(t.id, t.stage, t.updated_at, owner=t.owner), t.id)
    elif any(a.kind is AskKind.FAQ for a in asks):  # a question no help article of ours answers
        words.add(ReplyKind.CLARIFY, replies.Reply(
            "I'm sorry, I have no answer to that in our help articles. I can help with your connection and "
            "its tickets, and with our plans, prices and coverage: tell me what you need.", []))
    elif open_tickets and not asks:
        # Words we cannot read, with a case still open ("yes it's red and blinking fast"): most likely
        # about that case, so where it stands, rather than asking them to say more; a thanks first
        # gets its answer.
        if _THANKS.match(text):
            words.add(ReplyKind.GREETING, replies.Reply("You're welcome.", []))
        for t in open_tickets:
            words.add(ReplyKind.TICKET_STATUS, ticket_status(t.id, t.stage, t.updated_at, owner=t.owner), t.id)
    elif language_hint(text) not in (None, "en"):  # words in a language the desk reads only a little of
        words.add(ReplyKind.CLARIFY, replies.Reply(
            "Sorry, I could not make out what you need. I read English best, and everyday Hindi and Tamil about "
            "your connection: could you tell me in English?", []))
    else:
        words.add(ReplyKind.CLARIFY, replies.Reply(
            "Thanks for your message. Could you tell me a little more about what you need help with?", []))


def issue_of(problem: ProblemReport, at: datetime | None, on_file: list[FactView]) -> str:
    """The Issue the problem is (issues.issue_name): its kind with the device, place and time named,
    a time they said resolved to its day. "Still dropping", with no detail, is the issue of that
    kind already on file (the newest), not a second one."""
    kind = problem.kind.value
    if not (problem.device or problem.place or problem.time):
        known = [f for f in on_file if f.predicate == "has_issue" and issue_kind(f.object) == kind]
        if known:
            return max(known, key=lambda f: f.recorded_at).object
    day = when(problem.time, at) if problem.time else None
    said = day if day is not None and day != at else problem.time
    return issue_name(kind, device=problem.device, place=problem.place, time=said)


def when(hint: str | None, at: datetime | None) -> datetime | None:
    """The customer's words for a time, else the turn's time; never after the turn (what is
    planned for later is not a fact yet)."""
    if at is None:
        return None
    try:
        resolved = resolve_hint(hint, at) if hint else None
    except Exception:  # a hint we cannot place is no reason to lose the fact
        resolved = None
    return resolved if resolved is not None and resolved <= at else at
