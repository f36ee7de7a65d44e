"""The decisions of a fact write, a retirement and a settlement, on plain data (no graph)."""

from __future__ import annotations

import pytest

from relay_graph.memory import fact_planning as fp
from relay_graph.runtime.errors import AlreadyExists, InvalidInput
from relay_graph.memory.models import Outcome
from relay_graph.memory.registry import ConflictPolicy

SUP, CON = ConflictPolicy.SUPERSEDE, ConflictPolicy.CONFLICT
DAY = 86_400_000


def d(day: int) -> int:
    """Midnight of September `day` (any epoch works; readable numbers help)."""
    return day * DAY


def fact(fid: str, obj: str, state: str = fp.CURRENT, vf: int = 1, vt: int | None = None, rec: int | None = None,
         exp: int | None = None, agent: str = "intake", count: int = 1) -> fp.SlotFact:
    return fp.SlotFact(fid, f"City|{obj}", obj, state, d(vf), None if vt is None else d(vt),
                       d(vf if rec is None else rec), None if exp is None else d(exp), agent, count)


def new(obj: str, vf: int, agent: str = "intake") -> fp.NewValue:
    return fp.NewValue(f"City|{obj}", obj, agent, d(vf))


def write(slot: fp.Slot, value: fp.NewValue, *, now: int, single: bool = True, policy=CON) -> fp.Plan:
    return fp.plan_write(slot, value, single=single, policy=policy, now_ms=d(now), fact_id="new", conflict_id="k1")


def slot(*facts: fp.SlotFact, conflict: str | None = None, version: int = 3) -> fp.Slot:
    return fp.Slot(version, tuple(facts), conflict)


def change(plan: fp.Plan, fid: str) -> fp.Change:
    return next(c for c in plan.changes if c.fact_id == fid)


# ---------------------------------------------------------------------------------------------
# single-valued: create, corroborate, supersede


def test_an_empty_slot_gets_a_current_fact():
    plan = write(fp.Slot(), new("pune", 1), now=1)
    assert plan.kind is fp.Kind.CREATE_CURRENT and plan.outcome is Outcome.CREATED
    assert plan.new is not None and plan.new.state == fp.CURRENT
    assert (plan.new.valid_from_ms, plan.new.valid_to_ms, plan.new.recorded_at_ms, plan.new.expired_at_ms) == \
        (d(1), None, d(1), None)
    assert plan.changes == () and plan.supersedes == () and plan.fact_id == "new"


def test_a_repeat_corroborates_the_current_fact():
    plan = write(slot(fact("a", "pune")), new("pune", 4, agent="resolver"), now=4)
    assert plan.kind is fp.Kind.CORROBORATE and plan.outcome is Outcome.CORROBORATED
    assert plan.fact_id == "a" and plan.new is None
    (c,) = plan.changes
    assert c.corroborate == 1 and c.to_state == fp.CURRENT
    assert (c.valid_from_ms, c.valid_to_ms, c.expired_at_ms) == (d(1), None, None)
    assert plan.unmirrored() == [] and plan.mirrored() == []


def test_a_new_value_from_the_same_agent_supersedes_on_both_clocks():
    plan = write(slot(fact("a", "pune")), new("mumbai", 5), now=7)
    assert plan.kind is fp.Kind.CREATE_CURRENT and plan.outcome is Outcome.SUPERSEDED
    assert plan.supersedes == ("a",)
    c = change(plan, "a")
    assert (c.from_state, c.to_state) == (fp.CURRENT, fp.SUPERSEDED)
    assert (c.valid_to_ms, c.expired_at_ms) == (d(5), d(7))
    assert plan.unmirrored() == ["a"] and plan.moved_to(fp.SUPERSEDED) == ["a"]
    assert plan.new is not None and (plan.new.valid_from_ms, plan.new.recorded_at_ms) == (d(5), d(7))


def test_another_agent_supersedes_when_the_policy_says_so():
    plan = write(slot(fact("a", "pune")), new("mumbai", 5, agent="resolver"), now=5, policy=SUP)
    assert plan.outcome is Outcome.SUPERSEDED and plan.supersedes == ("a",)


