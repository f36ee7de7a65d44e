"""The fault lab's instruments as the desk's agents use them: measure a customer's line, act on
it, record what was diagnosed. Each writes the lab graph (readings, actions, the diagnosis on the
ticket) and records on the Call what it owes: a network change an action brought about
(NetworkChanged, so netops closes the outage). Never the lab's truth. May use relay_graph.lab."""

from __future__ import annotations

from datetime import datetime

from relay_graph import lab
from relay_graph.lab import Action, FaultKind, Reading
from relay_graph.lab.models import ActionResult
from relay_graph.runtime.streams import NetworkChanged
from relay_graph.usecases.context import Call


async def measure(call: Call, customer: str, *, at: datetime) -> list[Reading]:
    """Every test on the customer's line at `at` (the lab's clock); NotFound with no line on file."""
    return await lab.measure_all(call.client, call.tenant, customer, at=at)


async def act(call: Call, customer: str, action: Action, *, ticket: str, at: datetime) -> ActionResult:
    """`action` carried out on the customer's line at `at` (the lab's clock); the nodes it brought
    back (or took down) are owed as NetworkChanged."""
    result = await lab.act(call.client, call.tenant, customer, action, ticket=ticket, actor=call.agent, at=at)
    call.owe(*(NetworkChanged(tenant=call.tenant, id=c.node_id, version=c.version, change="up" if c.up else "down",
                              actor=call.agent)
               for c in result.visible if c.node_id is not None and c.version is not None))
    return result


async def record_diagnosis(call: Call, ticket_id: str, customer: str, kind: FaultKind | None, *, at: datetime) -> None:
    """What the agent concluded from the readings (None: healthy), for the lab to grade."""
    await lab.record_diagnosis(call.client, call.tenant, ticket_id, customer, kind, at=at)
