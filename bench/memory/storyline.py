"""The benchmark's storylines, planned in advance from a seed: `plan(seed, customers)`.

A pure function: the same arguments give the same events in the same order with the same words.
Each customer lives a few stories, interleaved with everyone else's:

- first contact (who they are, where they live, maybe their plan and router and number);
- faults they report, what an engineer tried that did not help, the fix that worked (a note by
  field_tech) and the ticket confirmed fixed;
- moves (said in the chat; their home is connected again in the new city), plan changes, a new
  router;
- devices installed by field_tech (facts and notes);
- a disagreement: field_tech and retail_desk file different routers for the same customer;
- a handoff: night_desk learns a new phone number and hands over to day_desk;
- a correction learnt late: intake learns that the customer had moved weeks before, and files it
  with the older world time (`valid_from_step`);
- outages: a city's hub goes down (netops notes it), some come back up.

World time is the step: events are played one after another in step order, and the loader keeps
the real moment each step was played, so "at step s" means the same moment to every system.
Everything an event says is in its own fields; gold answers are computed from these events alone
(bench.memory.questions). People are named here, as they would name themselves; Relay gives each
an id on their first turn, and the loader (bench.memory.loader) addresses everything after by it."""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field

from services.simulator import phrasings as say
from services.simulator.world import REGIONS

from . import vocab as v

MAX_CUSTOMERS = 200


@dataclass(frozen=True)
class Event:
    step: int
    kind: str  # chat | note | fact | line | outage | confirm
    customer: str | None = None  # the person, by their name in the plan (the loader addresses Relay by id)
    story: str | None = None  # the conversation (chat) or note thread it belongs to
    speaker: str | None = None  # chat: the customer; note: the agent writing it
    text: str | None = None
    states: tuple[tuple[str, str, bool], ...] = ()  # chat: (predicate, value, ended) the words state
    issue: str | None = None  # chat: the problem reported; note: the problem a fix was for; confirm
    fix: str | None = None  # note: the fix tried
    worked: bool | None = None  # note: whether that fix worked
    predicate: str | None = None  # fact
    object: str | None = None  # fact
    agent: str | None = None  # fact: the agent asserting it
    valid_from_step: int | None = None  # fact: it became true in the world at that (earlier) step
    city: str | None = None  # line: the city the home is connected in; outage: where
    up: bool | None = None  # outage: back up (True) or down (False)

    @property
    def is_turn(self) -> bool:
        return self.kind in ("chat", "note")

    def to_json(self) -> dict:
        d = {k: val for k, val in asdict(self).items() if val not in (None, ())}
        if self.states:
            d["states"] = [list(s) for s in self.states]
        return d