def test_same_valid_from_makes_the_old_value_a_zero_length_correction():
    plan = write(slot(fact("a", "pune", vf=3)), new("mumbai", 3), now=4)
    c = change(plan, "a")
    assert c.valid_from_ms == c.valid_to_ms == d(3) and c.to_state == fp.SUPERSEDED


def test_the_clocks_never_run_backwards_when_replayed_out_of_order():
    # recorded on the 9th, superseded by a write that claims to be recorded on the 8th
    plan = write(slot(fact("a", "pune", vf=2, rec=9)), new("mumbai", 8), now=8)
    assert change(plan, "a").expired_at_ms == d(9)


# ---------------------------------------------------------------------------------------------
# disagreement


def test_another_agents_different_value_opens_a_conflict():
    plan = write(slot(fact("a", "pune")), new("mumbai", 5, agent="resolver"), now=5)
    assert plan.kind is fp.Kind.CREATE_CLAIM and plan.outcome is Outcome.CONFLICT
    assert plan.new is not None and plan.new.state == fp.CLAIM
    assert plan.conflict_id == "k1" and plan.opens_conflict and plan.between == ("a",)
    assert plan.changes == ()  # the current value stays current


def test_a_new_value_joins_an_open_conflict():
    s = slot(fact("a", "pune"), fact("b", "mumbai", fp.CLAIM, vf=5, agent="resolver"), conflict="k0")
    plan = write(s, new("delhi", 6, agent="netops"), now=6)
    assert plan.kind is fp.Kind.CREATE_CLAIM and plan.conflict_id == "k0"
    assert not plan.opens_conflict and plan.between == ()


def test_even_the_current_writer_joins_an_open_conflict():
    s = slot(fact("a", "pune"), fact("b", "mumbai", fp.CLAIM, vf=5, agent="resolver"), conflict="k0")
    plan = write(s, new("delhi", 6, agent="intake"), now=6)
    assert plan.kind is fp.Kind.CREATE_CLAIM and plan.conflict_id == "k0"


def test_a_repeat_of_a_contested_claim_corroborates_it():
    s = slot(fact("a", "pune"), fact("b", "mumbai", fp.CLAIM, vf=5, agent="resolver"), conflict="k0")
    plan = write(s, new("mumbai", 6, agent="netops"), now=6)
    assert plan.kind is fp.Kind.CORROBORATE and plan.fact_id == "b" and plan.conflict_id == "k0"
    assert change(plan, "b").to_state == fp.CLAIM


def test_a_repeat_of_the_contested_current_value_corroborates_it():
    s = slot(fact("a", "pune"), fact("b", "mumbai", fp.CLAIM, vf=5, agent="resolver"), conflict="k0")
    plan = write(s, new("pune", 6, agent="netops"), now=6)
    assert plan.fact_id == "a" and plan.outcome is Outcome.CORROBORATED and plan.conflict_id == "k0"


# ---------------------------------------------------------------------------------------------
# late-arriving facts


def test_a_late_fact_takes_its_place_in_history():
    # pune from the 1st, mumbai from the 10th; we now learn she was in delhi from the 5th
    s = slot(fact("a", "pune", fp.SUPERSEDED, vf=1, vt=10, rec=1, exp=10), fact("b", "mumbai", vf=10))
    plan = write(s, new("delhi", 5), now=12)
    assert plan.kind is fp.Kind.CREATE_HISTORY and plan.outcome is Outcome.CREATED
    n = plan.new
    assert n is not None and n.state == fp.SUPERSEDED
    assert (n.valid_from_ms, n.valid_to_ms, n.recorded_at_ms, n.expired_at_ms) == (d(5), d(10), d(12), d(12))
    a = change(plan, "a")
    assert (a.valid_to_ms, a.expired_at_ms, a.to_state) == (d(5), d(10), fp.SUPERSEDED)  # belief untouched
    assert [c.fact_id for c in plan.changes] == ["a"] and plan.supersedes == ()


def test_a_late_fact_older_than_everything_ends_where_history_begins():
    plan = write(slot(fact("a", "pune", vf=10)), new("delhi", 3), now=12)
    assert plan.kind is fp.Kind.CREATE_HISTORY
    assert plan.new is not None and plan.new.valid_to_ms == d(10) and plan.changes == ()


