"""Tools over the access network: who a node's failure reaches, how much bandwidth reaches a node,
a customer's line from home to core, and why a customer is (or is not) behind a node."""

from __future__ import annotations

from pydantic import BaseModel, Field

from relay_graph.desk.network import store as network

from relay_graph.desk.network import algorithms as network_algorithms
from relay_graph.runtime.errors import NotFound
from relay_graph.desk.network.models import AffectedCustomer, AffectedPath, Capacity, LineHop, NetNode
from relay_graph.usecases.context import Call
from relay_graph.tools.envelope import Shape, ToolResult
from relay_graph.tools.toolset import tool
from relay_graph.tools.resolve import Resolver
from relay_graph.tools.types import Args, CustomerName, NodeId, whole


def _path_line(a: AffectedCustomer, status: str) -> str:
    return f"path: {a.customer} -> " + " -> ".join(a.path) + f" ({status})"


class AffectedByInput(Args):
    node: NodeId
    depth: whole(0, 16) | None = Field(default=None,
                                 description="links below the node to look (an OLT's customers are at 2); default all")


class AffectedByOutput(BaseModel):
    node: NetNode
    customers: list[AffectedCustomer] = Field(description="every customer behind the node, with the path up to it")
    cut_off: list[AffectedCustomer] = Field(description="those its failure leaves without service")
    rerouted: list[AffectedCustomer] = Field(description="those a backup path still serves")


@tool("affected_by", """The customers behind a network node, each with the path from their home up to
      it, split into those its failure cuts off and those a backup path still serves.""",
      input=AffectedByInput, output=AffectedByOutput)
async def affected_by(ctx: Call, args: AffectedByInput) -> ToolResult:
    res = Resolver(ctx)
    node = await res.node(args.node)
    res.done()
    assert node is not None
    reach = await network_algorithms.failure_reach(ctx.client, ctx.tenant, node.node_id, args.depth)
    everyone = sorted(reach.cut_off + reach.rerouted, key=lambda a: (a.customer, a.path))
    how = [_path_line(a, "cut off") for a in reach.cut_off] + [_path_line(a, "rerouted") for a in reach.rerouted]
    return ToolResult(tool="affected_by", shape=Shape.ANSWERED if everyone else Shape.NOT_IN_GRAPH,
                      data=AffectedByOutput(node=node, customers=everyone, cut_off=reach.cut_off,
                                            rerouted=reach.rerouted),
                      how_i_know=how, message=None if everyone else f"no customer is behind {node.node_id}")


class CapacityInput(Args):
    node: NodeId
    nominal: bool = Field(default=False, description="as if every node and link were up")


@tool("capacity", """The bandwidth that can reach a node from the backbones (max flow over nodes and
      links that are up), with the paths that carry it and the links that limit it.""",
      input=CapacityInput, output=Capacity)
async def capacity(ctx: Call, args: CapacityInput) -> ToolResult:
    res = Resolver(ctx)
    node = await res.node(args.node)
    res.done()
    assert node is not None
    cap = await network_algorithms.capacity(ctx.client, ctx.tenant, node.node_id, nominal=args.nominal)
    how = [f"flow path: {' -> '.join(p.nodes)} ({p.gbps:g} Gbps)" for p in cap.paths]
    how += [f"limit: {c.type.value} {c.source} -> {c.target} ({c.capacity_gbps:g} Gbps)" for c in cap.cut]
    return ToolResult(tool="capacity", shape=Shape.ANSWERED, data=cap, how_i_know=how)


class CustomerLineInput(Args):
    customer: CustomerName


class CustomerLineOutput(BaseModel):
    customer: str
    hops: list[LineHop] = Field(description="home box first, backbone last, each with its status and capacity")


@tool("customer_line", """A customer's line from home to core: each node with its status and capacity
      and the state of the link above it.""", input=CustomerLineInput, output=CustomerLineOutput)
async def customer_line(ctx: Call, args: CustomerLineInput) -> ToolResult:
    res = Resolver(ctx)
    ref = await res.customer(args.customer)
    res.done()
    assert ref is not None
    try:
        hops = await network.customer_line(ctx.client, ctx.tenant, ref.name)
    except NotFound:  # a name the desk knows that the network does not
        hops = []
    how = [f"{h.kind.value} {h.node_id} ({h.status}, {h.capacity_gbps:g} Gbps)"
           + ("" if h.link_type is None else f" -{h.link_type.value}{'' if h.link_up else ' DOWN'}->")
           for h in hops]
    return ToolResult(tool="customer_line", shape=Shape.ANSWERED if hops else Shape.NOT_IN_GRAPH,
                      data=CustomerLineOutput(customer=ref.name, hops=hops), how_i_know=how,
                      message=None if hops else f"{ref.name} has no line on file")


class WhyAffectedInput(Args):
    customer: CustomerName
    node: NodeId


@tool("why_affected", """Whether a customer is behind a node: the fewest-hop path from their home up to
      it, and whether that node failing would cut them off (or which path would still serve them).""",
      input=WhyAffectedInput, output=AffectedPath)
async def why_affected(ctx: Call, args: WhyAffectedInput) -> ToolResult:
    res = Resolver(ctx)
    ref = await res.customer(args.customer)
    node = await res.node(args.node)
    res.done()
    assert ref is not None and node is not None
    try:
        why = await network_algorithms.why_affected(ctx.client, ctx.tenant, ref.name, node.node_id)
    except NotFound as exc:  # known, but without a line
        return ToolResult(tool="why_affected", shape=Shape.NOT_IN_GRAPH, message=exc.message)
    how = [f"path: {' -> '.join(why.path)}"] if why.behind else []
    if why.alternative:
        how.append(f"alternative: {' -> '.join(why.alternative)}")
    return ToolResult(tool="why_affected", shape=Shape.ANSWERED if why.behind else Shape.NOT_IN_GRAPH, data=why,
                      how_i_know=how,
                      message=None if why.behind else f"{ref.name} is not behind {node.node_id}")
