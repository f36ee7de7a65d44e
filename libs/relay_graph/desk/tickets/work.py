"""A ticket's working state, as typed data on the ticket, and the resolver's decisions over it.

The resolver used to keep its progress as timeline text (a `plan` event "pid: a > b", `fix_step`
events counted) and split it again on every step. Now it keeps a `Work` record on the ticket node
(`Ticket.work`, JSON of this model, written by tickets.set_work): the round, the diagnosis, the
plans tried in the round, how many steps of the current plan are done, every check (a set of
readings taken together, with its verdict) and every action, each on the lab's clock. The timeline
stays what people read; nothing reads it back to decide.

Everything below the models is pure: what to do next (`next_move`), whether a fix is proven
(`proof`), and the desk's invariant over a ticket (`unproven`): a ticket reaches `fixed` only with a
passing check taken after the last action of its round. Tested without a graph
(tests/relay_graph/desk/test_ticket_work.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Iterable

from pydantic import BaseModel

NEEDS_ADDRESS = "address"  # no line on file: intake is to get the customer's address


class Check(BaseModel):
    """Readings taken together (every test on the line), on the lab's clock; `diagnosis` is what
    the pure decision procedure made of them (None: healthy), `passed` whether they show no fault."""

    round: int
    at: datetime
    readings: list[str]
    diagnosis: str | None = None
    passed: bool


class Act(BaseModel):
    """One action carried out on the customer's line or equipment (relay_graph.lab.act)."""

    round: int
    action: str
    action_id: str
    at: datetime


class Proof(BaseModel):
    """What let the ticket move to `fixed`: the passing check, and the last action before it."""

    round: int
    check: Check
    last_action_at: datetime | None = None
    by: str  # the agent that moved the ticket


class Work(BaseModel):
    round: int = 0
    diagnosis: str | None = None  # the round's latest diagnosis (a FaultKind value)
    plans: list[list[str]] = []  # the round's plans, in order; the last is the current one
    step: int = 0  # steps of the current plan carried out
    checks: list[Check] = []  # every round's
    actions: list[Act] = []  # every round's
    needs: str | None = None  # what the round waits for: NEEDS_ADDRESS, or the network team's repair
    outages: list[str] = []  # outages the ticket was linked to (and the customer told of)
    proofs: list[Proof] = []

    @property
    def plan(self) -> list[str] | None:
        return self.plans[-1] if self.plans else None

    def round_checks(self) -> list[Check]:
        return [c for c in self.checks if c.round == self.round]

    def round_actions(self) -> list[Act]:
        return [a for a in self.actions if a.round == self.round]


# ---------------------------------------------------------------- pure updates


def for_round(work: Work | None, round_: int) -> Work:
    """The work of the ticket's current round: a new round forgets the plan, keeps the record."""
    work = work or Work(round=round_)
    if work.round == round_:
        return work
    return work.model_copy(update={"round": round_, "diagnosis": None, "plans": [], "step": 0, "needs": None,
                                  "outages": []})


def with_plan(work: Work, steps: Iterable[str], diagnosis: str | None) -> Work:
    return work.model_copy(update={"plans": [*work.plans, list(steps)], "step": 0, "diagnosis": diagnosis})


def with_check(work: Work, check: Check) -> Work:
    return work.model_copy(update={"checks": [*work.checks, check]})


def with_act(work: Work, act: Act) -> Work:
    return work.model_copy(update={"actions": [*work.actions, act], "step": work.step + 1})


def last_action_at(work: Work, round_: int | None = None) -> datetime | None:
    r = work.round if round_ is None else round_
    times = [a.at for a in work.actions if a.round == r]
    return max(times) if times else None


def proof(work: Work) -> Check | None:
    """The round's latest check, when it passed and was taken after (or at) its last action."""
    checks = work.round_checks()
    if not checks:
        return None
    latest = max(checks, key=lambda c: c.at)
    last = last_action_at(work)
    if not latest.passed or (last is not None and latest.at < last):
        return None
    return latest


def with_proof(work: Work, by: str) -> Work:
    """The round's proof added; raises Unproven when there is none (the caller must not claim a fix)."""
    check = proof(work)
    if check is None:
        raise Unproven("no passing reading after the last action")
    return work.model_copy(update={"proofs": [*work.proofs, Proof(round=work.round, check=check,
                                                                   last_action_at=last_action_at(work), by=by)]})


class Unproven(RuntimeError):
    """A fix was about to be claimed without a passing reading taken after the last action."""


# ---------------------------------------------------------------- the fixing loop's decision


class MoveKind(str, Enum):
    ACT = "act"  # carry out `step`
    MEASURE = "measure"  # steps were carried out and not measured since (a replica died): measure first
    PROVEN = "proven"  # the latest check passes after the last action
    REDIAGNOSE = "rediagnose"  # another fault shows now: record `diagnosis`, plan for it
    NEXT_PLAN = "next_plan"  # the plan is spent and the same fault shows: count a failure, next plan
    GIVE_UP = "give_up"  # no more plans this round


@dataclass(frozen=True)
class Move:
    kind: MoveKind
    step: str | None = None
    diagnosis: str | None = None


def next_move(work: Work, *, max_plans: int) -> Move:
    """What the resolver does next in `fixing`, from the work alone. The round's latest check is
    what the line shows now; steps of the current plan are carried out one by one, each followed by
    a check (so a check older than the last action means: measure again before deciding)."""
    plan = work.plan or []
    checks = work.round_checks()
    latest = max(checks, key=lambda c: c.at) if checks else None
    last = last_action_at(work)
    if latest is None or (last is not None and latest.at < last):
        return Move(MoveKind.MEASURE)
    if latest.passed:
        return Move(MoveKind.PROVEN)
    if latest.diagnosis != work.diagnosis:
        if len(work.plans) >= max_plans:
            return Move(MoveKind.GIVE_UP, diagnosis=latest.diagnosis)
        return Move(MoveKind.REDIAGNOSE, diagnosis=latest.diagnosis)
    if work.step < len(plan):
        return Move(MoveKind.ACT, step=plan[work.step])
    if len(work.plans) >= max_plans:
        return Move(MoveKind.GIVE_UP, diagnosis=work.diagnosis)
    return Move(MoveKind.NEXT_PLAN, diagnosis=work.diagnosis)


# ---------------------------------------------------------------- the invariant


def unproven(fixed_rounds: Iterable[int], work: Work | None) -> list[str]:
    """Why a ticket's moves to `fixed` (the round of each) are not backed by a measurement: each
    needs a proof of its round whose check passed and is not older than any action of that round
    (actions are read from the work's own record, not from the proof's claim)."""
    problems = []
    proofs = list(work.proofs) if work else []
    for r in fixed_rounds:
        match = next((p for p in proofs if p.round == r), None)
        if match is None:
            problems.append(f"round {r}: fixed with no measurement")
            continue
        proofs.remove(match)
        if not match.check.passed:
            problems.append(f"round {r}: fixed on a failing check")
        last = last_action_at(work, r) if work else None
        if last is not None and match.check.at < last:
            problems.append(f"round {r}: the passing check ({match.check.at.isoformat()}) is older than the "
                            f"last action ({last.isoformat()})")
    return problems


__all__ = [
    "Act", "Check", "Move", "MoveKind", "NEEDS_ADDRESS", "Proof", "Unproven", "Work", "for_round", "last_action_at",
    "next_move", "proof", "unproven", "with_act", "with_check", "with_plan", "with_proof",
]