def test_a_late_fact_from_another_agent_is_history_not_a_conflict():
    plan = write(slot(fact("a", "pune", vf=10)), new("delhi", 3, agent="resolver"), now=12)
    assert plan.kind is fp.Kind.CREATE_HISTORY


def test_a_late_repeat_of_the_next_value_extends_it_back():
    s = slot(fact("a", "pune", fp.SUPERSEDED, vf=1, vt=10, exp=10), fact("b", "mumbai", vf=10))
    plan = write(s, new("mumbai", 6), now=12)
    assert plan.kind is fp.Kind.CORROBORATE and plan.fact_id == "b"
    b = change(plan, "b")
    assert (b.valid_from_ms, b.corroborate, b.to_state) == (d(6), 1, fp.CURRENT)
    assert change(plan, "a").valid_to_ms == d(6)


def test_a_late_repeat_of_a_value_already_true_then_changes_nothing_but_the_count():
    s = slot(fact("a", "pune", fp.SUPERSEDED, vf=1, vt=10, exp=10), fact("b", "mumbai", vf=10))
    plan = write(s, new("pune", 4), now=12)
    assert plan.fact_id == "a" and plan.outcome is Outcome.CORROBORATED
    (a,) = plan.changes
    assert (a.valid_from_ms, a.valid_to_ms, a.corroborate) == (d(1), d(10), 1)


def test_a_fact_still_open_on_the_belief_clock_is_closed_when_cut_short():
    # old data with a current fact that is not the latest in world time
    s = slot(fact("a", "pune", vf=1), fact("b", "mumbai", fp.SUPERSEDED, vf=10, vt=12, exp=12))
    plan = write(s, new("delhi", 5), now=13)
    a = change(plan, "a")
    assert (a.valid_to_ms, a.expired_at_ms, a.to_state) == (d(5), d(13), fp.SUPERSEDED)
    assert plan.unmirrored() == ["a"]


def test_zero_length_corrections_are_not_part_of_the_timeline():
    s = slot(fact("a", "pune", fp.SUPERSEDED, vf=10, vt=10, exp=11), fact("b", "mumbai", vf=10, rec=11))
    plan = write(s, new("delhi", 12), now=12)
    assert plan.outcome is Outcome.SUPERSEDED and plan.supersedes == ("b",)
    assert fp.timeline(s.facts) == [s.facts[1]]


# ---------------------------------------------------------------------------------------------
# after a retirement


def test_a_value_after_a_retired_one_is_current():
    s = slot(fact("a", "pune", fp.RETIRED, vf=1, vt=5, exp=5))
    plan = write(s, new("mumbai", 8, agent="resolver"), now=8)
    assert plan.kind is fp.Kind.CREATE_CURRENT and plan.outcome is Outcome.CREATED and plan.changes == ()


def test_a_value_inside_a_retired_interval_cuts_it_short_and_keeps_it_retired():
    s = slot(fact("a", "pune", fp.RETIRED, vf=1, vt=9, exp=9))
    plan = write(s, new("mumbai", 5), now=10)
    assert plan.kind is fp.Kind.CREATE_CURRENT and plan.outcome is Outcome.CREATED
    a = change(plan, "a")
    assert (a.valid_to_ms, a.expired_at_ms, a.to_state) == (d(5), d(9), fp.RETIRED)
    assert plan.supersedes == () and plan.unmirrored() == []


def test_repeating_a_retired_value_for_its_own_time_corroborates_it():
    s = slot(fact("a", "pune", fp.RETIRED, vf=1, vt=9, exp=9))
    assert write(s, new("pune", 3), now=10).fact_id == "a"


# ---------------------------------------------------------------------------------------------
# multi-valued


def test_multi_valued_values_stand_side_by_side():
    s = slot(fact("a", "iphone"))
    plan = write(s, new("pixel", 5, agent="resolver"), now=5, single=False)
    assert plan.kind is fp.Kind.CREATE_CURRENT and plan.outcome is Outcome.CREATED and plan.changes == ()


def test_multi_valued_repeat_corroborates():
    s = slot(fact("a", "iphone"), fact("b", "pixel"))
    plan = write(s, new("pixel", 5, agent="resolver"), now=5, single=False)
    assert plan.fact_id == "b" and plan.outcome is Outcome.CORROBORATED


