"""Network algorithms: hand-built networks with known answers, and random networks checked against
independent methods (a brute-force minimum cut, networkx's Edmonds-Karp on a flow network the test
builds itself, a pair-by-pair betweenness count, networkx's minimum spanning tree).

Hand-built network (capacities in Gbps, lengths in km unless marked m):

    bb1 <-100,10- popA -40,30 (standby)-> bb2 <-100,20- popB
          popA <-20,5- oltA1 <-10,1- splA1 -DROP 1,50m-> ontX (Asha)
          popA <-20,6- oltA2 -10,25 (standby)-> popB
                       oltA2 <-2.5,0.8- splA2 -DROP 1,60m-> ontY (Bilal)
          popB <-20,4- oltB1 <-2.5,0.5- splB1 -DROP 1,70m-> ontZ (Chen)
"""

from __future__ import annotations

import itertools
import random
from collections import deque

import networkx as nx
import pytest
from networkx.algorithms.flow import edmonds_karp

from relay_graph.desk.network import store as net
from relay_graph.desk.network import algorithms as alg
from relay_graph.runtime.errors import InvalidInput, NotFound
from relay_graph.lab.network_gen import generate_network
from relay_graph.desk.network.models import LinkIn, LinkType, NetNodeIn, NodeKind
from relay_graph.runtime.queries import Query
from relay_graph.desk.queries import network as q
from tests.support import register

BB, POP, OLT, SPL, ONT = NodeKind.BACKBONE, NodeKind.POP, NodeKind.OLT, NodeKind.SPLITTER, NodeKind.ONT
UP, PON, DROP = LinkType.UPLINK, LinkType.PON, LinkType.DROP

HAND_NODES = [("bb1", BB, 400), ("bb2", BB, 400), ("popA", POP, 200), ("popB", POP, 200),
              ("oltA1", OLT, 40), ("oltA2", OLT, 40), ("oltB1", OLT, 40),
              ("splA1", SPL, 10), ("splA2", SPL, 2.5), ("splB1", SPL, 2.5),
              ("ontX", ONT, 1), ("ontY", ONT, 1), ("ontZ", ONT, 1)]
# (type, source, target, capacity, length m, backup)
HAND_LINKS = [(UP, "popA", "bb1", 100, 10_000, False), (UP, "popA", "bb2", 40, 30_000, True),
              (UP, "popB", "bb2", 100, 20_000, False), (UP, "oltA1", "popA", 20, 5_000, False),
              (UP, "oltA2", "popA", 20, 6_000, False), (UP, "oltA2", "popB", 10, 25_000, True),
              (UP, "oltB1", "popB", 20, 4_000, False), (PON, "splA1", "oltA1", 10, 1_000, False),
              (PON, "splA2", "oltA2", 2.5, 800, False), (PON, "splB1", "oltB1", 2.5, 500, False),
              (DROP, "splA1", "ontX", 1, 50, False), (DROP, "splA2", "ontY", 1, 60, False),
              (DROP, "splB1", "ontZ", 1, 70, False)]
HOMES = [("Asha", "ontX"), ("Bilal", "ontY"), ("Chen", "ontZ")]


async def build(client, tenant, nodes, links, homes=()):
    await net.upsert_nodes(client, tenant, [
        NetNodeIn(node_id=n[0], kind=n[1], name=n[0], capacity_gbps=n[2], up=n[3] if len(n) > 3 else True)
        for n in nodes])
    await net.upsert_links(client, tenant, [
        LinkIn(type=t, source=s, target=d, capacity_gbps=c, length_m=m, backup=b, up=u)
        for t, s, d, c, m, b, *rest in links for u in [rest[0] if rest else True]])
    if homes:
        await net.attach_customers(client, tenant, list(homes))


