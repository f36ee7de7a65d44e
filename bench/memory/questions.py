"""Questions by type, with gold answers computed from the storyline's events alone, before any
system runs. `questions(storyline, per_type)` is a pure function.

A question carries what any reader may know from its words (the customer, the kind of value asked
for, a moment and a clock, an issue, an agent): never the answer, and never whether it must be
refused. Gold is a string, a sorted list (a set), or REFUSE."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from . import vocab as v
from .storyline import Event, Storyline

REFUSE = "(refuse)"
NONE = "none"
TYPES: tuple[str, ...] = ("current", "two_clocks", "disagreement", "multi_hop", "completeness", "procedural",
                          "handoff", "refusal")


@dataclass(frozen=True)
class Question:
    id: str
    type: str
    text: str
    customer: str  # the person's name, as the text says it (the run looks up the id Relay gave them)
    answer_kind: str  # city | plan | router | router_claims | outage_city | devices | issues | fix | phone | email
    gold: str | list[str]
    as_of_step: int | None = None  # the moment asked about, as a step of the storyline
    clock: str | None = None  # world | belief (with as_of_step)
    issue: str | None = None
    agent: str | None = None

    def to_json(self) -> dict:
        return {k: val for k, val in asdict(self).items() if val is not None}


@dataclass
class Truth:
    """One customer as the storyline has them at the end (and along the way where asked)."""

    city: list[tuple[int, str]] = field(default_factory=list)  # (world step, city) in world order
    plan: str | None = None
    router: str | None = None
    changed: set[str] = field(default_factory=set)  # predicates whose value changed after first being said
    devices: set[str] = field(default_factory=set)
    issues: set[str] = field(default_factory=set)
    fixes: dict[str, str] = field(default_factory=dict)  # issue -> the last fix that worked
    claims: dict[str, str] = field(default_factory=dict)  # agent -> router it filed
    night_phone: str | None = None
    correction: Event | None = None


def replay(story: Storyline) -> tuple[dict[str, Truth], set[str]]:
    """Every customer's truth at the end, and the cities with an outage still open."""
    truth = {c: Truth() for c in story.customers}
    open_outages: set[str] = set()
    for e in story.events:
        t = truth.get(e.customer) if e.customer else None
        if e.kind == "outage":
            (open_outages.discard if e.up else open_outages.add)(e.city)
        elif e.kind == "chat" and t is not None:
            for predicate, value, ended in e.states:
                if ended:
                    continue
                if predicate == "lives_in":
                    if t.city and t.city[-1][1] != value:
                        t.changed.add("lives_in")
                    t.city.append((e.step, value))
                elif predicate == "on_plan":
                    if t.plan is not None and t.plan != value:
                        t.changed.add("on_plan")
                    t.plan = value
                elif predicate == "has_router":
                    if t.router is not None and t.router != value:
                        t.changed.add("has_router")
                    t.router = value
            if e.issue:
                t.issues.add(e.issue)
        elif e.kind == "note" and t is not None and e.worked:
            t.fixes[e.issue] = e.fix
        elif e.kind == "fact" and t is not None:
            if e.predicate == "owns_device":
                t.devices.add(e.object)
            elif e.predicate == "has_router":
                t.claims[e.agent] = e.object
            elif e.predicate == "phone" and e.agent == v.NIGHT:
                t.night_phone = e.object
            elif e.predicate == "lives_in":
                t.correction = e
                t.city.append((e.valid_from_step, e.object))
                t.city.sort()
    return truth, open_outages


def _city_at(t: Truth, step: int) -> str | None:
    now = None
    for s, city in t.city:
        if s <= step:
            now = city
    return now


def _belief_city_at(t: Truth, step: int) -> str | None:
    """What was on file at `step`: what had been said or filed by then (the filing step counts)."""
    now = None
    for s, city in t.city:
        filed = t.correction.step if t.correction is not None and s == t.correction.valid_from_step else s
        if filed <= step:
            now = city
    return now