def test_multi_valued_late_repeat_extends_back_and_older_values_are_other_timelines():
    s = slot(fact("a", "iphone", vf=1), fact("b", "pixel", vf=10))
    plan = write(s, new("pixel", 4), now=12, single=False)
    assert plan.fact_id == "b" and change(plan, "b").valid_from_ms == d(4)
    assert [c.fact_id for c in plan.changes] == ["b"]  # the iphone is not cut short


def test_multi_valued_value_again_after_it_was_retired_is_new():
    s = slot(fact("a", "iphone", fp.RETIRED, vf=1, vt=5, exp=5))
    plan = write(s, new("iphone", 9), now=9, single=False)
    assert plan.kind is fp.Kind.CREATE_CURRENT and plan.changes == ()


# ---------------------------------------------------------------------------------------------
# retiring


def test_retire_closes_the_current_fact_on_both_clocks():
    plan = fp.plan_retire(slot(fact("a", "pune", vf=1)), None, valid_to_ms=d(6), now_ms=d(8))
    assert plan.kind is fp.Kind.RETIRE
    (c,) = plan.changes
    assert (c.from_state, c.to_state, c.valid_to_ms, c.expired_at_ms) == (fp.CURRENT, fp.RETIRED, d(6), d(8))
    assert plan.unmirrored() == ["a"] and plan.moved_to(fp.RETIRED) == ["a"]


def test_retire_without_an_end_ends_now_and_never_before_it_began():
    assert fp.plan_retire(slot(fact("a", "pune")), None, valid_to_ms=None, now_ms=d(8)).changes[0].valid_to_ms == d(8)
    early = fp.plan_retire(slot(fact("a", "pune", vf=5)), None, valid_to_ms=d(2), now_ms=d(8))
    assert early.changes[0].valid_to_ms == d(5)


def test_retire_with_an_end_in_the_future_is_refused():
    with pytest.raises(InvalidInput) as e:
        fp.plan_retire(slot(fact("a", "pune", vf=1)), None, valid_to_ms=d(9), now_ms=d(8))
    assert e.value.code == "invalid_value"
    with pytest.raises(InvalidInput):  # refused whether or not anything is current
        fp.plan_retire(fp.Slot(), None, valid_to_ms=d(9), now_ms=d(8))
    # a writer's clock a little ahead of ours is not the future
    ahead = fp.plan_retire(slot(fact("a", "pune", vf=1)), None, valid_to_ms=d(8) + 30_000, now_ms=d(8))
    assert ahead.changes[0].valid_to_ms == d(8) + 30_000


def test_retire_of_another_object_or_of_nothing_current_does_nothing():
    assert fp.plan_retire(slot(fact("a", "pune")), "City|mumbai", valid_to_ms=None, now_ms=d(8)).kind is fp.Kind.NOTHING
    retired = slot(fact("a", "pune", fp.RETIRED, vt=3, exp=3))
    assert fp.plan_retire(retired, None, valid_to_ms=None, now_ms=d(8)).kind is fp.Kind.NOTHING
    assert fp.plan_retire(fp.Slot(), None, valid_to_ms=None, now_ms=d(8)).kind is fp.Kind.NOTHING


def test_multi_valued_retire_names_one_object_or_takes_all():
    s = slot(fact("a", "iphone"), fact("b", "pixel"), fact("c", "old", fp.SUPERSEDED, vt=1, exp=1))
    one = fp.plan_retire(s, "City|pixel", valid_to_ms=None, now_ms=d(8))
    assert [c.fact_id for c in one.changes] == ["b"]
    every = fp.plan_retire(s, None, valid_to_ms=None, now_ms=d(8))
    assert [c.fact_id for c in every.changes] == ["a", "b"]


def test_match_object_for_a_retirement_is_the_exact_entity():
    facts = (fact("a", "pune"), fact("b", "mumbai", fp.SUPERSEDED))
    assert fp.match_object(facts, "City|pune") == "City|pune"
    assert fp.match_object(facts, "City|puune") is None  # spelt alike is another city: never retired
    assert fp.match_object(facts, "City|mumbai") is None  # not current


# ---------------------------------------------------------------------------------------------
# settling


