"""Where a small graph's bytes go: `python -m bench.graph_bytes [--graphs N] [--nodes M]`.

Starts its own FalkorDB (a free port, a temp folder) and, for each layout below in turn, makes N
graphs (default 200) of M nodes (default 150: a memory-only tenant of bench.tenants holds about that
many facts and episodes), then prints the server's growth in RSS (what the machine gives it) and in
used_memory (what its allocator handed out), divided by N. GRAPH.MEMORY USAGE answers in whole
megabytes, too coarse at this size, hence the division. Each layout adds one thing to the plain one,
so the rows say what that thing costs a tenant:

| layout    | each graph                                                                              |
|-----------|-----------------------------------------------------------------------------------------|
| plain     | M nodes of one label with a number and a short text                                     |
| labels    | the same nodes spread over 8 labels (a tenant's graph has about as many)                |
| ranges    | 8 labels with 12 range indexes (a tenant's graph has about as many)                     |
| fulltext  | plain, with a full-text index on the text                                               |
| vectors   | plain, each node with a 384-dimension vector (the embedder's size), no vector index     |
| vector_ix | vectors, with a vector index on them                                                    |
| plan_two  | plain, and one run of the fact batch statement for two predicates (no rows): its plan   |
| plan_all  | plain, and one run of the fact batch statement for every built-in predicate (no rows)   |

FalkorDB keeps the plan of each statement it ran, per graph (its CACHE_SIZE, 25 by default), for
as long as the graph lives: the plan layouts say what one kept write statement costs a tenant.

Prints a table and writes bench/results/graph_bytes.json (`--out` elsewhere). The vectors are
seeded random numbers: their bytes are what matters here, not what they mean."""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from pathlib import Path
from typing import Callable

import redis
from rich.console import Console
from rich.table import Table

from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "graph_bytes.json"
DIM = 384
LABELS = ("A", "B", "C", "D", "E", "F", "G", "H")
SETTLE_S = 1.0  # the allocator's figures after the last write, not during it


def _nodes(r: redis.Redis, g: str, label: str, count: int) -> None:
    r.execute_command("GRAPH.QUERY", g, f"CYPHER n={count} UNWIND range(1, $n) AS i "
                                        f"CREATE (:{label} {{id: i, text: 'a short text ' + toString(i)}})")


