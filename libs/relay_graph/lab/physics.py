"""The lab's instruments as pure functions: what each test reads, given what the network shows about
a customer's line (LineView), which hidden faults strike them (Hidden), the time, and seeded noise.

Ranges keep a wide margin between healthy and faulty readings, several noise deviations apart, so
noise blurs a reading without ever flipping what it means:
- light received at the home box: healthy -23..-17 dBm, damaged in-home fibre -34..-30.5 dBm
  (the box's sensitivity is -28 dBm), no light at all reads the sensor floor of -40 dBm;
- Wi-Fi: healthy 0..4 networks on the channel and 8..40 % airtime, interference 11..18 and 75..95 %;
- speed: wired 90..97 % of the plan (times the capacity left on a backup path), 10..30 % of that in
  a congested evening; Wi-Fi 55..75 % of wired, 4..15 % under interference;
- hub utilisation: healthy peak 60..82 %, congested peak 96..99.8 %."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from relay_graph.lab.models import EVENING_HOURS, FaultKind, Test

SENSITIVITY_DBM = -28.0
FLOOR_DBM = -40.0
RX_NOISE = 0.3
UTIL_NOISE = 1.0
SPEED_NOISE = 0.02  # relative
WIFI_CHANNELS = (1, 6, 11)

HIDDEN_KINDS: frozenset[FaultKind] = frozenset({
    FaultKind.ROUTER_FROZEN, FaultKind.WIFI_INTERFERENCE, FaultKind.DAMAGED_FIBRE, FaultKind.PAYMENT_FAILED,
    FaultKind.EVENING_CONGESTION,
})


@dataclass(frozen=True)
class DownElement:
    element: str  # "node" or "link"
    level: str  # home, street, exchange, hub, core
    node_id: str | None = None
    kind: str | None = None  # node kind or link type
    source: str | None = None
    target: str | None = None

    def view(self) -> dict[str, Any]:
        if self.element == "node":
            return {"element": "node", "node_id": self.node_id, "kind": self.kind, "level": self.level}
        return {"element": "link", "type": self.kind, "source": self.source, "target": self.target,
                "level": self.level}


@dataclass(frozen=True)
class LineView:
    """What the network graph shows about one customer's line."""

    connected: bool
    access: str | None = None
    has_ont: bool = False
    ont_up: bool = True
    reaches_core: bool = False  # a working path runs from a backbone down to the home
    managed: bool = False  # the exchange above the home reaches the core (its equipment answers)
    lit: bool = False  # light reaches the home: an exchange is up and the fibre below it works
    route: tuple[str, ...] = ()  # home -> core, preferring primary links
    via_backup: bool = False  # service runs over a standby link because a primary one is down
    down: tuple[DownElement, ...] = ()
    capacity_ratio: float = 1.0  # capacity left into the hubs on the route, now / with all links up
    hub: str | None = None
    plan_mbps: float = 1000.0


@dataclass(frozen=True)
class Hidden:
    """The hidden faults striking this customer now (from the truth)."""

    kinds: frozenset[FaultKind] = field(default_factory=frozenset)


def _rng(*parts: object) -> random.Random:
    return random.Random(hashlib.sha1("|".join(map(str, parts)).encode()).hexdigest())


@dataclass(frozen=True)
class Profile:
    """Stable facts about one home: its light level, Wi-Fi channel, usual uptime, bill."""

    rx_dbm: float
    damaged_rx_dbm: float
    channel: int
    best_channel: int
    wifi_share: float
    uptime_days: int
    balance_due: float


def profile(tenant: str, uid: str) -> Profile:
    r = _rng(tenant, uid, "profile")
    channel = r.choice(WIFI_CHANNELS)
    return Profile(
        rx_dbm=r.uniform(-23.0, -17.0), damaged_rx_dbm=r.uniform(-34.0, -30.5), channel=channel,
        best_channel=r.choice([c for c in WIFI_CHANNELS if c != channel]), wifi_share=r.uniform(0.55, 0.75),
        uptime_days=r.randint(1, 90), balance_due=round(r.uniform(25.0, 90.0), 2),
    )


def reading(test: Test, line: LineView, hidden: Hidden, at: datetime, prof: Profile,
            noise: random.Random) -> tuple[dict[str, Any], dict[str, float]]:
    """(values, noise deviations) of one test."""
    return _TESTS[test](line, hidden.kinds, at, prof, noise)


def _ont_state(line: LineView, kinds: frozenset[FaultKind]) -> str:
    if not line.has_ont:
        return "no_ont"
    if not line.managed:
        return "unknown"  # the exchange above cannot be reached, so neither can the box
    if not line.lit or FaultKind.DAMAGED_FIBRE in kinds:
        return "los"  # the exchange sees no (or too little) light from the box
    if not line.ont_up:
        return "offline"
    if FaultKind.ROUTER_FROZEN in kinds:
        return "unresponsive"
    return "online"


def _line_test(line, kinds, at, prof, noise):
    if not line.connected:
        return {"connected": False, "reaches_core": False, "route": [], "down": [], "via_backup": False,
                "capacity_pct": 0.0}, {}
    return {
        "connected": True,
        "reaches_core": line.reaches_core,
        "route": list(line.route),
        "down": [d.view() for d in line.down],
        "via_backup": line.via_backup,
        "capacity_pct": round(100.0 * line.capacity_ratio, 1),
    }, {}


