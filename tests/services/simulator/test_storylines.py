"""The storyline generator: the same seed gives the same customers, events and words; another
seed (or round) gives others; every kind of life event happens; a customer's events come in order
within the run; the clock maps simulated hours onto wall seconds."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from services.simulator.clock import SimClock, check_speed
from services.simulator.storylines import EventKind, Story, cast, plan_storylines
from services.simulator.world import FAULT_KINDS

REPO = Path(__file__).resolve().parents[3]


def test_the_same_seed_gives_the_same_storylines():
    a = plan_storylines(42, 15, 21)
    b = plan_storylines(42, 15, 21)
    assert a == b
    assert [e.text for e in a] == [e.text for e in b]
    assert plan_storylines("fortnight", 5, 14) == plan_storylines("fortnight", 5, 14)


def test_another_seed_or_round_gives_other_customers_and_words():
    a, b = plan_storylines(1, 12, 14), plan_storylines(2, 12, 14)
    assert {e.customer for e in a} != {e.customer for e in b}
    assert [e.text for e in a if e.text] != [e.text for e in b if e.text]
    r0, r1 = plan_storylines(1, 12, 14), plan_storylines(1, 12, 14, round=1)
    assert not {e.customer for e in r0} & {e.customer for e in r1}, "a new round brings new customers"
    # once the name pool (800) is used up names come back, the customers never do: ids are per round
    late = plan_storylines(1, 500, 1, round=2)
    early = plan_storylines(1, 500, 1)
    assert {e.profile.name for e in late} & {e.profile.name for e in early}
    assert not {e.customer for e in late} & {e.customer for e in early}


def test_the_same_seed_in_another_process_gives_the_same_words():
    # string seeds are hashed with SHA-512, not with Python's per-process hash seed
    code = ("from services.simulator.storylines import plan_storylines;"
            "print(repr([(e.at_h, e.customer, e.kind.value, e.text) for e in plan_storylines(9, 6, 10)]))")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO,
                           env={**os.environ, "PYTHONHASHSEED": str(h)}).stdout for h in (1, 2)}
    assert outs == {repr([(e.at_h, e.customer, e.kind.value, e.text) for e in plan_storylines(9, 6, 10)]) + "\n"}


def test_customers_are_unique_and_complete():
    people = cast(5, 40)
    assert len({p.name for p in people}) == 40
    for p in people:
        assert p.city and p.plan and p.router and p.phone and p.region
    assert len({p.name for r in range(10) for p in cast(5, 40, round=r)}) == 400


def test_every_life_event_happens_and_varies():
    events = plan_storylines(3, 40, 28)
    stories = Counter(e.story for e in events if e.kind is EventKind.SAY)
    assert set(stories) == set(Story)
    kinds = Counter(e.kind for e in events)
    assert set(kinds) == set(EventKind)
    faults = {e.fault for e in events if e.kind is EventKind.FAULT}
    assert faults == {k for k, v in FAULT_KINDS.items() if v["node"]}, "every fault on a network node"
    problems = {e.problem for e in events if e.kind is EventKind.SAY and e.problem}
    assert problems >= {"no_signal_light", "no_connection", "slow_speed", "wifi_drops", "intermittent",
                        "router_frozen", "billing_double_charge"}
    assert any(not e.fix_holds for e in events if e.kind is EventKind.CHECK), "some repairs do not hold"


def test_each_customer_lives_in_order_within_the_run():
    days = 7
    events = plan_storylines(11, 20, days)
    assert [e.at_h for e in events] == sorted(e.at_h for e in events)
    by_customer: dict[str, list] = {}
    for e in events:
        by_customer.setdefault(e.customer, []).append(e)
    for name, mine in by_customer.items():
        assert [e.seq for e in mine] == list(range(len(mine)))
        assert all(0 <= e.at_h <= days * 24 for e in mine)
        assert [e.at_h for e in mine] == sorted(e.at_h for e in mine)
        first = mine[0] if mine[0].kind is not EventKind.FAULT else mine[1]
        assert first.story is Story.FIRST_CONTACT and first.kind is EventKind.SAY
        assert first.profile.id == name and first.profile.name in first.text, "a customer introduces themself first"


def test_a_story_plays_in_one_order_fault_report_repair_check():
    stories: dict[str, list] = {}
    for e in plan_storylines(4, 30, 14):
        stories.setdefault(e.story_id, []).append(e.kind)
    shapes = set(tuple(k.value for k in v) for v in stories.values())
    assert ("fault", "say", "repair", "check") in shapes
    assert ("say", "check") in shapes  # a fault in the home, or a double charge
    assert ("say",) in shapes  # moves, plan changes, new routers, a plain first contact


def test_what_the_customer_knows_follows_their_life():
    city: dict[str, str] = {}
    for e in plan_storylines(8, 30, 30):
        if e.story is Story.MOVE:
            assert e.profile.city.lower() in e.text.lower() and e.profile.city != city[e.customer]
        if e.story is Story.NEW_ROUTER:
            assert e.profile.router in e.text
        city[e.customer] = e.profile.city


@pytest.mark.parametrize("bad", [
    dict(seed=1.5, customers=3, days=1), dict(seed=True, customers=3, days=1), dict(seed=1, customers=0, days=1),
    dict(seed=1, customers=3, days=0), dict(seed=1, customers=3, days=400), dict(seed=1, customers="3", days=1),
])
def test_bad_arguments_are_refused(bad):
    with pytest.raises(ValueError):
        plan_storylines(**bad)
    with pytest.raises(ValueError):
        plan_storylines(1, 3, 1, round=-1)


def test_the_clock_runs_at_its_speed():
    now = [100.0]
    clock = SimClock(2.0, now=lambda: now[0])
    assert clock.seconds_until(10) == 5.0
    now[0] += 3
    assert clock.hours() == 6.0 and clock.seconds_until(10) == 2.0
    now[0] += 10
    assert clock.seconds_until(10) == 0.0
    assert check_speed(0.5) == 0.5 and check_speed(8) == 8.0
    for bad in (0.4, 8.5, 0, True, "1"):
        with pytest.raises(ValueError):
            SimClock(bad)
