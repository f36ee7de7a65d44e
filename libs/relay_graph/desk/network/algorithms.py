"""Questions about the access network, each answered with the path(s) behind the answer.

- why_affected: the shortest path from a customer up to a node (FalkorDB `algo.SPpaths`), and
  whether the customer would lose service if that node failed.
- failure_reach: who a node's failure reaches, split into cut off and rerouted over a backup.
- capacity: the max flow from the backbones down to a node over nodes and links that are up,
  with a flow decomposition into paths and a minimum cut.
- critical_nodes: betweenness centrality over the network, the nodes most paths run through.
- cheapest_cabling: a minimum spanning forest weighted by cable length (FalkorDB `algo.MSF`).

Which engine answers what, and why (FalkorDB 4.22.1; `CALL dbms.procedures()` lists algo.BFS,
algo.SPpaths, algo.SSpaths, algo.MSF, algo.betweenness, algo.pageRank, algo.WCC,
algo.labelPropagation, algo.HarmonicCentrality, algo.AStar and algo.maxFlow):

- Max flow: `algo.maxFlow` gives the value where its question is ours (_falkor_max_flow_applies):
  it takes exactly one relationship type and filters nodes by label only, so it is used for a node
  all of whose links above it are UPLINKs that are up with a capacity (an OLT or a PoP), flowing up
  through nodes labelled Up to the working backbones. Paths and the cut still come from networkx on
  the same read (UPWARD_CLOSURE), which also answers every other node (an ONT's DROP and a
  splitter's PON need a second type; a link marked down has no label to filter on), the nominal
  question, and servers without the procedure (4.16.3). The tests keep networkx as the oracle.
- Betweenness: the server's `algo.betweenness` draws its source nodes at random *with replacement*
  (even with samplingSize >= node count), follows edge direction, and does not rescale: its scores
  are a sample estimate that changes with samplingSeed (tests/relay_graph/desk/test_network_algorithms.py
  keeps a canary on that). Ours are exact Brandes scores over the undirected network (links carry
  traffic both ways), equal to networkx's, computed with home boxes folded into their cabinets
  (see betweenness()). Beside them, critical_nodes reports the server's `algo.HarmonicCentrality`
  (an estimate, over links as stored) where the server has it.
- MSF and shortest paths run in FalkorDB, with exactly these calls (queries/network.py):
    CALL algo.SPpaths({sourceNode: s, targetNode: t, relTypes: ['UPLINK', 'PON'],
                       relDirection: 'outgoing', pathCount: 0, maxLen: 16}) YIELD path, pathWeight
      (no weightProp: each link weighs 1, pathWeight is the hop count; pathCount 0: all shortest)
    CALL algo.MSF({nodeLabels: ['NetNode'], relationshipTypes: $types, weightAttribute: 'length_m'})
      YIELD edges, nodes            (one row per tree; relationships taken as undirected; the server
      refuses a type, label or attribute the graph does not have yet, so $types lists only existing
      link types, and without any length_m the call goes unweighted)
    CALL algo.maxFlow({sourceNodes: [s], targetNodes: sinks, relationshipTypes: ['UPLINK'],
                       capacityProperty: 'capacity_gbps', nodeLabels: ['Up']}) YIELD maxFlow
    CALL algo.HarmonicCentrality({nodeLabels: ['NetNode'], relationshipTypes: [...]})
      YIELD node, score, reachable

Flow direction: PON and UPLINK are stored pointing up (towards the core) and DROP pointing down,
so bandwidth flows down every UPLINK/PON link (target -> source) and along every DROP link
(source -> target). A link without a capacity is limited by the smaller of its two nodes."""

from __future__ import annotations

from collections import deque

import networkx as nx

from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import InvalidInput, NotFound
from relay_graph.desk.network.store import check_node_id, customer_identity, customers_behind, get_node
from relay_graph.desk.network.graph import (
    LinkView,
    NetGraph,
    NodeView,
    load_network,
    load_upward,
    served_nodes,
)
from relay_graph.desk.network.models import (
    AffectedCustomer,
    AffectedPath,
    CableLink,
    Capacity,
    CriticalNode,
    CutLink,
    FailureReach,
    FlowPath,
    LinkType,
    NodeKind,
    SpanningForest,
)
from relay_graph.desk.queries import network as q
from relay_graph.runtime.tenancy import validate_tenant

SOURCE = "\x00core"  # the super source feeding every backbone; not a valid node id
EPS = 1e-9
MAX_TOP = 1_000
FALKOR_MAX_FLOW = "algo.maxFlow"
FALKOR_HARMONIC = "algo.HarmonicCentrality"


