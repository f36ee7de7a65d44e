"""What a fact write, a retirement or a settlement does to one slot, decided without any I/O.

A *slot* is one (subject, predicate) pair. `facts.py` reads a slot (its version and every fact in
it), asks this module for a `Plan`, and executes the plan in one guarded write statement. Keeping
the decisions here means every rule below is unit-tested with plain data.

Two clocks, all times epoch milliseconds:
- world:  `valid_from` .. `valid_to`   (true in the world; `valid_to` None = still true)
- belief: `believed_from` .. `expired_at` (on file as our answer; `believed_from` is `recorded_at`
  except for a claim that won a conflict, which became the answer when it was settled)

States: current | superseded | retired | claim. `claim` is a contested value of a single-valued
predicate that stands beside the current one until a person settles the conflict; it is never
current and never part of the world timeline.

The *timeline* of a slot is its non-claim facts with a non-empty world interval (zero-length facts,
valid_from == valid_to, are corrections that dropped out).

Writing a value `new` (object X, agent A, valid_from t, recorded now):

1. Single-valued, X is a pending claim's value -> CORROBORATED: that claim's count goes up.
2. The timeline fact true at t (valid_from <= t < valid_to) already says X -> CORROBORATED (a
   repeat; no new node). Multi-valued predicates look only at X's own facts, so every step here
   runs per object for them.
3. LATE-ARRIVING: some timeline fact starts after t (for a single-valued predicate that includes the
   current value when t is older than its valid_from). The new fact must not become current; it
   takes its place in history:
   - the next later fact N says X -> N's valid_from moves back to t (CORROBORATED, no new node);
   - otherwise a new fact [t, N.valid_from) is stored as superseded, recorded now and expired now
     (it was never our answer, so its belief interval is empty). Outcome CREATED.
   Either way the fact that was true at t (if any) now ends at t (valid_to = t; expired_at = now
   if it was still open on the belief clock).
4. Otherwise t is at or after every timeline fact:
   - multi-valued: a new current fact beside the others (CREATED); multi never supersedes;
   - single-valued, a conflict is open on the slot: the value joins it as another claim (CONFLICT);
   - single-valued, a current fact C exists, the predicate's policy is CONFLICT and C was asserted by
     another agent: the new value is stored as a claim and a conflict opens BETWEEN C and it;
   - single-valued, a current fact C exists otherwise (same agent, or policy SUPERSEDE): the new fact
     is current and C is closed on both clocks: valid_to = t, expired_at = now, state superseded,
     SUPERSEDES edge (SUPERSEDED). t == C.valid_from makes C a zero-length correction.
   - no current fact: the new fact is current (CREATED); a retired fact still true at t ends at t.

Retiring closes the current fact (single-valued; only if it names the given object when one is
given) or the named object's current fact (multi-valued; all current facts when no object is
given) on both clocks: valid_to = the given end or now (never before its valid_from), expired_at =
now, state retired. Nothing current -> nothing to do.

Settling a conflict (a person picks the right claim):
- the winner becomes current (believed from now if it was a claim);
- a losing current fact is superseded: valid_to = max(its valid_from, winner's valid_from),
  expired_at = now;
- a losing claim was never true nor our answer: valid_to = valid_from and expired_at = recorded_at
  (the same rule as a late fact), so neither clock ever shows it; history still does;
- trust for that predicate: the winner's agent gains a win, every other agent in the conflict a
  loss; trust = (wins + 1) / (wins + losses + 2) (a Beta(1, 1) prior: 0.5 with no evidence, moving
  less as evidence accumulates, never reaching 0 or 1).

Belief clock times never go backwards in a slot: when the caller gives no `recorded_at`, `now` is
at least the latest time already on the slot (`belief_now`), and a fact is never expired before it
was recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Iterable, Sequence

from relay_graph.runtime.errors import AlreadyExists, InvalidInput
from relay_graph.memory.models import Outcome
from relay_graph.memory.registry import ConflictPolicy

CURRENT, SUPERSEDED, RETIRED, CLAIM = "current", "superseded", "retired", "claim"
DEFAULT_TRUST = 0.5


@dataclass(frozen=True)
class SlotFact:
    """One fact of a slot as read from the graph."""

    fact_id: str
    object_uid: str
    object_name: str
    state: str
    valid_from_ms: int
    valid_to_ms: int | None
    recorded_at_ms: int
    expired_at_ms: int | None
    asserted_by: str
    corroborations: int = 1
    believed_from_ms: int | None = None

    @property
    def believed_from(self) -> int:
        return self.recorded_at_ms if self.believed_from_ms is None else self.believed_from_ms

    def true_at(self, t: int) -> bool:
        return self.valid_from_ms <= t and (self.valid_to_ms is None or t < self.valid_to_ms)

    @property
    def zero_length(self) -> bool:
        return self.valid_to_ms is not None and self.valid_to_ms <= self.valid_from_ms


@dataclass(frozen=True)
class Slot:
    """A slot as read: `version` guards the write (0 when the slot does not exist yet)."""

    version: int = 0
    facts: tuple[SlotFact, ...] = ()
    conflict_id: str | None = None  # the open conflict, if any

    def by_id(self, fact_id: str) -> SlotFact | None:
        return next((f for f in self.facts if f.fact_id == fact_id), None)


@dataclass(frozen=True)
class NewValue:
    object_uid: str
    object_name: str
    agent: str
    valid_from_ms: int


class Kind(str, Enum):
    NOTHING = "nothing"
    CREATE_CURRENT = "create_current"
    CREATE_HISTORY = "create_history"  # a late-arriving fact, stored in its place in the past
    CREATE_CLAIM = "create_claim"
    CORROBORATE = "corroborate"
    RETIRE = "retire"
    SETTLE = "settle"


@dataclass(frozen=True)
class Change:
    """The final state of an existing fact after the plan (all fields, not deltas, except
    `corroborate`, which is added to the stored count)."""

    fact_id: str
    from_state: str
    to_state: str
    valid_from_ms: int
    valid_to_ms: int | None
    expired_at_ms: int | None
    corroborate: int = 0
    believed_from_ms: int | None = None

    def as_param(self) -> dict:
        return {
            "fact_id": self.fact_id,
            "valid_from_ms": self.valid_from_ms,
            "valid_to_ms": self.valid_to_ms,
            "expired_at_ms": self.expired_at_ms,
            "corroborate": self.corroborate,
            "believed_from_ms": self.believed_from_ms,
        }


@dataclass(frozen=True)
class NewFact:
    fact_id: str
    state: str
    object_uid: str
    object_name: str
    agent: str
    valid_from_ms: int
    valid_to_ms: int | None
    recorded_at_ms: int
    expired_at_ms: int | None


@dataclass(frozen=True)
class TrustDelta:
    agent: str
    win: int
    loss: int


@dataclass(frozen=True)
class Plan:
    kind: Kind
    outcome: Outcome | None = None
    fact_id: str | None = None  # the fact the caller is told about
    new: NewFact | None = None
    changes: tuple[Change, ...] = ()
    supersedes: tuple[str, ...] = ()  # fact ids the primary fact supersedes
    conflict_id: str | None = None
    opens_conflict: bool = False
    between: tuple[str, ...] = ()  # existing facts the new claim's conflict must also be BETWEEN
    trust: tuple[TrustDelta, ...] = ()

    # the lists the write statement works through
    def moved_to(self, state: str) -> list[str]:
        return [c.fact_id for c in self.changes if c.to_state == state and c.from_state != state]

    def unmirrored(self) -> list[str]:
        """Facts that stop being current: their typed edge becomes WAS."""
        return [c.fact_id for c in self.changes if c.from_state == CURRENT and c.to_state != CURRENT]

    def mirrored(self) -> list[str]:
        """Existing facts that become current: they get the typed edge."""
        return self.moved_to(CURRENT)


# ---------------------------------------------------------------------------------------------
# time


def belief_now(wall_ms: int, facts: Iterable[SlotFact]) -> int:
    """`now` for a write without an explicit recorded_at: never before anything on the slot, so
    the belief clock of a slot only moves forward even across machines with skewed clocks."""
    latest = wall_ms
    for f in facts:
        latest = max(latest, f.recorded_at_ms, f.believed_from, f.expired_at_ms or 0)
    return latest


def _closed(f: SlotFact, now: int) -> int:
    """The expiry of a fact closed now: never before it was recorded."""
    return max(now, f.recorded_at_ms)


# ---------------------------------------------------------------------------------------------
# timeline helpers


def timeline(facts: Iterable[SlotFact]) -> list[SlotFact]:
    return [f for f in facts if f.state != CLAIM and not f.zero_length]


def fact_true_at(facts: Iterable[SlotFact], t: int) -> SlotFact | None:
    """The fact true in the world at t; with overlapping facts (never written by this module,
    but possible in old data) the one that began last, then the one recorded last."""
    hits = [f for f in facts if f.true_at(t)]
    return max(hits, key=lambda f: (f.valid_from_ms, f.recorded_at_ms), default=None)


def next_after(facts: Iterable[SlotFact], t: int) -> SlotFact | None:
    later = [f for f in facts if f.valid_from_ms > t]
    return min(later, key=lambda f: (f.valid_from_ms, -f.recorded_at_ms), default=None)


def _trim(f: SlotFact, t: int, now: int) -> Change:
    """f now ends at t in the world; if it was still our answer it is closed on the belief clock too."""
    open_belief = f.expired_at_ms is None
    return Change(
        fact_id=f.fact_id,
        from_state=f.state,
        to_state=SUPERSEDED if f.state == CURRENT else f.state,
        valid_from_ms=f.valid_from_ms,
        valid_to_ms=max(t, f.valid_from_ms),
        expired_at_ms=_closed(f, now) if open_belief else f.expired_at_ms,
    )


def _corroborate(f: SlotFact, *, valid_from_ms: int | None = None, also: Sequence[Change] = (),
                 conflict_id: str | None = None) -> Plan:
    change = Change(
        fact_id=f.fact_id,
        from_state=f.state,
        to_state=f.state,
        valid_from_ms=f.valid_from_ms if valid_from_ms is None else valid_from_ms,
        valid_to_ms=f.valid_to_ms,
        expired_at_ms=f.expired_at_ms,
        corroborate=1,
    )
    return Plan(Kind.CORROBORATE, Outcome.CORROBORATED, f.fact_id, changes=(change, *also),
                conflict_id=conflict_id)


# ---------------------------------------------------------------------------------------------
# writes


def plan_write(
    slot: Slot,
    new: NewValue,
    *,
    single: bool,
    policy: ConflictPolicy,
    now_ms: int,
    fact_id: str,
    conflict_id: str,
) -> Plan:
    """The plan for asserting `new` on `slot` (see the module docstring for the rules).
    `fact_id` / `conflict_id` are the ids to use if a fact / a conflict is created."""
    t = new.valid_from_ms
    if single:
        for claim in (f for f in slot.facts if f.state == CLAIM):
            if claim.object_uid == new.object_uid:
                return _corroborate(claim, conflict_id=slot.conflict_id)
        line = timeline(slot.facts)
    else:
        line = timeline(f for f in slot.facts if f.object_uid == new.object_uid)

    at = fact_true_at(line, t)
    if at is not None and at.object_uid == new.object_uid:
        return _corroborate(at, conflict_id=slot.conflict_id if at.state == CURRENT else None)

    later = next_after(line, t)
    if later is not None:  # late-arriving: history, never current
        trims = (_trim(at, t, now_ms),) if at is not None else ()
        if later.object_uid == new.object_uid:
            return _corroborate(later, valid_from_ms=t, also=trims)
        fact = _new_fact(new, fact_id, SUPERSEDED, now_ms, valid_to_ms=later.valid_from_ms, expired_at_ms=now_ms)
        return Plan(Kind.CREATE_HISTORY, Outcome.CREATED, fact_id, new=fact, changes=trims)

    if not single:
        return Plan(Kind.CREATE_CURRENT, Outcome.CREATED, fact_id, new=_new_fact(new, fact_id, CURRENT, now_ms))

    current = [f for f in slot.facts if f.state == CURRENT]
    cur = max(current, key=lambda f: (f.valid_from_ms, f.recorded_at_ms), default=None)
    if slot.conflict_id is not None:  # join the open conflict as one more claim
        return Plan(Kind.CREATE_CLAIM, Outcome.CONFLICT, fact_id, new=_new_fact(new, fact_id, CLAIM, now_ms),
                    conflict_id=slot.conflict_id)
    if cur is not None and policy is ConflictPolicy.CONFLICT and cur.asserted_by != new.agent:
        return Plan(Kind.CREATE_CLAIM, Outcome.CONFLICT, fact_id, new=_new_fact(new, fact_id, CLAIM, now_ms),
                    conflict_id=conflict_id, opens_conflict=True, between=(cur.fact_id,))

    fact = _new_fact(new, fact_id, CURRENT, now_ms)
    # every other current fact (one, unless old data holds more) is superseded; a retired fact
    # still true at t ends at t
    closes = [_trim(f, t, now_ms) for f in current]
    if at is not None and at.state != CURRENT:
        closes.append(_trim(at, t, now_ms))
    superseded = tuple(c.fact_id for c in closes if c.from_state == CURRENT)
    outcome = Outcome.SUPERSEDED if superseded else Outcome.CREATED
    return Plan(Kind.CREATE_CURRENT, outcome, fact_id, new=fact, changes=tuple(closes), supersedes=superseded)


def _new_fact(new: NewValue, fact_id: str, state: str, now_ms: int, *, valid_to_ms: int | None = None,
              expired_at_ms: int | None = None) -> NewFact:
    return NewFact(
        fact_id=fact_id,
        state=state,
        object_uid=new.object_uid,
        object_name=new.object_name,
        agent=new.agent,
        valid_from_ms=new.valid_from_ms,
        valid_to_ms=valid_to_ms,
        recorded_at_ms=now_ms,
        expired_at_ms=expired_at_ms,
    )


def apply_plan(slot: Slot, plan: Plan) -> Slot:
    """The slot as it is once `plan` has been written (what the next read would return), so that
    several writes of one slot in a batch are planned one after another against the evolving
    state, exactly as if each had read the slot afresh. Mirrors the write statements: changes set
    the final intervals and add to the count, the new fact joins, a claim opens or joins the
    conflict, a settlement closes it; the version goes up by one."""
    if plan.kind is Kind.NOTHING:
        return slot
    facts = {f.fact_id: f for f in slot.facts}
    for c in plan.changes:
        f = facts[c.fact_id]
        facts[c.fact_id] = replace(
            f, state=c.to_state, valid_from_ms=c.valid_from_ms, valid_to_ms=c.valid_to_ms,
            expired_at_ms=c.expired_at_ms, corroborations=f.corroborations + c.corroborate,
            believed_from_ms=f.believed_from_ms if c.believed_from_ms is None else c.believed_from_ms,
        )
    if plan.new is not None:
        n = plan.new
        facts[n.fact_id] = SlotFact(n.fact_id, n.object_uid, n.object_name, n.state, n.valid_from_ms, n.valid_to_ms,
                                    n.recorded_at_ms, n.expired_at_ms, n.agent)
    conflict_id = slot.conflict_id
    if plan.kind is Kind.CREATE_CLAIM:
        conflict_id = plan.conflict_id
    elif plan.kind is Kind.SETTLE:
        conflict_id = None
    return Slot(slot.version + 1, tuple(facts.values()), conflict_id)


# How far ahead of the belief clock a retirement's end may be: a writer's clock a little ahead of ours.
RETIRE_SKEW_MS = 60_000


def plan_retire(slot: Slot, object_uid: str | None, *, valid_to_ms: int | None, now_ms: int) -> Plan:
    """Retire the current fact(s) of the slot; `object_uid` None means whatever is current. An end
    in the future is refused: a retired fact is read as no longer true, so it is retired when it
    stops being true. An end before a fact began ends it where it began (an agent that hears "I
    sold it last year" of a fact filed this month)."""
    if valid_to_ms is not None and valid_to_ms > now_ms + RETIRE_SKEW_MS:
        raise InvalidInput("valid_to is in the future: a fact is retired when it stops being true, so retire it then",
                           code="invalid_value")
    targets = [f for f in slot.facts if f.state == CURRENT and (object_uid is None or f.object_uid == object_uid)]
    if not targets:
        return Plan(Kind.NOTHING)
    end = now_ms if valid_to_ms is None else valid_to_ms
    changes = tuple(
        Change(
            fact_id=f.fact_id,
            from_state=CURRENT,
            to_state=RETIRED,
            valid_from_ms=f.valid_from_ms,
            valid_to_ms=max(end, f.valid_from_ms),
            expired_at_ms=_closed(f, now_ms),
        )
        for f in sorted(targets, key=lambda f: (f.valid_from_ms, f.fact_id))
    )
    return Plan(Kind.RETIRE, None, changes[0].fact_id, changes=changes)


def match_object(facts: Iterable[SlotFact], object_uid: str) -> str | None:
    """Which current object a retirement names: the same entity (its exact normal form), or
    none. A name spelt alike is another entity: retiring "puune" never ends "pune"."""
    for f in facts:
        if f.state == CURRENT and f.object_uid == object_uid:
            return f.object_uid
    return None


@dataclass(frozen=True)
class ConflictState:
    conflict_id: str
    open: bool
    fact_ids: tuple[str, ...]  # the facts the conflict is BETWEEN


def plan_settle(slot: Slot, conflict: ConflictState, winner_id: str, *, now_ms: int) -> Plan:
    """A person settles `conflict` in favour of `winner_id` (rules in the module docstring)."""
    if not conflict.open:
        raise AlreadyExists(f"conflict {conflict.conflict_id} is already settled", code="conflict_settled")
    if winner_id not in conflict.fact_ids:
        raise InvalidInput(f"fact {winner_id} is not one of the claims of conflict {conflict.conflict_id}")
    contenders = [f for f in slot.facts if f.fact_id in conflict.fact_ids and f.state in (CURRENT, CLAIM)]
    winner = next((f for f in contenders if f.fact_id == winner_id), None)
    if winner is None:
        raise InvalidInput(f"fact {winner_id} is no longer an open claim (it was retired or replaced)")
    changes: list[Change] = []
    if winner.state == CLAIM:
        changes.append(Change(winner.fact_id, CLAIM, CURRENT, winner.valid_from_ms, None, None,
                              believed_from_ms=max(now_ms, winner.recorded_at_ms)))
    losers = sorted((f for f in contenders if f.fact_id != winner_id), key=lambda f: f.fact_id)
    for f in losers:
        if f.state == CURRENT:
            changes.append(Change(f.fact_id, CURRENT, SUPERSEDED, f.valid_from_ms,
                                  max(f.valid_from_ms, winner.valid_from_ms), _closed(f, now_ms)))
        else:
            changes.append(Change(f.fact_id, CLAIM, SUPERSEDED, f.valid_from_ms, f.valid_from_ms,
                                  f.recorded_at_ms, believed_from_ms=f.recorded_at_ms))
    loser_agents = sorted({f.asserted_by for f in losers} - {winner.asserted_by})
    trust = (TrustDelta(winner.asserted_by, 1, 0), *(TrustDelta(a, 0, 1) for a in loser_agents))
    return Plan(Kind.SETTLE, None, winner_id, changes=tuple(changes), supersedes=tuple(f.fact_id for f in losers),
                conflict_id=conflict.conflict_id, trust=trust)


# ---------------------------------------------------------------------------------------------
# trust and claims


def trust_score(wins: int, losses: int) -> float:
    """Smoothed share of settled conflicts an agent won for one predicate (Beta(1, 1) prior)."""
    return (wins + 1.0) / (wins + losses + 2.0)


@dataclass(frozen=True)
class RankedClaim:
    fact: SlotFact
    trust: float


def rank_claims(facts: Iterable[SlotFact], trust: dict[str, float]) -> list[RankedClaim]:
    """Current value and pending claims, best first: the writer's trust, then the newest record."""
    ranked = [RankedClaim(f, trust.get(f.asserted_by, DEFAULT_TRUST)) for f in facts if f.state in (CURRENT, CLAIM)]
    ranked.sort(key=lambda r: (-r.trust, -r.fact.recorded_at_ms, r.fact.fact_id))
    return ranked


__all__ = [
    "CURRENT", "SUPERSEDED", "RETIRED", "CLAIM", "DEFAULT_TRUST",
    "SlotFact", "Slot", "NewValue", "Kind", "Change", "NewFact", "TrustDelta", "Plan", "ConflictState",
    "RankedClaim", "belief_now", "timeline", "fact_true_at", "next_after", "plan_write", "plan_retire",
    "plan_settle", "apply_plan", "match_object", "trust_score", "rank_claims",
]
