"""Cypher of the access network: nodes, links, customers' lines, outages.

Direction convention (as the design draws it): PON and UPLINK point up, towards the core;
DROP points down, from a splitter to a home's ONT; CONNECTED_VIA points from the customer to the
node their home hangs off (an ONT, or an OLT directly). "Below a node" therefore means: follow
PON/UPLINK backwards any number of hops, then optionally one DROP forwards, then CONNECTED_VIA
backwards. Every query starts from an indexed node (NetNode.node_id, Entity.uid, Outage.node_id,
Outage.outage_id).

Labels and relationship types come from NodeKind / LinkType only. FalkorDB does not take a
parameter as a variable-length bound, so the depth-limited traversals are built once, at import,
for each bound up to MAX_BOUNDED_DEPTH; deeper or unlimited looks use the unbounded query, which
filters by hops itself."""

from __future__ import annotations

from relay_graph.desk.network.models import LinkType, NodeKind
from relay_graph.runtime.queries import Query

UP_TYPES = f"{LinkType.UPLINK.value}|{LinkType.PON.value}"
DROP = LinkType.DROP.value
MAX_BOUNDED_DEPTH = 8
MAX_UP_HOPS = 16  # no real line has more links between a home and the core


def _when(cond: str, body: str) -> str:
    return f"FOREACH (_ IN CASE WHEN {cond} THEN [1] ELSE [] END | {body})"


# ---------------------------------------------------------------- nodes and links

NODE_KINDS = Query(
    "network_node_kinds",
    "UNWIND $ids AS id MATCH (n:NetNode {node_id: id}) RETURN n.node_id AS node_id, n.kind AS kind",
    read_only=True,
)

GET_NODE = Query(
    "network_get_node",
    "MATCH (n:NetNode {node_id: $node_id}) RETURN n",
    read_only=True,
)

# Status and the Up label only on creation: an upsert re-run must not undo a fault. The kind is
# fixed at creation; the caller refuses a batch that would change one, and the guard below keeps
# a racing writer from giving a node a second kind label.
UPSERT_NODES = Query(
    "network_upsert_nodes",
    "UNWIND $nodes AS row "
    "OPTIONAL MATCH (e:NetNode {node_id: row.node_id}) "
    "WITH row, e IS NULL AS is_new "
    "MERGE (n:NetNode {node_id: row.node_id}) "
    "ON CREATE SET n.kind = row.kind, n.status = CASE WHEN row.up THEN 'up' ELSE 'down' END, n.version = 0 "
    "WITH n, row, is_new WHERE n.kind = row.kind "
    "SET n.name = row.name, n.capacity_gbps = row.capacity_gbps "
    + " ".join(_when(f"row.kind = '{k.value}'", f"SET n:{k.value}") for k in NodeKind)
    + " " + _when("is_new AND row.up", "SET n:Up")
    + " RETURN sum(CASE WHEN is_new THEN 1 ELSE 0 END) AS created, count(n) AS total",
)

# Every upward path from the given nodes: enough to see whether new links would close a cycle.
UPWARD_PATHS = Query(
    "network_upward_paths",
    f"UNWIND $ids AS id MATCH (n:NetNode {{node_id: id}}) "
    f"MATCH p = (n)-[:{UP_TYPES}*1..]->(:NetNode) "
    f"RETURN [x IN nodes(p) | x.node_id] AS ids",
    read_only=True,
)

UPSERT_LINKS = Query(
    "network_upsert_links",
    "UNWIND $links AS row "
    "MATCH (a:NetNode {node_id: row.source}) "
    "MATCH (b:NetNode {node_id: row.target}) "
    "OPTIONAL MATCH (a)-[e]->(b) WHERE type(e) = row.type "
    "WITH a, b, row, count(e) = 0 AS is_new "
    + " ".join(
        _when(
            f"row.type = '{t.value}'",
            f"MERGE (a)-[r:{t.value}]->(b) ON CREATE SET r.up = row.up "
            "SET r.capacity_gbps = coalesce(row.capacity_gbps, r.capacity_gbps), "
            "r.length_m = coalesce(row.length_m, r.length_m), r.backup = coalesce(row.backup, false)",
        )
        for t in LinkType
    )
    + " RETURN sum(CASE WHEN is_new THEN 1 ELSE 0 END) AS created, count(row) AS total",
)


