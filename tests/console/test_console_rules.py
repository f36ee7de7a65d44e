"""The console's pure rules: which group a node folds into, when a fact's two clocks disagree (and
the sentence that says why), and the query drawer's summary by statement."""

from __future__ import annotations

from relay_graph.runtime.query_log import LoggedQuery
from relay_graph.usecases import console_groups
from relay_graph.usecases.console import GraphEdge, GraphNode, summarise
from relay_graph.usecases.console_focus import LATE_AFTER_MS, clock_row

DAY = 86_400_000
MARCH_1 = 1_772_323_200_000  # 2026-03-01T00:00:00Z


def node(id: str, kind: str, name: str, band: str = "network") -> GraphNode:
    return GraphNode(id=id, kind=kind, labels=[kind], band=band, name=name)


def edge(source: str, target: str, type: str) -> GraphEdge:
    return GraphEdge(source=source, target=target, type=type, band="network")


def test_network_nodes_fold_into_their_city_read_from_names_and_edges():
    nodes = [node("hub", "Pop", "Pune hub"), node("ex", "Olt", "Kothrud exchange (Pune)"), node("cab", "Splitter", "Kothrud cabinet 1"),
             node("box", "Ont", "box-1"), node("core", "Backbone", "Core 1"), node("plan", "Plan", "Fiber 100"),
             node("area", "Area", "Kothrud"), node("city", "City", "Pune"), node("lone", "Ont", "box-2"),
             node("asha", "Customer", "Asha", band="semantic"), node("odd", "Pop", "popA")]
    console_groups.assign(nodes, [edge("cab", "ex", "PON"), edge("cab", "box", "DROP"), edge("area", "city", "IN_CITY"),
                                  edge("asha", "box", "CONNECTED_VIA")])
    got = {n.id: n.group for n in nodes}
    assert got == {"hub": "Pune", "ex": "Pune", "cab": "Pune", "box": "Pune", "core": "Core", "plan": "Catalogue",
                   "area": "Pune", "city": "Pune", "lone": None, "asha": None, "odd": None}


def fact(**kw) -> dict:
    base = dict(fact_id="f", predicate="lives_in", object="Pune", state="current", valid_from_ms=MARCH_1,
                valid_to_ms=None, recorded_at_ms=MARCH_1 + 60_000, expired_at_ms=None, asserted_by="intake",
                source_kind="CustomerMessage", speaker="Asha")
    return {**base, **kw}


def test_only_facts_whose_clocks_disagree_get_a_row_with_their_sentence():
    assert clock_row(fact()) is None  # learnt a minute after it became true: the clocks agree
    assert clock_row(fact(recorded_at_ms=MARCH_1 + LATE_AFTER_MS)) is None
    late = clock_row(fact(recorded_at_ms=MARCH_1 + 4 * DAY))
    assert late.kind == "late"
    assert late.sentence == "true since 1 March 2026, learnt on 5 March 2026 from the customer's message (intake)"
    direct = clock_row(fact(recorded_at_ms=MARCH_1 + 4 * DAY, source_kind=None, speaker=None, asserted_by="api"))
    assert direct.sentence.endswith("written directly by api")
    ahead = clock_row(fact(recorded_at_ms=MARCH_1 - 2 * DAY))
    assert ahead.kind == "ahead" and ahead.sentence.startswith("on file since 27 February 2026, true only from 1 March 2026")
    corrected = clock_row(fact(state="superseded", expired_at_ms=MARCH_1 + 2 * DAY))
    assert corrected.kind == "corrected" and "replaced by a correction" in corrected.sentence
    assert clock_row(fact(valid_from_ms=None)) is None


def run(query: str, ms: float, ok: bool = True, hk: bool = False, process: str = "gateway", i: int = 0) -> LoggedQuery:
    return LoggedQuery(id=f"{i}-0", query=query, process=process, ok=ok, rows=1, ms=ms, at_ms=i, read_only=True,
                       params={} if ms > 5 else None, housekeeping=hk)


def test_the_drawer_summary_groups_runs_by_statement_with_percentiles_and_the_slowest_run():
    runs = [run("a", float(ms), i=ms, process="intake" if ms == 20 else "gateway") for ms in range(1, 21)]
    runs += [run("b", 2.0, ok=False, i=100), run("outbox_pending", 1.0, hk=True, i=101)]
    got = {s.query: s for s in summarise("t", runs).statements}
    a = got["a"]
    assert (a.count, a.errors, a.p50_ms, a.p95_ms, a.max_ms) == (20, 0, 10.0, 19.0, 20.0)
    assert a.processes == ["gateway", "intake"] and a.slowest.ms == 20.0 and a.slowest.profilable
    assert got["b"].errors == 1 and not got["b"].slowest.profilable
    assert got["outbox_pending"].housekeeping and not a.housekeeping
    assert [s.query for s in summarise("t", runs).statements][0] == "a"  # slowest p95 first