def hand_graph(down_nodes=(), down_links=()) -> alg.NetGraph:
    return alg.NetGraph.from_rows(
        [{"node_id": i, "kind": k.value, "up": i not in down_nodes, "capacity_gbps": c} for i, k, c in HAND_NODES],
        [{"type": t.value, "source": s, "target": d, "capacity_gbps": c, "length_m": m, "backup": b,
          "up": (s, d) not in down_links} for t, s, d, c, m, b in HAND_LINKS])


# ---------------------------------------------------------------- independent references


def reference_flow_network(nodes, links):
    """The test's own flow network: working links pointed from the core down, a super source 'S'."""
    up = {n[0]: (n[3] if len(n) > 3 else True) for n in nodes}
    cap_of = {n[0]: n[2] for n in nodes}
    kinds = {n[0]: n[1] for n in nodes}
    d = nx.DiGraph()
    d.add_nodes_from(up)
    for t, s, tg, c, _m, _b, *rest in links:
        link_up = rest[0] if rest else True
        if not (link_up and up[s] and up[tg]):
            continue
        u, v = (s, tg) if t is DROP else (tg, s)
        cap = c if c is not None else min(cap_of[s], cap_of[tg])
        if d.has_edge(u, v):
            d[u][v]["capacity"] += cap
        else:
            d.add_edge(u, v, capacity=cap)
    for n, k in kinds.items():
        if k is BB and up[n]:
            d.add_edge("S", n, capacity=float("inf"))
    return d


def brute_force_min_cut(d: nx.DiGraph, s: str, t: str) -> float:
    """Try every source side: the cheapest set of edges leaving it."""
    middle = [n for n in d.nodes if n not in (s, t)]
    best = float("inf")
    for r in range(len(middle) + 1):
        for side in itertools.combinations(middle, r):
            src = {s, *side}
            cut = sum(data["capacity"] for u, v, data in d.edges(data=True) if u in src and v not in src)
            best = min(best, cut)
    return best


def pairwise_betweenness(g: nx.Graph) -> dict[str, float]:
    """Betweenness from its definition: for each unordered pair, the share of its shortest paths
    through each other node (path counts by BFS from both ends)."""
    def bfs(src):
        dist, sigma, todo = {src: 0}, {src: 1}, deque([src])
        while todo:
            u = todo.popleft()
            for v in g[u]:
                if v not in dist:
                    dist[v], sigma[v] = dist[u] + 1, 0
                    todo.append(v)
                if dist[v] == dist[u] + 1:
                    sigma[v] += sigma[u]
        return dist, sigma

    info = {n: bfs(n) for n in g.nodes}
    score = {n: 0.0 for n in g.nodes}
    for s, t in itertools.combinations(sorted(g.nodes), 2):
        ds, ss = info[s]
        if t not in ds:
            continue
        dt, st = info[t]
        for v in g.nodes:
            if v in (s, t) or v not in ds or v not in dt:
                continue
            if ds[v] + dt[v] == ds[t]:
                score[v] += ss[v] * st[v] / ss[t]
    return score


def random_network(rng: random.Random, *, small: bool = False):
    """A random network that respects the link rules: backbones, hubs (some aggregating into an
    earlier hub), exchanges with one to three uplinks, cabinets (some cascaded), home boxes with one
    or two drops; random capacities (some missing), lengths, and things down."""
    top = 2 if small else 3
    counts = {BB: rng.randint(1, top), POP: rng.randint(1, top + 1), OLT: rng.randint(1, top + 2),
              SPL: rng.randint(1, top + 2), ONT: rng.randint(0, top)}
    prefix = {BB: "bb", POP: "pop", OLT: "olt", SPL: "spl", ONT: "ont"}
    ids = {k: [f"{prefix[k]}{i}" for i in range(n)] for k, n in counts.items()}
    nodes = [(i, k, rng.choice([1, 2.5, 10, 40, 100]), rng.random() > 0.12) for k in ids for i in ids[k]]
    links = []

    def add(t, s, d):
        cap = None if rng.random() < 0.15 else rng.choice([1, 2, 2.5, 5, 10, 20, 40])
        links.append((t, s, d, cap, float(rng.randint(10, 5000)), False, rng.random() > 0.12))

    for i, p in enumerate(ids[POP]):
        for b in rng.sample(ids[BB], rng.randint(1, len(ids[BB]))):
            add(UP, p, b)
        if i and rng.random() < 0.3:
            add(UP, p, ids[POP][rng.randrange(i)])
    for o in ids[OLT]:
        for p in rng.sample(ids[POP], rng.randint(1, min(3, len(ids[POP])))):
            add(UP, o, p)
    for i, s in enumerate(ids[SPL]):
        if i and rng.random() < 0.25:
            add(PON, s, ids[SPL][rng.randrange(i)])
        else:
            for o in rng.sample(ids[OLT], rng.randint(1, min(2, len(ids[OLT])))):
                add(PON, s, o)
    for o in ids[ONT]:
        for s in rng.sample(ids[SPL], rng.randint(1, min(2, len(ids[SPL])))):
            add(DROP, s, o)
    return nodes, links