def _set_link_status(t: LinkType) -> Query:
    return Query(
        f"network_set_link_status_{t.value.lower()}",
        f"MATCH (a:NetNode {{node_id: $source}})-[r:{t.value}]->(b:NetNode {{node_id: $target}}) "
        "WITH r, coalesce(r.up, true) <> $up AS changed "
        "SET r.up = $up, r.status_changed_at_ms = CASE WHEN changed THEN $at_ms ELSE r.status_changed_at_ms END "
        "RETURN changed",
    )


SET_LINK_STATUS: dict[LinkType, Query] = {t: _set_link_status(t) for t in LinkType}

# The Up label is the truth the agents filter on; status mirrors it for readers that want a string.
# A version counts changes, so a repeated or stale notification can be recognised downstream.
SET_NODE_UP = Query(
    "network_set_node_up",
    "MATCH (n:NetNode {node_id: $node_id}) "
    "WITH n, NOT n:Up AS changed "
    "SET n:Up, n.status = 'up', "
    "n.version = CASE WHEN changed THEN coalesce(n.version, 0) + 1 ELSE coalesce(n.version, 0) END, "
    "n.status_changed_at_ms = CASE WHEN changed THEN $at_ms ELSE n.status_changed_at_ms END "
    "RETURN changed, n.version AS version",
)

SET_NODE_DOWN = Query(
    "network_set_node_down",
    "MATCH (n:NetNode {node_id: $node_id}) "
    "WITH n, n:Up OR n.status <> 'down' AS changed "
    "SET n.status = 'down', "
    "n.version = CASE WHEN changed THEN coalesce(n.version, 0) + 1 ELSE coalesce(n.version, 0) END, "
    "n.status_changed_at_ms = CASE WHEN changed THEN $at_ms ELSE n.status_changed_at_ms END "
    "REMOVE n:Up "
    "RETURN changed, n.version AS version",
)

# ---------------------------------------------------------------- customers

# One line per customer: attaching elsewhere moves them (the old CONNECTED_VIA goes).
ATTACH_CUSTOMERS = Query(
    "network_attach_customers",
    "UNWIND $rows AS row "
    "MATCH (a:NetNode {node_id: row.node_id}) WHERE a.kind IN $access_kinds "
    "MERGE (c:Entity {uid: row.uid}) "
    "ON CREATE SET c.name = row.name, c.name_key = row.name_key, c.type = 'Customer' "
    "SET c:Customer "
    "WITH a, c, row "
    "OPTIONAL MATCH (c)-[old:CONNECTED_VIA]->(x:NetNode) WHERE x <> a "
    "WITH a, c, row, collect(old) AS olds, collect(x.node_id) AS previous "
    "FOREACH (r IN olds | DELETE r) "
    "MERGE (c)-[:CONNECTED_VIA]->(a) "
    "RETURN c.name AS customer, c.uid AS uid, a.node_id AS node_id, previous",
)


def _behind(bound: str) -> str:
    """Rows (n, c, hops, ids): customer c (null when none) hangs off access node a, which is m
    itself or an ONT dropped from m; m is up to `bound` PON/UPLINK hops below n (n itself at 0,
    so n always yields a row). ids runs from a up to n."""
    return (
        f"MATCH p = (n)<-[:{UP_TYPES}*0..{bound}]-(m:NetNode) "
        f"WITH n, p, m, [(m)-[:{DROP}]->(x:Ont) | x] AS onts "
        "UNWIND [m] + onts AS a "
        "OPTIONAL MATCH (a)<-[:CONNECTED_VIA]-(c:Customer) "
        "WITH n, c, length(p) + CASE WHEN a = m THEN 0 ELSE 1 END AS hops, "
        "CASE WHEN a = m THEN [] ELSE [a.node_id] END + reverse([x IN nodes(p) | x.node_id]) AS ids "
    )


