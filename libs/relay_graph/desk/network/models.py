"""Typed inputs and outputs of the access network: node kinds, link types, which kinds a link may
join, and the views netops, the resolver and the gateway read.

Links are stored exactly as the design draws them: `(:Splitter)-[:PON]->(:Olt)-[:UPLINK]->(:Pop)
-[:UPLINK]->(:Backbone)`, `(:Splitter)-[:DROP]->(:Ont)`, `(:Customer)-[:CONNECTED_VIA]->(:Ont|:Olt)`.
PON and UPLINK point towards the core; DROP points away from it (the design fixes it that way), so
the queries walk PON/UPLINK one way and DROP the other."""

from __future__ import annotations

import re
from datetime import datetime
from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from relay_graph.runtime.errors import InvalidInput

NODE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"


def check_node_id(value: object, what: str = "node") -> str:
    """The node id, or InvalidInput when it is not one (NODE_ID_PATTERN)."""
    if not isinstance(value, str) or not re.fullmatch(NODE_ID_PATTERN, value):
        raise InvalidInput(f"{what} id must match {NODE_ID_PATTERN}")
    return value


MAX_NODE_NAME = 200


class NodeKind(str, Enum):
    """Each value is also the node's kind label (a code constant, safe to place in Cypher)."""

    BACKBONE = "Backbone"
    POP = "Pop"  # city hub
    OLT = "Olt"  # exchange
    SPLITTER = "Splitter"  # street cabinet
    ONT = "Ont"  # the box in the home


HOME_BOX = " home box"  # the end of every home box's name (store.home_box_name): its customer's id before it


def place_in_words(name: str, kind: NodeKind | None = None) -> str:
    """Where a fault is, as a customer reads it: a home box's name starts with its customer's id,
    so theirs is "your home box"; every other node's name is a place ("Pune Central cabinet 2")."""
    return "your home box" if kind is NodeKind.ONT or name.endswith(HOME_BOX) else name


class LinkType(str, Enum):
    """Each value is also the relationship type."""

    UPLINK = "UPLINK"
    PON = "PON"
    DROP = "DROP"


# Which kinds each link type may join, as (source kinds, target kinds) of the stored edge.
# Splitters may cascade (PON splitter -> splitter) and hubs may aggregate (UPLINK pop -> pop);
# a backbone is never a source, so backbones never appear "behind" one another.
LINK_ENDPOINTS: dict[LinkType, tuple[frozenset[NodeKind], frozenset[NodeKind]]] = {
    LinkType.UPLINK: (frozenset({NodeKind.OLT, NodeKind.POP}), frozenset({NodeKind.POP, NodeKind.BACKBONE})),
    LinkType.PON: (frozenset({NodeKind.SPLITTER}), frozenset({NodeKind.OLT, NodeKind.SPLITTER})),
    LinkType.DROP: (frozenset({NodeKind.SPLITTER}), frozenset({NodeKind.ONT})),
}
# Kinds a customer's home may hang off directly.
ACCESS_KINDS: frozenset[NodeKind] = frozenset({NodeKind.ONT, NodeKind.OLT})


class NetNodeIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    node_id: str = Field(pattern=NODE_ID_PATTERN)
    kind: NodeKind
    name: str = Field(min_length=1, max_length=MAX_NODE_NAME)
    capacity_gbps: float = Field(gt=0, le=1_000_000)
    # Only applied when the node is created: re-running an upsert must not undo a fault.
    # Later changes go through set_node_status, which versions them.
    up: bool = True


class LinkIn(BaseModel):
    """A link stored as (source)-[:type]->(target)."""

    model_config = ConfigDict(extra="forbid")

    type: LinkType
    source: str = Field(pattern=NODE_ID_PATTERN)
    target: str = Field(pattern=NODE_ID_PATTERN)
    capacity_gbps: float | None = Field(default=None, gt=0, le=1_000_000)
    length_m: float | None = Field(default=None, ge=0, le=1_000_000)
    up: bool = True  # only applied when the link is created (see NetNodeIn.up)
    # A standby path (a second uplink): traffic takes it only when the primary is down. Readers use
    # it to tell "running on the backup" from "running normally"; the algorithms treat it as a link.
    backup: bool = False


class NetNode(BaseModel):
    node_id: str
    kind: NodeKind
    name: str
    capacity_gbps: float
    status: str
    version: int


class UpsertResult(BaseModel):
    created: int
    updated: int


class NodeStatusChange(BaseModel):
    node_id: str
    up: bool
    changed: bool
    version: int  # the node's status version; increments only on a change


class LinkStatusChange(BaseModel):
    type: LinkType
    source: str
    target: str
    up: bool
    changed: bool


class Attachment(BaseModel):
    customer: str
    uid: str
    node_id: str
    previous: list[str] = []  # node ids the customer was attached to before (a move)


class AffectedCustomer(BaseModel):
    customer: str
    # node ids from the customer's access node up to and including the queried node
    path: list[str]


class LineHop(BaseModel):
    node_id: str
    kind: NodeKind
    name: str
    status: str
    capacity_gbps: float
    # the link from this hop to the next one towards the core; None on the last hop
    link_type: LinkType | None = None
    link_up: bool | None = None
    link_capacity_gbps: float | None = None