def as_graph(nodes, links) -> alg.NetGraph:
    return alg.NetGraph.from_rows(
        [{"node_id": i, "kind": k.value, "up": u, "capacity_gbps": c} for i, k, c, u in nodes],
        [{"type": t.value, "source": s, "target": d, "capacity_gbps": c, "length_m": m, "backup": b, "up": u}
         for t, s, d, c, m, b, u in links])


def check_flow(g: alg.NetGraph, cap) -> None:
    """A flow decomposition is valid: each path runs over working links from a backbone down to the
    node, per-link loads stay within capacity, path flows add up to the value; the cut's
    capacities add up to it too, and removing the cut links leaves the node without service."""
    assert sum(p.gbps for p in cap.paths) == pytest.approx(cap.max_flow_gbps, abs=1e-6)
    load: dict[tuple[str, str], float] = {}
    down = {}
    for link in g.links:
        if g.working(link):
            u, v = g.downward(link)
            down[(u, v)] = down.get((u, v), 0.0) + g.link_capacity(link)
    for p in cap.paths:
        assert g.nodes[p.nodes[0]].kind is BB and p.nodes[-1] == cap.node and p.gbps > 0
        for u, v in zip(p.nodes, p.nodes[1:]):
            assert (u, v) in down
            load[(u, v)] = load.get((u, v), 0.0) + p.gbps
    assert all(load[e] <= down[e] + 1e-6 for e in load)
    if g.nodes[cap.node].kind is not BB:
        assert sum(c.capacity_gbps for c in cap.cut) == pytest.approx(cap.max_flow_gbps, abs=1e-6)
        if cap.max_flow_gbps > 0:
            cut = frozenset((c.type.value, c.source, c.target) for c in cap.cut)
            assert cap.node not in alg.served_nodes(g, avoid_links=cut)


# ---------------------------------------------------------------- pure: max flow


def test_max_flow_hand_built_known_answers():
    g = hand_graph()
    pop = alg.max_flow(g, "popA")
    assert pop.max_flow_gbps == 140
    assert [(p.nodes, p.gbps) for p in pop.paths] == [(["bb1", "popA"], 100), (["bb2", "popA"], 40)]
    assert [(c.source, c.target) for c in pop.cut] == [("popA", "bb1"), ("popA", "bb2")]
    olt = alg.max_flow(g, "oltA2")  # its own uplink (20) plus the standby via popB (10)
    assert olt.max_flow_gbps == 30
    assert sorted((c.source, c.target, c.capacity_gbps) for c in olt.cut) == [
        ("oltA2", "popA", 20), ("oltA2", "popB", 10)]
    ont = alg.max_flow(g, "ontY")
    assert ont.max_flow_gbps == 1 and [(c.type, c.source) for c in ont.cut] == [(DROP, "splA2")]
    assert ont.paths[0].nodes[-3:] == ["oltA2", "splA2", "ontY"]
    assert alg.max_flow(g, "splA2").max_flow_gbps == 2.5
    assert alg.max_flow(g, "bb1").max_flow_gbps == 400
    for nid in g.nodes:
        check_flow(g, alg.max_flow(g, nid))