def _customers_behind(depth: int | None) -> Query:
    bound = "" if depth is None else str(int(depth))
    return Query(
        f"network_customers_behind_{'all' if depth is None else depth}",
        "MATCH (n:NetNode {node_id: $node_id}) "
        + _behind(bound)
        + "RETURN n.node_id AS node_id, collect(CASE WHEN c IS NOT NULL AND ($depth IS NULL OR hops <= $depth) "
        "THEN {customer: c.name, uid: c.uid, hops: hops, path: ids} END) AS rows",
        read_only=True,
    )


CUSTOMERS_BEHIND: dict[int | None, Query] = {d: _customers_behind(d) for d in range(MAX_BOUNDED_DEPTH + 1)}
CUSTOMERS_BEHIND[None] = _customers_behind(None)

# The customer's access node, the DROP above it when it is an ONT, then every upward path to a
# node with nothing above it (the core). The caller keeps the shortest, ties by node ids.
CUSTOMER_LINE = Query(
    "network_customer_line",
    "MATCH (c:Entity {uid: $uid}) "
    "OPTIONAL MATCH (c)-[:CONNECTED_VIA]->(a:NetNode) "
    f"OPTIONAL MATCH (a)<-[d:{DROP}]-(s:NetNode) "
    "WITH c, a, d, coalesce(s, a) AS start "
    f"OPTIONAL MATCH p = (start)-[:{UP_TYPES}*0..]->(top:NetNode) "
    f"WHERE NOT (top)-[:{UP_TYPES}]->(:NetNode) "
    "RETURN c.name AS customer, a AS access, "
    "CASE WHEN d IS NULL THEN null ELSE {type: type(d), up: d.up, capacity_gbps: d.capacity_gbps} END AS drop, "
    "nodes(p) AS nodes, "
    "[r IN relationships(p) | {type: type(r), up: r.up, capacity_gbps: r.capacity_gbps, "
    "backup: coalesce(r.backup, false)}] AS links",
    read_only=True,
)

# ---------------------------------------------------------------- outages

# One open outage per node: the MERGE key includes open:true, so a second call finds it and a closed
# one never matches. It affects the node and the customers the caller found cut off by it
# ($uids, see network.affected_customers); a later call adds (never removes) customers, so those
# attached or cut off since are included and nobody already told drops out of the "it's over".
OPEN_OUTAGE = Query(
    "network_open_outage",
    "MATCH (n:NetNode {node_id: $node_id}) "
    "MERGE (o:Outage {node_id: $node_id, open: true}) "
    "ON CREATE SET o.outage_id = $outage_id, o.opened_at_ms = $at_ms, o.cause = $cause "
    "MERGE (o)-[:AFFECTS]->(n) "
    "WITH o "
    # an empty list would end the statement with no row: one null uid keeps the row, matching nobody
    "UNWIND CASE WHEN size($uids) = 0 THEN [null] ELSE $uids END AS uid "
    "OPTIONAL MATCH (c:Entity {uid: uid}) "
    "WITH o, collect(DISTINCT c) AS cs "
    "FOREACH (c IN cs | MERGE (o)-[:AFFECTS]->(c)) "
    "RETURN o.outage_id AS outage_id, o.outage_id = $outage_id AS created",
)

CLOSE_OUTAGE = Query(
    "network_close_outage",
    "MATCH (n:NetNode {node_id: $node_id}) "
    "OPTIONAL MATCH (o:Outage {node_id: $node_id}) WHERE o.open = true "
    "SET o.open = false, o.closed_at_ms = $at_ms "
    "RETURN n.node_id AS node_id, collect(o.outage_id) AS closed",
)

OUTAGE_VIEW = Query(
    "network_outage_view",
    "MATCH (o:Outage {outage_id: $outage_id}) "
    "OPTIONAL MATCH (o)-[:AFFECTS]->(n:NetNode) "
    "RETURN o, n.kind AS node_kind, n.name AS node_name, "
    "[(o)-[:AFFECTS]->(c:Customer) | c.name] AS customers",
    read_only=True,
)

