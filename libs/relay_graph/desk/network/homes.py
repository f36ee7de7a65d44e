"""Customers' homes on the access network, and the names the network's equipment goes by.

    home = await connect_home(client, tenant, "Ravi Nair", "Koramangala, Bengaluru")

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
import unicodedata
from typing import Iterable

from pydantic import BaseModel

from relay_graph.desk.catalogue import place, seeded_regions
from relay_graph.desk.catalogue.models import Placement, PlacementStatus
from relay_graph.desk.catalogue.regions import region_spec
from relay_graph.desk.network.models import LinkIn, LinkType, NetNodeIn, NodeKind
from relay_graph.desk.network.store import MAX_BATCH, attach_customers, customer_identity, home_box_name, upsert_links, upsert_nodes
from relay_graph.desk.queries import network as q
from relay_graph.memory.entities import name_key
from relay_graph.memory.registry import clean_text
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import InvalidInput, NotFound
from relay_graph.runtime.tenancy import validate_tenant

MAX_CUSTOMERS = 2_000  # per call
HOME_BOX_GBPS = 1.0
SLUG_MAX = 40


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


def slug(text: str) -> str:
    """An ASCII id fragment of a name: 'São Paulo' -> 'sao-paulo'. Names with no ASCII letters
    or digits get a short hash so they still get a stable, distinct id."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    out = re.sub(r"[^a-z0-9]+", "-", plain).strip("-")[:SLUG_MAX].strip("-")
    return out or "x" + _digest(name_key(text))[:8]


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


__all__ = ["HomeLine", "MAX_CUSTOMERS", "city_of_exchange", "connect_home", "connect_homes", "slug"]
