"""A tenant's world, the one way the routes seed it (POST /v1/tenants, POST /world, Judge mode): a
region's catalogue and access network (lab.world.seed_world, idempotent), customers connected to it
(each customer's exact name is that customer, as for every write), and an operator's regional desk.
Nothing is announced: a new network has no outage and no ticket yet."""

from __future__ import annotations

from typing import Iterable

from relay_graph.desk.customers import regional_desks
from relay_graph.lab import world
from relay_graph.lab.world import WorldSummary
from relay_graph.memory import names
from relay_graph.runtime.errors import AmbiguousName
from relay_graph.usecases.context import Call


async def seed_world(call: Call, region: str, *, seed: int | str | None = None, max_cities: int | None = None,
                     customers: Iterable[tuple[str, str]] = ()) -> WorldSummary:
    """The region's world, and each (customer, address) connected to it. A name that stands for two
    customers is refused (AmbiguousName) before anything is written."""
    pairs = list(customers)
    found = await names.subjects_for_writes(call.client, call.tenant, [c for c, _ in pairs]) if pairs else {}
    for refused in (f for f in found.values() if isinstance(f, AmbiguousName)):
        raise refused
    return await world.seed_world(call.client, call.tenant, region, seed=seed, max_cities=max_cities,
                                  customers=[(found.get(c, c), address) for c, address in pairs])


async def open_desk(call: Call, operator: str, region: str) -> None:
    """The call's tenant is `operator`'s desk for `region` (one per region: AlreadyExists `desk_taken`)."""
    await regional_desks.register_desk(call.client, call.tenant, operator, region)