def _ont_status(line, kinds, at, prof, noise):
    state = _ont_state(line, kinds)
    online = state == "online"
    return {
        "state": state,
        "reachable": online,
        "uptime_s": prof.uptime_days * 86_400 + at.hour * 3600 if online else None,
        "lan_link": online,
    }, {}


def _light_level(line, kinds, at, prof, noise):
    if not (line.connected and line.managed):
        return {"available": False, "rx_dbm": None, "signal": False, "sensitivity_dbm": SENSITIVITY_DBM}, {}
    if not line.lit:
        rx, sigma = FLOOR_DBM, 0.0
    else:
        base = prof.damaged_rx_dbm if FaultKind.DAMAGED_FIBRE in kinds else prof.rx_dbm
        rx, sigma = base + noise.gauss(0.0, RX_NOISE), RX_NOISE
    return {"available": True, "rx_dbm": round(rx, 2), "signal": rx > FLOOR_DBM + 2,
            "sensitivity_dbm": SENSITIVITY_DBM}, {"rx_dbm": sigma}


def _wifi_scan(line, kinds, at, prof, noise):
    if _ont_state(line, kinds) != "online":
        return {"available": False}, {}
    if FaultKind.WIFI_INTERFERENCE in kinds:
        neighbours, util = noise.randint(11, 18), noise.uniform(75.0, 95.0)
    else:
        neighbours, util = noise.randint(0, 4), noise.uniform(8.0, 40.0)
    return {
        "available": True,
        "band": "2.4GHz",
        "channel": prof.channel,
        "neighbours_on_channel": neighbours,
        "channel_utilisation_pct": round(util, 1),
        "best_channel": prof.best_channel,
        "neighbours_on_best": noise.randint(0, 2),
    }, {}


def _speed_test(line, kinds, at, prof, noise):
    evening = at.hour in EVENING_HOURS
    congested = FaultKind.EVENING_CONGESTION in kinds
    if congested:
        util = noise.uniform(96.0, 99.5) if evening else noise.uniform(55.0, 75.0)
        peak = noise.uniform(96.0, 99.8)
    else:
        util = noise.uniform(55.0, 80.0) if evening else noise.uniform(15.0, 50.0)
        peak = noise.uniform(60.0, 82.0)
    util = min(100.0, util + noise.gauss(0.0, UTIL_NOISE))
    peak = min(100.0, max(peak, util))
    base = {"plan_mbps": line.plan_mbps, "hour": at.hour, "evening": evening, "hub": line.hub,
            "hub_utilisation_pct": round(util, 1), "hub_peak_utilisation_pct": round(peak, 1)}
    reachable = line.connected and line.reaches_core and _ont_state(line, kinds) == "online"
    if not reachable:
        return {"reachable": False, "captive_portal": False, "wired_mbps": 0.0, "wifi_mbps": 0.0,
                "upload_mbps": 0.0, **base}, {"hub_utilisation_pct": UTIL_NOISE}
    if FaultKind.PAYMENT_FAILED in kinds:
        return {"reachable": True, "captive_portal": True, "wired_mbps": 0.0, "wifi_mbps": 0.0,
                "upload_mbps": 0.0, **base}, {"hub_utilisation_pct": UTIL_NOISE}
    wired = line.plan_mbps * noise.uniform(0.90, 0.97) * min(1.0, line.capacity_ratio)
    if congested and evening:
        wired *= noise.uniform(0.10, 0.30)
    wifi = wired * (noise.uniform(0.04, 0.15) if FaultKind.WIFI_INTERFERENCE in kinds else prof.wifi_share)
    upload = wired * noise.uniform(0.85, 0.95)
    jitter = lambda v: max(0.0, v * (1.0 + noise.gauss(0.0, SPEED_NOISE)))  # noqa: E731
    wired, wifi, upload = jitter(wired), jitter(wifi), jitter(upload)
    return {"reachable": True, "captive_portal": False, "wired_mbps": round(wired, 1), "wifi_mbps": round(wifi, 1),
            "upload_mbps": round(upload, 1), **base}, {
        "wired_mbps": round(SPEED_NOISE * wired, 3), "wifi_mbps": round(SPEED_NOISE * wifi, 3),
        "upload_mbps": round(SPEED_NOISE * upload, 3), "hub_utilisation_pct": UTIL_NOISE}


def _billing_status(line, kinds, at, prof, noise):
    if FaultKind.PAYMENT_FAILED in kinds:
        return {"account": "suspended", "last_payment": "failed", "balance_due": prof.balance_due}, {}
    return {"account": "active", "last_payment": "ok", "balance_due": 0.0}, {}


_TESTS = {
    Test.LINE_TEST: _line_test,
    Test.ONT_STATUS: _ont_status,
    Test.LIGHT_LEVEL: _light_level,
    Test.WIFI_SCAN: _wifi_scan,
    Test.SPEED_TEST: _speed_test,
    Test.BILLING_STATUS: _billing_status,
}
