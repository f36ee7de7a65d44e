"""The network as read for the algorithms: a NetGraph (nodes and links of part of a tenant's
network), the reads that build one, and which nodes a working backbone still serves. Both
network (who a fault cuts off) and network_algorithms (every other question) build on it."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Iterable

from relay_graph.desk.network.models import LinkType, NodeKind, check_node_id
from relay_graph.desk.queries import network as q
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.tenancy import validate_tenant


@dataclass(frozen=True)
class NodeView:
    node_id: str
    kind: NodeKind
    name: str
    up: bool
    capacity_gbps: float
    customers: int = 0  # customers whose home hangs off this node directly


@dataclass(frozen=True)
class LinkView:
    type: LinkType
    source: str
    target: str
    up: bool = True
    capacity_gbps: float | None = None
    length_m: float | None = None
    backup: bool = False

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.type.value, self.source, self.target)


@dataclass
class NetGraph:
    """A read of (part of) a tenant's network: every algorithm below works on one of these."""

    nodes: dict[str, NodeView] = field(default_factory=dict)
    links: list[LinkView] = field(default_factory=list)

    @classmethod
    def from_rows(cls, nodes: Iterable[dict[str, Any]], links: Iterable[dict[str, Any]]) -> "NetGraph":
        g = cls()
        for n in nodes:
            g.nodes[n["node_id"]] = NodeView(
                node_id=n["node_id"], kind=NodeKind(n["kind"]), name=n.get("name") or n["node_id"],
                up=bool(n.get("up", True)), capacity_gbps=float(n.get("capacity_gbps") or 0.0),
                customers=int(n.get("customers") or 0))
        seen: set[tuple[str, str, str]] = set()
        for r in links:
            link = LinkView(
                type=LinkType(r["type"]), source=r["source"], target=r["target"], up=r.get("up") is not False,
                capacity_gbps=None if r.get("capacity_gbps") is None else float(r["capacity_gbps"]),
                length_m=None if r.get("length_m") is None else float(r["length_m"]),
                backup=bool(r.get("backup")))
            if link.key not in seen and link.source in g.nodes and link.target in g.nodes:
                seen.add(link.key)
                g.links.append(link)
        g.links.sort(key=lambda x: x.key)
        return g

    def link_capacity(self, link: LinkView) -> float:
        if link.capacity_gbps is not None:
            return link.capacity_gbps
        return min(self.nodes[link.source].capacity_gbps, self.nodes[link.target].capacity_gbps)

    def working(self, link: LinkView, *, nominal: bool = False, avoid: frozenset[str] = frozenset(),
                avoid_links: frozenset[tuple[str, str, str]] = frozenset(), primary_only: bool = False) -> bool:
        """A link traffic can use: it and both its ends are up (or nominal), and neither it nor an
        end is avoided (a what-if failure); with primary_only, standby links do not count."""
        a, b = self.nodes[link.source], self.nodes[link.target]
        if a.node_id in avoid or b.node_id in avoid or link.key in avoid_links or (primary_only and link.backup):
            return False
        return nominal or (link.up and a.up and b.up)

    @staticmethod
    def downward(link: LinkView) -> tuple[str, str]:
        """The (from, to) direction bandwidth takes over a link: from the core towards homes."""
        return (link.source, link.target) if link.type is LinkType.DROP else (link.target, link.source)

    def backbones(self, *, nominal: bool = False, avoid: frozenset[str] = frozenset()) -> list[str]:
        return sorted(n.node_id for n in self.nodes.values()
                      if n.kind is NodeKind.BACKBONE and (nominal or n.up) and n.node_id not in avoid)


def served_nodes(g: NetGraph, *, nominal: bool = False, avoid: frozenset[str] = frozenset(),
                 avoid_links: frozenset[tuple[str, str, str]] = frozenset(), primary_only: bool = False) -> set[str]:
    """Nodes a working backbone reaches over working links (downwards): the ones with service."""
    seen = set(g.backbones(nominal=nominal, avoid=avoid))
    below: dict[str, list[str]] = {}
    for link in g.links:
        if g.working(link, nominal=nominal, avoid=avoid, avoid_links=avoid_links, primary_only=primary_only):
            u, v = g.downward(link)
            below.setdefault(u, []).append(v)
    todo = deque(sorted(seen))
    while todo:
        u = todo.popleft()
        for v in below.get(u, ()):
            if v not in seen:
                seen.add(v)
                todo.append(v)
    return seen


def graph_of(rows: list[dict[str, Any]]) -> NetGraph:
    if not rows:
        return NetGraph()
    return NetGraph.from_rows(rows[0]["nodes"] or [], rows[0]["links"] or [])


async def load_upward(client: GraphClient, tenant: str, node_ids: list[str]) -> NetGraph:
    """The nodes above the given ones (and the splitter dropping to an ONT) with every link among
    them, in one query: all a max flow or a reachability check for those nodes needs."""
    validate_tenant(tenant)
    ids = sorted({check_node_id(n) for n in node_ids})
    if not ids:
        return NetGraph()
    return graph_of(await client.run(tenant, q.UPWARD_CLOSURE, {"ids": ids}))


async def load_network(client: GraphClient, tenant: str) -> NetGraph:
    """The tenant's whole network in one query."""
    validate_tenant(tenant)
    return graph_of(await client.run(tenant, q.WHOLE_NETWORK))
