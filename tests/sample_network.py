"""The small city network the service and desk tests build (through the desk's own writes), and
attaching one customer: test set-up the desk itself never does this way (the lab's world generates
its networks, relay_graph.lab.network_gen)."""

from __future__ import annotations

from pydantic import BaseModel

from relay_graph.desk.network.store import attach_customers, customer_identity, home_box_name, upsert_links, upsert_nodes
from relay_graph.desk.network.models import Attachment, LinkIn, LinkType, NetNodeIn, NodeKind, check_node_id
from relay_graph.memory.entities import name_key
from relay_graph.memory.registry import clean_text
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.tenancy import validate_tenant


class SampleNetwork(BaseModel):
    backbone: str
    pop: str
    olts: list[str]
    splitters: list[str]  # olt i owns splitters [2i, 2i+1]
    onts: dict[str, str]  # customer name -> ont id
    splitter_of: dict[str, str]  # ont id -> splitter id


async def attach_customer(client: GraphClient, tenant: str, customer: str, ont_id: str) -> Attachment:
    return (await attach_customers(client, tenant, [(customer, ont_id)]))[0]


async def build_sample_network(
    client: GraphClient, tenant: str, *, city: str = "pune", customers: list[str]
) -> SampleNetwork:
    """A small city: one backbone, one POP, two OLTs, two splitters per OLT, an ONT per customer,
    customers dealt round-robin over the splitters. Ids are derived from the city, so building the
    same city twice changes nothing."""
    validate_tenant(tenant)
    slug = name_key(clean_text(city, "city")).replace(" ", "-")
    check_node_id(slug, "city")
    title = city.strip().title()
    bb, pop = f"{slug}-bb-1", f"{slug}-pop-1"
    olts = [f"{slug}-olt-{i}" for i in (1, 2)]
    cabinets = [(f"{olt}-spl-{j}", f"{i + 1}{j}") for i, olt in enumerate(olts) for j in ("a", "b")]
    splitters = [s for s, _ in cabinets]
    names = [customer_identity(c)[0] for c in customers]
    onts = {name: f"{slug}-ont-{i + 1}" for i, name in enumerate(names)}
    splitter_of = {ont: splitters[i % len(splitters)] for i, ont in enumerate(onts.values())}

    nodes = [NetNodeIn(node_id=bb, kind=NodeKind.BACKBONE, name=f"{title} backbone", capacity_gbps=400),
             NetNodeIn(node_id=pop, kind=NodeKind.POP, name=f"{title} hub", capacity_gbps=100)]
    nodes += [NetNodeIn(node_id=o, kind=NodeKind.OLT, name=f"{title} exchange {i + 1}", capacity_gbps=20)
              for i, o in enumerate(olts)]
    nodes += [NetNodeIn(node_id=s, kind=NodeKind.SPLITTER, name=f"{title} cabinet {label}", capacity_gbps=2.5)
              for s, label in cabinets]
    nodes += [NetNodeIn(node_id=o, kind=NodeKind.ONT, name=home_box_name(n), capacity_gbps=1)
              for n, o in onts.items()]
    links = [LinkIn(type=LinkType.UPLINK, source=pop, target=bb, capacity_gbps=100, length_m=12_000)]
    links += [LinkIn(type=LinkType.UPLINK, source=o, target=pop, capacity_gbps=20, length_m=4_000) for o in olts]
    links += [LinkIn(type=LinkType.PON, source=s, target=olts[i // 2], capacity_gbps=2.5, length_m=900)
              for i, s in enumerate(splitters)]
    links += [LinkIn(type=LinkType.DROP, source=s, target=o, capacity_gbps=1, length_m=60)
              for o, s in splitter_of.items()]
    await upsert_nodes(client, tenant, nodes)
    await upsert_links(client, tenant, links)
    await attach_customers(client, tenant, list(onts.items()))
    return SampleNetwork(backbone=bb, pop=pop, olts=olts, splitters=splitters, onts=onts, splitter_of=splitter_of)
