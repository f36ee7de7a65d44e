"""The storyline generator: seeded, big enough, and every kind of event the benchmark promises."""

from __future__ import annotations

import pytest

from bench.memory import vocab as v
from bench.memory.storyline import plan


def test_same_seed_same_storyline_other_seed_another():
    assert plan(7, 40) == plan(7, 40)
    assert plan(7, 40).events != plan(8, 40).events


def test_full_size_has_forty_customers_and_five_hundred_turns():
    s = plan(7, 40)
    assert len(s.customers) == 40 and len(set(s.customers)) == 40
    assert s.turns >= 500
    assert not set(s.strangers) & set(s.customers)
    assert [e.step for e in s.events] == list(range(len(s.events)))


def test_every_kind_of_event_is_in_it():
    s = plan(7, 40)
    events = s.events
    chats = [e for e in events if e.kind == "chat"]
    said = {p for e in chats for p, _, ended in e.states if not ended}
    assert {"name", "lives_in", "on_plan", "has_router"} <= said  # first contacts, moves, plan changes
    assert sum(1 for e in chats for p, _, _ in e.states if p == "lives_in") > len(s.customers)  # moves
    assert any(e.issue for e in chats)  # faults reported
    notes = [e for e in events if e.kind == "note"]
    assert any(e.worked is True for e in notes) and any(e.worked is False for e in notes)  # fixes, good and bad
    assert any(v.DAY in e.text and e.speaker == v.NIGHT for e in notes)  # handoffs
    assert {e.up for e in events if e.kind == "outage"} == {True, False}  # outages that end, and open ones
    assert any(e.kind == "confirm" for e in events)
    # disagreements: two agents, two different routers, one customer
    routers: dict[str, dict[str, str]] = {}
    for e in events:
        if e.kind == "fact" and e.predicate == "has_router":
            routers.setdefault(e.customer, {})[e.agent] = e.object
    assert sum(1 for by in routers.values() if len(set(by.values())) == 2 and set(by) == {v.FIELD_TECH, v.RETAIL}) >= 20
    # corrections learnt late: an older world time than the step that files them
    late = [e for e in events if e.valid_from_step is not None]
    assert len(late) >= 10
    assert all(e.valid_from_step < e.step and e.predicate == "lives_in" for e in late)


def test_the_words_state_what_the_events_say():
    """Chat texts come from the simulator's phrasings, which the desk's rules extractor reads exactly."""
    for e in plan(7, 12).events:
        if e.kind == "chat":
            for _, value, _ in e.states:
                assert value.lower() in e.text.lower()


@pytest.mark.parametrize("bad", [0, 1, 201, True, "40"])
def test_customers_out_of_range_is_refused(bad):
    with pytest.raises(ValueError):
        plan(7, bad)
