"""Tickets: the list, one ticket with its timeline and handoffs, and the customer's confirmation."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from relay_graph.memory.inputs import Identifier, Name

from relay_graph.desk.tickets import store as tickets
from relay_graph.desk.conversation.reads import ticket_promises
from relay_graph.desk.tickets.models import TicketDetail, TicketSummary
from relay_graph.usecases import tickets as ticket_cases
from relay_graph.usecases.context import Call

from ..deps import DepsDep, MemoryDep, TenantDep
from ..errors import responses
from ..schemas import (
    Answer,
    ConfirmBody,
    ConfirmResult,
    HandoffView,
    PromiseItem,
    TicketListItem,
    TicketsResult,
    TicketView,
    TimelineView,
    VisitView,
)

router = APIRouter(prefix="/v1/tenants/{t}", tags=["desk"])

TicketId = Annotated[Identifier, Path(alias="id", examples=["T-1A2B3C4D5E6F"])]


def ticket_row(r: TicketSummary) -> TicketListItem:
    return TicketListItem(id=r.id, stage=r.stage.value, owner=r.owner, customer=r.customer, opened_at=r.opened_at,
                          issue=r.issue, version=r.version, updated_at=r.updated_at)


def ticket_view(t: TicketDetail) -> TicketView:
    return TicketView(
        id=t.id, stage=t.stage.value, owner=t.owner, customer=t.customer, issue=t.issue,
        summary=t.summary, version=t.version, round=t.round, session=t.session,
        opened_at=t.opened_at, updated_at=t.updated_at, closed_at=t.closed_at,
        timeline=[TimelineView.model_validate(e, from_attributes=True) for e in t.timeline],
        handoffs=[HandoffView.model_validate(h.model_dump(by_alias=True)) for h in t.handoffs],
        visits=[VisitView.model_validate(v, from_attributes=True) for v in t.visits],
        fixed_by=list(t.fixed_by),
    )


@router.get("/tickets", response_model=Answer[TicketsResult], responses=responses(401, 403, 422, 429, 503),
            summary="Tickets, newest first; with `customer` only theirs")
async def list_tickets(
    tenant: TenantDep,
    memory: MemoryDep,
    customer: Annotated[Name | None, Query(examples=["alice rao"])] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> TicketsResult:
    rows = await tickets.list_tickets(memory.client, tenant, customer, limit=limit)
    return TicketsResult(tickets=[ticket_row(r) for r in rows])


@router.get("/tickets/{id}", response_model=Answer[TicketView], responses=responses(401, 403, 404, 422, 429, 503),
            summary="One ticket with its timeline (in order), handoffs and the promises made on it")
async def get_ticket(tenant: TenantDep, memory: MemoryDep, ticket_id: TicketId) -> TicketView:
    view = ticket_view(await tickets.get_ticket(memory.client, tenant, ticket_id))
    view.promises = [PromiseItem.model_validate(p, from_attributes=True)
                     for p in await ticket_promises(memory.client, tenant, ticket_id)]
    return view


@router.post("/tickets/{id}/confirm", response_model=Answer[ConfirmResult],
             responses=responses(401, 403, 404, 413, 422, 429, 503),
             summary="The customer's word: fixed closes the ticket, not fixed reopens it",
             description="Not fixed reopens the ticket, counts a failure against the procedure credited "
             "with the fix, and announces the reopened ticket so the resolver works it again. Confirming "
             "into the stage the ticket is already in changes and announces nothing (`changed` false).")
async def confirm(body: ConfirmBody, tenant: TenantDep, deps: DepsDep, memory: MemoryDep,
                  ticket_id: TicketId) -> ConfirmResult:
    async with deps.work(tenant, body.by) as call:  # announced before the answer is sent
        return await confirm_ticket(call, ticket_id, fixed=body.fixed)


async def confirm_ticket(call: Call, ticket_id: str, *, fixed: bool) -> ConfirmResult:
    """The customer's word on a ticket (announced when the caller's call is flushed): what POST
    /tickets/{id}/confirm and the customer site's POST /me/tickets/{id}/confirm both do (the one who
    confirms is the call's agent)."""
    t = await ticket_cases.confirm_fix(call, ticket_id, fixed=fixed)
    return ConfirmResult(id=t.id, stage=t.stage.value, version=t.version, changed=t.changed)