@dataclass(frozen=True)
class Storyline:
    seed: int | str
    customers: tuple[str, ...]
    strangers: tuple[str, ...]  # names of nobody the desk has met (for questions that must be refused)
    events: tuple[Event, ...]

    @property
    def turns(self) -> int:
        return sum(e.is_turn for e in self.events)

    def kinds(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for e in self.events:
            out[e.kind] = out.get(e.kind, 0) + 1
        return dict(sorted(out.items()))


def _rng(*parts: object) -> random.Random:
    return random.Random("|".join(str(p) for p in parts))


def _names(seed: int | str) -> list[str]:
    india = next(r for r in REGIONS if r.name == v.REGION)
    names = [f"{f} {last}" for f in india.first_names for last in india.last_names]
    _rng(seed, "names").shuffle(names)
    return names


def _phone(rng: random.Random) -> str:
    return "+91 98" + "".join(str(rng.randrange(10)) for _ in range(3)) + " " + "".join(
        str(rng.randrange(10)) for _ in range(5))


@dataclass
class _Draft:
    """An event before it has a step: `t` orders it (0..1), `key` breaks ties."""

    t: float
    key: tuple
    fields: dict
    valid_from_t: float | None = None


@dataclass
class _Life:
    seed: int | str
    index: int
    name: str
    drafts: list[_Draft] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = _rng(self.seed, self.index, "life")
        self.n = 0
        self.stories = 0

    def add(self, t: float, kind: str, valid_from_t: float | None = None, **fields) -> None:
        self.n += 1
        fields = {"kind": kind, "customer": self.name, **fields}
        self.drafts.append(_Draft(t + self.n * 1e-6, (self.index, self.n), fields, valid_from_t))

    def story(self, what: str) -> str:
        self.stories += 1
        return f"c{self.index}-s{self.stories}-{what}"

    def chat(self, t: float, story: str, words: say.Utterance, issue: str | None = None) -> None:
        states = tuple((f.predicate, f.object, f.ended) for f in words.expect.facts)
        self.add(t, "chat", story=story, speaker=self.name, text=words.text, states=states, issue=issue)

    def note(self, t: float, story: str, agent: str, text: str, **fields) -> None:
        self.add(t, "note", story=story, speaker=agent, text=text, **fields)


def _plan_change(rng: random.Random, old: str, new: str) -> say.Utterance:
    """A plan change the desk files as done (not a wish for later)."""
    while True:
        words = say.plan_changed(rng, old=old, new=new)
        if words.expect.facts:
            return words


def _live(seed: int | str, index: int, name: str) -> tuple[_Life, str]:
    life = _Life(seed, index, name)
    rng = life.rng
    correction = index % 3 == 0
    disagreement = index % 2 == 1
    handoff = index % 5 != 4
    city = rng.choice(v.CITIES)
    plan = rng.choice(v.PLAN_NAMES)
    router = rng.choice(v.ROUTER_NAMES)
    phone = _phone(rng)
    life.add(-1.0, "line", city=city)  # the home is connected before anything else happens

    t0 = rng.uniform(0.0, 0.1)
    sid = life.story("first")
    told_router = not disagreement and rng.random() < 0.5
    life.chat(t0, sid, say.first_contact(rng, name=name, city=city, plan=plan if rng.random() < 0.6 else None,
                                         router=router if told_router else None,
                                         phone=phone if rng.random() < 0.4 else None))

    beats: list[str] = ["fault"] * (2 + (rng.random() < 0.5)) + ["device"] * rng.choice((1, 2, 2, 3))
    if not correction:
        beats += ["move"] * ((rng.random() < 0.6) + (rng.random() < 0.25))
    if rng.random() < 0.5:
        beats.append("plan")
    if not disagreement and rng.random() < 0.4:
        beats.append("router")
    if disagreement:
        beats += ["claim_field", "claim_retail"]
    if handoff:
        beats.append("handoff")
    rng.shuffle(beats)
    slot = 0.68 / len(beats)
    devices = list(v.DEVICES)
    rng.shuffle(devices)
    claims = rng.sample(v.ROUTER_NAMES, 2)
    for j, beat in enumerate(beats):
        t = 0.12 + slot * j + rng.uniform(0.0, slot * 0.5)
        if beat == "fault":
            issue = rng.choice(sorted(v.ISSUE_WORDS))
            sid = life.story("fault")
            notes = life.story("notes")
            life.chat(t, sid, say.report(rng, issue), issue=issue)
            label = v.ISSUE_LABEL[issue]
            tried, works = rng.sample(v.FIXES[issue], 2)
            if rng.random() < 0.6:
                life.note(t + 0.002, notes, v.FIELD_TECH, f"Tried: {tried} for {name}'s {label}; it did not help.",
                          issue=issue, fix=tried, worked=False)
            life.note(t + 0.004, notes, v.FIELD_TECH, f"Fixed {name}'s {label}: {works}. Confirmed working.",
                      issue=issue, fix=works, worked=True)
            life.add(t + 0.005, "confirm", issue=issue)
        elif beat == "move":
            new = rng.choice([c for c in v.CITIES if c != city])
            life.chat(t, life.story("move"), say.moved(rng, old=city, new=new))
            life.add(t + 0.001, "line", city=new)
            city = new
        elif beat == "plan":
            new = rng.choice([p for p in v.PLAN_NAMES if p != plan])
            life.chat(t, life.story("plan"), _plan_change(rng, plan, new))
            plan = new
        elif beat == "router":
            new = rng.choice([r for r in v.ROUTER_NAMES if r != router])
            life.chat(t, life.story("router"), say.new_router(rng, old=router if told_router else None, new=new))
            router = new
        elif beat == "device":
            device = devices.pop()
            life.add(t, "fact", predicate="owns_device", object=device, agent=v.FIELD_TECH)
            life.note(t + 0.001, life.story("install"), v.FIELD_TECH, f"Installed a {device} at {name}'s home.")
        elif beat == "claim_field":
            life.add(t, "fact", predicate="has_router", object=claims[0], agent=v.FIELD_TECH)
            life.note(t + 0.001, life.story("visit"), v.FIELD_TECH,
                      f"On site at {name}'s home: the router there is a {claims[0]}.")
        elif beat == "claim_retail":
            life.add(t, "fact", predicate="has_router", object=claims[1], agent=v.RETAIL)
            life.note(t + 0.001, life.story("sale"), v.RETAIL, f"Our sales record says {name} bought a {claims[1]}.")
        elif beat == "handoff":
            new_phone = _phone(rng)
            life.add(t, "fact", predicate="phone", object=new_phone, agent=v.NIGHT)
            life.note(t + 0.001, life.story("shift"), v.NIGHT,
                      f"{name} called overnight with a new number, {new_phone}. Handing over to {v.DAY}.")
    if correction:
        moved_at = rng.uniform(0.3, 0.5)
        learnt_at = rng.uniform(0.8, 0.85)
        new = rng.choice([c for c in v.CITIES if c != city])
        life.add(learnt_at, "fact", valid_from_t=moved_at, predicate="lives_in", object=new, agent=v.RECORDS)
        life.note(learnt_at + 0.001, life.story("records"), v.RECORDS,
                  f"Our file said {city}, but a returned letter shows {name} had already moved to {new} weeks ago.")
        city = new
    return life, city


def plan(seed: int | str = 7, customers: int = 40) -> Storyline:
    if isinstance(customers, bool) or not isinstance(customers, int) or not 2 <= customers <= MAX_CUSTOMERS:
        raise ValueError(f"customers must be a whole number from 2 to {MAX_CUSTOMERS}")
    names = _names(seed)
    people, strangers = names[:customers], names[customers:customers + max(10, customers // 2)]
    drafts: list[_Draft] = []
    end_city: dict[str, str] = {}
    for i, name in enumerate(people):
        life, city = _live(seed, i, name)
        drafts += life.drafts
        if i % 3 != 0:  # a late correction moves nobody's line: those customers stay out of outage counts
            end_city[name] = city
    # Outages where most customers end up: three still open at the end, two that came back up.
    by_city: dict[str, int] = {}
    for c in end_city.values():
        by_city[c] = by_city.get(c, 0) + 1
    ranked = sorted(by_city, key=lambda c: (-by_city[c], c))
    still_open, came_back = ranked[:3], ranked[3:5]
    for j, city in enumerate(came_back):
        drafts.append(_Draft(0.3 + 0.02 * j, (-1, 2 * j), {"kind": "outage", "city": city, "up": False}))
        drafts.append(_Draft(0.3 + 0.02 * j + 1e-6, (-1, 2 * j + 1), {
            "kind": "note", "story": "ops", "speaker": v.NETOPS, "text": f"Outage: the {city} city hub is down."}))
        drafts.append(_Draft(0.5 + 0.02 * j, (-2, 2 * j), {"kind": "outage", "city": city, "up": True}))
        drafts.append(_Draft(0.5 + 0.02 * j + 1e-6, (-2, 2 * j + 1), {
            "kind": "note", "story": "ops", "speaker": v.NETOPS, "text": f"The {city} outage is over; the hub is up."}))
    for j, city in enumerate(still_open):
        drafts.append(_Draft(0.87 + 0.01 * j, (-3, 2 * j), {"kind": "outage", "city": city, "up": False}))
        drafts.append(_Draft(0.87 + 0.01 * j + 1e-6, (-3, 2 * j + 1), {
            "kind": "note", "story": "ops", "speaker": v.NETOPS, "text": f"Outage: the {city} city hub is down."}))
    drafts.sort(key=lambda d: (d.t, d.key))
    times = [d.t for d in drafts]
    events = []
    for step, d in enumerate(drafts):
        extra = {}
        if d.valid_from_t is not None:
            extra["valid_from_step"] = next(i for i, t in enumerate(times) if t >= d.valid_from_t)
        events.append(Event(step=step, **d.fields, **extra))
    return Storyline(seed=seed, customers=tuple(people), strangers=tuple(strangers), events=tuple(events))
