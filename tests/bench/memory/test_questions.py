"""Gold answers match the storyline: every one is recomputed here from the events alone, by a
second, independent reading of them (scanning backwards from the moment asked about)."""

from __future__ import annotations

from collections import Counter

from bench.memory import vocab as v
from bench.memory.questions import NONE, REFUSE, TYPES, questions
from bench.memory.storyline import plan

STORY = plan(7, 40)
QS = questions(STORY)


def _world_city(customer: str, step: int) -> str:
    cands = [(e.step, val) for e in STORY.events if e.kind == "chat" and e.customer == customer
             for p, val, ended in e.states if p == "lives_in" and not ended]
    cands += [(e.valid_from_step, e.object) for e in STORY.events
              if e.kind == "fact" and e.customer == customer and e.predicate == "lives_in"]
    return max((c for c in cands if c[0] <= step), key=lambda c: c[0])[1]


def _filed_city(customer: str, step: int) -> str:
    cands = [(e.step, val) for e in STORY.events if e.kind == "chat" and e.customer == customer
             for p, val, ended in e.states if p == "lives_in" and not ended]
    cands += [(e.step, e.object) for e in STORY.events
              if e.kind == "fact" and e.customer == customer and e.predicate == "lives_in"]
    return max((c for c in cands if c[0] <= step), key=lambda c: c[0])[1]


def _last_said(customer: str, predicate: str) -> str:
    for e in reversed(STORY.events):
        if e.kind == "chat" and e.customer == customer:
            for p, val, ended in reversed(e.states):
                if p == predicate and not ended:
                    return val
    raise AssertionError("never said")


def _open_outages() -> set[str]:
    last: dict[str, bool] = {}
    for e in STORY.events:
        if e.kind == "outage":
            last[e.city] = e.up
    return {c for c, up in last.items() if not up}


def expected(q) -> object:
    c = q.customer
    end = len(STORY.events)
    if q.type == "refusal":
        return REFUSE
    if q.answer_kind == "city" and q.type == "current":
        return _world_city(c, end)
    if q.answer_kind == "plan":
        return _last_said(c, "on_plan")
    if q.answer_kind == "router":
        return _last_said(c, "has_router")
    if q.type == "two_clocks":
        return _world_city(c, q.as_of_step) if q.clock == "world" else _filed_city(c, q.as_of_step)
    if q.answer_kind == "router_claims":
        return sorted({e.object for e in STORY.events if e.kind == "fact" and e.customer == c
                       and e.predicate == "has_router"})
    if q.answer_kind == "outage_city":
        city = _world_city(c, end)
        return city if city in _open_outages() else NONE
    if q.answer_kind == "devices":
        return sorted({e.object for e in STORY.events if e.kind == "fact" and e.customer == c
                       and e.predicate == "owns_device"})
    if q.answer_kind == "issues":
        return sorted({e.issue for e in STORY.events if e.kind == "chat" and e.customer == c and e.issue})
    if q.answer_kind == "fix":
        return [e.fix for e in STORY.events if e.kind == "note" and e.customer == c and e.issue == q.issue
                and e.worked][-1]
    if q.answer_kind == "phone":
        return [e.object for e in STORY.events if e.kind == "fact" and e.customer == c and e.agent == v.NIGHT][-1]
    raise AssertionError(q)


def test_every_gold_answer_matches_the_storyline():
    for q in QS:
        assert q.gold == expected(q), q


def test_at_least_160_questions_of_every_type():
    counts = Counter(q.type for q in QS)
    assert len(QS) >= 160
    assert set(counts) == set(TYPES)
    assert all(n >= 20 for n in counts.values()), counts
    assert len({q.id for q in QS}) == len(QS)


def test_two_clocks_ask_between_the_move_and_its_filing_and_the_clocks_disagree():
    pairs: dict[str, dict[str, str]] = {}
    for q in QS:
        if q.type == "two_clocks":
            pairs.setdefault(q.customer, {})[q.clock] = q.gold
    assert pairs and all(p["world"] != p["belief"] for p in pairs.values())


def test_questions_do_not_give_their_answers_away():
    for q in QS:
        golds = q.gold if isinstance(q.gold, list) else [q.gold]
        for g in golds:
            if g not in (REFUSE, NONE):
                assert g.lower() not in q.text.lower(), q
    refused = [q for q in QS if q.gold == REFUSE]
    assert any(q.customer in STORY.strangers for q in refused)
    assert any(q.customer in STORY.customers for q in refused)  # known customer, never-said value


def test_multi_hop_has_both_answers():
    golds = [q.gold for q in QS if q.type == "multi_hop"]
    assert NONE in golds and any(g != NONE for g in golds)
