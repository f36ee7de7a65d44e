"""The customers' hidden lives, planned in advance from a seed.

`plan_storylines(seed, customers, days)` is a pure function: the same arguments give the same
customers, the same life events at the same simulated hours and the same words, on any machine
(every random choice comes from `random.Random` seeded with a string, which Python hashes with
SHA-512, not with the per-process hash seed).

A customer's life is a few stories, one after another:

- first contact: who they are and where they live (maybe their plan, router and number), often
  with a problem;
- a fault on their line: the fault starts (hidden: where in the network, and whether the repair
  will hold), they report the symptom, the fault is repaired, they check how their ticket stands
  and answer (it works / it does not);
- moving city, changing plan, a new router: they tell the desk;
- a double charge: they report it and later check on it.

What is hidden stays in the plan (`ScheduledEvent.fault`, `fix_holds`, the `profile` the customer
knows about themself); only what the customer says, and the faults the fault injector plants,
reach Relay."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, replace
from enum import Enum

from . import phrasings as say
from .phrasings import Utterance
from .world import FAULT_KINDS, PLANS, REGIONS, ROUTERS, Region

MAX_CUSTOMERS = 10_000
MAX_DAYS = 366


class EventKind(str, Enum):
    SAY = "say"  # the customer sends a message
    FAULT = "fault"  # a fault starts on the customer's line (hidden)
    REPAIR = "repair"  # that fault is repaired (hidden)
    CHECK = "check"  # the customer looks at how their problem stands and answers


class Story(str, Enum):
    FIRST_CONTACT = "first_contact"
    LINE_FAULT = "line_fault"
    MOVE = "move"
    PLAN_CHANGE = "plan_change"
    NEW_ROUTER = "new_router"
    DOUBLE_CHARGE = "double_charge"


@dataclass(frozen=True)
class Profile:
    """What a customer knows about themself at one moment (their answers come from it)."""

    name: str
    region: str
    city: str
    plan: str
    router: str
    phone: str
    # the customer's id at the desk: what every call names them by (a name is a fact about them,
    # and names come back once the pool is used up; the id never does)
    id: str = ""


@dataclass(frozen=True)
class ScheduledEvent:
    at_h: float  # simulated hours from the start of the run
    customer: str  # the customer's id (Profile.id)
    kind: EventKind
    story: Story
    story_id: str  # the events of one story share it (and one conversation with the desk)
    seq: int  # position in the customer's life
    profile: Profile
    seed: int  # seeds the choices made while playing it (answers, confirmations)
    utterance: Utterance | None = None  # SAY: the message
    problem: str | None = None  # the IssueKind this story is about
    fault: str | None = None  # FAULT / REPAIR: a world.FAULT_KINDS key
    fix_holds: bool = True  # CHECK: whether the repair really held

    @property
    def text(self) -> str | None:
        return self.utterance.text if self.utterance else None


def _check_args(seed: object, customers: object, days: object) -> None:
    if isinstance(seed, bool) or not isinstance(seed, (int, str)):
        raise ValueError("seed must be a whole number or a string")
    if isinstance(customers, bool) or not isinstance(customers, int) or not 1 <= customers <= MAX_CUSTOMERS:
        raise ValueError(f"customers must be a whole number from 1 to {MAX_CUSTOMERS}")
    if isinstance(days, bool) or not isinstance(days, (int, float)) or not 0 < days <= MAX_DAYS:
        raise ValueError(f"days must be more than 0 and at most {MAX_DAYS}")


def customer_id(seed: int | str, round: int, index: int) -> str:
    """A simulated customer's id, shaped like the ids Relay gives (`c-` and 16 hex digits) and the
    same for the same seed, round and place in the cast."""
    return "c-" + hashlib.blake2b(f"{seed}|{round}|{index}".encode(), digest_size=8).hexdigest()


def _rng(*parts: object) -> random.Random:
    return random.Random("|".join(str(p) for p in parts))


def _phone(rng: random.Random, region: Region) -> str:
    fmt = rng.choice(region.phone_formats)
    return "".join(str(rng.randrange(10)) if ch == "#" else ch for ch in fmt)


def _all_names() -> list[tuple[str, Region]]:
    return [(f"{first} {last}", region) for region in REGIONS for first in region.first_names
            for last in region.last_names]


def cast(seed: int | str, customers: int, *, round: int = 0) -> list[Profile]:
    """The customers of one round, as they are when the story starts. Names are unique within a
    round and across rounds until the name pool (800) is used up; then they come back."""
    _check_args(seed, customers, 1)
    names = _all_names()
    _rng(seed, "names").shuffle(names)
    out = []
    for i in range(customers):
        name, region = names[(round * customers + i) % len(names)]
        rng = _rng(seed, round, i, "profile")
        out.append(Profile(name=name, region=region.name, city=rng.choice(region.cities), plan=rng.choice(PLANS),
                           router=rng.choice(ROUTERS), phone=_phone(rng, region), id=customer_id(seed, round, i)))
    return out


def _region(name: str) -> Region:
    return next(r for r in REGIONS if r.name == name)


class _Life:
    """Builds one customer's events in order, keeping what they know about themself."""

    def __init__(self, seed: int | str, round: int, index: int, profile: Profile, horizon_h: float):
        self.rng = _rng(seed, round, index, "life")
        self.key = f"r{round}-c{index}"
        self.profile = profile
        self.horizon_h = horizon_h
        self.events: list[ScheduledEvent] = []
        self.stories = 0
        self.last_h = 0.0

    def _event(self, at_h: float, kind: EventKind, story: Story, story_id: str, **kw) -> None:
        at_h = round(min(max(at_h, self.last_h + 0.05), self.horizon_h), 3)  # strictly one after another
        self.last_h = at_h
        self.events.append(ScheduledEvent(
            at_h=at_h, customer=self.profile.id, kind=kind, story=story, story_id=story_id,
            seq=len(self.events), profile=self.profile, seed=self.rng.getrandbits(32), **kw))

    def _story_id(self, story: Story) -> str:
        self.stories += 1
        return f"{self.key}-s{self.stories}-{story.value}"

    def first_contact(self, at_h: float, *, with_fault: bool, scale: float) -> None:
        p, rng = self.profile, self.rng
        details = dict(plan=p.plan if rng.random() < 0.5 else None,
                       router=p.router if rng.random() < 0.4 else None,
                       phone=p.phone if rng.random() < 0.4 else None)
        if with_fault:
            self.line_fault(at_h, scale=scale, opening=details)
            return
        sid = self._story_id(Story.FIRST_CONTACT)
        words = say.first_contact(rng, name=p.name, city=p.city, **details)
        self._event(at_h, EventKind.SAY, Story.FIRST_CONTACT, sid, utterance=words)

    def line_fault(self, at_h: float, *, scale: float, opening: dict | None = None) -> None:
        rng = self.rng
        fault = rng.choice(sorted(FAULT_KINDS))
        spec = FAULT_KINDS[fault]
        kind = spec["symptom"]
        sid = self._story_id(Story.FIRST_CONTACT if opening is not None else Story.LINE_FAULT)
        story = Story.FIRST_CONTACT if opening is not None else Story.LINE_FAULT
        on_network = spec["node"] is not None
        if on_network:
            self._event(at_h, EventKind.FAULT, story, sid, fault=fault, problem=kind)
        report_h = at_h + rng.uniform(0.2, 2.0) * scale
        if opening is not None:
            p = self.profile
            words = say.first_contact(rng, name=p.name, city=p.city, problem=kind, **opening)
        else:
            words = say.report(rng, kind, name=self.profile.name)
        self._event(report_h, EventKind.SAY, story, sid, utterance=words, problem=kind, fault=fault)
        repaired_h = report_h + rng.uniform(4.0, 20.0) * scale
        if on_network:
            self._event(repaired_h, EventKind.REPAIR, story, sid, fault=fault, problem=kind)
        self._event(repaired_h + rng.uniform(1.0, 6.0) * scale, EventKind.CHECK, story, sid, problem=kind,
                    fault=fault, fix_holds=rng.random() >= 0.1)

    def double_charge(self, at_h: float, *, scale: float) -> None:
        sid = self._story_id(Story.DOUBLE_CHARGE)
        kind = "billing_double_charge"
        self._event(at_h, EventKind.SAY, Story.DOUBLE_CHARGE, sid, utterance=say.report(self.rng, kind),
                    problem=kind)
        self._event(at_h + self.rng.uniform(3.0, 12.0) * scale, EventKind.CHECK, Story.DOUBLE_CHARGE, sid,
                    problem=kind, fix_holds=True)

    def move(self, at_h: float) -> None:
        p = self.profile
        new = self.rng.choice([c for c in _region(p.region).cities if c != p.city])
        sid = self._story_id(Story.MOVE)
        words = say.moved(self.rng, old=p.city, new=new)
        self.profile = replace(p, city=new)
        self._event(at_h, EventKind.SAY, Story.MOVE, sid, utterance=words)

    def plan_change(self, at_h: float) -> None:
        p = self.profile
        new = self.rng.choice([x for x in PLANS if x != p.plan])
        sid = self._story_id(Story.PLAN_CHANGE)
        words = say.plan_changed(self.rng, old=p.plan, new=new)
        self.profile = replace(p, plan=new)
        self._event(at_h, EventKind.SAY, Story.PLAN_CHANGE, sid, utterance=words)

    def new_router(self, at_h: float) -> None:
        p = self.profile
        new = self.rng.choice([r for r in ROUTERS if r != p.router])
        sid = self._story_id(Story.NEW_ROUTER)
        words = say.new_router(self.rng, old=p.router, new=new)
        self.profile = replace(p, router=new)
        self._event(at_h, EventKind.SAY, Story.NEW_ROUTER, sid, utterance=words)


