"""A customer's line as the lab's equipment sees it: the network graph (what anyone can see) plus the
lab's active faults that strike this customer (from the truth). Shared by measuring, acting,
injecting and grading, so all four agree on who a fault affects."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import NotFound
from relay_graph.desk.network.store import customer_identity
from relay_graph.desk.network.algorithms import (
    NetGraph,
    customer_access,
    load_upward,
    max_flow,
    path_to_core,
    served_nodes,
)
from relay_graph.desk.network.models import LinkType, NodeKind
from relay_graph.lab import truth
from relay_graph.lab.models import FaultKind
from relay_graph.lab.physics import DownElement, LineView

_NODE_LEVEL = {NodeKind.ONT: "home", NodeKind.SPLITTER: "street", NodeKind.OLT: "exchange", NodeKind.POP: "hub",
               NodeKind.BACKBONE: "core"}
_LINK_LEVEL = {LinkType.DROP: "street", LinkType.PON: "street", LinkType.UPLINK: "hub"}


@dataclass
class Context:
    name: str
    uid: str
    access: str | None
    access_kind: NodeKind | None
    graph: NetGraph
    line: LineView
    faults: list[dict[str, Any]] = field(default_factory=list)  # active faults striking this customer


def lit_nodes(g: NetGraph) -> set[str]:
    """Nodes light reaches: every exchange that is up, and what working fibre (PON, DROP) runs
    down to from one."""
    seen = {n.node_id for n in g.nodes.values() if n.kind is NodeKind.OLT and n.up}
    below: dict[str, list[str]] = {}
    for link in g.links:
        if link.type is not LinkType.UPLINK and g.working(link):
            u, v = g.downward(link)
            below.setdefault(u, []).append(v)
    todo = deque(sorted(seen))
    while todo:
        u = todo.popleft()
        for v in below.get(u, ()):
            if v not in seen and g.nodes[v].up:
                seen.add(v)
                todo.append(v)
    return seen


def line_view(g: NetGraph, access: str, access_kind: NodeKind) -> LineView:
    served = served_nodes(g)
    reaches = access in served
    primary = path_to_core(g, access, nominal=False, primary_only=True)
    working = primary or path_to_core(g, access, nominal=False)
    route = (working or path_to_core(g, access, nominal=True, primary_only=True)
             or path_to_core(g, access, nominal=True))
    olts = [n.node_id for n in g.nodes.values() if n.kind is NodeKind.OLT]
    managed = any(o in served for o in olts)
    down = [DownElement(element="node", level=_NODE_LEVEL[n.kind], node_id=n.node_id, kind=n.kind.value)
            for n in sorted(g.nodes.values(), key=lambda n: n.node_id) if not n.up]
    down += [DownElement(element="link", level=_LINK_LEVEL[x.type], kind=x.type.value, source=x.source,
                         target=x.target) for x in g.links if not x.up]
    ratio = 1.0
    if reaches:
        for nid in route:
            if g.nodes[nid].kind in (NodeKind.OLT, NodeKind.POP):
                nominal = max_flow(g, nid, nominal=True).max_flow_gbps
                if nominal > 0:
                    ratio = min(ratio, max_flow(g, nid).max_flow_gbps / nominal)
    node = g.nodes[access]
    return LineView(
        connected=True, access=access, has_ont=access_kind is NodeKind.ONT, ont_up=node.up, reaches_core=reaches,
        managed=managed, lit=access in lit_nodes(g), route=tuple(route), via_backup=reaches and not primary,
        down=tuple(down), capacity_ratio=round(ratio, 6),
        hub=next((n for n in route if g.nodes[n].kind is NodeKind.POP), None),
        plan_mbps=node.capacity_gbps * 1000.0 if access_kind is NodeKind.ONT else 1000.0,
    )


def strikes(fault: dict[str, Any], uid: str, g: NetGraph, line: LineView) -> bool:
    """Whether an active fault affects this customer: their own, or a network fault on their line
    (a congested hub only when their traffic runs through it)."""
    if not fault.get("network"):
        return fault.get("customer_uid") == uid
    if fault["kind"] == FaultKind.EVENING_CONGESTION.value:
        return fault.get("node_id") in line.route
    if fault.get("link_type"):
        key = (fault["link_type"], fault["link_source"], fault["link_target"])
        return any(x.key == key for x in g.links)
    return fault.get("node_id") in g.nodes


async def context(client: GraphClient, tenant: str, customer: str, *, with_faults: bool = True) -> Context:
    """The customer's line and the active faults that strike it. A known customer without a line
    gets an unconnected view (billing still answers); an unknown one is NotFound."""
    text, _, uid = customer_identity(customer)
    try:
        name, access, kind, _ = await customer_access(client, tenant, customer)
    except NotFound as exc:
        if exc.code != "customer_not_connected":
            raise
        ctx = Context(name=text, uid=uid, access=None, access_kind=None, graph=NetGraph(),
                      line=LineView(connected=False))
    else:
        g = await load_upward(client, tenant, [access])
        ctx = Context(name=name, uid=uid, access=access, access_kind=kind, graph=g, line=line_view(g, access, kind))
    if with_faults:
        ctx.faults = [f for f in await truth.active_faults(client, tenant, uid)
                      if strikes(f, uid, ctx.graph, ctx.line)]
    return ctx
