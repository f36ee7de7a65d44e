"""Faults injected into the lab's world (the REST route, Judge mode's story): the lab breaks
something and keeps the truth hidden; each node it took down or brought back is announced
(NetworkChanged, as a real network's monitoring would), so netops acts on it. The actor of those
announcements is the lab, whoever asked for the fault."""

from __future__ import annotations

from relay_graph import lab
from relay_graph.lab import FaultKind, Injection
from relay_graph.memory import names
from relay_graph.runtime.streams import NetworkChanged
from relay_graph.usecases.context import Call

LAB = "lab"


async def inject_fault(call: Call, *, kind: FaultKind | str | None = None, customer: str | None = None,
                       node: str | None = None, seed: int | str | None = None) -> Injection:
    """`lab.inject`, aimed at `customer` (their exact name is them, as for every write) or `node`."""
    if customer is not None:
        customer = await names.subject_for_write(call.client, call.tenant, customer)
    injection = await lab.inject(call.client, call.tenant, kind=kind, customer=customer, node=node, seed=seed)
    call.owe(*(NetworkChanged(tenant=call.tenant, id=change.node_id, version=change.version,
                              change="up" if change.up else "down", actor=LAB)
               for change in injection.visible if change.node_id is not None and change.version is not None))
    return injection