# ---------------------------------------------------------------- pure algorithms


def flow_digraph(g: NetGraph, *, nominal: bool = False, avoid: frozenset[str] = frozenset()) -> nx.DiGraph:
    """The network as a flow network: working links pointed downwards with their capacities, and a
    super source feeding every working backbone with unbounded capacity (no capacity attribute)."""
    d = nx.DiGraph()
    for link in g.links:
        if not g.working(link, nominal=nominal, avoid=avoid):
            continue
        u, v = g.downward(link)
        cap = g.link_capacity(link)
        if d.has_edge(u, v):  # two stored links in the same downward direction share the pair
            d[u][v]["capacity"] += cap
            d[u][v]["links"].append(link)
        else:
            d.add_edge(u, v, capacity=cap, links=[link])
    for bb in g.backbones(nominal=nominal, avoid=avoid):
        d.add_edge(SOURCE, bb)
    return d


def _decompose(flow: dict[str, dict[str, float]], target: str) -> list[FlowPath]:
    """Split a flow on a DAG into source->target paths (largest first, ties by node ids)."""
    rest = {u: {v: f for v, f in out.items() if f > EPS} for u, out in flow.items()}
    paths: list[FlowPath] = []
    while sum(rest.get(SOURCE, {}).values()) > EPS:
        path, u = [SOURCE], SOURCE
        while u != target:
            nxt = sorted(rest[u].items(), key=lambda kv: (-kv[1], kv[0]))
            if not nxt:  # cannot happen for a conserved flow on a DAG; stop rather than loop
                return paths
            u = nxt[0][0]
            path.append(u)
        amount = min(rest[a][b] for a, b in zip(path, path[1:]))
        for a, b in zip(path, path[1:]):
            rest[a][b] -= amount
            if rest[a][b] <= EPS:
                del rest[a][b]
        paths.append(FlowPath(nodes=path[1:], gbps=round(amount, 9)))
    paths.sort(key=lambda p: (-p.gbps, p.nodes))
    return paths


def max_flow(g: NetGraph, node_id: str, *, nominal: bool = False) -> Capacity:
    """The max flow from every working backbone down to `node_id` over working links, with a
    decomposition into paths and a minimum cut. A backbone's own capacity is its answer; a node
    that is down (unless nominal) gets 0."""
    node = g.nodes.get(node_id)
    if node is None:
        raise NotFound(f"unknown network node {node_id!r}", code="node_not_found")
    if not (nominal or node.up):
        return Capacity(node=node_id, max_flow_gbps=0.0, paths=[], cut=[], nominal=nominal)
    if node.kind is NodeKind.BACKBONE:
        return Capacity(node=node_id, max_flow_gbps=node.capacity_gbps,
                        paths=[FlowPath(nodes=[node_id], gbps=node.capacity_gbps)], cut=[], nominal=nominal)
    d = flow_digraph(g, nominal=nominal)
    if SOURCE not in d or node_id not in d or not nx.has_path(d, SOURCE, node_id):
        return Capacity(node=node_id, max_flow_gbps=0.0, paths=[], cut=[], nominal=nominal)
    value, flow = nx.maximum_flow(d, SOURCE, node_id)
    _, (reach, _) = nx.minimum_cut(d, SOURCE, node_id)
    cut = [CutLink(type=link.type, source=link.source, target=link.target, capacity_gbps=g.link_capacity(link))
           for u in reach for v, data in d[u].items() if v not in reach for link in data.get("links", [])]
    cut.sort(key=lambda c: (c.type.value, c.source, c.target))
    return Capacity(node=node_id, max_flow_gbps=round(float(value), 9), paths=_decompose(flow, node_id),
                    cut=cut, nominal=nominal)


def path_to_core(g: NetGraph, node_id: str, *, nominal: bool = True, avoid: frozenset[str] = frozenset(),
                 avoid_links: frozenset[tuple[str, str, str]] = frozenset(), primary_only: bool = False) -> list[str]:
    """A fewest-hop path from the node up to a backbone (over working links unless nominal), ties
    broken by node ids; [] when there is none."""
    if node_id not in g.nodes or node_id in avoid or not (nominal or g.nodes[node_id].up):
        return []
    above: dict[str, list[str]] = {}
    for link in g.links:
        if g.working(link, nominal=nominal, avoid=avoid, avoid_links=avoid_links, primary_only=primary_only):
            u, v = g.downward(link)
            above.setdefault(v, []).append(u)
    prev: dict[str, str | None] = {node_id: None}
    todo = deque([node_id])
    while todo:
        u = todo.popleft()
        if g.nodes[u].kind is NodeKind.BACKBONE:
            path = [u]
            while prev[path[-1]] is not None:
                path.append(prev[path[-1]])
            return path[::-1]
        for v in sorted(above.get(u, ())):
            if v not in prev:
                prev[v] = u
                todo.append(v)
    return []


