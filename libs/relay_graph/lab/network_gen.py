"""Generating a region's access network around the cities and areas it serves.

    core (Backbone) <- city hub (Pop) <- exchange (Olt) <- street cabinet (Splitter) -> home box (Ont)

One or two backbones per region, a hub per city, an exchange per area (one "central" exchange for a
city given without areas), two to four cabinets per exchange, a home box per customer hung off a
cabinet of their area's exchange. Capacities in Gbps, cable lengths in metres.

Standby uplinks (LinkIn.backup) make "a hub link down with and without backup" real: with two
backbones the first city's hub always gets a standby uplink to the other backbone and the second
city's never does (the rest by the seed), and with two or more cities some exchanges get a standby
uplink to the next city's hub. A standby link is smaller than the primary, so running on it
degrades capacity.

Everything is drawn from random generators seeded by (seed, what is being built), so the same seed
and input build the same network, and adding a customer or an area does not reshuffle the rest.
Node ids are derived from names, so generating twice changes nothing (the upserts merge)."""

from __future__ import annotations

import hashlib
import random

from relay_graph.runtime.db import GraphClient
from relay_graph.memory.entities import name_key
from relay_graph.runtime.errors import InvalidInput
from relay_graph.memory.inputs import check_identifier
from relay_graph.desk.network.store import (
    MAX_BATCH,
    customer_identity,
    attach_customers,
    home_box_name,
    upsert_links,
    upsert_nodes,
)
from relay_graph.desk.network.homes import slug
from relay_graph.desk.network.models import LinkIn, LinkType, NetNodeIn, NetworkSummary, NodeKind
from relay_graph.memory.registry import clean_text
from relay_graph.runtime.tenancy import validate_tenant

MAX_CITIES = 500
MAX_AREAS = 500
MAX_CUSTOMERS = 50_000
CENTRAL = "Central"


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def _rng(seed: str, *what: str) -> random.Random:
    return random.Random(_digest("|".join((seed, *what))))