def test_max_flow_follows_what_is_down():
    g = hand_graph(down_links={("popA", "bb1")})
    assert alg.max_flow(g, "popA").max_flow_gbps == 40
    assert alg.max_flow(g, "oltA1").max_flow_gbps == 20
    assert alg.max_flow(g, "popA", nominal=True).max_flow_gbps == 140
    g = hand_graph(down_nodes={"popA"})
    assert alg.max_flow(g, "oltA1").max_flow_gbps == 0 and alg.max_flow(g, "oltA1").paths == []
    assert alg.max_flow(g, "oltA2").max_flow_gbps == 10
    assert alg.max_flow(g, "popA").max_flow_gbps == 0
    g = hand_graph(down_nodes={"bb2"})
    assert alg.max_flow(g, "popB").max_flow_gbps == 0
    assert alg.max_flow(g, "oltA2").max_flow_gbps == 20
    with pytest.raises(NotFound):
        alg.max_flow(g, "nope")


@pytest.mark.parametrize("seed", range(30))
def test_max_flow_matches_brute_force_min_cut(seed):
    rng = random.Random(seed)
    nodes, links = random_network(rng, small=True)
    g = as_graph(nodes, links)
    ref = reference_flow_network(nodes, links)
    for nid, kind, _, _ in nodes:
        if kind is BB:
            continue
        cap = alg.max_flow(g, nid)
        expected = brute_force_min_cut(ref, "S", nid) if g.nodes[nid].up else 0.0
        assert cap.max_flow_gbps == pytest.approx(expected, abs=1e-6), (seed, nid)
        check_flow(g, cap)


# ---------------------------------------------------------------- pure: betweenness, paths


def test_betweenness_known_answers_and_normalisation():
    # a path bb - pop - olt - spl: pop lies on 2 pairs' paths (bb-olt, bb-spl), olt on 2
    g = alg.NetGraph.from_rows(
        [{"node_id": i, "kind": k.value, "capacity_gbps": 1} for i, k in
         [("bb", BB), ("pop", POP), ("olt", OLT), ("spl", SPL)]],
        [{"type": t.value, "source": s, "target": d} for t, s, d in
         [(UP, "pop", "bb"), (UP, "olt", "pop"), (PON, "spl", "olt")]])
    assert alg.betweenness(g) == {"bb": 0.0, "pop": 2.0, "olt": 2.0, "spl": 0.0}
    top = alg.rank_critical(g, 2)
    assert [(c.node_id, c.score) for c in top] == [("olt", 2.0), ("pop", 2.0)]
    assert [c.normalised for c in top] == pytest.approx([2 / 3, 2 / 3])  # 2 of the 3 pairs not involving it
    assert top[1].path_to_core == ["pop", "bb"]


@pytest.mark.parametrize("seed", range(10))
def test_betweenness_matches_the_definition(seed):
    nodes, links = random_network(random.Random(100 + seed))
    g = as_graph(nodes, links)
    u = nx.Graph()
    u.add_nodes_from(n[0] for n in nodes)
    u.add_edges_from((s, d) for _, s, d, *_ in links)
    scores = alg.betweenness(g)
    assert scores == pytest.approx(pairwise_betweenness(u))
    assert scores == pytest.approx(nx.betweenness_centrality(u, normalized=False))


