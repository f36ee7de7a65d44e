"""The instruments and the decision procedure as pure functions: every fault kind, read through
hundreds of noise draws and home profiles, is diagnosed as itself; a healthy line as nothing; and no
reading names the fault it was derived from."""

from __future__ import annotations

import random
from datetime import datetime, timezone

import pytest

from relay_graph.lab import FaultKind, Reading, Test, diagnose_from_readings
from relay_graph.lab.physics import DownElement, Hidden, LineView, profile, reading

EVENING = datetime(2026, 9, 5, 20, 30, tzinfo=timezone.utc)
MORNING = datetime(2026, 9, 5, 9, 30, tzinfo=timezone.utc)
ROUTE = ("ont", "spl", "olt", "pop", "bb1")
HEALTHY = LineView(connected=True, access="ont", has_ont=True, reaches_core=True, managed=True, lit=True,
                   route=ROUTE, hub="pop")
UPLINK_DOWN = DownElement(element="link", level="hub", kind="UPLINK", source="pop", target="bb1")

SCENES: dict[FaultKind, tuple[LineView, frozenset[FaultKind]]] = {
    FaultKind.ROUTER_FROZEN: (HEALTHY, frozenset({FaultKind.ROUTER_FROZEN})),
    FaultKind.WIFI_INTERFERENCE: (HEALTHY, frozenset({FaultKind.WIFI_INTERFERENCE})),
    FaultKind.DAMAGED_FIBRE: (HEALTHY, frozenset({FaultKind.DAMAGED_FIBRE})),
    FaultKind.CUT_STREET_CABLE: (LineView(
        connected=True, access="ont", has_ont=True, reaches_core=False, managed=True, lit=False, route=ROUTE,
        hub="pop", down=(DownElement(element="link", level="street", kind="DROP", source="spl", target="ont"),)),
        frozenset()),
    FaultKind.HUB_LINK_BACKUP: (LineView(
        connected=True, access="ont", has_ont=True, reaches_core=True, managed=True, lit=True,
        route=("ont", "spl", "olt", "pop", "bb2"), hub="pop", via_backup=True, capacity_ratio=40 / 140,
        down=(UPLINK_DOWN,)), frozenset()),
    FaultKind.HUB_LINK_DOWN: (LineView(
        connected=True, access="ont", has_ont=True, reaches_core=False, managed=False, lit=True, route=ROUTE,
        hub="pop", down=(UPLINK_DOWN,)), frozenset()),
    FaultKind.EVENING_CONGESTION: (HEALTHY, frozenset({FaultKind.EVENING_CONGESTION})),
    FaultKind.PAYMENT_FAILED: (HEALTHY, frozenset({FaultKind.PAYMENT_FAILED})),
}


def read_all(line: LineView, kinds: frozenset[FaultKind], at: datetime, seed: int) -> list[Reading]:
    prof = profile("lab-test", f"Customer|c{seed}")
    out = []
    for i, test in enumerate(Test):
        values, noise = reading(test, line, Hidden(kinds), at, prof, random.Random(seed * 31 + i))
        out.append(Reading(reading_id=f"r{i}", test=test, customer="c", at=at, values=values, noise=noise))
    return out


def flatten(value) -> list:
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in [k, *flatten(v)]]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in flatten(v)]
    return [value]


@pytest.mark.parametrize("kind", list(FaultKind), ids=[k.value for k in FaultKind])
def test_every_kind_is_diagnosed_through_the_noise(kind):
    line, hidden = SCENES[kind]
    for seed in range(300):
        for at in (EVENING, MORNING):
            readings = read_all(line, hidden, at, seed)
            assert diagnose_from_readings(readings) is kind, (seed, at, [r.values for r in readings])
            words = {str(x) for r in readings for x in flatten(r.values)}
            assert not words & {k.value for k in FaultKind}  # readings, never the answer


def test_healthy_lines_read_healthy():
    for seed in range(300):
        for at in (EVENING, MORNING):
            assert diagnose_from_readings(read_all(HEALTHY, frozenset(), at, seed)) is None


def test_readings_show_what_each_fault_does():
    def values(kind, at=EVENING, seed=1):
        line, hidden = SCENES[kind] if kind else (HEALTHY, frozenset())
        return {r.test: r.values for r in read_all(line, hidden, at, seed)}

    ok = values(None)
    assert ok[Test.ONT_STATUS]["state"] == "online" and -23.5 < ok[Test.LIGHT_LEVEL]["rx_dbm"] < -16.5
    assert ok[Test.SPEED_TEST]["wired_mbps"] > 850 and ok[Test.BILLING_STATUS]["account"] == "active"
    assert values(FaultKind.DAMAGED_FIBRE)[Test.LIGHT_LEVEL]["rx_dbm"] < -30
    assert values(FaultKind.CUT_STREET_CABLE)[Test.LIGHT_LEVEL]["rx_dbm"] == -40.0
    frozen = values(FaultKind.ROUTER_FROZEN)
    assert frozen[Test.ONT_STATUS]["state"] == "unresponsive" and frozen[Test.WIFI_SCAN] == {"available": False}
    wifi = values(FaultKind.WIFI_INTERFERENCE)
    assert wifi[Test.SPEED_TEST]["wifi_mbps"] < 0.2 * wifi[Test.SPEED_TEST]["wired_mbps"]
    assert wifi[Test.WIFI_SCAN]["neighbours_on_channel"] >= 11
    backup = values(FaultKind.HUB_LINK_BACKUP)[Test.SPEED_TEST]
    assert 200 < backup["wired_mbps"] < 320  # 40 of 140 Gbps left into the hub
    assert values(FaultKind.HUB_LINK_DOWN)[Test.ONT_STATUS]["state"] == "unknown"
    evening, morning = values(FaultKind.EVENING_CONGESTION), values(FaultKind.EVENING_CONGESTION, MORNING)
    assert evening[Test.SPEED_TEST]["wired_mbps"] < 300 < 850 < morning[Test.SPEED_TEST]["wired_mbps"]
    assert morning[Test.SPEED_TEST]["hub_peak_utilisation_pct"] >= 96
    paid = values(FaultKind.PAYMENT_FAILED)
    assert paid[Test.BILLING_STATUS]["account"] == "suspended" and paid[Test.SPEED_TEST]["captive_portal"]
    assert paid[Test.ONT_STATUS]["state"] == "online"


def test_noise_is_seeded():
    line, hidden = SCENES[FaultKind.DAMAGED_FIBRE]
    a = [r.values for r in read_all(line, hidden, EVENING, 7)]
    assert a == [r.values for r in read_all(line, hidden, EVENING, 7)]
    assert a != [r.values for r in read_all(line, hidden, EVENING, 8)]


def test_diagnosis_takes_plain_maps_and_the_latest_reading():
    assert diagnose_from_readings([]) is None
    assert diagnose_from_readings([{"test": "billing_status", "values": {"account": "suspended"}}]) is (
        FaultKind.PAYMENT_FAILED)
    assert diagnose_from_readings([
        {"test": "billing_status", "values": {"account": "suspended"}},
        {"test": "billing_status", "values": {"account": "active"}},
    ]) is None
    assert diagnose_from_readings([{"test": "ont_status", "values": {"state": "los"}}]) is FaultKind.DAMAGED_FIBRE
    with pytest.raises(ValueError):
        diagnose_from_readings([{"test": "smell_test", "values": {}}])
