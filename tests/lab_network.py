"""The hand-built access network the lab tests share, with answers known by hand.

    bb1 <-100- popA -40 (standby)-> bb2 <-100- popB            (popB has no standby)
               popA <-20- oltA <-10- splA -DROP-> ontA (Asha), ontA2 (Arun)
               popB <-20- oltB <-10- splB -DROP-> ontB (Bilal)
"""

from __future__ import annotations

from relay_graph.desk.network import store as net
from relay_graph.desk.network.models import LinkIn, LinkType, NetNodeIn, NodeKind

BB, POP, OLT, SPL, ONT = NodeKind.BACKBONE, NodeKind.POP, NodeKind.OLT, NodeKind.SPLITTER, NodeKind.ONT
NODES = [("bb1", BB, 400), ("bb2", BB, 400), ("popA", POP, 200), ("popB", POP, 200), ("oltA", OLT, 40),
         ("oltB", OLT, 40), ("splA", SPL, 10), ("splB", SPL, 10), ("ontA", ONT, 1), ("ontA2", ONT, 1), ("ontB", ONT, 1)]
LINKS = [(LinkType.UPLINK, "popA", "bb1", 100, False), (LinkType.UPLINK, "popA", "bb2", 40, True),
         (LinkType.UPLINK, "popB", "bb2", 100, False), (LinkType.UPLINK, "oltA", "popA", 20, False),
         (LinkType.UPLINK, "oltB", "popB", 20, False), (LinkType.PON, "splA", "oltA", 10, False),
         (LinkType.PON, "splB", "oltB", 10, False), (LinkType.DROP, "splA", "ontA", 1, False),
         (LinkType.DROP, "splA", "ontA2", 1, False), (LinkType.DROP, "splB", "ontB", 1, False)]
HOMES = [("Asha", "ontA"), ("Arun", "ontA2"), ("Bilal", "ontB")]


def link_length(n: int) -> float:
    """The n-th link's cable length: all different, so the cheapest cabling is unique."""
    return 1000.0 * (n + 1)


async def build(client, tenant: str, *, flat_length_m: float | None = None) -> None:
    await net.upsert_nodes(client, tenant, [NetNodeIn(node_id=i, kind=k, name=i, capacity_gbps=c) for i, k, c in NODES])
    await net.upsert_links(client, tenant, [
        LinkIn(type=t, source=s, target=d, capacity_gbps=c, backup=b,
               length_m=flat_length_m if flat_length_m is not None else link_length(n))
        for n, (t, s, d, c, b) in enumerate(LINKS)])
    await net.attach_customers(client, tenant, HOMES)