def _spread(r: redis.Redis, g: str, nodes: int) -> None:
    for label in LABELS:
        _nodes(r, g, label, max(1, nodes // len(LABELS)))


def _vectors(r: redis.Redis, g: str, nodes: int, rng: random.Random) -> None:
    for start in range(0, nodes, 50):
        batch = [[round(rng.random(), 6) for _ in range(DIM)] for _ in range(min(50, nodes - start))]
        r.execute_command("GRAPH.QUERY", g, f"CYPHER vs={json.dumps(batch)} UNWIND $vs AS v "
                                            "CREATE (:A {text: 'a short text', v: vecf32(v)})")


def layouts(nodes: int, rng: random.Random) -> dict[str, Callable[[redis.Redis, str], None]]:
    def plain(r, g):
        _nodes(r, g, "A", nodes)

    def labels(r, g):
        _spread(r, g, nodes)

    def ranges(r, g):
        for label in LABELS:
            r.execute_command("GRAPH.QUERY", g, f"CREATE INDEX FOR (n:{label}) ON (n.id)")
        for label in LABELS[:4]:
            r.execute_command("GRAPH.QUERY", g, f"CREATE INDEX FOR (n:{label}) ON (n.text)")
        _spread(r, g, nodes)

    def fulltext(r, g):
        r.execute_command("GRAPH.QUERY", g, "CALL db.idx.fulltext.createNodeIndex('A', 'text')")
        _nodes(r, g, "A", nodes)

    def vectors(r, g):
        _vectors(r, g, nodes, rng)

    def vector_ix(r, g):
        r.execute_command("GRAPH.QUERY", g, f"CREATE VECTOR INDEX FOR (n:A) ON (n.v) "
                                            f"OPTIONS {{dimension: {DIM}, similarityFunction: 'cosine'}}")
        _vectors(r, g, nodes, rng)

    def plan(predicates: list[str] | None):
        def run_once(r, g):
            _nodes(r, g, "A", nodes)
            r.execute_command("GRAPH.QUERY", g, "CYPHER rows=[] " + batch_statements(predicates).create_plain.cypher)
        return run_once

    return {"plain": plain, "labels": labels, "ranges": ranges, "fulltext": fulltext, "vectors": vectors,
            "vector_ix": vector_ix, "plan_two": plan(["lives_in", "has_pet"]), "plan_all": plan(None)}


def batch_statements(predicates: list[str] | None):
    """The fact batch writes (memory.queries.facts.BatchWrites), for these predicates or every one."""
    import relay_graph.desk.vocabulary  # noqa: F401 - the desk's predicates, as the gateway has them
    from relay_graph.memory.queries.facts import batch_writes
    from relay_graph.memory.registry import every_predicate

    every = every_predicate()
    return batch_writes(None if predicates is None else [every[p] for p in predicates])


def finish(console: Console, data: dict, shown: Table, out: Path) -> int:
    """A bytes bench's last step: the table, the load, the JSON."""
    console.print(shown)
    console.print(f"load average {data['load_avg']}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=2) + "\n")
    return 0


def _memory(r: redis.Redis) -> tuple[int, int]:
    info = r.info("memory")
    return int(info["used_memory_rss"]), int(info["used_memory"])


def run(graphs: int, nodes: int, console: Console) -> dict:
    rows = []
    with tempfile.TemporaryDirectory(prefix="relay-bench-graph-bytes-") as tmp:
        server = EmbeddedFalkorDB(Path(tmp) / "data", free_port()).start()
        try:
            r = redis.Redis(host=server.host, port=server.port)
            for name, make in layouts(nodes, random.Random(7)).items():
                time.sleep(SETTLE_S)
                rss0, used0 = _memory(r)
                for i in range(graphs):
                    make(r, f"{name}-{i}")
                time.sleep(SETTLE_S)
                rss1, used1 = _memory(r)
                rows.append({"layout": name, "rss_mb_per_graph": (rss1 - rss0) / graphs / 1e6,
                             "used_mb_per_graph": (used1 - used0) / graphs / 1e6})
                console.print(f"  {name}: {rows[-1]['rss_mb_per_graph']:.3f} MB RSS a graph")
            r.close()
        finally:
            server.stop(compact_timeout=5)
    return {"graphs": graphs, "nodes": nodes, "dimension": DIM, "load_avg": list(os.getloadavg()), "rows": rows}


def table(data: dict) -> Table:
    t = Table(title=f"Bytes a graph of {data['nodes']} nodes costs FalkorDB ({data['graphs']} graphs a layout)")
    for col in ("layout", "RSS MB a graph", "used MB a graph"):
        t.add_column(col, justify="left" if col == "layout" else "right")
    for row in data["rows"]:
        t.add_row(row["layout"], f"{row['rss_mb_per_graph']:.3f}", f"{row['used_mb_per_graph']:.3f}")
    return t


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.graph_bytes", description=__doc__.split("\n")[0])
    p.add_argument("--graphs", type=int, default=200, help="graphs made of each layout (default 200)")
    p.add_argument("--nodes", type=int, default=150, help="nodes in each graph (default 150)")
    p.add_argument("--out", type=Path, default=RESULTS, help="where the JSON goes")
    args = p.parse_args(argv)
    if args.graphs < 1 or args.nodes < 8:
        p.error("--graphs must be at least 1 and --nodes at least 8")
    console = Console()
    data = run(args.graphs, args.nodes, console)
    return finish(console, data, table(data), args.out)


if __name__ == "__main__":
    raise SystemExit(main())