OPEN_OUTAGES_FOR_CUSTOMER = Query(
    "network_open_outages_for_customer",
    "MATCH (c:Entity {uid: $uid}) "
    "OPTIONAL MATCH (c)<-[:AFFECTS]-(o:Outage) WHERE o.open = true "
    "OPTIONAL MATCH (o)-[:AFFECTS]->(n:NetNode) "
    "RETURN c.name AS customer, o, n.kind AS node_kind, n.name AS node_name, "
    "size([(o)-[:AFFECTS]->(x:Customer) | x]) AS affected_count",
    read_only=True,
)

# The nodes of a customer's line that are not up (down, degraded), each with its open outage if
# netops opened one: what the desk says first when that customer reports a problem.
PATH_FAULTS = Query(
    "network_path_faults",
    "UNWIND $node_ids AS nid "
    "MATCH (n:NetNode {node_id: nid}) WHERE coalesce(n.status, 'up') <> 'up' "
    "OPTIONAL MATCH (o:Outage {node_id: nid}) WHERE o.open = true "
    "RETURN n.node_id AS node_id, n.kind AS node_kind, n.name AS node_name, n.status AS status, "
    "n.status_changed_at_ms AS since_ms, o, size([(o)-[:AFFECTS]->(x:Customer) | x]) AS affected_count",
    read_only=True,
)

# One ticket pointed at an outage on its customer's line (a customer placed after the outage opened
# is not among the customers it AFFECTS). Idempotent.
LINK_TICKET = Query(
    "network_link_ticket",
    "MATCH (o:Outage {outage_id: $outage_id}), (t:Ticket {ticket_id: $ticket_id}) "
    "MERGE (t)-[:CAUSED_BY]->(o) "
    "RETURN t.ticket_id AS ticket_id",
)

# Tickets belong to the tickets module; here they are only matched and pointed at the outage.
LINK_TICKETS = Query(
    "network_link_tickets",
    "MATCH (o:Outage {outage_id: $outage_id}) "
    "OPTIONAL MATCH (o)-[:AFFECTS]->(:Customer)-[:HAS_TICKET]->(t:Ticket) "
    "WHERE NOT coalesce(t.stage, '') IN $closed_stages "
    "FOREACH (x IN CASE WHEN t IS NULL THEN [] ELSE [t] END | MERGE (x)-[:CAUSED_BY]->(o)) "
    "RETURN o.outage_id AS outage_id, collect(DISTINCT t.ticket_id) AS tickets",
)

# ---------------------------------------------------------------- algorithms (network_algorithms)

ALL_TYPES = f"{UP_TYPES}|{DROP}"
ALL_TYPE_LIST = [t.value for t in LinkType]  # a code constant: placed into procedure configs
UP_TYPE_LIST = [LinkType.UPLINK.value, LinkType.PON.value]

_NODE_VIEW = (
    "{node_id: m.node_id, kind: m.kind, name: m.name, up: m:Up, capacity_gbps: m.capacity_gbps, "
    "customers: size([(m)<-[:CONNECTED_VIA]-(:Customer) | 1])}"
)
_LINK_VIEW = (
    "CASE WHEN r IS NULL THEN NULL ELSE {type: type(r), source: m.node_id, target: x.node_id, "
    "up: coalesce(r.up, true), capacity_gbps: r.capacity_gbps, length_m: r.length_m, "
    "backup: coalesce(r.backup, false)} END"
)

# Everything above the given nodes: every node their PON/UPLINK paths reach (and, for an ONT, the
# splitter(s) dropping to it), with every link among them. That is all a max flow from the
# backbones down to one of them can use, read in one query. Unknown ids yield empty lists.
UPWARD_CLOSURE = Query(
    "network_upward_closure",
    "UNWIND $ids AS id "
    "MATCH (t:NetNode {node_id: id}) "
    f"OPTIONAL MATCH (t)<-[:{DROP}]-(s:NetNode) "
    "WITH collect(DISTINCT t) + collect(DISTINCT s) AS starts "
    "UNWIND starts AS st "
    f"MATCH (st)-[:{UP_TYPES}*0..{MAX_UP_HOPS}]->(m:NetNode) "
    "WITH collect(DISTINCT m) AS ms "
    "UNWIND ms AS m "
    f"OPTIONAL MATCH (m)-[r:{ALL_TYPES}]->(x:NetNode) WHERE x IN ms "
    f"RETURN collect(DISTINCT {_NODE_VIEW}) AS nodes, collect({_LINK_VIEW}) AS links",
    read_only=True,
)

