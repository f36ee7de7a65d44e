"""The provider's world in a tenant: a region's catalogue and access network, and customers' homes
hung off it.

    summary = await seed_world(client, tenant, "india", customers=[("Asha Verma", "Andheri, Mumbai")])
    home = await connect_home(client, tenant, "Ravi Nair", "Koramangala, Bengaluru")

seed_world seeds the region's catalogue (catalogue.ensure_catalogue) and generates its network
(network_gen.generate_network) over every served city and area of the region (the footprint), with
a seed derived from the region unless one is given. A region's network is seeded once: the seed
and city count of the first call are recorded, a repeat writes nothing new, and a call naming
another seed or city count is refused (409 `world_seeded`) before anything is written. A region is a few hundred to two thousand nodes: well under two seconds.

connect_home places an address (catalogue.place: own list, then the gazetteer), finds the served
city's exchange for that area (the city's first exchange when the area is not one of ours or was
not named), and installs a home box for the customer on one of that exchange's street cabinets
(the box and cabinet named from the customer and the exchange, so a repeat changes nothing and
a move installs a new box in the new home; the old one stays where it was). This writes network
state only (the box, its drop cable, the customer's CONNECTED_VIA); what the customer says about
where they live stays the agents' to file as facts. An address we cannot serve is refused with a
typed error (no_line_there, ambiguous_address, unknown_place) and nothing is written."""

from __future__ import annotations

import hashlib
import random
import re
from typing import Iterable

from pydantic import BaseModel

from relay_graph.runtime.times import ms_of
from relay_graph.desk.catalogue import ensure_catalogue, place, seeded_regions
from relay_graph.desk.catalogue.footprint import footprint
from relay_graph.desk.catalogue.models import Placement, PlacementStatus
from relay_graph.desk.catalogue.regions import region_spec
from relay_graph.runtime.db import GraphClient
from relay_graph.memory.entities import name_key
from relay_graph.runtime.errors import InvalidInput, NotFound, RelayError
from relay_graph.desk.network import (
    MAX_BATCH,
    customer_identity,
    attach_customers,
    home_box_name,
    upsert_links,
    upsert_nodes,
)
from relay_graph.memory.models import utcnow
from relay_graph.lab.network_gen import check_seed, generate_network, slug
from relay_graph.desk.network_models import LinkIn, LinkType, NetNodeIn, NodeKind
from relay_graph.lab.queries import world as q
from relay_graph.memory.registry import clean_text
from relay_graph.runtime.tenancy import validate_tenant

MAX_CUSTOMERS = 2_000  # per call
HOME_BOX_GBPS = 1.0


class HomeLine(BaseModel):
    customer: str
    node_id: str  # the home box (Ont)
    cabinet: str
    exchange: str
    city: str
    area: str  # the area whose exchange serves the home
    placed_area: str | None = None  # the area the address named, if any (may differ: not one of ours)
    source: str | None = None  # how the address was placed (own_list, gazetteer, geocoder)
    previous: list[str] = []  # the boxes the customer was attached to before (a move)


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


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def _hub_ids(city: str) -> list[str]:
    """The ids network_gen gives a city's hub: its slug, or the slug with a hash of the name when
    another city of the region slugged the same."""
    base = slug(city)
    return [f"hub-{base}", f"hub-{base}-{_digest(name_key(city))[:6]}"]


def _exchange_name(area: str, city: str) -> str:
    return f"{area} exchange ({city})"  # as network_gen names it


_EXCHANGE_CITY = re.compile(r" exchange \((.+)\)$")


def city_of_exchange(name: str | None) -> str | None:
    """The city an exchange's name says it is in (`_exchange_name`'s), None for another name."""
    m = _EXCHANGE_CITY.search(name or "")
    return m.group(1) if m else None


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


def _served(p: Placement, address: str) -> Placement:
    if p.status is PlacementStatus.SERVED and p.city:
        return p
    if p.status is PlacementStatus.AMBIGUOUS:
        options = "; ".join(f"{c.name} ({c.country})" for c in p.candidates[:5])
        raise InvalidInput(f"{address!r} could be several places ({options}); add the country or the city",
                           code="ambiguous_address")
    if p.status is PlacementStatus.NO_LINE:
        near = f"; the nearest city we serve is {p.nearest_city}" if p.nearest_city else ""
        raise InvalidInput(f"we have no line at {p.place or address!r}{near}", code="no_line_there")
    raise InvalidInput(f"no place we know is called {address!r}", code="unknown_place")


