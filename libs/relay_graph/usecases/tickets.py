"""The ticket work every entry point does the same way: the customer's word on a fix (a REST
route, the customer site, the intake agent reading "yes, it works now") and handing a ticket to a
role (the handoff tool, the agents). Each writes through the desk's modules and returns the
notifications it owes (the ticket's TicketChanged, and a FactChanged for each fact it retired),
which the entry point announces. The actor is the call's agent."""

from __future__ import annotations

from datetime import datetime

from relay_graph.desk.tickets import store as tickets
from relay_graph.desk.tickets.issues import close_issues
from relay_graph.desk.tickets.models import Ticket, TicketStage
from relay_graph.memory.models import FactView
from relay_graph.runtime.streams import NotificationBase, TicketChanged
from relay_graph.usecases.context import Call, fact_changes

Notifications = list[NotificationBase]


async def confirm_fix(call: Call, ticket_id: str, *, fixed: bool, by: str | None = None, detail: str | None = None,
                      at: datetime | None = None, issues_at: datetime | None = None,
                      current: list[FactView] | None = None) -> tuple[Ticket, Notifications]:
    """`by`'s word on the ticket (default: the call's agent): fixed closes it and the customer's
    current issues of its kind end (at `issues_at`; `current`: their facts when just read), not
    fixed reopens it. Confirming into the stage it is in already writes and owes nothing."""
    t = await tickets.confirm(call.client, call.tenant, ticket_id, fixed=fixed, by=by or call.agent,
                              detail=detail, at=at)
    if not t.changed:
        return t, []
    owed: Notifications = []
    if t.stage is TicketStage.CLOSED and t.customer:  # the problem is over: off their file
        retired = await close_issues(call.memory, call.tenant, t.customer, t.issue, agent=call.agent,
                                     at=issues_at, current=current)
        owed += fact_changes(call.tenant, call.agent, retired=retired)
    change = "closed" if t.stage is TicketStage.CLOSED else "reopened"
    owed.append(TicketChanged(tenant=call.tenant, id=t.id, version=t.version, change=change, actor=call.agent))
    return t, owed


async def hand_off(call: Call, ticket_id: str, *, to_role: str, at: datetime | None = None,
                   detail: str | None = None, again: bool = False) -> tuple[Ticket, Notifications]:
    """The call's agent hands the ticket to `to_role` (tickets.hand_off). A repeat writes nothing and
    owes nothing, unless `again`: the work is being redone (a redelivery, a case that moved desk)
    and the announcement may be what was lost."""
    t = await tickets.hand_off(call.client, call.tenant, ticket_id, from_agent=call.agent, to_role=to_role,
                               at=at, detail=detail)
    if not (t.changed or again):
        return t, []
    return t, [TicketChanged(tenant=call.tenant, id=t.id, version=t.version, change="handed_off", actor=call.agent)]
