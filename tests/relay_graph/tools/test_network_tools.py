"""The network tools against a real FalkorDB, on a small hand-built network with known answers:

    bb1 <-100- popA -40 (standby)-> bb2 <-100- popB
          popA <-20- oltA1 <-10- splA1 -DROP-> ontX (asha)
          popA <-20- oltA2 -10 (standby)-> popB
                     oltA2 <-2.5- splA2 -DROP-> ontY (bilal)
          popB <-20- oltB1 <-2.5- splB1 -DROP-> ontZ (chen)
"""

from __future__ import annotations

import pytest

from relay_graph.desk.network import store as net
from relay_graph.desk.network.models import LinkIn, LinkType, NetNodeIn, NodeKind
from relay_graph.tools import Shape, call_tool

from .conftest import RESOLUTION, counts

BB, POP, OLT, SPL, ONT = NodeKind.BACKBONE, NodeKind.POP, NodeKind.OLT, NodeKind.SPLITTER, NodeKind.ONT
UP, PON, DROP = LinkType.UPLINK, LinkType.PON, LinkType.DROP
NODES = [("bb1", BB, 400), ("bb2", BB, 400), ("popA", POP, 200), ("popB", POP, 200), ("oltA1", OLT, 40),
         ("oltA2", OLT, 40), ("oltB1", OLT, 40), ("splA1", SPL, 10), ("splA2", SPL, 2.5), ("splB1", SPL, 2.5),
         ("ontX", ONT, 1), ("ontY", ONT, 1), ("ontZ", ONT, 1)]
LINKS = [(UP, "popA", "bb1", 100, False), (UP, "popA", "bb2", 40, True), (UP, "popB", "bb2", 100, False),
         (UP, "oltA1", "popA", 20, False), (UP, "oltA2", "popA", 20, False), (UP, "oltA2", "popB", 10, True),
         (UP, "oltB1", "popB", 20, False), (PON, "splA1", "oltA1", 10, False), (PON, "splA2", "oltA2", 2.5, False),
         (PON, "splB1", "oltB1", 2.5, False), (DROP, "splA1", "ontX", 1, False), (DROP, "splA2", "ontY", 1, False),
         (DROP, "splB1", "ontZ", 1, False)]


@pytest.fixture
async def network(graph_client, tenant):
    await net.upsert_nodes(graph_client, tenant, [NetNodeIn(node_id=i, kind=k, name=i, capacity_gbps=c)
                                                  for i, k, c in NODES])
    await net.upsert_links(graph_client, tenant, [LinkIn(type=t, source=s, target=d, capacity_gbps=c, backup=b)
                                                  for t, s, d, c, b in LINKS])
    await net.attach_customers(graph_client, tenant, [("asha", "ontX"), ("bilal", "ontY"), ("chen", "ontZ")])


async def test_affected_by_gives_each_customer_with_the_path_and_whether_they_are_cut_off(ctx, network):
    r = await call_tool(ctx, "affected_by", {"node": "popA"})
    assert r.shape is Shape.ANSWERED and r.data.node.kind is POP
    assert [(a.customer, a.path) for a in r.data.customers] == [
        ("asha", ["ontX", "splA1", "oltA1", "popA"]), ("bilal", ["ontY", "splA2", "oltA2", "popA"])]
    assert [a.customer for a in r.data.cut_off] == ["asha"]
    assert [a.customer for a in r.data.rerouted] == ["bilal"]
    assert "path: asha -> ontX -> splA1 -> oltA1 -> popA (cut off)" in r.how_i_know

    near = await call_tool(ctx, "affected_by", {"node": "popA", "depth": 0})
    assert near.shape is Shape.NOT_IN_GRAPH and near.data.customers == []


async def test_capacity_is_the_max_flow_over_what_is_up(ctx, graph_client, tenant, network):
    r = await call_tool(ctx, "capacity", {"node": "popA"})
    assert r.shape is Shape.ANSWERED and r.data.max_flow_gbps == 140
    assert [p.nodes for p in r.data.paths] == [["bb1", "popA"], ["bb2", "popA"]]
    await net.set_link_status(graph_client, tenant, UP, "popA", "bb1", up=False)
    assert (await call_tool(ctx, "capacity", {"node": "popA"})).data.max_flow_gbps == 40
    assert (await call_tool(ctx, "capacity", {"node": "popA", "nominal": True})).data.max_flow_gbps == 140


async def test_customer_line_and_why_affected(ctx, network):
    line = await call_tool(ctx, "customer_line", {"customer": "Asha"})
    assert line.shape is Shape.ANSWERED and line.data.customer == "asha"
    assert [h.node_id for h in line.data.hops] == ["ontX", "splA1", "oltA1", "popA", "bb1"]

    why = await call_tool(ctx, "why_affected", {"customer": "bilal", "node": "popA"})
    assert why.shape is Shape.ANSWERED
    assert (why.data.path, why.data.cut_off) == (["bilal", "ontY", "splA2", "oltA2", "popA"], False)
    assert why.data.alternative == ["ontY", "splA2", "oltA2", "popB", "bb2"]
    assert why.how_i_know == ["path: bilal -> ontY -> splA2 -> oltA2 -> popA",
                              "alternative: ontY -> splA2 -> oltA2 -> popB -> bb2"]
    elsewhere = await call_tool(ctx, "why_affected", {"customer": "chen", "node": "popA"})
    assert elsewhere.shape is Shape.NOT_IN_GRAPH and elsewhere.data.behind is False


@pytest.mark.parametrize("name, arguments, unknown", [
    ("affected_by", {"node": "popZ"}, [("node", "node", "popZ")]),
    ("capacity", {"node": "popZ"}, [("node", "node", "popZ")]),
    ("customer_line", {"customer": "nobody known"}, [("customer", "customer", "nobody known")]),
    ("why_affected", {"customer": "nobody known", "node": "popZ"},
     [("customer", "customer", "nobody known"), ("node", "node", "popZ")]),
])
async def test_unknown_nodes_and_customers_stop_at_resolution(ctx, recorder, graph_client, tenant, network, name,
                                                              arguments, unknown):
    before = await counts(graph_client, tenant)
    recorder.ran.clear()

    r = await call_tool(ctx, name, arguments)

    assert r.shape is Shape.UNKNOWN_NAME and r.data is None
    assert [(u.argument, u.kind, u.name) for u in r.unknown] == unknown
    assert set(recorder.names()) <= RESOLUTION and all(q.read_only for q in recorder.ran)
    assert await counts(graph_client, tenant) == before
