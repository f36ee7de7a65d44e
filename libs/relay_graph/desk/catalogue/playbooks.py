"""Troubleshooting playbooks: for each kind of issue the ordered steps the desk follows, stored as
`(:Playbook {issue_kind})-[:FIRST]->(:PlaybookStep {action, order})-[:NEXT]->...`.

A step's `action` is a code from PlaybookAction (what the resolver does: measure, act, re-measure);
its `instruction` is how a person would say it. Playbooks are the static starting point; the
procedures the desk learns (procedural memory, tickets module) rank above them once verified."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from relay_graph.desk.extraction.schema import IssueKind


class PlaybookAction(str, Enum):
    CHECK_OUTAGE = "check_outage"
    CHECK_ACCOUNT = "check_account"
    LINE_TEST = "line_test"
    READ_OPTICAL_POWER = "read_optical_power"
    SPEED_TEST = "speed_test"
    CHECK_CONGESTION = "check_congestion"
    CHECK_WIFI = "check_wifi"
    CHANGE_WIFI_CHANNEL = "change_wifi_channel"
    RESTART_ROUTER = "restart_router"
    RESTART_ONT = "restart_ont"
    REPROVISION = "reprovision"
    CHECK_PAYMENTS = "check_payments"
    REFUND_DUPLICATE = "refund_duplicate"
    RETRY_PAYMENT = "retry_payment"
    DISPATCH_TECHNICIAN = "dispatch_technician"
    CONFIRM_WITH_CUSTOMER = "confirm_with_customer"


A = PlaybookAction
INSTRUCTIONS: dict[PlaybookAction, str] = {
    A.CHECK_OUTAGE: "Check for an open outage on the customer's line before anything else.",
    A.CHECK_ACCOUNT: "Check the account is active and no bill is blocking the service.",
    A.LINE_TEST: "Run a line test from the exchange to the home box.",
    A.READ_OPTICAL_POWER: "Read the optical signal level at the home box.",
    A.SPEED_TEST: "Run a speed test at the home box (not over Wi-Fi).",
    A.CHECK_CONGESTION: "Check the load on the customer's cabinet and hub at this hour.",
    A.CHECK_WIFI: "Read the router's Wi-Fi channel, interference and signal per device.",
    A.CHANGE_WIFI_CHANNEL: "Move the Wi-Fi to the clearest channel.",
    A.RESTART_ROUTER: "Restart the router remotely.",
    A.RESTART_ONT: "Restart the home box (ONT) remotely.",
    A.REPROVISION: "Re-provision the line profile on the exchange.",
    A.CHECK_PAYMENTS: "Look up the payment attempts for the billing period.",
    A.REFUND_DUPLICATE: "Refund the duplicate charge to the same card.",
    A.RETRY_PAYMENT: "Retry the payment, or ask the customer to update the card.",
    A.DISPATCH_TECHNICIAN: "Book a technician visit.",
    A.CONFIRM_WITH_CUSTOMER: "Confirm with the customer that it is resolved.",
}


@dataclass(frozen=True)
class PlaybookSpec:
    issue_kind: str
    title: str
    steps: tuple[PlaybookAction, ...]


PLAYBOOKS: dict[str, PlaybookSpec] = {
    p.issue_kind: p
    for p in (
        PlaybookSpec(IssueKind.NO_CONNECTION.value, "No internet at all",
                     (A.CHECK_OUTAGE, A.CHECK_ACCOUNT, A.LINE_TEST, A.RESTART_ONT, A.REPROVISION, A.LINE_TEST,
                      A.DISPATCH_TECHNICIAN)),
        PlaybookSpec(IssueKind.SLOW_SPEED.value, "Slower than the plan",
                     (A.CHECK_OUTAGE, A.SPEED_TEST, A.CHECK_CONGESTION, A.CHECK_WIFI, A.RESTART_ROUTER,
                      A.SPEED_TEST, A.DISPATCH_TECHNICIAN)),
        PlaybookSpec(IssueKind.WIFI_DROPS.value, "Wi-Fi keeps dropping",
                     (A.CHECK_OUTAGE, A.CHECK_WIFI, A.CHANGE_WIFI_CHANNEL, A.RESTART_ROUTER, A.CHECK_WIFI,
                      A.CONFIRM_WITH_CUSTOMER)),
        PlaybookSpec(IssueKind.INTERMITTENT.value, "Connection comes and goes",
                     (A.CHECK_OUTAGE, A.LINE_TEST, A.READ_OPTICAL_POWER, A.CHECK_CONGESTION, A.RESTART_ONT,
                      A.LINE_TEST, A.DISPATCH_TECHNICIAN)),
        PlaybookSpec(IssueKind.NO_SIGNAL_LIGHT.value, "Red light on the fibre box",
                     (A.CHECK_OUTAGE, A.READ_OPTICAL_POWER, A.LINE_TEST, A.DISPATCH_TECHNICIAN)),
        PlaybookSpec(IssueKind.BILLING_DOUBLE_CHARGE.value, "Charged twice",
                     (A.CHECK_PAYMENTS, A.REFUND_DUPLICATE, A.CONFIRM_WITH_CUSTOMER)),
        PlaybookSpec(IssueKind.PAYMENT_FAILED.value, "Payment failed",
                     (A.CHECK_ACCOUNT, A.CHECK_PAYMENTS, A.RETRY_PAYMENT, A.CONFIRM_WITH_CUSTOMER)),
        PlaybookSpec(IssueKind.ROUTER_FROZEN.value, "Router frozen",
                     (A.CHECK_OUTAGE, A.RESTART_ROUTER, A.RESTART_ONT, A.REPROVISION, A.LINE_TEST,
                      A.DISPATCH_TECHNICIAN)),
    )
}
ISSUE_KINDS: tuple[str, ...] = tuple(PLAYBOOKS)

__all__ = ["INSTRUCTIONS", "ISSUE_KINDS", "PLAYBOOKS", "PlaybookAction", "PlaybookSpec"]
