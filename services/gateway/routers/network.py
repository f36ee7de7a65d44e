"""The access network: a customer's line, who a fault of a node reaches, and marking a node up or down."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from relay_graph.memory.inputs import Name

from relay_graph.desk.network import store as network

from relay_graph.desk.network import algorithms as network_algorithms
from relay_graph.desk.network.models import NODE_ID_PATTERN
from relay_graph.usecases import network as network_cases

from ..deps import CallDep, MemoryDep, TenantDep
from ..errors import responses
from ..schemas import (
    Answer,
    AffectedResult,
    AffectedView,
    CapacityResult,
    CriticalResult,
    LineResult,
    NodeStatusBody,
    NodeStatusResult,
    SpanningForest,
)

router = APIRouter(prefix="/v1/tenants/{t}", tags=["network"])

NodeId = Annotated[str, Query(pattern=NODE_ID_PATTERN, description="a network node id", examples=["pune-olt-1"])]


@router.get("/customers/{c}/line", response_model=Answer[LineResult], responses=responses(401, 403, 404, 422, 429, 503),
            summary="The customer's path from home to core, each node with status and capacity")
async def customer_line(
    tenant: TenantDep,
    memory: MemoryDep,
    customer: Annotated[Name, Path(alias="c", examples=["alice rao"])],
) -> LineResult:
    hops = await network.customer_line(memory.client, tenant, customer)
    return LineResult(customer=customer, line=hops)


@router.get("/network/affected", response_model=Answer[AffectedResult], responses=responses(401, 403, 404, 422, 429, 503),
            summary="The customers a fault of a node reaches",
            description="Every customer behind `node` whose every path up to the core, with `node` down (on top of "
            "whatever else is down now), runs through a node or link that is down: who the node's outage warns. "
            "A customer a standby uplink (or their primary, when the node is a standby's hub) still serves is not "
            "listed. Each comes with the path of node ids from their access node up to `node`, sorted by name. "
            "`depth` counts network links *below* the node (the customer's own connection is not a hop): an "
            "ONT's customers are at depth 0, a splitter's at 1, an OLT's at 2, a POP's at 3. Without `depth`, "
            "everyone the fault reaches, however deep. 404 for an unknown node.")
async def affected(
    tenant: TenantDep,
    memory: MemoryDep,
    node: NodeId,
    depth: Annotated[int | None, Query(ge=0, le=64, description="links below the node; default: all")] = None,
) -> AffectedResult:
    customers = await network.affected_customers(memory.client, tenant, node, depth)
    return AffectedResult(node=node, customers=[AffectedView(customer=c.customer, path=c.path) for c in customers])


@router.post("/network/nodes/{node_id}/status", response_model=Answer[NodeStatusResult],
             responses=responses(401, 403, 404, 413, 422, 429, 503),
             summary="Mark a node up or down (netops reacts)",
             description="A change moves the node's version and is announced (NetworkChanged down/up), so "
             "netops declares or resolves the outage and warns the customers behind it. Setting the status "
             "the node already has changes and announces nothing (`changed` false).")
async def set_node_status(
    body: NodeStatusBody,
    tenant: TenantDep,
    call: CallDep,
    node_id: Annotated[str, Path(pattern=NODE_ID_PATTERN, examples=["pune-olt-1"])],
) -> NodeStatusResult:
    return await network_cases.set_node_status(call, node_id, up=body.up, by=body.by)


@router.get("/network/capacity", response_model=Answer[CapacityResult], responses=responses(401, 403, 404, 422, 429, 503),
            summary="How much bandwidth can reach a node over links that are up (max flow)",
            description="The max flow from the backbones down to `node` through nodes and links that are up, "
            "with a decomposition of the flow into `paths` (their gbps add up to `max_flow_gbps`) and a minimum "
            "`cut` (the links that bound it). `nominal=true`: as if every node and link were up. 404 for an "
            "unknown node.")
async def capacity(
    tenant: TenantDep,
    memory: MemoryDep,
    node: NodeId,
    nominal: Annotated[bool, Query(description="as if everything were up")] = False,
) -> CapacityResult:
    return await network_algorithms.capacity(memory.client, tenant, node, nominal=nominal)


@router.get("/network/critical", response_model=Answer[CriticalResult], responses=responses(401, 403, 422, 429, 503),
            summary="The most critical nodes (betweenness), each with the customers behind it",
            description="The `top` nodes most shortest paths of the network run through (exact betweenness over "
            "the undirected network), each with its score, the customers behind it and its path to the core.")
async def critical(
    tenant: TenantDep,
    memory: MemoryDep,
    top: Annotated[int, Query(ge=1, le=1000, description="how many nodes")] = 10,
) -> CriticalResult:
    return CriticalResult(nodes=await network_algorithms.critical_nodes(memory.client, tenant, top))


@router.get("/network/cabling", response_model=Answer[SpanningForest], responses=responses(401, 403, 422, 429, 503),
            summary="The cheapest cabling that keeps the network connected (minimum spanning forest)",
            description="A minimum spanning forest over every network link, weighted by cable length (FalkorDB "
            "algo.MSF): the cable a rebuild would need at least, per connected part of the network.")
async def cabling(tenant: TenantDep, memory: MemoryDep) -> SpanningForest:
    return await network_algorithms.cheapest_cabling(memory.client, tenant)