# The whole network in one read (critical nodes, who a failure reaches): a tenant-wide scan on
# purpose, the algorithms need every node.
WHOLE_NETWORK = Query(
    "network_whole",
    "MATCH (m:NetNode) "
    f"OPTIONAL MATCH (m)-[r:{ALL_TYPES}]->(x:NetNode) "
    f"RETURN collect(DISTINCT {_NODE_VIEW}) AS nodes, collect({_LINK_VIEW}) AS links",
    read_only=True,
)

# Where a customer's home joins the network: the access node and the splitter(s) above an ONT.
CUSTOMER_ACCESS = Query(
    "network_customer_access",
    "MATCH (c:Entity {uid: $uid}) "
    "OPTIONAL MATCH (c)-[:CONNECTED_VIA]->(a:NetNode) "
    f"OPTIONAL MATCH (a)<-[:{DROP}]-(s:NetNode) "
    "RETURN c.name AS customer, a.node_id AS access, a.kind AS access_kind, collect(s.node_id) AS splitters",
    read_only=True,
)

# FalkorDB's algo.SPpaths (checked against this build with dbms.procedures()): every fewest-hop
# path from a start node up PON/UPLINK links to the target. Without weightProp each link weighs 1;
# pathCount 0 asks for all shortest paths so the caller can break ties stably.
SHORTEST_UP_PATHS = Query(
    "network_shortest_up_paths",
    "MATCH (s:NetNode {node_id: $start}) "
    "MATCH (t:NetNode {node_id: $target}) "
    f"CALL algo.SPpaths({{sourceNode: s, targetNode: t, relTypes: {UP_TYPE_LIST!r}, "
    f"relDirection: 'outgoing', pathCount: 0, maxLen: {MAX_UP_HOPS}}}) "
    "YIELD path, pathWeight "
    "RETURN [n IN nodes(path) | n.node_id] AS ids, pathWeight AS hops",
    read_only=True,
)

# The graph's labels, relationship types and property keys: algo.MSF refuses a configuration that
# names one the graph does not have yet ("non-existent type", "unknown attribute").
SCHEMA_NAMES = Query(
    "network_schema_names",
    "CALL db.labels() YIELD label RETURN 'label' AS what, label AS name UNION ALL "
    "CALL db.relationshipTypes() YIELD relationshipType RETURN 'type' AS what, relationshipType AS name UNION ALL "
    "CALL db.propertyKeys() YIELD propertyKey RETURN 'key' AS what, propertyKey AS name",
    read_only=True,
)


def _msf(weighted: bool) -> Query:
    weight = ", weightAttribute: 'length_m'" if weighted else ""
    return Query(
        f"network_min_spanning_forest{'' if weighted else '_unweighted'}",
        f"CALL algo.MSF({{nodeLabels: ['NetNode'], relationshipTypes: $types{weight}}}) "
        "YIELD edges, nodes "
        "RETURN [e IN edges | {type: type(e), source: startNode(e).node_id, target: endNode(e).node_id, "
        "length_m: e.length_m}] AS edges, [n IN nodes | n.node_id] AS nodes",
        read_only=True,
    )


# FalkorDB's algo.MSF treats every relationship as undirected and yields one row per tree;
# $types holds network link types that exist in the graph (a subset of ALL_TYPE_LIST).
MIN_SPANNING_FOREST = _msf(True)
MIN_SPANNING_FOREST_UNWEIGHTED = _msf(False)  # no link has a length yet

