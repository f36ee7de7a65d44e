"""The resolver's starting knowledge: a default playbook per kind of problem, used when the graph
holds no procedure that fixed that kind of problem before. Once a playbook's fix is verified it
becomes a Procedure in the graph (tickets.record_fix) and is ranked with everything learnt since."""

from __future__ import annotations

from relay_graph.extraction.schema import IssueKind
from relay_graph.tickets import procedure_id

PLAYBOOKS: dict[str, tuple[str, ...]] = {
    IssueKind.NO_CONNECTION.value: (
        "check the lights on the home box",
        "restart the home box",
        "restart the router",
        "re-seat the fibre patch cable",
    ),
    IssueKind.SLOW_SPEED.value: (
        "run a speed test over a cable",
        "restart the router",
        "move the wifi to the 5 GHz band",
    ),
    IssueKind.WIFI_DROPS.value: (
        "restart the router",
        "change the wifi channel",
        "update the router firmware",
    ),
    IssueKind.INTERMITTENT.value: (
        "check the line for errors",
        "restart the home box",
        "replace the network cable",
    ),
    IssueKind.ROUTER_FROZEN.value: (
        "power-cycle the router",
        "reset the router to factory settings",
    ),
    IssueKind.BILLING_DOUBLE_CHARGE.value: (
        "find the duplicate charge on the invoice",
        "refund the duplicate charge",
    ),
    IssueKind.PAYMENT_FAILED.value: (
        "check the payment log",
        "send a new payment link",
    ),
    IssueKind.OTHER.value: (
        "review the customer's report",
        "restart the router",
    ),
}

# Problems no remote step can fix: a red LOS light means no light reaches the home box (a
# damaged or unplugged fibre), which takes a technician.
TECHNICIAN_FIRST: frozenset[str] = frozenset({IssueKind.NO_SIGNAL_LIGHT.value})

# Who goes out, picked per ticket so that a redelivery books the same person.
TECHNICIANS: tuple[str, ...] = ("Ravi Kumar", "Meera Iyer", "Sam Okafor", "Lena Fischer")


def playbook(issue: str) -> tuple[str, ...]:
    return PLAYBOOKS.get(issue, PLAYBOOKS[IssueKind.OTHER.value])


def playbook_by_id(issue: str, pid: str) -> tuple[str, ...] | None:
    """The playbook whose procedure id this is (a plan chosen before its fix was ever recorded)."""
    for steps in {playbook(issue), *PLAYBOOKS.values()}:
        if procedure_id(issue, list(steps)) == pid:
            return steps
    return None