def contested() -> fp.Slot:
    return slot(
        fact("a", "pune", vf=1, agent="intake"),
        fact("b", "mumbai", fp.CLAIM, vf=5, rec=6, agent="resolver"),
        fact("c", "delhi", fp.CLAIM, vf=7, rec=7, agent="netops"),
        conflict="k0",
    )


CONFLICT = fp.ConflictState("k0", True, ("a", "b", "c"))


def test_settling_for_a_claim_makes_it_current_and_supersedes_the_rest():
    plan = fp.plan_settle(contested(), CONFLICT, "b", now_ms=d(9))
    assert plan.kind is fp.Kind.SETTLE and plan.fact_id == "b" and plan.conflict_id == "k0"
    b, a, c = change(plan, "b"), change(plan, "a"), change(plan, "c")
    assert (b.from_state, b.to_state, b.believed_from_ms, b.valid_to_ms) == (fp.CLAIM, fp.CURRENT, d(9), None)
    assert (a.to_state, a.valid_to_ms, a.expired_at_ms) == (fp.SUPERSEDED, d(5), d(9))
    # a losing claim was never true nor our answer
    assert (c.to_state, c.valid_to_ms, c.expired_at_ms) == (fp.SUPERSEDED, d(7), d(7))
    assert plan.mirrored() == ["b"] and plan.unmirrored() == ["a"]
    assert sorted(plan.supersedes) == ["a", "c"]
    assert plan.trust == (fp.TrustDelta("resolver", 1, 0), fp.TrustDelta("intake", 0, 1), fp.TrustDelta("netops", 0, 1))


def test_settling_for_the_current_value_drops_the_claims():
    plan = fp.plan_settle(contested(), CONFLICT, "a", now_ms=d(9))
    assert plan.mirrored() == [] and plan.unmirrored() == []
    assert change(plan, "b").valid_to_ms == d(5) and change(plan, "b").expired_at_ms == d(6)
    assert [t.agent for t in plan.trust] == ["intake", "netops", "resolver"]


def test_an_agent_on_both_sides_only_wins():
    s = slot(fact("a", "pune", agent="intake"), fact("b", "mumbai", fp.CLAIM, vf=5, agent="intake"), conflict="k0")
    plan = fp.plan_settle(s, fp.ConflictState("k0", True, ("a", "b")), "b", now_ms=d(9))
    assert plan.trust == (fp.TrustDelta("intake", 1, 0),)


def test_settling_wrongly_is_refused():
    with pytest.raises(AlreadyExists):
        fp.plan_settle(contested(), fp.ConflictState("k0", False, ("a", "b", "c")), "b", now_ms=d(9))
    with pytest.raises(InvalidInput):
        fp.plan_settle(contested(), CONFLICT, "zzz", now_ms=d(9))
    retired = slot(fact("a", "pune", fp.RETIRED, vt=8, exp=8), fact("b", "mumbai", fp.CLAIM, vf=5), conflict="k0")
    with pytest.raises(InvalidInput):
        fp.plan_settle(retired, fp.ConflictState("k0", True, ("a", "b")), "a", now_ms=d(9))


# ---------------------------------------------------------------------------------------------
# trust, ranking, time, names


def test_trust_starts_even_and_moves_with_evidence():
    assert fp.trust_score(0, 0) == 0.5
    assert fp.trust_score(1, 0) == pytest.approx(2 / 3) and fp.trust_score(0, 1) == pytest.approx(1 / 3)
    assert fp.trust_score(9, 1) > fp.trust_score(1, 0) > fp.trust_score(0, 0) > fp.trust_score(0, 3) > 0


def test_claims_rank_by_trust_then_recency():
    facts = contested().facts + (fact("z", "old", fp.SUPERSEDED, vt=1, exp=1),)
    ranked = fp.rank_claims(facts, {"intake": 0.7})
    assert [r.fact.fact_id for r in ranked] == ["a", "c", "b"]  # intake first, then newest
    assert [r.trust for r in ranked] == [0.7, 0.5, 0.5]


def test_belief_now_never_goes_back_on_a_slot():
    facts = (fact("a", "pune", rec=5, exp=9),)
    assert fp.belief_now(d(3), facts) == d(9)
    assert fp.belief_now(d(12), facts) == d(12)
    assert fp.belief_now(d(1), ()) == d(1)