def customers_below(g: NetGraph) -> dict[str, int]:
    """For every node, how many customers hang off it or anything below it (nominal topology)."""
    below: dict[str, set[str]] = {}
    for link in g.links:
        u, v = g.downward(link)
        below.setdefault(u, set()).add(v)
    memo: dict[str, frozenset[str]] = {}

    def under(n: str) -> frozenset[str]:
        # iterative post-order: network depth is small but a bad graph must not blow the stack
        stack = [(n, False)]
        while stack:
            x, done = stack.pop()
            if x in memo:
                continue
            if done:
                acc = {x}
                for y in below.get(x, ()):
                    acc |= memo.get(y, frozenset({y}))
                memo[x] = frozenset(acc)
            else:
                stack.append((x, True))
                stack.extend((y, False) for y in below.get(x, ()) if y not in memo)
        return memo[n]

    return {n: sum(g.nodes[x].customers for x in under(n)) for n in g.nodes}


def betweenness(g: NetGraph) -> dict[str, float]:
    """Exact betweenness over the undirected network (every node and link, whatever its status),
    as unnormalised pair counts: the same numbers as networkx's
    betweenness_centrality(G, normalized=False), which for an undirected graph counts each
    unordered pair once.

    Why not networkx itself: most nodes are home boxes hanging off one cabinet (leaves), and
    Brandes' algorithm costs a BFS per node, so a region with 2,000 homes took about a minute. A
    leaf's shortest paths all run through its neighbour, so leaves fold into their neighbour as an
    endpoint weight (Brandes with weighted endpoints over the much smaller infrastructure graph) and
    their own pairs are counted in closed form. tests/relay_graph/desk/test_network_algorithms.py checks
    it against networkx and against the pair-by-pair definition."""
    adj: dict[str, set[str]] = {n: set() for n in g.nodes}
    for link in g.links:
        adj[link.source].add(link.target)
        adj[link.target].add(link.source)
    comp: dict[str, int] = {}  # component sizes: pairs across components have no paths
    for start in sorted(adj):
        if start in comp:
            continue
        members, todo = {start}, deque([start])
        while todo:
            for v in adj[todo.popleft()]:
                if v not in members:
                    members.add(v)
                    todo.append(v)
        comp.update(dict.fromkeys(members, len(members)))
    leaves: dict[str, int] = {}
    folded: set[str] = set()
    for v, near in adj.items():
        if len(near) == 1:
            (u,) = near
            if len(adj[u]) > 1:
                folded.add(v)
                leaves[u] = leaves.get(u, 0) + 1
    core = sorted(v for v in adj if v not in folded)
    weight = {v: 1 + leaves.get(v, 0) for v in core}
    near_core = {v: sorted(u for u in adj[v] if u not in folded) for v in core}
    score = dict.fromkeys(g.nodes, 0.0)
    for s in core:
        order: list[str] = []
        pred: dict[str, list[str]] = {s: []}
        sigma, dist = {s: 1}, {s: 0}
        todo = deque([s])
        while todo:
            v = todo.popleft()
            order.append(v)
            for x in near_core[v]:
                if x not in dist:
                    dist[x], sigma[x], pred[x] = dist[v] + 1, 0, []
                    todo.append(x)
                if dist[x] == dist[v] + 1:
                    sigma[x] += sigma[v]
                    pred[x].append(v)
        delta = dict.fromkeys(order, 0.0)
        for x in reversed(order):
            for v in pred[x]:
                delta[v] += sigma[v] / sigma[x] * (weight[x] + delta[x])
            if x != s:
                score[x] += weight[s] * delta[x]
    for v in core:
        score[v] /= 2  # every unordered pair was counted from both ends
    for u, n in leaves.items():
        # a leaf's pairs with everything else in its component, and with its fellow leaves
        score[u] += n * (comp[u] - 1 - n) + n * (n - 1) / 2
    return score


def rank_critical(g: NetGraph, top: int) -> list[CriticalNode]:
    scores = betweenness(g)
    n = len(g.nodes)
    pairs = (n - 1) * (n - 2) / 2
    behind = customers_below(g)
    best = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return [
        CriticalNode(node_id=nid, kind=g.nodes[nid].kind, name=g.nodes[nid].name, score=round(s, 9),
                     normalised=round(s / pairs, 12) if pairs > 0 else 0.0, customers_behind=behind[nid],
                     path_to_core=path_to_core(g, nid))
        for nid, s in best
    ]