PROCEDURES = Query(
    "dbms_procedures",
    "CALL dbms.procedures() YIELD name RETURN collect(name) AS names",
    read_only=True,
)

# FalkorDB 4.22's algo.maxFlow (signature read with dbms.procedures(); relationshipTypes must hold
# exactly one type). Flow runs along stored edges, so it goes from the node up UPLINK edges to the
# working backbones, through nodes labelled Up only; where every link above the node is an UPLINK
# that is up, that equals the flow from the backbones down to the node (see network_algorithms).
# defaultCapacity: the server refuses the call if any UPLINK in the graph lacks the property, even
# one the flow cannot reach; capacity() only calls it where every link above the node has one.
FALKOR_MAX_FLOW = Query(
    "network_falkor_max_flow",
    "MATCH (s:NetNode {node_id: $node}) "
    f"MATCH (b:{NodeKind.BACKBONE.value}:Up) "
    "WITH s, collect(b) AS sinks "
    f"CALL algo.maxFlow({{sourceNodes: [s], targetNodes: sinks, relationshipTypes: ['{LinkType.UPLINK.value}'], "
    "capacityProperty: 'capacity_gbps', defaultCapacity: 0, nodeLabels: ['Up']}) "
    "YIELD maxFlow RETURN maxFlow",
    read_only=True,
)

# FalkorDB's algo.HarmonicCentrality over the network links as stored (pointing up, towards the
# core): for each node the sum of 1/hops to every node it reaches upwards. The server computes it
# with HyperLogLog sketches, so it is an estimate. Like algo.MSF it refuses a type the graph does
# not have yet: $types lists the network link types that exist (a subset of ALL_TYPE_LIST).
HARMONIC_CENTRALITY = Query(
    "network_harmonic_centrality",
    "CALL algo.HarmonicCentrality({nodeLabels: ['NetNode'], relationshipTypes: $types}) "
    "YIELD node, score, reachable "
    "RETURN node.node_id AS node_id, score, reachable",
    read_only=True,
)


# ---------------------------------------------------------------- cities running short

# Each city hub that is down, has an uplink down, or has a node or link down below it (its
# exchanges and street cabinets): what a customer site shows as "degraded right now". Starts from
# the Pop label (a hub per city: a few hundred nodes at most); homes are not looked at.
DEGRADED_HUBS = Query(
    "network_degraded_hubs",
    f"MATCH (h:{NodeKind.POP.value}) "
    f"OPTIONAL MATCH (h)-[u:{LinkType.UPLINK.value}]->() "
    "WITH h, count(u) AS uplinks, sum(CASE WHEN u.up = false THEN 1 ELSE 0 END) AS uplinks_down "
    f"OPTIONAL MATCH p = (n:NetNode)-[:{UP_TYPES}*1..2]->(h) "
    "WITH h, uplinks, uplinks_down, sum(CASE WHEN p IS NULL THEN 0 "
    "WHEN n:Up AND all(r IN relationships(p) WHERE coalesce(r.up, true)) THEN 0 ELSE 1 END) AS below_down "
    "WITH h, uplinks, uplinks_down, below_down, NOT h:Up AS hub_down "
    "WHERE hub_down OR uplinks_down > 0 OR below_down > 0 "
    "RETURN h.node_id AS hub, h.name AS name, hub_down, uplinks, uplinks_down, below_down ORDER BY name",
    read_only=True,
)


# The exchanges below the given hubs (by their primary or standby uplink) with their cabinets.
HUB_EXCHANGES = Query(
    "network_hub_exchanges",
    "UNWIND $hubs AS hid "
    f"MATCH (h:NetNode {{node_id: hid}})<-[:{LinkType.UPLINK.value}]-(x:{NodeKind.OLT.value}) "
    f"OPTIONAL MATCH (x)<-[:{LinkType.PON.value}]-(s:{NodeKind.SPLITTER.value}) "
    "WITH h, x, s ORDER BY s.node_id "
    "RETURN h.node_id AS hub, x.node_id AS exchange, x.name AS name, collect(s.node_id) AS cabinets "
    "ORDER BY exchange",
    read_only=True,
)
