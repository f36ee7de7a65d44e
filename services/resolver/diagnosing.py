"""The resolver's field manual for the fault lab's equipment: how long each piece of work takes on
the lab's clock, which actions are safe to take on the desk's own authority, how a reading reads
on a ticket's timeline, and which fix to try first for a diagnosed fault (procedural memory
first). Pure functions: agent.py does the reading and writing.

Safe fixes are remote and harmless (a restart, a configuration push, a Wi-Fi channel change);
everything else sends people or money (a technician, a field crew, the transport team, a capacity
upgrade, a new payment) and is only done when the readings point at it.

Choosing a fix for a diagnosed kind. The candidates are every single action the manual says
repairs that kind (lab.REPAIRS), and every learnt procedure for the ticket's kind of issue whose
steps are lab actions, one of which repairs the diagnosed kind while the others are safe. Each is
scored by its record as procedural memory holds it, (s+1)/(s+f+2), an untried one at 1/2; the best
goes first, ties to the manual's usual fix (lab.FIX_FOR), then the shorter one. A procedure that
fixed this kind of problem before therefore goes first, and one whose fixes customers keep saying
did not hold sinks below the manual's untried fix."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Iterable

from relay_graph.lab import FIX_FOR, REPAIRS, Action, FaultKind, Reading, Test

HEALTHY = "healthy"  # the diagnosis recorded when every reading looks healthy

SAFE: frozenset[Action] = frozenset({Action.RESTART_ONT, Action.REPROVISION, Action.CHANGE_WIFI_CHANNEL})

# Time on the lab's clock, from the start of a piece of work to the moment a measurement can show
# its effect. The technician's visit is booked for a slot (agent._visit_slot) and lasts VISIT.
MEASURE = timedelta(minutes=2)
VISIT = timedelta(hours=1)
DURATION: dict[Action, timedelta] = {
    Action.RESTART_ONT: timedelta(minutes=5),
    Action.REPROVISION: timedelta(minutes=10),
    Action.CHANGE_WIFI_CHANNEL: timedelta(minutes=2),
    Action.RESET_BILLING: timedelta(minutes=10),
    Action.REPAIR_STREET_CABLE: timedelta(hours=4),
    Action.REPAIR_UPLINK: timedelta(hours=3),
    Action.ADD_HUB_CAPACITY: timedelta(hours=8),
    Action.DISPATCH_TECHNICIAN: VISIT,
}

# What the customer hears about each action.
SAY: dict[Action, str] = {
    Action.RESTART_ONT: "we restarted your home box remotely",
    Action.REPROVISION: "we pushed your home box's configuration again",
    Action.CHANGE_WIFI_CHANNEL: "we moved your Wi-Fi to a less crowded channel",
    Action.RESET_BILLING: "we took the payment again and lifted the suspension on your account",
    Action.REPAIR_STREET_CABLE: "a field crew repaired the street cabinet and the cable to your home",
    Action.REPAIR_UPLINK: "our transport team restored the failed link above your exchange",
    Action.ADD_HUB_CAPACITY: "we raised the capacity of your area's hub",
    Action.DISPATCH_TECHNICIAN: "a technician replaced the damaged fibre in your home",
}

# What each diagnosis means, in the customer's words.
MEANING: dict[FaultKind, str] = {
    FaultKind.ROUTER_FROZEN: "your home box gets light but stopped answering",
    FaultKind.WIFI_INTERFERENCE: "neighbouring networks crowd your Wi-Fi channel",
    FaultKind.DAMAGED_FIBRE: "the fibre inside your home loses most of the light",
    FaultKind.CUT_STREET_CABLE: "the street cabinet or the cable from it to your home is down",
    FaultKind.HUB_LINK_BACKUP: "a link above your exchange failed and a standby link carries your traffic",
    FaultKind.HUB_LINK_DOWN: "a link above your exchange failed and there is no standby",
    FaultKind.EVENING_CONGESTION: "your area's hub runs out of capacity in the evening",
    FaultKind.PAYMENT_FAILED: "the last payment failed and the account is suspended",
}


class LabClock:
    """The lab's time for one piece of work on a ticket: starts now, moves on with each step."""

    def __init__(self, start: datetime):
        self.now = start

    def after(self, span: timedelta) -> datetime:
        self.now = self.now + span
        return self.now

    def until(self, at: datetime) -> datetime:
        self.now = max(self.now, at)
        return self.now


def action(value: str) -> Action | None:
    try:
        return Action(value)
    except ValueError:
        return None


def kind_of(value: str | None) -> FaultKind | None:
    try:
        return FaultKind(value) if value else None
    except ValueError:
        return None


# ---------------------------------------------------------------- readings on the timeline