def check_seed(seed: object) -> str:
    """A seed as the generator uses it (a whole number or a string identifier, as text)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, str)):
        raise InvalidInput("seed must be a whole number or a string")
    return str(seed) if isinstance(seed, int) else check_identifier(seed, "seed")


def _cities(cities: object) -> list[tuple[str, list[str]]]:
    if not isinstance(cities, (list, tuple)) or not cities:
        raise InvalidInput("cities must be a non-empty list of (city, [areas])")
    if len(cities) > MAX_CITIES:
        raise InvalidInput(f"at most {MAX_CITIES} cities per region")
    out: list[tuple[str, list[str]]] = []
    keys: set[str] = set()
    for item in cities:
        if not isinstance(item, (list, tuple)) or len(item) != 2 or not isinstance(item[1], (list, tuple)):
            raise InvalidInput("each city must be a (city, [areas]) pair")
        city = clean_text(item[0], "city")
        key = name_key(city)
        if not key:
            raise InvalidInput(f"city {city!r} has no letters or digits")
        if key in keys:
            raise InvalidInput(f"city {city!r} appears twice; give cities of the same name distinct names "
                               "(e.g. 'Hyderabad (IN)')")
        keys.add(key)
        if len(item[1]) > MAX_AREAS:
            raise InvalidInput(f"at most {MAX_AREAS} areas per city")
        areas: list[str] = []
        akeys: set[str] = set()
        for a in item[1]:
            area = clean_text(a, "area")
            akey = name_key(area)
            if akey and akey not in akeys:  # a repeated area is the same area
                akeys.add(akey)
                areas.append(area)
        out.append((city, areas or [CENTRAL]))
    return out


def _unique(base: str, taken: set[str], name: str) -> str:
    """base, or base plus a hash of the name when another name already slugged to it."""
    nid = base if base not in taken else f"{base}-{_digest(name_key(name))[:6]}"
    taken.add(nid)
    return nid


async def generate_network(
    client: GraphClient,
    tenant: str,
    *,
    cities: list[tuple[str, list[str]]],
    seed: int | str,
    customers: list[tuple[str, str, str]] | tuple = (),
) -> NetworkSummary:
    """Build (or complete) the region's network around `cities` [(city, [areas])] and hang each
    customer (name, city, area) off a cabinet of their area's exchange. Every input is checked
    before anything is written: an unknown city or area is refused and nothing changes."""
    validate_tenant(tenant)
    seed_text = check_seed(seed)
    served = _cities(cities)
    if not isinstance(customers, (list, tuple)) or len(customers) > MAX_CUSTOMERS:
        raise InvalidInput(f"customers must be a list of at most {MAX_CUSTOMERS} (name, city, area)")

    region = _rng(seed_text, "region")
    n_bb = 2 if len(served) > 1 else region.choice((1, 2))
    nodes: list[NetNodeIn] = []
    links: list[LinkIn] = []
    backbones = [f"core-{i + 1}" for i in range(n_bb)]
    for i, bb in enumerate(backbones):
        r = _rng(seed_text, "backbone", bb)
        nodes.append(NetNodeIn(node_id=bb, kind=NodeKind.BACKBONE, name=f"Core {i + 1}",
                               capacity_gbps=r.choice((400, 800))))

    hubs: dict[str, str] = {}
    exchanges: dict[str, dict[str, str]] = {}
    cabinets: dict[str, list[str]] = {}
    backup_links: list[tuple[str, str]] = []
    taken: set[str] = set()
    city_slugs: list[str] = []
    for city, _ in served:
        city_slugs.append(_unique(slug(city), taken, city))

    for i, (city, areas) in enumerate(served):
        cs = city_slugs[i]
        r = _rng(seed_text, "hub", cs)
        hub = f"hub-{cs}"
        hubs[city] = hub
        nodes.append(NetNodeIn(node_id=hub, kind=NodeKind.POP, name=f"{city} hub", capacity_gbps=r.choice((100, 200))))
        primary = backbones[i % n_bb]
        links.append(LinkIn(type=LinkType.UPLINK, source=hub, target=primary, capacity_gbps=100,
                            length_m=float(r.randint(5_000, 80_000))))
        with_backup = n_bb == 2 and (i == 0 or (i > 1 and r.random() < 0.5))
        if with_backup:
            standby = backbones[(i + 1) % n_bb]
            links.append(LinkIn(type=LinkType.UPLINK, source=hub, target=standby, capacity_gbps=40,
                                length_m=float(r.randint(20_000, 150_000)), backup=True))
            backup_links.append((hub, standby))

        exchanges[city] = {}
        area_taken: set[str] = set()
        for area in areas:
            as_ = _unique(slug(area), area_taken, area)
            ra = _rng(seed_text, "exchange", cs, as_)
            olt = f"exch-{cs}-{as_}"
            exchanges[city][area] = olt
            nodes.append(NetNodeIn(node_id=olt, kind=NodeKind.OLT, name=f"{area} exchange ({city})",
                                   capacity_gbps=ra.choice((40, 80))))
            links.append(LinkIn(type=LinkType.UPLINK, source=olt, target=hub, capacity_gbps=ra.choice((20, 40)),
                                length_m=float(ra.randint(1_000, 15_000))))
            if len(served) > 1 and ra.random() < 0.3:
                other = f"hub-{city_slugs[(i + 1) % len(served)]}"
                links.append(LinkIn(type=LinkType.UPLINK, source=olt, target=other, capacity_gbps=10,
                                    length_m=float(ra.randint(10_000, 60_000)), backup=True))
                backup_links.append((olt, other))
            cabinets[olt] = []
            for k in range(ra.randint(2, 4)):
                cab = f"cab-{cs}-{as_}-{k + 1}"
                gbps = ra.choice((2.5, 10.0))
                cabinets[olt].append(cab)
                nodes.append(NetNodeIn(node_id=cab, kind=NodeKind.SPLITTER, name=f"{area} cabinet {k + 1}",
                                       capacity_gbps=gbps))
                links.append(LinkIn(type=LinkType.PON, source=cab, target=olt, capacity_gbps=gbps,
                                    length_m=float(ra.randint(200, 3_000))))

    # customers: checked in full before any write
    where: dict[tuple[str, str], str] = {}
    for city, areas in served:
        for area in areas:
            where[(name_key(city), name_key(area))] = exchanges[city][area]
    onts: dict[str, str] = {}
    attach: list[tuple[str, str]] = []
    seen: set[str] = set()
    for item in customers:
        if not isinstance(item, (list, tuple)) or len(item) != 3:
            raise InvalidInput("each customer must be a (name, city, area) triple")
        text, key, _ = customer_identity(item[0])
        if key in seen:
            raise InvalidInput(f"customer {text!r} appears twice")
        seen.add(key)
        city, area = clean_text(item[1], "city"), clean_text(item[2], "area")
        olt = where.get((name_key(city), name_key(area)))
        if olt is None:
            raise InvalidInput(f"customer {text!r} lives in {area}, {city}, which this region does not serve",
                               code="unknown_area")
        rc = _rng(seed_text, "customer", key)
        cab = rc.choice(cabinets[olt])
        ont = f"ont-{slug(text)}-{_digest(key)[:8]}"
        onts[text] = ont
        attach.append((text, ont))
        nodes.append(NetNodeIn(node_id=ont, kind=NodeKind.ONT, name=home_box_name(text), capacity_gbps=1.0))
        links.append(LinkIn(type=LinkType.DROP, source=cab, target=ont, capacity_gbps=1.0,
                            length_m=float(rc.randint(20, 250))))

    nodes_created = links_created = 0
    for start in range(0, len(nodes), MAX_BATCH):
        nodes_created += (await upsert_nodes(client, tenant, nodes[start:start + MAX_BATCH])).created
    # links upwards first, so each batch's loop check sees the links it builds on
    links.sort(key=lambda x: {LinkType.UPLINK: 0, LinkType.PON: 1, LinkType.DROP: 2}[x.type])
    for start in range(0, len(links), MAX_BATCH):
        links_created += (await upsert_links(client, tenant, links[start:start + MAX_BATCH])).created
    for start in range(0, len(attach), MAX_BATCH):
        await attach_customers(client, tenant, attach[start:start + MAX_BATCH])

    return NetworkSummary(
        seed=seed_text, backbones=backbones, hubs=hubs, exchanges=exchanges, cabinets=cabinets, onts=onts,
        backup_links=sorted(backup_links), nodes=len(nodes), links=len(links), nodes_created=nodes_created,
        links_created=links_created, cable_m=round(sum(x.length_m or 0.0 for x in links), 3),
    )


__all__ = ["generate_network"]