def _falkor_max_flow_applies(g: NetGraph, node_id: str, procedures: frozenset[str]) -> bool:
    """algo.maxFlow pushes flow along stored edges of one type (node -> backbones over UPLINK) and
    filters nodes by label only: it answers our question when the node is up and not a backbone,
    every link of its upward read is an UPLINK that is up with its own capacity (so no PON or DROP
    is needed and none is down), a working backbone is above it, and the server registers it."""
    node = g.nodes.get(node_id)
    if FALKOR_MAX_FLOW not in procedures or node is None or not node.up or node.kind is NodeKind.BACKBONE:
        return False
    if not g.backbones():
        return False  # the server refuses a call without sinks
    return all(link.type is LinkType.UPLINK and link.up and link.capacity_gbps is not None for link in g.links)


# ---------------------------------------------------------------- reading the graph


async def server_procedures(client: GraphClient, tenant: str) -> frozenset[str]:
    """The procedures the server registers (`CALL dbms.procedures()`), read once per client."""
    kept: dict[str, frozenset[str]] = client.kept("desk.network_algorithms.procedures", dict)
    if "names" not in kept:
        rows = await client.run(tenant, q.PROCEDURES)
        kept["names"] = frozenset(rows[0]["names"] if rows else [])
    return kept["names"]


# ---------------------------------------------------------------- the questions


async def capacity(client: GraphClient, tenant: str, node_id: str, *, nominal: bool = False) -> Capacity:
    """How much bandwidth can reach the node from the backbones through nodes and links that are up
    (with `nominal`, as if everything were up). One read of the subgraph above the node."""
    validate_tenant(tenant)
    g = await load_upward(client, tenant, [check_node_id(node_id)])
    result = max_flow(g, node_id, nominal=nominal)
    if not nominal and _falkor_max_flow_applies(g, node_id, await server_procedures(client, tenant)):
        rows = await client.run(tenant, q.FALKOR_MAX_FLOW, {"node": node_id})
        if rows and rows[0]["maxFlow"] is not None:
            result = result.model_copy(update={"max_flow_gbps": float(rows[0]["maxFlow"]),
                                               "engine": "falkordb algo.maxFlow"})
    return result


async def customer_access(client: GraphClient, tenant: str, customer: str) -> tuple[str, str, NodeKind, list[str]]:
    """(customer name, access node id, its kind, splitters dropping to it). NotFound for an unknown
    customer (customer_not_found) or one without a line (customer_not_connected)."""
    validate_tenant(tenant)
    _, _, uid = customer_identity(customer)
    rows = await client.run(tenant, q.CUSTOMER_ACCESS, {"uid": uid})
    if not rows:
        raise NotFound(f"unknown customer {customer!r}", code="customer_not_found")
    access = next((r for r in rows if r["access"] is not None), None)
    if access is None:
        raise NotFound(f"customer {customer!r} has no line", code="customer_not_connected")
    splitters = sorted({s for r in rows if r["access"] == access["access"] for s in r["splitters"] if s})
    return access["customer"], access["access"], NodeKind(access["access_kind"]), splitters


async def why_affected(client: GraphClient, tenant: str, customer: str, node_id: str) -> AffectedPath:
    """Why a customer is (or is not) affected by a node: the fewest-hop path from the customer up to
    the node (algo.SPpaths from the splitter or OLT their home hangs off), and whether, with that
    node failed on top of the network's current state, no working path reaches a backbone."""
    validate_tenant(tenant)
    node_id = check_node_id(node_id)
    name, access, kind, splitters = await customer_access(client, tenant, customer)
    await get_node(client, tenant, node_id)  # NotFound for an unknown node
    candidates: list[list[str]] = []
    if node_id == access:
        candidates.append([access])
    else:
        starts = splitters if kind is NodeKind.ONT and splitters else [access]
        for start in starts:
            head = [access] if start != access else []
            if start == node_id:
                candidates.append(head + [start])
                continue
            for r in await client.run(tenant, q.SHORTEST_UP_PATHS, {"start": start, "target": node_id}):
                candidates.append(head + list(r["ids"]))
    best = min(candidates, key=lambda p: (len(p), p)) if candidates else []
    g = await load_upward(client, tenant, [access])
    avoid = frozenset({node_id})
    cut_off = access not in served_nodes(g, avoid=avoid)
    alternative = [] if cut_off else path_to_core(g, access, nominal=False, avoid=avoid)
    path = [name] + best if best else []
    return AffectedPath(customer=name, node=node_id, behind=bool(best), path=path, hops=max(len(path) - 1, 0),
                        cut_off=cut_off, alternative=alternative)