def _num(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _line(values: dict[str, Any]) -> str:
    if not values.get("connected", True):
        return "connected=no (no line on file)"
    down = values.get("down") or []
    downs = [f"{d['node_id']} down ({d['level']})" if d.get("element") == "node"
             else f"{d.get('type')} link {d.get('source')}->{d.get('target')} down ({d['level']})" for d in down]
    parts = [f"reaches_core={'yes' if values.get('reaches_core') else 'no'}",
             f"via_backup={'yes' if values.get('via_backup') else 'no'}",
             f"capacity_pct={_num(values.get('capacity_pct'))}",
             "route=" + (" > ".join(values.get("route") or []) or "none")]
    if downs:
        parts.append("down: " + "; ".join(downs))
    return ", ".join(parts)


def describe(reading: Reading) -> str:
    """A reading as one line of values (the timeline's detail; at most a couple of hundred chars
    except a long route)."""
    values = reading.values
    if reading.test is Test.LINE_TEST:
        body = _line(values)
    else:
        body = ", ".join(f"{k}={_num(v)}" for k, v in values.items() if v is not None and not isinstance(v, (list, dict)))
    noisy = ", ".join(f"{k}±{_num(v)}" for k, v in reading.noise.items() if v)
    text = f"{reading.reading_id} at {reading.at.strftime('%Y-%m-%d %H:%M')} lab time: {body}"
    return text + (f" (noise {noisy})" if noisy else "")


def evidence(readings: Iterable[Reading], kind: FaultKind | None) -> str:
    """The one or two values that carry the diagnosis, for the customer's message."""
    by = {r.test: r.values for r in readings}
    if kind is None:
        light = by.get(Test.LIGHT_LEVEL, {})
        speed = by.get(Test.SPEED_TEST, {})
        bits = []
        if light.get("rx_dbm") is not None:
            bits.append(f"light {light['rx_dbm']} dBm")
        if speed.get("reachable"):
            bits.append(f"wired speed {speed.get('wired_mbps')} Mbps")
        return ", ".join(bits) or "every test passes"
    if kind is FaultKind.PAYMENT_FAILED:
        return "billing shows the account suspended"
    if kind in (FaultKind.CUT_STREET_CABLE, FaultKind.HUB_LINK_DOWN, FaultKind.HUB_LINK_BACKUP):
        line = by.get(Test.LINE_TEST, {})
        levels = sorted({d.get("level") or "network" for d in line.get("down") or []})
        return "the line test shows " + (f"a failure at {' and '.join(levels)} level" if levels else "a failed link")
    if kind is FaultKind.DAMAGED_FIBRE:
        return f"light at the box {by.get(Test.LIGHT_LEVEL, {}).get('rx_dbm')} dBm"
    if kind is FaultKind.ROUTER_FROZEN:
        return "the box gets light but does not answer"
    if kind is FaultKind.EVENING_CONGESTION:
        return f"hub peak load {by.get(Test.SPEED_TEST, {}).get('hub_peak_utilisation_pct')}%"
    wifi = by.get(Test.WIFI_SCAN, {})
    return f"{wifi.get('neighbours_on_channel')} networks on your channel {wifi.get('channel')}"


# ---------------------------------------------------------------- choosing the fix


@dataclass(frozen=True)
class Candidate:
    steps: tuple[Action, ...]
    successes: int = 0
    failures: int = 0
    learnt: bool = False  # a procedure with at least one verified fix

    @property
    def score(self) -> float:
        return (self.successes + 1) / (self.successes + self.failures + 2)


def applicable(steps: Iterable[str], kind: FaultKind) -> tuple[Action, ...] | None:
    """The steps as actions, when they make sense for this diagnosis: every step a lab action, one
    of them repairing the kind, the others safe."""
    acts = tuple(action(s) for s in steps)
    if not acts or any(a is None for a in acts):
        return None
    if not any(kind in REPAIRS[a] for a in acts):
        return None
    if any(a not in SAFE and kind not in REPAIRS[a] for a in acts):
        return None
    return acts  # type: ignore[return-value]


def manual(kind: FaultKind) -> list[tuple[Action, ...]]:
    """The manual's single-action fixes for a kind, its usual one first."""
    usual = FIX_FOR[kind]
    return [(usual,)] + [(a,) for a in Action if a is not usual and kind in REPAIRS[a]]


def rank(kind: FaultKind, candidates: Iterable[Candidate]) -> list[Candidate]:
    """Best first (see the module doc)."""
    usual = FIX_FOR[kind]
    unique: dict[tuple[Action, ...], Candidate] = {}
    for c in candidates:  # the same steps twice: the one with the longer record
        seen = unique.get(c.steps)
        if seen is None or c.successes + c.failures > seen.successes + seen.failures:
            unique[c.steps] = c
    return sorted(unique.values(), key=lambda c: (-c.score, c.steps != (usual,), len(c.steps),
                                                  [a.value for a in c.steps]))


__all__ = [
    "Candidate", "DURATION", "HEALTHY", "LabClock", "MEANING", "MEASURE", "SAFE", "SAY", "VISIT", "action", "applicable",
    "describe", "evidence", "kind_of", "manual", "rank",
]
