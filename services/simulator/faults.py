"""Planting the faults of the customers' hidden lives, through the public API only.

The player asks a `FaultInjector` to start and to repair a fault; how that happens is the
injector's business:

- `NetworkFaults` (now): marks the network node the fault sits on down through
  `POST /network/nodes/{id}/status` (netops then declares the outage and warns who is behind it),
  and up again on repair. It finds the node on the customer's own line (`GET /customers/{c}/line`).
  A customer with no line on file, or a fault in the home (Wi-Fi, a hung router), has no node to
  mark: the fault then lives only in what the customer says (`via="words"`).
- `WordsOnly`: plants nothing; every fault is in the customer's words only.
- A lab injector (later): `POST /lab/faults {kind, customer}` keeps the truth where no agent can
  read it and the lab's scoreboard grades the desk. It implements the same two methods; plug it
  in `make_injector`.

Several customers behind one cabinet can have faults on the same node at once: a node goes up
again only when the last fault on it is repaired."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

from .client import ApiError, DeskClient
from .world import FAULT_KINDS

log = logging.getLogger("services.simulator.faults")

ACTOR = "simulator"  # who the node status changes are recorded as


@dataclass(frozen=True)
class InjectedFault:
    kind: str  # a world.FAULT_KINDS key
    customer: str
    via: str  # "network" | "words" (| "lab")
    node_id: str | None = None


class FaultInjector(Protocol):
    name: str

    async def inject(self, kind: str, customer: str) -> InjectedFault: ...

    async def repair(self, fault: InjectedFault) -> None: ...


class WordsOnly:
    name = "words"

    async def inject(self, kind: str, customer: str) -> InjectedFault:
        return InjectedFault(kind, customer, "words")

    async def repair(self, fault: InjectedFault) -> None:
        return None


class NetworkFaults:
    name = "network"

    def __init__(self, desk: DeskClient):
        self.desk = desk
        self.down: dict[str, int] = {}  # node -> faults on it not yet repaired

    async def inject(self, kind: str, customer: str) -> InjectedFault:
        node_kind = FAULT_KINDS[kind]["node"]
        if node_kind is None:
            return InjectedFault(kind, customer, "words")
        try:
            line = await self.desk.line(customer)
        except ApiError as exc:
            if exc.status != 404:
                raise
            line = []  # the desk has not met this customer yet
        node = next((h["node_id"] for h in line if h.get("kind") == node_kind), None)
        if node is None:
            return InjectedFault(kind, customer, "words")
        if self.down.get(node, 0) == 0:
            await self.desk.set_node_status(node, up=False, by=ACTOR)
        self.down[node] = self.down.get(node, 0) + 1
        log.info("fault %s on %s's line: %s marked down", kind, customer, node)
        return InjectedFault(kind, customer, "network", node)

    async def repair(self, fault: InjectedFault) -> None:
        if fault.via != "network" or fault.node_id is None:
            return
        left = self.down.get(fault.node_id, 0) - 1
        if left > 0:
            self.down[fault.node_id] = left
            return
        self.down.pop(fault.node_id, None)
        await self.desk.set_node_status(fault.node_id, up=True, by=ACTOR)
        log.info("fault %s on %s's line repaired: %s marked up", fault.kind, fault.customer, fault.node_id)


INJECTORS = ("network", "words")


def make_injector(name: str, desk: DeskClient) -> FaultInjector:
    if name == "network":
        return NetworkFaults(desk)
    if name == "words":
        return WordsOnly()
    raise ValueError(f"unknown fault injector {name!r}; known: {', '.join(INJECTORS)}")