def questions(story: Storyline, per_type: int = 24) -> list[Question]:
    truth, open_outages = replay(story)
    people = list(story.customers)
    out: dict[str, list[Question]] = {k: [] for k in TYPES}

    def add(kind: str, **kw) -> None:
        if len(out[kind]) < per_type:
            out[kind].append(Question(id=f"{kind}-{len(out[kind]) + 1:03d}", type=kind, **kw))

    # current truth after changes: every customer whose city, plan or router changed
    for c in people:
        t = truth[c]
        if "lives_in" in t.changed or t.correction is not None:
            add("current", text=f"Where does {c} live now?", customer=c, answer_kind="city", gold=t.city[-1][1])
    for c in people:
        t = truth[c]
        if "on_plan" in t.changed:
            add("current", text=f"Which plan is {c} on now?", customer=c, answer_kind="plan", gold=t.plan)
        if "has_router" in t.changed:
            add("current", text=f"Which router does {c} have now?", customer=c, answer_kind="router", gold=t.router)
    # the two clocks: between when a move happened and when the desk learnt of it
    for c in people:
        t = truth[c]
        if t.correction is None:
            continue
        step = (t.correction.valid_from_step + t.correction.step) // 2
        add("two_clocks", text=f"Where did {c} actually live at that moment (step {step})?", customer=c,
            answer_kind="city", gold=_city_at(t, step), as_of_step=step, clock="world")
        add("two_clocks", text=f"At that moment (step {step}), where did our records say {c} lived?", customer=c,
            answer_kind="city", gold=_belief_city_at(t, step), as_of_step=step, clock="belief")
    # disagreements between agents
    for c in people:
        t = truth[c]
        if len(set(t.claims.values())) >= 2:
            add("disagreement", text=f"Which routers do our agents say {c} has?", customer=c,
                answer_kind="router_claims", gold=sorted(set(t.claims.values())))
    # multi-hop: customer -> city <- outage (customers whose line follows their city)
    hit = [c for i, c in enumerate(people) if i % 3 != 0 and truth[c].city[-1][1] in open_outages]
    miss = [c for i, c in enumerate(people) if i % 3 != 0 and truth[c].city[-1][1] not in open_outages]
    quota = min(len(hit), max(per_type - per_type // 3, 1))
    for c in hit[:quota] + miss:
        city = truth[c].city[-1][1]
        add("multi_hop", text=f"Is an open outage affecting {c}, and in which city?", customer=c,
            answer_kind="outage_city", gold=city if city in open_outages else NONE)
    # completeness: every device, every ticket
    for c in people:
        t = truth[c]
        if len(t.devices) >= 2:
            add("completeness", text=f"List every device installed at {c}'s home.", customer=c,
                answer_kind="devices", gold=sorted(t.devices))
        if len(t.issues) >= 2:
            add("completeness", text=f"List every kind of problem {c} has reported.", customer=c,
                answer_kind="issues", gold=sorted(t.issues))
    # procedural: what fixed this before
    for c in people:
        for issue, fix in sorted(truth[c].fixes.items()):
            add("procedural", text=f"What fixed {c}'s {v.ISSUE_LABEL[issue]} last time?", customer=c,
                answer_kind="fix", gold=fix, issue=issue)
            break
    # handoff: what did the other agent learn
    for c in people:
        t = truth[c]
        if t.night_phone:
            add("handoff", text=f"What new phone number did {v.NIGHT} learn for {c} before handing over?",
                customer=c, answer_kind="phone", gold=t.night_phone, agent=v.NIGHT)
    # refused: people nobody met, and things nobody said
    for i in range(per_type):
        if i % 2 == 0 and i // 2 < len(story.strangers):
            s = story.strangers[i // 2]
            add("refusal", text=f"Where does {s} live now?", customer=s, answer_kind="city", gold=REFUSE)
        else:
            c = people[(i * 7) % len(people)]
            add("refusal", text=f"What is {c}'s email address?", customer=c, answer_kind="email", gold=REFUSE)
    return [q for kind in TYPES for q in out[kind]]