async def failure_reach(client: GraphClient, tenant: str, node_id: str, depth: int | None = None) -> FailureReach:
    """Who the node's failure reaches: every customer behind it (customers_behind, same depth rule,
    same paths), split into those it cuts off and those a backup path still serves."""
    behind = await customers_behind(client, tenant, node_id, depth)
    if not behind:
        return FailureReach(node=node_id, cut_off=[], rerouted=[])
    g = await load_upward(client, tenant, [a.path[0] for a in behind])
    served = served_nodes(g, avoid=frozenset({node_id}))
    cut: list[AffectedCustomer] = []
    rerouted: list[AffectedCustomer] = []
    for a in behind:
        (rerouted if a.path[0] in served and a.path[0] != node_id else cut).append(a)
    return FailureReach(node=node_id, cut_off=cut, rerouted=rerouted)


async def critical_nodes(client: GraphClient, tenant: str, top: int = 10) -> list[CriticalNode]:
    """The `top` nodes most shortest paths run through (betweenness; see betweenness()), each with
    the customers behind it and its path to the core. Ties by node id."""
    validate_tenant(tenant)
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= MAX_TOP:
        raise InvalidInput(f"top must be a whole number from 1 to {MAX_TOP}")
    ranked = rank_critical(await load_network(client, tenant), top)
    if ranked and FALKOR_HARMONIC in await server_procedures(client, tenant):
        scores = await harmonic_centrality(client, tenant)
        ranked = [c.model_copy(update={"harmonic": scores.get(c.node_id)}) for c in ranked]
    return ranked


async def schema_names(client: GraphClient, tenant: str) -> dict[str, set[str]]:
    """The graph's labels, relationship types and property keys: {"label"|"type"|"key": names}."""
    names: dict[str, set[str]] = {}
    for r in await client.run(tenant, q.SCHEMA_NAMES):
        names.setdefault(r["what"], set()).add(r["name"])
    return names


async def harmonic_centrality(client: GraphClient, tenant: str) -> dict[str, float]:
    """FalkorDB's algo.HarmonicCentrality of every network node (see HARMONIC_CENTRALITY)."""
    validate_tenant(tenant)
    names = await schema_names(client, tenant)
    types = [t for t in q.ALL_TYPE_LIST if t in names.get("type", set())]
    if "NetNode" not in names.get("label", set()):
        return {}
    rows = await client.run(tenant, q.HARMONIC_CENTRALITY, {"types": types})
    return {r["node_id"]: float(r["score"]) for r in rows}


async def cheapest_cabling(client: GraphClient, tenant: str) -> SpanningForest:
    """The cheapest cabling that keeps every connected part of the network connected: a minimum
    spanning forest over all network links (whatever their status), weighted by cable length
    (FalkorDB algo.MSF; a link without a length is used only where nothing else connects)."""
    validate_tenant(tenant)
    names = await schema_names(client, tenant)
    types = [t for t in q.ALL_TYPE_LIST if t in names.get("type", set())]
    if "NetNode" not in names.get("label", set()):
        return SpanningForest(edges=[], total_length_m=0.0, trees=0, nodes=0)
    weighted = "length_m" in names.get("key", set())
    query = q.MIN_SPANNING_FOREST if weighted else q.MIN_SPANNING_FOREST_UNWEIGHTED
    rows = await client.run(tenant, query, {"types": types})
    edges = [CableLink(type=LinkType(e["type"]), source=e["source"], target=e["target"],
                       length_m=None if e["length_m"] is None else float(e["length_m"]))
             for r in rows for e in r["edges"]]
    edges.sort(key=lambda e: (e.type.value, e.source, e.target))
    total = round(sum(e.length_m or 0.0 for e in edges), 6)
    return SpanningForest(edges=edges, total_length_m=total, trees=len(rows),
                          nodes=sum(len(r["nodes"]) for r in rows))


__all__ = [
    "LinkView",
    "NetGraph",
    "NodeView",
    "betweenness",
    "capacity",
    "cheapest_cabling",
    "critical_nodes",
    "customer_access",
    "customers_below",
    "failure_reach",
    "flow_digraph",
    "harmonic_centrality",
    "load_network",
    "load_upward",
    "max_flow",
    "path_to_core",
    "rank_critical",
    "served_nodes",
    "server_procedures",
    "why_affected",
]