@pytest.mark.parametrize("seed", range(20))
def test_betweenness_with_many_leaves_matches_networkx(seed):
    """Trees and meshes with leaves hanging everywhere, lone edges and isolated nodes: the folding of
    leaves must not change a single score."""
    rng = random.Random(seed)
    u = nx.gnm_random_graph(rng.randint(2, 12), rng.randint(1, 20), seed=seed)
    u = nx.relabel_nodes(u, {n: f"n{n}" for n in u.nodes})
    for i in range(rng.randint(0, 25)):
        u.add_edge(f"leaf{i}", rng.choice(sorted(u.nodes)))
    u.add_edge("lone-a", "lone-b")
    u.add_node("alone")
    g = alg.NetGraph.from_rows([{"node_id": n, "kind": "Olt", "capacity_gbps": 1} for n in u.nodes],
                               [{"type": "UPLINK", "source": a, "target": b} for a, b in u.edges])
    assert alg.betweenness(g) == pytest.approx(nx.betweenness_centrality(u, normalized=False))
    assert alg.betweenness(g) == pytest.approx(pairwise_betweenness(u))


def test_paths_to_core_and_service():
    g = hand_graph(down_links={("popA", "bb1")})
    assert alg.path_to_core(g, "ontX") == ["ontX", "splA1", "oltA1", "popA", "bb1"]
    assert alg.path_to_core(g, "ontX", nominal=False) == ["ontX", "splA1", "oltA1", "popA", "bb2"]
    assert alg.path_to_core(g, "ontX", nominal=False, primary_only=True) == []
    assert alg.path_to_core(g, "ontY", nominal=False, avoid=frozenset({"popA"})) == [
        "ontY", "splA2", "oltA2", "popB", "bb2"]
    served = alg.served_nodes(g, avoid=frozenset({"oltA1"}))
    assert "ontX" not in served and {"ontY", "ontZ", "popA"} <= served
    assert alg.customers_below(alg.NetGraph.from_rows(
        [{"node_id": i, "kind": k.value, "capacity_gbps": c, "customers": 1 if k is ONT else 0}
         for i, k, c in HAND_NODES],
        [{"type": t.value, "source": s, "target": d} for t, s, d, *_ in HAND_LINKS]))["popA"] == 2


def test_falkor_max_flow_is_used_only_where_it_means_the_same():
    g = hand_graph()
    has = frozenset({alg.FALKOR_MAX_FLOW})
    assert not alg._falkor_max_flow_applies(g, "popA", frozenset())  # not registered
    assert not alg._falkor_max_flow_applies(g, "popA", has)  # 2.5 Gbps links are not whole numbers
    whole = alg.NetGraph.from_rows(
        [{"node_id": i, "kind": k.value, "capacity_gbps": c} for i, k, c in HAND_NODES[:7]],
        [{"type": t.value, "source": s, "target": d, "capacity_gbps": c} for t, s, d, c, *_ in HAND_LINKS[:7]])
    assert alg._falkor_max_flow_applies(whole, "oltA2", has)
    assert not alg._falkor_max_flow_applies(whole, "bb1", has)
    assert not alg._falkor_max_flow_applies(hand_graph(down_links={("popA", "bb1")}), "ontX", has)


# ---------------------------------------------------------------- real FalkorDB


async def test_server_registers_what_we_call(graph_client, tenant):
    procs = await alg.server_procedures(graph_client, tenant)
    assert {"algo.SPpaths", "algo.MSF", "algo.betweenness", "algo.BFS"} <= procs
    await build(graph_client, tenant, HAND_NODES, HAND_LINKS, HOMES)
    cap = await alg.capacity(graph_client, tenant, "popA")
    assert cap.engine == ("falkordb algo.maxFlow" if "algo.maxFlow" in procs else "networkx")


