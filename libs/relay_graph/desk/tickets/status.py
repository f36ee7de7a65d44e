"""What the desk agents agree on about kinds of problems and ticket stages.

Issue kinds are the extraction schema's (`IssueKind` values); tickets store them in the tickets
module's normal form (`tickets.issue_key`), which leaves these values unchanged."""

from __future__ import annotations

from relay_graph.desk.extraction.schema import IssueKind
from relay_graph.desk.tickets.models import TicketStage

# A network fault (a node or link down between the home and the core) shows as one of these.
OUTAGE_SYMPTOMS: frozenset[str] = frozenset({
    IssueKind.NO_CONNECTION.value,
    IssueKind.SLOW_SPEED.value,
    IssueKind.INTERMITTENT.value,
    IssueKind.NO_SIGNAL_LIGHT.value,
    IssueKind.OTHER.value,
})

# Problems that have nothing to do with the line: no line test, no outage.
NOT_ON_THE_LINE: frozenset[str] = frozenset({
    IssueKind.BILLING_DOUBLE_CHARGE.value,
    IssueKind.PAYMENT_FAILED.value,
})

# Stages in which a ticket waits for someone to work it (nobody is changing it right now).
WAITING_STAGES: frozenset[str] = frozenset({
    TicketStage.REPORTED.value,
    TicketStage.CHECKING_LINE.value,
    TicketStage.REOPENED.value,
})

# Stages after which the resolver has nothing more to do until the customer answers.
DONE_FOR_NOW: frozenset[str] = frozenset({
    TicketStage.FIXED.value,
    TicketStage.TECHNICIAN_DISPATCHED.value,
    TicketStage.CLOSED.value,
})

# The tickets workflow's stages in the words the reply templates know (extraction/replies.py).
STAGE_WORDS: dict[str, str] = {
    TicketStage.REPORTED.value: "handed_off",
    TicketStage.CHECKING_LINE.value: "diagnosing",
    TicketStage.FIXING.value: "fixing",
    TicketStage.FIXED.value: "awaiting_confirmation",
    TicketStage.TECHNICIAN_DISPATCHED.value: "tech_dispatched",
    TicketStage.CLOSED.value: "closed",
    TicketStage.REOPENED.value: "reopened",
}


def stage_words(stage: str | TicketStage) -> str:
    value = stage.value if isinstance(stage, TicketStage) else str(stage)
    return STAGE_WORDS.get(value, value)


def ticket_status(ticket_id: str, stage: str | TicketStage, updated_at, *, owner: str | None = None,
                  latest: str | None = None):
    """replies.status_update in the workflow's stage names: the words come from the template, the
    how-I-know line names the stage exactly as the graph holds it."""
    from relay_graph.desk.conversation import templates as replies

    value = stage.value if isinstance(stage, TicketStage) else str(stage)
    reply = replies.status_update(ticket_id, stage_words(value), updated_at, owner=owner, latest=latest)
    how = f"ticket {ticket_id}: stage {value} (updated {replies.when(updated_at)}" + (f", owner {owner})" if owner else ")")
    return replies.Reply(reply.text, [how])
