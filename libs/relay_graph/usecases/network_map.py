"""The console's map of a tenant's network: its city hubs and area exchanges at the coordinates
the served footprint gives them (desk/catalogue/data/footprint.json, built from the gazetteer:
a city's and a locality's own coordinates, a compass district's a few km off its city's), its
cores placed at the middle of the hubs they serve (a core has no place of its own), the uplinks
between them with their state, and the open outages. A node whose name is not a footprint
city's hub or area's exchange (a hand-built network) is left off the map and counted.

Names are how the network generator (lab/network_gen.py) names what it builds: "<city> hub",
"<area> exchange (<city>)"; a node id never carries the place."""

from __future__ import annotations

from functools import cache
from typing import Literal

from pydantic import BaseModel, Field

from relay_graph.desk.catalogue.footprint import footprint
from relay_graph.usecases.queries import console as q
from relay_graph.usecases.context import Call

MAX_NODES = 5_000
Placed = Literal["gazetteer", "district", "centre of its hubs"]


class MapNode(BaseModel):
    node_id: str
    kind: str = Field(description="Pop (a city's hub), Olt (an area's exchange) or Backbone (a core)")
    name: str
    up: bool
    capacity_gbps: float | None
    lat: float
    lon: float
    placed: Placed = Field(description="where the coordinates come from")
    city: str | None


class MapLink(BaseModel):
    source: str
    target: str
    up: bool
    backup: bool = Field(description="a standby uplink")
    capacity_gbps: float | None


class MapOutage(BaseModel):
    outage_id: str
    node_id: str
    opened_at_ms: int | None
    cause: str | None
    customers: int = Field(description="customers it reaches, as netops declared it")


class NetworkMap(BaseModel):
    nodes: list[MapNode]
    links: list[MapLink] = Field(description="uplinks between nodes on the map")
    outages: list[MapOutage] = Field(description="open outages, newest first")
    unplaced: int = Field(description="hubs, exchanges and cores with no place in the footprint (not drawn)")


@cache
def _places() -> dict[str, tuple[float, float, Placed, str]]:
    """Node name -> (lat, lon, where from, city), for every hub and exchange the footprint can have."""
    out: dict[str, tuple[float, float, Placed, str]] = {}
    for city in footprint().cities_in():
        out[f"{city.name} hub"] = (city.lat, city.lon, "gazetteer", city.name)
        out[f"Central exchange ({city.name})"] = (city.lat, city.lon, "gazetteer", city.name)
        for area in city.areas:
            out[f"{area.name} exchange ({city.name})"] = (
                area.lat, area.lon, "gazetteer" if area.kind == "locality" else "district", city.name)
    return out


async def network_map(call: Call) -> NetworkMap:
    client, tenant = call.client, call.tenant
    if not await client.graph_exists(tenant):
        return NetworkMap(nodes=[], links=[], outages=[], unplaced=0)
    rows = await client.run(tenant, q.MAP_NODES, {"limit": MAX_NODES})
    link_rows = await client.run(tenant, q.MAP_LINKS, {"limit": 4 * MAX_NODES})
    places = _places()
    nodes: dict[str, MapNode] = {}
    cores = []
    for r in rows:
        if r["kind"] == "Backbone":
            cores.append(r)
            continue
        place = places.get(r["name"] or "")
        if place is not None:
            lat, lon, placed, city = place
            nodes[r["node_id"]] = MapNode(node_id=r["node_id"], kind=r["kind"], name=r["name"], up=bool(r["up"]),
                                          capacity_gbps=r["capacity_gbps"], lat=lat, lon=lon, placed=placed, city=city)
    for r in cores:  # at the middle of the hubs whose uplinks reach it
        hubs = [nodes[link["source"]] for link in link_rows
                if link["target"] == r["node_id"] and link["source"] in nodes and nodes[link["source"]].kind == "Pop"]
        if hubs:
            nodes[r["node_id"]] = MapNode(
                node_id=r["node_id"], kind="Backbone", name=r["name"], up=bool(r["up"]), capacity_gbps=r["capacity_gbps"],
                lat=round(sum(h.lat for h in hubs) / len(hubs), 5), lon=round(sum(h.lon for h in hubs) / len(hubs), 5),
                placed="centre of its hubs", city=None)
    links = [MapLink(**r) for r in link_rows if r["source"] in nodes and r["target"] in nodes]
    outages = [MapOutage(**r) for r in await client.run(tenant, q.OPEN_OUTAGES, {"limit": 500})]
    return NetworkMap(nodes=list(nodes.values()), links=links, outages=outages, unplaced=len(rows) - len(nodes))