async def test_capacity_on_hand_built_network(graph_client, tenant):
    await build(graph_client, tenant, HAND_NODES, HAND_LINKS, HOMES)
    cap = await alg.capacity(graph_client, tenant, "popA")
    assert (cap.max_flow_gbps, [p.nodes for p in cap.paths]) == (140, [["bb1", "popA"], ["bb2", "popA"]])
    assert (await alg.capacity(graph_client, tenant, "oltA2")).max_flow_gbps == 30
    assert (await alg.capacity(graph_client, tenant, "ontY")).max_flow_gbps == 1
    await net.set_link_status(graph_client, tenant, UP, "popA", "bb1", up=False)
    assert (await alg.capacity(graph_client, tenant, "popA")).max_flow_gbps == 40
    assert (await alg.capacity(graph_client, tenant, "popA", nominal=True)).max_flow_gbps == 140
    await net.set_node_status(graph_client, tenant, "popA", up=False)
    assert (await alg.capacity(graph_client, tenant, "oltA2")).max_flow_gbps == 10
    assert (await alg.capacity(graph_client, tenant, "oltA1")).max_flow_gbps == 0
    with pytest.raises(NotFound):
        await alg.capacity(graph_client, tenant, "nope")


async def test_capacity_matches_networkx_on_random_networks(graph_client, tenant):
    engines: dict[str, int] = {}
    for seed in range(30):
        rng = random.Random(1000 + seed)
        nodes, links = random_network(rng)
        t = f"{tenant}-r{seed}"
        await register(graph_client.redis, t)
        await build(graph_client, t, nodes, links)
        ref = reference_flow_network(nodes, links)
        for nid, kind, ncap, up in nodes:
            got = await alg.capacity(graph_client, t, nid)
            if kind is BB:
                expected = ncap if up else 0.0
            elif not up or "S" not in ref or not nx.has_path(ref, "S", nid):
                expected = 0.0
            else:
                expected = nx.maximum_flow_value(ref, "S", nid, flow_func=edmonds_karp)
            assert got.max_flow_gbps == pytest.approx(expected, abs=1e-6), (seed, nid, got.engine)
            engines[got.engine] = engines.get(got.engine, 0) + 1
    # both engines answered, and agreed with the oracle: algo.maxFlow where the question is its own
    assert engines["networkx"] and engines.get("falkordb algo.maxFlow", 0) > 20, engines


async def test_why_a_customer_is_affected(graph_client, tenant):
    await build(graph_client, tenant, HAND_NODES, HAND_LINKS, HOMES)
    asha = await alg.why_affected(graph_client, tenant, "asha", "popA")
    assert (asha.behind, asha.path, asha.hops, asha.cut_off) == (
        True, ["Asha", "ontX", "splA1", "oltA1", "popA"], 4, True)
    assert asha.alternative == []
    core = await alg.why_affected(graph_client, tenant, "Asha", "bb1")
    assert core.path == ["Asha", "ontX", "splA1", "oltA1", "popA", "bb1"] and not core.cut_off
    assert core.alternative == ["ontX", "splA1", "oltA1", "popA", "bb2"]
    bilal = await alg.why_affected(graph_client, tenant, "Bilal", "popA")
    assert bilal.behind and not bilal.cut_off and bilal.alternative == ["ontY", "splA2", "oltA2", "popB", "bb2"]
    # both ways up from oltA2 are two hops to bb2: the tie goes to the lower node ids
    assert (await alg.why_affected(graph_client, tenant, "Bilal", "bb2")).path == [
        "Bilal", "ontY", "splA2", "oltA2", "popA", "bb2"]
    own = await alg.why_affected(graph_client, tenant, "Bilal", "ontY")
    assert (own.path, own.cut_off) == (["Bilal", "ontY"], True)
    cab = await alg.why_affected(graph_client, tenant, "Chen", "splB1")
    assert cab.path == ["Chen", "ontZ", "splB1"] and cab.cut_off
    other = await alg.why_affected(graph_client, tenant, "Chen", "popA")
    assert (other.behind, other.path, other.cut_off) == (False, [], False)
    with pytest.raises(NotFound):
        await alg.why_affected(graph_client, tenant, "Nobody", "popA")
    with pytest.raises(NotFound):
        await alg.why_affected(graph_client, tenant, "Asha", "nope")


