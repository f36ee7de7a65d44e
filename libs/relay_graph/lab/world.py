"""The provider's world in a tenant, as the lab seeds it: a region's catalogue and access network.

    summary = await seed_world(client, tenant, "india", customers=[("Asha Verma", "Andheri, Mumbai")])

seed_world seeds the region's catalogue (catalogue.ensure_catalogue) and generates its network
(network_gen.generate_network) over every served city and area of the region (the footprint), with
a seed derived from the region unless one is given. A region's network is seeded once: the seed
and city count of the first call are recorded, a repeat writes nothing new, and a call naming
another seed or city count is refused (409 `world_seeded`) before anything is written. A region is a
few hundred to two thousand nodes: well under two seconds. Customers named with the call are hung
off it as production does (relay_graph.desk.network.homes.connect_homes)."""

from __future__ import annotations

from typing import Iterable

from pydantic import BaseModel

from relay_graph.desk.catalogue import ensure_catalogue
from relay_graph.desk.catalogue.footprint import footprint
from relay_graph.desk.catalogue.regions import region_spec
from relay_graph.desk.network.homes import MAX_CUSTOMERS, HomeLine, connect_homes
from relay_graph.lab.network_gen import check_seed, generate_network
from relay_graph.lab.queries import world as q
from relay_graph.memory.models import utcnow
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import InvalidInput, RelayError
from relay_graph.runtime.tenancy import validate_tenant
from relay_graph.runtime.times import ms_of


class WorldSummary(BaseModel):
    region: str
    seed: str
    catalogue_seeded: bool  # False: the catalogue was there already
    cities: int
    exchanges: int
    cabinets: int
    nodes: int
    links: int
    nodes_created: int  # 0 when the network was there already
    customers: list[HomeLine] = []


def _region_cities(region: str, max_cities: int | None) -> list[tuple[str, list[str]]]:
    cities = [(c.name, [a.name for a in c.areas]) for c in footprint().cities_in(region)]
    return cities[:max_cities] if max_cities else cities


async def seed_world(
    client: GraphClient,
    tenant: str,
    region: str = "india",
    *,
    seed: int | str | None = None,
    customers: Iterable[tuple[str, str]] = (),
    max_cities: int | None = None,
) -> WorldSummary:
    """Seed the region's catalogue and network (idempotent), then connect each (customer, address).
    Every address is placed before anything of the customers is written."""
    validate_tenant(tenant)
    spec = region_spec(region)
    if max_cities is not None and (isinstance(max_cities, bool) or not isinstance(max_cities, int)
                                   or max_cities < 1):
        raise InvalidInput("max_cities must be a positive whole number")
    wanted = list(customers)
    if len(wanted) > MAX_CUSTOMERS:
        raise InvalidInput(f"at most {MAX_CUSTOMERS} customers per call")
    seed_text, max_cities = await _record_seed(client, tenant, spec.code, seed, max_cities)
    seeded = await ensure_catalogue(client, tenant, spec.code)
    cities = _region_cities(spec.code, max_cities)
    net = await generate_network(client, tenant, cities=cities, seed=seed_text)
    homes = await connect_homes(client, tenant, wanted, region=spec.code) if wanted else []
    return WorldSummary(
        region=spec.code, seed=net.seed, catalogue_seeded=seeded.seeded, cities=len(net.hubs),
        exchanges=sum(len(a) for a in net.exchanges.values()), cabinets=sum(len(c) for c in net.cabinets.values()),
        nodes=net.nodes, links=net.links, nodes_created=net.nodes_created, customers=homes,
    )


class WorldSeeded(RelayError):
    code = "world_seeded"
    status = 409


async def _record_seed(client: GraphClient, tenant: str, region: str, seed: int | str | None,
                       max_cities: int | None) -> tuple[str, int | None]:
    """The seed and city count to build with. A region's network is generated once: its first call
    records them, a later call that leaves them out uses what was recorded (and so writes nothing
    new), and one that names others is refused before anything is written: regenerating with
    another seed would rewire the live network under its customers and tickets."""
    wanted = check_seed(seed if seed is not None else region)
    row = (await client.run(tenant, q.RECORD_SEED, {"region": region, "seed": wanted, "max_cities": max_cities or 0,
                                                   "at_ms": ms_of(utcnow())}))[0]
    recorded_seed, recorded_cities = row["seed"], row["max_cities"] or None
    if seed is not None and check_seed(seed) != recorded_seed:
        raise WorldSeeded(f"the {region} network of this tenant was seeded with seed {recorded_seed!r}; a network "
                          "is seeded once (leave seed out to repeat it, or use a new tenant for another)")
    if max_cities is not None and max_cities != recorded_cities:
        had = f"its {recorded_cities} largest cities" if recorded_cities else "all its cities"
        raise WorldSeeded(f"the {region} network of this tenant was seeded with {had}; a network is seeded once "
                          "(leave max_cities out to repeat it)")
    return recorded_seed, recorded_cities


__all__ = ["WorldSeeded", "WorldSummary", "seed_world"]
