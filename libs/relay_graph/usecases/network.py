"""Writes to the network's state: outages (opened, closed), the tickets an outage caused, a node's
status. Each takes the call first, writes through the desk's network store and records on the Call
what it owes (NetworkChanged, OutageChanged); it never announces. May use desk.network."""

from __future__ import annotations

from datetime import datetime

from relay_graph.desk.network import store as network
from relay_graph.desk.network.models import NodeStatusChange, Outage
from relay_graph.runtime.streams import NetworkChanged, OutageChanged
from relay_graph.usecases.context import Call


async def open_outage(call: Call, node_id: str, *, cause: str, at: datetime | None = None) -> Outage:
    """The node's outage opened, or the open one found (created False); see network.open_outage."""
    return await network.open_outage(call.client, call.tenant, node_id, cause=cause, at=at or call.now())


async def close_outage(call: Call, node_id: str, *, at: datetime | None = None) -> Outage | None:
    """The node's open outage closed; None when none was open (an earlier delivery closed it)."""
    return await network.close_outage(call.client, call.tenant, node_id, at=at or call.now())


async def link_tickets(call: Call, outage_id: str) -> list[str]:
    """Every open ticket of a customer the outage reaches points at it (CAUSED_BY, idempotent);
    the ids of those tickets."""
    return await network.link_tickets_to_outage(call.client, call.tenant, outage_id)


def outage_changed(call: Call, outage: Outage, *, change: str, version: int) -> None:
    """Owe the outage's announcement (OutageChanged "declared" / "resolved"): once its notices are
    written, or when this call opened or closed it."""
    call.owe(OutageChanged(tenant=call.tenant, id=outage.outage_id, version=version, change=change,
                           actor=call.agent, node_id=outage.node_id))


async def set_node_status(call: Call, node_id: str, *, up: bool, at: datetime | None = None,
                          by: str | None = None) -> NodeStatusChange:
    """A node marked up or down; a change owes NetworkChanged with the node's new version, its actor
    `by` (who says so: an operator, a monitor; default the call's agent)."""
    change = await network.set_node_status(call.client, call.tenant, node_id, up=up, at=at or call.now())
    if change.changed:
        call.owe(NetworkChanged(tenant=call.tenant, id=node_id, version=change.version,
                                change="up" if up else "down", actor=by or call.agent))
    return change