async def test_failure_reach_splits_cut_off_from_rerouted(graph_client, tenant):
    await build(graph_client, tenant, HAND_NODES, HAND_LINKS, HOMES)
    reach = await alg.failure_reach(graph_client, tenant, "popA")
    assert [a.customer for a in reach.cut_off] == ["Asha"]
    assert [(a.customer, a.path) for a in reach.rerouted] == [("Bilal", ["ontY", "splA2", "oltA2", "popA"])]
    assert [a.customer for a in (await alg.failure_reach(graph_client, tenant, "bb1")).rerouted] == ["Asha", "Bilal"]
    bb2 = await alg.failure_reach(graph_client, tenant, "bb2")  # Bilal still reaches bb1 through popA
    assert ([a.customer for a in bb2.cut_off], [a.customer for a in bb2.rerouted]) == (["Chen"], ["Asha", "Bilal"])
    assert (await alg.failure_reach(graph_client, tenant, "splA2", depth=0)).cut_off == []


async def test_critical_nodes_match_networkx_on_the_same_graph(graph_client, tenant):
    s = await generate_network(graph_client, tenant, seed=3, cities=[("Pune", ["Kothrud", "Baner"]),
                               ("Mumbai", ["Andheri"])],
                               customers=[("Asha", "Pune", "Kothrud"), ("Bilal", "Mumbai", "Andheri"),
                                          ("Chen", "Pune", "Baner")])
    edges = await graph_client.run(tenant, Query(
        "t", "MATCH (a:NetNode)-[r]->(b:NetNode) RETURN a.node_id AS s, b.node_id AS t", True))
    u = nx.Graph()
    u.add_edges_from((e["s"], e["t"]) for e in edges)
    raw = nx.betweenness_centrality(u, normalized=False)
    norm = nx.betweenness_centrality(u, normalized=True)
    top = await alg.critical_nodes(graph_client, tenant, top=5)
    expected = sorted(raw.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    assert [(c.node_id, c.score) for c in top] == [(n, pytest.approx(v)) for n, v in expected]
    assert all(c.normalised == pytest.approx(norm[c.node_id]) for c in top)
    hub = next(c for c in await alg.critical_nodes(graph_client, tenant, top=50) if c.node_id == s.hubs["Pune"])
    assert hub.customers_behind == 2 and hub.path_to_core[0] == s.hubs["Pune"]
    with pytest.raises(InvalidInput):
        await alg.critical_nodes(graph_client, tenant, top=0)


async def test_falkordb_betweenness_is_a_sampled_estimate(graph_client, tenant):
    """Canary for the engine choice in network_algorithms: this build's algo.betweenness samples
    source nodes with replacement, so seeded runs disagree with the exact scores (and each other).
    If this fails, the server's betweenness became exact: reconsider using it."""
    await build(graph_client, tenant, HAND_NODES, HAND_LINKS, HOMES)
    exact = nx.betweenness_centrality(nx.DiGraph([(s, d) for _, s, d, *_ in HAND_LINKS]), normalized=False)
    runs = []
    for seed in range(1, 6):
        rows = await graph_client.run(tenant, Query(
            "t", "CALL algo.betweenness({nodeLabels: ['NetNode'], relationshipTypes: ['UPLINK', 'PON', 'DROP'], "
            f"samplingSize: 100, samplingSeed: {seed}}}) YIELD node, score RETURN node.node_id AS n, score", True))
        runs.append({r["n"]: r["score"] for r in rows})
    assert any(run != pytest.approx(exact) for run in runs)


async def test_cheapest_cabling_on_hand_built_network(graph_client, tenant):
    await build(graph_client, tenant, HAND_NODES, HAND_LINKS, HOMES)
    msf = await alg.cheapest_cabling(graph_client, tenant)
    # one loop: popA-bb2-popB-oltA2-popA; the longest link on it (popA-bb2, 30 km) is left out
    assert msf.total_length_m == sum(x[4] for x in HAND_LINKS) - 30_000 == 72_480
    assert (msf.trees, msf.nodes, len(msf.edges)) == (1, 13, 12)
    assert ("popA", "bb2") not in {(e.source, e.target) for e in msf.edges}


async def test_cheapest_cabling_matches_networkx(graph_client, tenant):
    s = await generate_network(graph_client, tenant, seed=11, cities=[("Pune", ["Kothrud", "Baner"]),
                               ("Mumbai", ["Andheri", "Bandra"]), ("Goa", [])],
                               customers=[("Asha", "Pune", "Kothrud"), ("Bilal", "Goa", "Central")])
    rows = await graph_client.run(tenant, Query(
        "t", "MATCH (a:NetNode)-[r]->(b:NetNode) RETURN a.node_id AS s, b.node_id AS t, r.length_m AS w", True))
    u = nx.Graph()
    u.add_weighted_edges_from((r["s"], r["t"], r["w"]) for r in rows)
    msf = await alg.cheapest_cabling(graph_client, tenant)
    assert msf.total_length_m == pytest.approx(nx.minimum_spanning_tree(u).size(weight="weight"))
    assert len(msf.edges) == u.number_of_nodes() - 1 == s.nodes - 1 and msf.trees == 1
    for seed in range(5):  # random, possibly disconnected networks: a forest, one tree per part
        nodes, links = random_network(random.Random(500 + seed))
        t = f"{tenant}-m{seed}"
        await register(graph_client.redis, t)
        await build(graph_client, t, nodes, links)
        u = nx.Graph()
        u.add_nodes_from(n[0] for n in nodes)
        u.add_weighted_edges_from((s_, d, m) for _, s_, d, _, m, *_ in links)
        msf = await alg.cheapest_cabling(graph_client, t)
        assert msf.total_length_m == pytest.approx(nx.minimum_spanning_tree(u).size(weight="weight"))
        assert msf.trees == nx.number_connected_components(u) and msf.nodes == len(nodes)


async def test_upward_closure_starts_from_the_index(graph_client, tenant):
    await build(graph_client, tenant, HAND_NODES, HAND_LINKS, HOMES)
    for query, params in ((q.UPWARD_CLOSURE, {"ids": ["ontX"]}), (q.CUSTOMER_ACCESS, {"uid": "Customer|asha"}),
                          (q.SHORTEST_UP_PATHS, {"start": "splA1", "target": "popA"})):
        plan = await graph_client.explain(tenant, query, params)
        assert "Index Scan" in plan and "All Node Scan" not in plan, plan


async def test_a_tenant_without_a_network(graph_client, tenant):
    assert await alg.critical_nodes(graph_client, tenant) == []
    assert (await alg.cheapest_cabling(graph_client, tenant)).model_dump() == {
        "edges": [], "total_length_m": 0.0, "trees": 0, "nodes": 0, "engine": "falkordb algo.MSF"}
    with pytest.raises(NotFound):
        await alg.capacity(graph_client, tenant, "bb1")


async def test_harmonic_centrality_matches_networkx_on_random_networks(graph_client, tenant):
    """The server's HyperLogLog estimate against networkx's exact sum, over links as stored
    (networkx sums distances *to* a node, so it is given the reversed graph)."""
    for seed in range(10):
        nodes, links = random_network(random.Random(700 + seed))
        t = f"{tenant}-h{seed}"
        await register(graph_client.redis, t)
        await build(graph_client, t, nodes, links)
        stored = nx.DiGraph()
        stored.add_nodes_from(n[0] for n in nodes)
        stored.add_edges_from((s_, d) for _, s_, d, *_ in links)
        exact = nx.harmonic_centrality(stored.reverse())
        got = await alg.harmonic_centrality(graph_client, t)
        assert got.keys() == exact.keys()
        for nid, value in exact.items():
            assert got[nid] == pytest.approx(value, rel=0.05, abs=1e-6), (seed, nid)
    top = await alg.critical_nodes(graph_client, t, top=3)
    assert [c.harmonic for c in top] == [pytest.approx(exact[c.node_id], rel=0.05, abs=1e-6) for c in top]
