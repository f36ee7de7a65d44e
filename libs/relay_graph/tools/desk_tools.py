"""Tools over the desk: tickets, handing one to a role, who worked one, the fixes that worked."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from relay_graph.desk import agent_reads as desk

from relay_graph.desk.tickets import store as tickets
from relay_graph.usecases import tickets as ticket_cases
from relay_graph.desk.tickets.models import (
    Handoff,
    Procedure,
    Ticket,
    TicketDetail,
    TicketSummary,
    TimelineEntry,
)
from relay_graph.usecases.context import Call
from relay_graph.tools.envelope import Shape, ToolResult, when
from relay_graph.tools.memory_tools import ticket_line
from relay_graph.tools.toolset import tool
from relay_graph.tools.resolve import Resolver
from relay_graph.memory.inputs import text_type
from relay_graph.tools.types import Args, CustomerName, Name, Role, TicketId, whole


def _detail_lines(t: TicketDetail) -> list[str]:
    owner = f", owner {t.owner}" if t.owner else ""
    lines = [f"ticket {t.id}: {t.customer}, {t.issue}, stage {t.stage.value} (updated {when(t.updated_at)}{owner})"]
    lines += [f"ticket {t.id} handed from {h.from_} to {h.to} at {when(h.at)}" for h in t.handoffs]
    return lines


# ---------------------------------------------------------------- tickets


class TicketsInput(Args):
    ticket_id: TicketId | None = Field(default=None, description="one ticket, with its timeline and handoffs")
    customer: CustomerName | None = Field(default=None, description="only this customer's tickets")
    open_only: bool = Field(default=False, description="leave out closed tickets")
    limit: whole(1, 200) = Field(default=50)


class TicketsOutput(BaseModel):
    tickets: list[TicketSummary] = Field(description="the list (empty when one ticket was asked for)")
    ticket: TicketDetail | None = Field(default=None, description="the ticket asked for by ticket_id")


@tool("tickets", """Tickets, newest first (all, or one customer's), or one ticket in full with its
      timeline and handoffs.""", input=TicketsInput, output=TicketsOutput)
async def list_or_show(ctx: Call, args: TicketsInput) -> ToolResult:
    res = Resolver(ctx)
    customer = await res.customer(args.customer) if args.customer is not None else None
    found = await res.ticket(args.ticket_id) if args.ticket_id is not None else None
    res.done()
    if found is not None:
        detail = await tickets.get_ticket(ctx.client, ctx.tenant, found.id)
        if customer is not None and detail.customer != customer.name:
            return ToolResult(tool="tickets", shape=Shape.NOT_IN_GRAPH, data=TicketsOutput(tickets=[]),
                              message=f"ticket {found.id} is not {customer.name}'s")
        return ToolResult(tool="tickets", shape=Shape.ANSWERED, data=TicketsOutput(tickets=[], ticket=detail),
                          how_i_know=_detail_lines(detail))
    listed = await tickets.list_tickets(ctx.client, ctx.tenant, customer.name if customer else None,
                                        open_only=args.open_only, limit=args.limit)
    return ToolResult(tool="tickets", shape=Shape.ANSWERED if listed else Shape.NOT_IN_GRAPH,
                      data=TicketsOutput(tickets=listed), how_i_know=[ticket_line(t) for t in listed])


# ---------------------------------------------------------------- handoff


class HandoffInput(Args):
    ticket_id: TicketId
    to_role: Role
    detail: text_type(500) | None = Field(default=None, description="why, for the timeline")  # type: ignore[valid-type]


class HandoffOutput(BaseModel):
    ticket: Ticket
    changed: bool = Field(description="false: it was handed that way already, or the ticket is closed")
    announced: bool = Field(description="the desk is notified (its agents act on the handoff): the handoff changed "
                                        "something, and its announcement goes out through the outbox as the tool returns")


@tool("handoff", """Hand a ticket to a role (the desk's intake, resolver or netops, or another agent) as
      the calling agent: recorded as (you)-[:HANDED_OFF]->(ticket) and announced, so that role picks it up.""",
      input=HandoffInput, output=HandoffOutput, writes=True)
async def handoff(ctx: Call, args: HandoffInput) -> ToolResult:
    res = Resolver(ctx)
    found = await res.ticket(args.ticket_id)
    res.done()
    assert found is not None
    t = await ticket_cases.hand_off(ctx, found.id, to_role=args.to_role, detail=args.detail)
    how = [f"ticket {t.id} handed from {ctx.agent} to {args.to_role} at {when(t.updated_at)} (version {t.version})"]
    message = None if t.changed else "nothing changed: already handed to that role by you, or the ticket is closed"
    return ToolResult(tool="handoff", shape=Shape.ANSWERED,
                      data=HandoffOutput(ticket=t, changed=t.changed, announced=t.changed),
                      how_i_know=how if t.changed else [], message=message)


# ---------------------------------------------------------------- who handled a ticket


class WhoHandledInput(Args):
    ticket_id: TicketId


class AgentOnTicket(BaseModel):
    agent: str
    did: list[str] = Field(description="graph edges (OPENED, HANDED_OFF, PICKED_UP) and timeline events")
    first_at: datetime | None
    last_at: datetime | None


class WhoHandledOutput(BaseModel):
    ticket_id: str
    stage: str
    owner: str | None
    agents: list[AgentOnTicket] = Field(description="in the order they first touched the ticket")
    edges: list[desk.AgentEdge]
    handoffs: list[Handoff]
    timeline: list[TimelineEntry]


def _agents(edges: list[desk.AgentEdge], timeline: list[TimelineEntry]) -> list[AgentOnTicket]:
    seen: dict[str, dict] = {}

    def touch(agent: str, what: str, at: datetime | None) -> None:
        a = seen.setdefault(agent, {"did": [], "first": at, "last": at})
        if what not in a["did"]:
            a["did"].append(what)
        if at is not None:
            a["first"] = at if a["first"] is None else min(a["first"], at)
            a["last"] = at if a["last"] is None else max(a["last"], at)

    for e in edges:
        touch(e.agent, e.type, e.at)
    for entry in timeline:
        touch(entry.agent, entry.event, entry.at)
    out = [AgentOnTicket(agent=name, did=a["did"], first_at=a["first"], last_at=a["last"]) for name, a in seen.items()]
    return sorted(out, key=lambda a: (a.first_at is None, a.first_at, a.agent))


@tool("who_handled", """The agents that worked a ticket: who opened it, handed it off, picked it up,
      and every timeline entry they wrote.""", input=WhoHandledInput, output=WhoHandledOutput)
async def who_handled(ctx: Call, args: WhoHandledInput) -> ToolResult:
    res = Resolver(ctx)
    found = await res.ticket(args.ticket_id)
    res.done()
    assert found is not None
    detail = await tickets.get_ticket(ctx.client, ctx.tenant, found.id)
    edges = await desk.ticket_agent_edges(ctx.client, ctx.tenant, found.id)
    agents = _agents(edges, detail.timeline)
    how = [f"({e.agent})-[:{e.type}]->(ticket {found.id})" + (f" at {when(e.at)}" if e.at else "") for e in edges]
    how += [f"ticket {found.id} timeline: {t.event} by {t.agent} at {when(t.at)}" for t in detail.timeline]
    return ToolResult(tool="who_handled", shape=Shape.ANSWERED,
                      data=WhoHandledOutput(ticket_id=found.id, stage=detail.stage.value, owner=detail.owner,
                                            agents=agents, edges=edges, handoffs=detail.handoffs,
                                            timeline=detail.timeline),
                      how_i_know=how)


# ---------------------------------------------------------------- past fixes


class PastFixesInput(Args):
    issue_kind: Name = Field(description="the kind of issue, e.g. 'no internet', 'wifi slow'")
    limit: whole(1, 20) = Field(default=3)


class PastFixesOutput(BaseModel):
    issue_kind: str
    procedures: list[Procedure] = Field(description="best first by smoothed success rate (s+1)/(s+f+2)")


@tool("past_fixes", """The procedures that fixed this kind of issue before, best first by smoothed
      success rate, each with its steps and its record.""", input=PastFixesInput, output=PastFixesOutput)
async def past_fixes(ctx: Call, args: PastFixesInput) -> ToolResult:
    res = Resolver(ctx)
    issue = await res.issue(args.issue_kind)
    res.done()
    assert issue is not None
    procedures = await tickets.best_procedures(ctx.client, ctx.tenant, issue.name, limit=args.limit)
    how = [f"procedure {p.procedure_id}: {' > '.join(p.steps)} ({p.successes} fixed, {p.failures} failed, "
           f"score {p.score:.2f})" for p in procedures]
    return ToolResult(tool="past_fixes", shape=Shape.ANSWERED if procedures else Shape.NOT_IN_GRAPH,
                      data=PastFixesOutput(issue_kind=issue.name, procedures=procedures), how_i_know=how,
                      message=None if procedures else f"no verified fix for {issue.name} yet")
