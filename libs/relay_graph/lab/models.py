"""What the fault lab's equipment speaks: fault kinds, tests, actions, readings, results, and the
grader's scoreboard. Nothing here holds or reveals a particular fault: these are the field
manual's vocabulary (which action repairs which kind of fault is common knowledge, the same
for every agent), not the lab's hidden truth."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any

from pydantic import BaseModel


class FaultKind(str, Enum):
    ROUTER_FROZEN = "router_frozen"  # the home box hangs: light reaches it, it answers nothing
    WIFI_INTERFERENCE = "wifi_interference"  # a crowded Wi-Fi channel: wired fine, Wi-Fi slow
    DAMAGED_FIBRE = "damaged_fibre"  # the fibre in the home is bent or cracked: very low light
    CUT_STREET_CABLE = "cut_street_cable"  # the drop from the cabinet is cut, or the cabinet is down
    HUB_LINK_BACKUP = "hub_link_backup"  # an uplink is down, a standby uplink carries on (degraded)
    HUB_LINK_DOWN = "hub_link_down"  # an uplink is down with no standby: an outage
    EVENING_CONGESTION = "evening_congestion"  # a hub runs out of capacity in the evening peak
    PAYMENT_FAILED = "payment_failed"  # no network fault: the account is suspended


# Faults that live on the network (shared by everyone behind them) rather than in one home.
NETWORK_KINDS: frozenset[FaultKind] = frozenset({
    FaultKind.CUT_STREET_CABLE, FaultKind.HUB_LINK_BACKUP, FaultKind.HUB_LINK_DOWN, FaultKind.EVENING_CONGESTION,
})


class Test(str, Enum):
    __test__ = False  # not a pytest test class, despite the name

    LINE_TEST = "line_test"  # the path from home to core as the network management system sees it
    ONT_STATUS = "ont_status"  # the home box's management state
    WIFI_SCAN = "wifi_scan"  # the home router's view of the Wi-Fi channels
    SPEED_TEST = "speed_test"  # wired and Wi-Fi throughput, with the hub's utilisation
    BILLING_STATUS = "billing_status"  # the account as billing sees it
    LIGHT_LEVEL = "light_level"  # optical power received at the home box


class Action(str, Enum):
    RESTART_ONT = "restart_ont"
    REPROVISION = "reprovision"  # push the box's configuration again (reboots it)
    CHANGE_WIFI_CHANNEL = "change_wifi_channel"
    DISPATCH_TECHNICIAN = "dispatch_technician"  # a visit to the home: replaces the in-home fibre
    REPAIR_STREET_CABLE = "repair_street_cable"  # a field crew at the cabinet: splices the cut
    REPAIR_UPLINK = "repair_uplink"  # the transport team restores the failed uplink
    ADD_HUB_CAPACITY = "add_hub_capacity"  # upgrade the hub's backhaul
    RESET_BILLING = "reset_billing"  # take a new payment and lift the suspension


# Which actions repair which kind of fault. Any other action leaves the fault as it is.
REPAIRS: dict[Action, frozenset[FaultKind]] = {
    Action.RESTART_ONT: frozenset({FaultKind.ROUTER_FROZEN}),
    Action.REPROVISION: frozenset({FaultKind.ROUTER_FROZEN}),
    Action.CHANGE_WIFI_CHANNEL: frozenset({FaultKind.WIFI_INTERFERENCE}),
    Action.DISPATCH_TECHNICIAN: frozenset({FaultKind.DAMAGED_FIBRE}),
    Action.REPAIR_STREET_CABLE: frozenset({FaultKind.CUT_STREET_CABLE}),
    Action.REPAIR_UPLINK: frozenset({FaultKind.HUB_LINK_BACKUP, FaultKind.HUB_LINK_DOWN}),
    Action.ADD_HUB_CAPACITY: frozenset({FaultKind.EVENING_CONGESTION}),
    Action.RESET_BILLING: frozenset({FaultKind.PAYMENT_FAILED}),
}
# The usual repair for each kind (the first the field manual lists).
FIX_FOR: dict[FaultKind, Action] = {
    FaultKind.ROUTER_FROZEN: Action.RESTART_ONT,
    FaultKind.WIFI_INTERFERENCE: Action.CHANGE_WIFI_CHANNEL,
    FaultKind.DAMAGED_FIBRE: Action.DISPATCH_TECHNICIAN,
    FaultKind.CUT_STREET_CABLE: Action.REPAIR_STREET_CABLE,
    FaultKind.HUB_LINK_BACKUP: Action.REPAIR_UPLINK,
    FaultKind.HUB_LINK_DOWN: Action.REPAIR_UPLINK,
    FaultKind.EVENING_CONGESTION: Action.ADD_HUB_CAPACITY,
    FaultKind.PAYMENT_FAILED: Action.RESET_BILLING,
}

# The evening peak on the lab's clock (hours, UTC): when a congested hub runs out of capacity.
EVENING_HOURS: frozenset[int] = frozenset(range(18, 23))


class Reading(BaseModel):
    """One measurement. `values` are what the instrument shows; `noise` is the standard deviation
    of the random error on each noisy value (0 or absent: exact)."""

    reading_id: str
    test: Test
    customer: str
    at: datetime
    values: dict[str, Any]
    noise: dict[str, float] = {}


class VisibleChange(BaseModel):
    """A change to the network that anyone can see (a node or link went down or came back)."""

    node_id: str | None = None  # a node's status
    link_type: str | None = None  # or a link's
    source: str | None = None
    target: str | None = None
    up: bool
    version: int | None = None  # the node's status version, for a NetworkChanged notification


class ActionResult(BaseModel):
    """That an action was carried out, not whether it worked: only a new measurement says that.
    `visible` lists network changes the action brought about (a cabinet back up), which the
    network graph shows anyone anyway; a repair inside a home shows nowhere but in readings."""

    action_id: str
    customer: str
    action: Action
    at: datetime
    note: str
    visible: list[VisibleChange] = []


class Injection(BaseModel):
    """What inject() tells its caller (the simulator or the lab's HTTP endpoint): the fault id and
    the network changes it made visible. The kind and cause stay in the truth graph."""

    fault_id: str
    customer: str | None  # the customer the fault was aimed at, if any
    visible: list[VisibleChange] = []


class DiagnosisRecord(BaseModel):
    ticket_id: str
    customer: str
    diagnosis: str  # a FaultKind value, or "healthy"
    faults_linked: int  # how many of the lab's active faults this diagnosis is graded against


class ScoreRow(BaseModel):
    fault_id: str
    kind: FaultKind
    customer: str | None
    target: str | None  # the node or link it struck, for network faults
    started_at: datetime
    tickets: list[str]
    diagnoses: list[str | None]  # each linked ticket's current diagnosis
    diagnosed_right: bool
    fixed: bool
    fixed_at: datetime | None
    fixed_by: Action | None
    fixed_proven: bool  # fixed, and the customer was measured again after the fix
    minutes_to_fix: float | None
    actions: int  # actions taken while it was active by customers it affected
    wrong_actions: int


class Scoreboard(BaseModel):
    faults: int
    diagnosed_right: int
    fixed: int
    fixed_proven: int
    rows: list[ScoreRow]


__all__ = [
    "Action",
    "ActionResult",
    "DiagnosisRecord",
    "EVENING_HOURS",
    "FIX_FOR",
    "FaultKind",
    "Injection",
    "NETWORK_KINDS",
    "REPAIRS",
    "Reading",
    "ScoreRow",
    "Scoreboard",
    "Test",
    "VisibleChange",
]
