"""The resolver's decisions over a ticket's working state, and the desk's invariant, as pure
functions: no graph (relay_graph.desk.tickets.work)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from relay_graph.desk.tickets.work import (
    Act,
    Check,
    MoveKind,
    Unproven,
    Work,
    for_round,
    next_move,
    proof,
    unproven,
    with_act,
    with_check,
    with_plan,
    with_proof,
)

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def check(minutes: int, diagnosis: str | None, round_: int = 0) -> Check:
    return Check(round=round_, at=at(minutes), readings=[f"r-{minutes}"], diagnosis=diagnosis,
                 passed=diagnosis is None)


def act(minutes: int, action: str = "restart_ont", round_: int = 0) -> Act:
    return Act(round=round_, action=action, action_id=f"act-{minutes}", at=at(minutes))


def planned(*steps: str, diagnosis: str = "router_frozen") -> Work:
    return with_plan(with_check(Work(), check(0, diagnosis)), steps, diagnosis)


FROZEN = "router_frozen"
WIFI = "wifi_interference"


@pytest.mark.parametrize("work, kind, step, diagnosis", [
    # diagnosed, planned, nothing done yet: the first step
    (planned("restart_ont"), MoveKind.ACT, "restart_ont", None),
    # a step done and not measured since (a replica died between the act and the reading)
    (with_act(planned("restart_ont"), act(5)), MoveKind.MEASURE, None, None),
    # measured after the step, healthy: proven
    (with_check(with_act(planned("restart_ont"), act(5)), check(7, None)), MoveKind.PROVEN, None, None),
    # measured after the step, same fault, more steps: the next step
    (with_check(with_act(planned("restart_ont", "reprovision"), act(5)), check(7, FROZEN)), MoveKind.ACT,
     "reprovision", None),
    # the plan is spent and the same fault shows: the next plan
    (with_check(with_act(planned("restart_ont"), act(5)), check(7, FROZEN)), MoveKind.NEXT_PLAN, None, FROZEN),
    # another fault shows: diagnose it
    (with_check(with_act(planned("restart_ont"), act(5)), check(7, WIFI)), MoveKind.REDIAGNOSE, None, WIFI),
    # a healthy reading older than the last action proves nothing: measure again
    (with_act(with_check(planned("restart_ont"), check(3, None)), act(5)), MoveKind.MEASURE, None, None),
])
def test_next_move_is_decided_from_the_work_alone(work, kind, step, diagnosis):
    move = next_move(work, max_plans=4)
    assert (move.kind, move.step, move.diagnosis) == (kind, step, diagnosis)


def test_with_too_many_plans_the_resolver_gives_up():
    work = planned("restart_ont")
    for p in (["reprovision"], ["restart_ont", "reprovision"], ["change_wifi_channel"]):
        work = with_plan(work, p, FROZEN)
    work = with_check(with_act(work, act(5, "change_wifi_channel")), check(7, FROZEN))
    assert next_move(work, max_plans=4).kind is MoveKind.GIVE_UP


def test_a_proof_needs_a_passing_check_after_the_last_action():
    assert proof(Work()) is None
    assert proof(with_check(Work(), check(1, FROZEN))) is None
    healthy_before = with_act(with_check(planned("restart_ont"), check(3, None)), act(5))
    assert proof(healthy_before) is None
    with pytest.raises(Unproven):
        with_proof(healthy_before, "resolver")
    done = with_check(healthy_before, check(8, None))
    assert proof(done).at == at(8)
    assert with_proof(done, "resolver").proofs[0].last_action_at == at(5)
    # with no action at all a passing check is proof (an outage that ended by itself)
    assert proof(with_check(Work(), check(1, None))) is not None


def test_a_new_round_forgets_the_plan_and_keeps_the_record():
    work = with_proof(with_check(with_act(planned("restart_ont"), act(5)), check(7, None)), "resolver")
    again = for_round(work, 1)
    assert (again.round, again.plans, again.step, again.diagnosis) == (1, [], 0, None)
    assert again.proofs == work.proofs and again.actions == work.actions
    assert proof(again) is None  # round 1 has no check yet
    assert for_round(None, 2).round == 2


@pytest.mark.parametrize("rounds, work, problems", [
    ([], None, []),
    ([0], None, ["round 0: fixed with no measurement"]),
    ([0], with_proof(with_check(with_act(planned("restart_ont"), act(5)), check(7, None)), "resolver"), []),
    # fixed twice (reopened in between) with one proof: the second is unproven
    ([0, 1], with_proof(with_check(with_act(planned("restart_ont"), act(5)), check(7, None)), "resolver"),
     ["round 1: fixed with no measurement"]),
])
def test_the_invariant_wants_one_proof_per_fixed_round(rounds, work, problems):
    assert unproven(rounds, work) == problems


def test_the_invariant_reads_the_actions_not_the_proofs_claim():
    work = with_proof(with_check(with_act(planned("restart_ont"), act(5)), check(7, None)), "resolver")
    later = work.model_copy(update={"actions": [*work.actions, act(9, "reprovision")]})  # acted after the proof
    (problem,) = unproven([0], later)
    assert "older than the last action" in problem
    forged = work.model_copy(update={"proofs": [work.proofs[0].model_copy(update={
        "check": check(7, FROZEN)})]})
    assert unproven([0], forged) == ["round 0: fixed on a failing check"]
