"""The resolver's starting knowledge: the catalogue's troubleshooting playbook per kind of problem
(relay_graph.catalogue.playbooks), used when the graph holds no procedure that fixed that kind of
problem before. Once a playbook's fix is verified it becomes a Procedure in the graph
(tickets.record_fix) and is ranked with everything learnt since.

A catalogue playbook mixes what the resolver does anyway (check for an outage, line tests, book a
technician as the last resort, ask the customer) with the remote steps in between; a procedure is
those remote steps, named by their action codes (stable, so a procedure learnt today is the same
procedure tomorrow)."""

from __future__ import annotations

from relay_graph.catalogue.playbooks import PLAYBOOKS as CATALOGUE
from relay_graph.catalogue.playbooks import PlaybookAction as A
from relay_graph.extraction.schema import IssueKind
from relay_graph.tickets import procedure_id

# Done by the workflow itself, not as steps of a procedure.
WORKFLOW: frozenset[A] = frozenset({A.CHECK_OUTAGE, A.LINE_TEST, A.DISPATCH_TECHNICIAN, A.CONFIRM_WITH_CUSTOMER})
# Steps that change something (the others only measure).
REMEDIES: frozenset[A] = frozenset({A.RESTART_ROUTER, A.RESTART_ONT, A.REPROVISION, A.CHANGE_WIFI_CHANNEL,
                                    A.REFUND_DUPLICATE, A.RETRY_PAYMENT})
# For a kind the catalogue has no playbook for.
FALLBACK: tuple[str, ...] = (A.CHECK_WIFI.value, A.RESTART_ROUTER.value, A.RESTART_ONT.value)

PLAYBOOKS: dict[str, tuple[str, ...]] = {
    kind: tuple(a.value for a in spec.steps if a not in WORKFLOW) for kind, spec in CATALOGUE.items()
}

# Problems no remote step can fix: the playbook only measures before it books a technician (a red
# LOS light: no light reaches the home box, the fibre is damaged or unplugged).
TECHNICIAN_FIRST: frozenset[str] = frozenset(
    kind for kind, spec in CATALOGUE.items()
    if A.DISPATCH_TECHNICIAN in spec.steps and not REMEDIES.intersection(spec.steps)
) | {IssueKind.NO_SIGNAL_LIGHT.value}

# Who goes out, picked per ticket so that a redelivery books the same person.
TECHNICIANS: tuple[str, ...] = ("Ravi Kumar", "Meera Iyer", "Sam Okafor", "Lena Fischer")


def playbook(issue: str) -> tuple[str, ...]:
    return PLAYBOOKS.get(issue) or FALLBACK


def playbook_by_id(issue: str, pid: str) -> tuple[str, ...] | None:
    """The playbook whose procedure id this is (a plan chosen before its fix was ever recorded)."""
    for steps in {playbook(issue), *PLAYBOOKS.values(), FALLBACK}:
        if steps and procedure_id(issue, list(steps)) == pid:
            return steps
    return None


def describe(step: str) -> str:
    """A step as the customer reads it: the catalogue's instruction for an action code, else the
    step's own words."""
    from relay_graph.catalogue.playbooks import INSTRUCTIONS

    try:
        text = INSTRUCTIONS[A(step)]
    except ValueError:
        return step
    return (text[:1].lower() + text[1:]).rstrip(".")
