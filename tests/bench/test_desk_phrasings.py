"""The strangers' phrasings table (bench.desk_phrasings): its size and what it covers; the playing is
`python -m bench.desk_talk --tables phrasings` (a measurement, expected below its goal until the desk
answers what issue 31 asks)."""

from __future__ import annotations

from bench import desk_phrasings as dp
from bench import desk_talk
from relay_graph.desk.conversation.kinds import ReplyKind


def test_the_table_has_at_least_150_turns_in_every_region_covering_what_the_issue_names():
    assert dp.turn_count() >= 150
    assert {c.region for c in dp.PHRASINGS} == set(desk_talk.REGIONS)
    groups = {t.group for c in dp.PHRASINGS for t in c.turns}
    assert {"answer_to_desk", "household", "move_in_city", "preferred_time", "multi_intent", "working_now",
            "memory", "history", "erasure", "coverage", "plan_change", "refusal", "own_ticket"} <= groups


def test_every_expected_kind_is_the_desks_or_one_named_for_the_desk_to_take():
    known = {k.value for k in ReplyKind} | set(dp.NEW_KINDS)
    for c in dp.PHRASINGS:
        for t in c.turns:
            assert (t.kinds | t.any_of | t.absent) <= known, t.text


def test_delete_my_data_is_followed_by_a_yes_and_nothing_after_it():
    for c in dp.PHRASINGS:
        kinds = [t.kinds for t in c.turns]
        if {dp.ERASED} in kinds:
            i = kinds.index({dp.ERASED})
            assert kinds[i - 1] == {dp.ERASURE_CONFIRM} and i == len(kinds) - 1, c.name


def test_an_answer_to_the_desks_own_question_may_never_be_met_with_a_request_for_more():
    answers = [t for c in dp.PHRASINGS for t in c.turns if t.group in ("answer_to_desk", "household", "preferred_time")]
    assert len(answers) >= 20 and all(dp.CLARIFY in t.absent for t in answers)