def _live(seed: int | str, round: int, index: int, profile: Profile, days: float) -> list[ScheduledEvent]:
    horizon = float(days) * 24.0
    life = _Life(seed, round, index, profile, horizon)
    rng = life.rng
    later: list[Story] = []
    if rng.random() < 0.5:
        later.append(Story.MOVE)
    if rng.random() < 0.45:
        later.append(Story.PLAN_CHANGE)
    if rng.random() < 0.35:
        later.append(Story.NEW_ROUTER)
    if rng.random() < 0.3:
        later.append(Story.DOUBLE_CHARGE)
    later += [Story.LINE_FAULT] * (1 + (rng.random() < 0.35))
    rng.shuffle(later)

    start = rng.uniform(0.0, min(24.0, horizon * 0.1))
    slot = (horizon - start) / (len(later) + 1)
    # a story takes up to ~30 simulated hours; in a short run everything happens faster
    scale = min(1.0, slot / 36.0)
    life.first_contact(start, with_fault=rng.random() < 0.45, scale=scale)
    for j, story in enumerate(later, start=1):
        at = start + slot * j + rng.uniform(0.0, slot * 0.3)
        if story is Story.MOVE:
            life.move(at)
        elif story is Story.PLAN_CHANGE:
            life.plan_change(at)
        elif story is Story.NEW_ROUTER:
            life.new_router(at)
        elif story is Story.DOUBLE_CHARGE:
            life.double_charge(at, scale=scale)
        else:
            life.line_fault(at, scale=scale)
    return life.events


def plan_storylines(seed: int | str, customers: int, days: float, *, round: int = 0) -> list[ScheduledEvent]:
    """Every event of one round, in the order it happens (simulated hour, then customer)."""
    _check_args(seed, customers, days)
    if isinstance(round, bool) or not isinstance(round, int) or round < 0:
        raise ValueError("round must be a whole number, 0 or more")
    events: list[tuple[float, int, int, ScheduledEvent]] = []
    for i, profile in enumerate(cast(seed, customers, round=round)):
        for e in _live(seed, round, i, profile, days):
            events.append((e.at_h, i, e.seq, e))
    events.sort(key=lambda t: t[:3])
    return [e for *_, e in events]