async def _region_for(client: GraphClient, tenant: str, region: str | None) -> str | None:
    if region is not None:
        return region_spec(region).code
    seeded = sorted(await seeded_regions(client, tenant))
    return seeded[0] if len(seeded) == 1 else None  # several desks: let the address decide


async def connect_homes(
    client: GraphClient, tenant: str, customers: Iterable[tuple[str, str]], *, region: str | None = None
) -> list[HomeLine]:
    """Connect each (customer, address) to a home box of their area (see the module doc)."""
    validate_tenant(tenant)
    pairs = list(customers)
    if len(pairs) > MAX_CUSTOMERS:
        raise InvalidInput(f"at most {MAX_CUSTOMERS} customers per call")
    if not pairs:
        return []
    reg = await _region_for(client, tenant, region)
    seen: set[str] = set()
    placed: list[tuple[str, str, Placement]] = []
    for item in pairs:
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            raise InvalidInput("each customer must be a (name, address) pair")
        text, key, _ = customer_identity(item[0])
        if key in seen:
            raise InvalidInput(f"customer {text!r} appears twice")
        seen.add(key)
        address = clean_text(item[1], "address")
        placed.append((text, key, _served(await place(client, tenant, address, region=reg), address)))

    hubs = sorted({h for _, _, p in placed for h in _hub_ids(p.city)})
    rows = await client.run(tenant, q.HUB_EXCHANGES, {"hubs": hubs})
    by_name = {r["name"]: r for r in rows if r["cabinets"]}

    homes: list[HomeLine] = []
    nodes: list[NetNodeIn] = []
    links: list[LinkIn] = []
    for text, key, p in placed:
        suffix = f" exchange ({p.city})"
        mine = sorted((r for r in rows if r["name"].endswith(suffix) and r["cabinets"]), key=lambda r: r["exchange"])
        if not mine:
            raise NotFound(f"there is no network in {p.city} yet; seed the region's world first",
                           code="no_network_there")
        row = by_name.get(_exchange_name(p.area, p.city)) if p.area else None
        if row is None:  # the city's central exchange, else its first
            row = by_name.get(_exchange_name(f"{p.city} Central", p.city)) or mine[0]
        area = row["name"][: -len(suffix)]
        cabinet = random.Random(_digest(f"{tenant}|home|{key}")).choice(sorted(row["cabinets"]))
        ont = f"ont-{slug(text)}-{_digest(key + '|' + row['exchange'])[:8]}"  # a box per customer and home
        nodes.append(NetNodeIn(node_id=ont, kind=NodeKind.ONT, name=home_box_name(text), capacity_gbps=HOME_BOX_GBPS))
        links.append(LinkIn(type=LinkType.DROP, source=cabinet, target=ont, capacity_gbps=HOME_BOX_GBPS,
                            length_m=float(random.Random(_digest(f"{tenant}|drop|{key}")).randint(20, 250))))
        homes.append(HomeLine(customer=text, node_id=ont, cabinet=cabinet, exchange=row["exchange"], city=p.city,
                              area=area, placed_area=p.area, source=p.source.value if p.source else None))

    for start in range(0, len(nodes), MAX_BATCH):
        await upsert_nodes(client, tenant, nodes[start:start + MAX_BATCH])
        await upsert_links(client, tenant, links[start:start + MAX_BATCH])
    attached = {}
    for start in range(0, len(homes), MAX_BATCH):
        chunk = homes[start:start + MAX_BATCH]
        for a in await attach_customers(client, tenant, [(h.customer, h.node_id) for h in chunk]):
            attached[a.uid] = a
    out = []
    for h in homes:
        a = attached[customer_identity(h.customer)[2]]
        out.append(h.model_copy(update={"customer": a.customer, "previous": [n for n in a.previous if n != h.node_id]}))
    return out


async def connect_home(client: GraphClient, tenant: str, customer: str, address: str, *,
                       region: str | None = None) -> HomeLine:
    return (await connect_homes(client, tenant, [(customer, address)], region=region))[0]


__all__ = ["HomeLine", "WorldSeeded", "WorldSummary", "city_of_exchange", "connect_home", "connect_homes", "seed_world"]
