"""A desk's customers: making one, keeping their browser's time zone, putting their home on a line,
moving their case to another regional desk, and making the vectors a turn of theirs still lacks.

Each writes through the desk (relay_graph.desk.customers, desk.network.homes) or the memory and
records on the call what it owes (`Call.owe`); none announces. What each owes:
- `create_customer`: with a name, the FactChanged of the `name` fact (best effort: the customer
  stands whether or not the live feed hears of it); without one, nothing;
- `set_time_zone`, `connect_home`, `embed_turn`: nothing (no notification says these; readers
  read the graph);
- `move_case`: nothing in the source desk (its open tickets only gain a `moved_desk` step, in the
  workflow's words); the target desk hears of the tickets that arrived when they are handed to its
  resolver (usecases.ticket_opening.hand_moved_tickets, on a call in that tenant).

May use: relay_graph.desk, relay_graph.memory, relay_graph.runtime."""

from __future__ import annotations

from datetime import datetime

from relay_graph.desk.catalogue.regions import region_spec
from relay_graph.desk.customers import case_move, store
from relay_graph.desk.network import homes
from relay_graph.desk.network.homes import HomeLine
from relay_graph.desk.tickets import workflow
from relay_graph.desk.tickets.models import TicketStage
from relay_graph.usecases.context import Call, fact_changes


async def create_customer(call: Call, *, name: str | None = None) -> str:
    """A new customer (their id), with their `name` fact when given, written by the call's agent."""
    customer, written = await store.create_named(call.client, call.tenant, name=name, agent=call.agent)
    if written is not None:
        call.owe(*fact_changes(call.tenant, call.agent, [written]), best_effort=True)
    return customer


async def set_time_zone(call: Call, customer: str, zone: str) -> None:
    """Keep the browser's time zone on the customer (the country whose prices they see until an
    address says otherwise)."""
    await store.set_time_zone(call.client, call.tenant, customer, zone)


async def connect_home(call: Call, customer: str, address: str, *, region: str | None = None) -> HomeLine:
    """Put the customer's home at `address` on a line of this desk's network (desk.network.homes):
    a home box on a street cabinet of the nearest served area's exchange; a home they had before is
    no longer theirs."""
    return await homes.connect_home(call.client, call.tenant, customer, address, region=region)


async def move_case(call: Call, to_tenant: str, customer: str, *, by: str | None = None,
                    at: datetime | None = None) -> case_move.CaseMove:
    """Copy the customer's case, with its whole history, to the regional desk `to_tenant` and mark
    the move here (desk.customers.case_move). `by`: who moved it (default: the call's agent). Each
    open ticket's `moved_desk` step has the words of the ticket workflow's MovedDesk."""
    region = region_spec(await case_move.desk_region(call.client, to_tenant))
    at = at or call.now()
    moved = workflow.advance(workflow.TicketState(stage=TicketStage.REPORTED), workflow.MovedDesk(region=region.name, at=at))
    return await case_move.move_case(call.client, call.tenant, to_tenant, customer, by=by or call.agent, at=at,
                                     detail=moved.steps[0].staff)


async def embed_turn(call: Call, episode_ids: list[str]) -> None:
    """Make the vectors the turn's episodes (and the reply's) still lack: after the reply was
    announced (the customer waits for the reply, not for the model), or again on a redelivery."""
    await call.memory.embed_missing(call.tenant, episode_ids)