class Outage(BaseModel):
    outage_id: str
    node_id: str
    node_kind: NodeKind
    node_name: str
    cause: str
    open: bool
    opened_at: datetime
    closed_at: datetime | None = None
    # Names of the affected customers. A customer's own view (open_outages_for_customer) holds only
    # that customer: other customers' names are not theirs to read. affected_count is always the total.
    customers: list[str] = []
    affected_count: int = 0
    created: bool = False  # True only on the call that opened it (netops announces once)

    @property
    def place(self) -> str:
        """Where it is, in the words a customer it reaches reads (no node or customer ids)."""
        return place_in_words(self.node_name, self.node_kind)


class PathFault(BaseModel):
    """A node of a customer's line that is not up, with the open outage on it if there is one."""

    node_id: str
    node_kind: NodeKind
    node_name: str
    status: str
    since: datetime | None = None  # when the node's status last changed
    outage: Outage | None = None


# ---------------------------------------------------------------- generation (network_gen)


class NetworkSummary(BaseModel):
    """What generate_network built (or found already built) for a region."""

    seed: str
    backbones: list[str]
    hubs: dict[str, str]  # city -> hub (Pop) id
    exchanges: dict[str, dict[str, str]]  # city -> area -> exchange (Olt) id
    cabinets: dict[str, list[str]]  # exchange id -> its street cabinets (Splitter ids)
    onts: dict[str, str]  # customer name -> home box (Ont) id
    backup_links: list[tuple[str, str]]  # (source, target) of every standby uplink
    nodes: int
    links: int
    nodes_created: int
    links_created: int
    cable_m: float  # total length of every link built


# ---------------------------------------------------------------- algorithms (network_algorithms)


class FlowPath(BaseModel):
    """One path of a max-flow decomposition, from a backbone down to the node."""

    nodes: list[str]
    gbps: float


class CutLink(BaseModel):
    """A link of the minimum cut: the links whose capacity bounds the max flow."""

    type: LinkType
    source: str
    target: str
    capacity_gbps: float


class Capacity(BaseModel):
    """How much bandwidth can reach a node from the backbones through nodes and links that are up."""

    node: str
    max_flow_gbps: float
    paths: list[FlowPath]  # a decomposition of the flow; their gbps add up to max_flow_gbps
    cut: list[CutLink]  # a minimum cut; its capacities add up to max_flow_gbps (when finite)
    nominal: bool = False  # True: computed as if every node and link were up
    engine: str = "networkx"  # or "falkordb algo.maxFlow" where its answer is ours (see network_algorithms)


class AffectedPath(BaseModel):
    """Why a customer is affected by a node: the shortest path from the customer to it."""

    customer: str
    node: str
    behind: bool  # the node lies on one of the customer's paths to the core
    path: list[str]  # customer, access node, ..., node (empty when not behind)
    hops: int  # links on the path (CONNECTED_VIA counts as one)
    cut_off: bool  # with that node failed, no working path from the customer reaches a backbone
    alternative: list[str] = []  # a working path to a backbone that avoids the node, if any


class FailureReach(BaseModel):
    """Who a node's failure reaches: every customer behind it, split by whether a backup saves them."""

    node: str
    cut_off: list[AffectedCustomer]  # lose service
    rerouted: list[AffectedCustomer]  # behind the node but still reach a backbone another way


class CriticalNode(BaseModel):
    node_id: str
    kind: NodeKind
    name: str
    # Betweenness over the undirected network: the number of (unordered) node pairs whose shortest
    # paths run through the node, each pair split evenly over its shortest paths.
    score: float
    normalised: float  # score / ((n-1)(n-2)/2), as networkx's normalized=True for undirected graphs
    customers_behind: int
    path_to_core: list[str]  # the node's shortest upward path to a backbone
    # FalkorDB's algo.HarmonicCentrality over the links as stored (towards the core): the sum of
    # 1/hops to each node reachable upwards, a HyperLogLog estimate; None where the server lacks it.
    harmonic: float | None = None


class CableLink(BaseModel):
    type: LinkType
    source: str
    target: str
    length_m: float | None


class SpanningForest(BaseModel):
    """The cheapest cabling: a minimum spanning forest of the network, weighted by cable length."""

    edges: list[CableLink]
    total_length_m: float
    trees: int
    nodes: int
    engine: str = "falkordb algo.MSF"


MSF = SpanningForest


class CityStatus(BaseModel):
    """A served city whose network is short of normal right now."""

    city: str
    hub: str = Field(description="the city hub's node id")
    status: Literal["degraded", "outage"] = Field(
        description="outage: the hub is down or has no working uplink, so the city is cut off; degraded: "
        "running on a standby uplink, or an exchange, cabinet or link below the hub is down")
    reason: str


__all__ = [
    "ACCESS_KINDS",
    "AffectedPath",
    "CableLink",
    "CityStatus",
    "Capacity",
    "CriticalNode",
    "CutLink",
    "FailureReach",
    "FlowPath",
    "MSF",
    "NetworkSummary",
    "SpanningForest",
    "AffectedCustomer",
    "Attachment",
    "LINK_ENDPOINTS",
    "LineHop",
    "LinkIn",
    "LinkStatusChange",
    "LinkType",
    "NODE_ID_PATTERN",
    "NetNode",
    "NetNodeIn",
    "NodeKind",
    "NodeStatusChange",
    "Outage",
    "UpsertResult",
]
