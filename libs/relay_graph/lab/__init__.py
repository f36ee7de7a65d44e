"""The fault lab: faults whose truth no agent can read, equipment agents use to find them, a grader.

    inject_fault / inject       the simulator and the lab's HTTP endpoint break something
    measure / measure_all       line_test, ont_status, wifi_scan, speed_test, billing_status, light_level
    act                         restart_ont, reprovision, change_wifi_channel, dispatch_technician,
                                repair_street_cable, repair_uplink, add_hub_capacity, reset_billing
    diagnose_from_readings      a pure decision procedure over readings
    record_diagnosis            what the agent concluded, on the ticket
    scoreboard                  faults injected, diagnosed right, fixes proven by measuring again

The truth (kind, target, start, true cause, proper fix, and every action and measurement) lives in a
separate graph per tenant that only relay_graph.lab.truth opens; this package's public functions
hand out readings and results, never that graph's contents (scoreboard excepted: it is the
grader's report, for people, not for agents).

The simulated world a tenant is created with (`world`: cities, homes and their lines, built by
`network_gen`) shares the package: both are the simulation, not the desk, and no part of the
desk imports them back. The world is held to the same rule as code outside the fault lab: it
cannot reach the truth (tests/relay_graph/lab/test_isolation.py).

May use: `relay_graph.desk`, `relay_graph.memory`, `relay_graph.runtime`. Its Cypher is in `lab.queries`."""

from __future__ import annotations

from relay_graph.lab.diagnosis import diagnose_from_readings
from relay_graph.lab.equipment import act, measure, measure_all
from relay_graph.lab.faults import inject, inject_fault
from relay_graph.lab.grader import record_diagnosis, scoreboard
from relay_graph.lab.models import (
    EVENING_HOURS,
    FIX_FOR,
    NETWORK_KINDS,
    REPAIRS,
    Action,
    ActionResult,
    DiagnosisRecord,
    FaultKind,
    Injection,
    Reading,
    Scoreboard,
    ScoreRow,
    Test,
    VisibleChange,
)

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
    "act",
    "diagnose_from_readings",
    "inject",
    "inject_fault",
    "measure",
    "measure_all",
    "record_diagnosis",
    "scoreboard",
]
