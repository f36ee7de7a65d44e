"""What each statement's kept plan costs a tenant: `python -m bench.plan_bytes [--graphs N] [--only NAME]`.

FalkorDB keeps the plan of every statement a graph ran (up to its CACHE_SIZE, 25 by default) for
as long as the graph lives, so a tenant pays for the plans of the statements it ran, on top of its
data. This starts its own FalkorDB (a free port, a temp folder) and, for each named statement of the
memory engine (`relay_graph.memory.queries`), the outbox and the fact batch writes (built for two
predicates), makes N small graphs (default 100, two nodes each), runs the statement once on each
with neutral parameters (a list where the statement unwinds or tests membership, a number after
LIMIT or for a count, a vector for `$v`, null otherwise: nothing is matched or written), and prints
FalkorDB's RSS growth per graph, largest first, beside a graph that ran `RETURN 1`. A statement the
server refuses with those parameters is listed as refused, its cost not measured. The figure also
holds the labels and relationship types the statement introduced to each graph (~5 KB apiece).
Writes bench/results/plan_bytes.json (`--out`)."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import redis
from rich.console import Console
from rich.table import Table

from bench.graph_bytes import batch_statements, finish
from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port
from relay_graph.runtime.graph_wire import params_header

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "plan_bytes.json"
SETTLE_S = 1.0
_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def statements() -> dict[str, str]:
    """The named statements measured: name -> Cypher."""
    from relay_graph.memory import queries as memory_queries
    from relay_graph.runtime.queries import Query
    from relay_graph.runtime.queries import outbox as outbox_q

    found: dict[str, str] = {"return_1": "RETURN 1"}
    modules = [importlib.import_module(f"{memory_queries.__name__}.{m.name}")
               for m in pkgutil.iter_modules(memory_queries.__path__)] + [outbox_q]
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, Query) and ":" not in value.name:
                found.setdefault(value.name, value.cypher)
    for query in batch_statements(["lives_in", "has_pet"]).all():
        found[query.name + "(2 predicates)"] = query.cypher
    return found


def neutral(cypher: str) -> dict[str, Any]:
    """Parameters that let the statement run and find nothing (see the module's note)."""
    out: dict[str, Any] = {}
    for name in dict.fromkeys(_PARAM.findall(cypher)):
        if name == "v":
            out[name] = [0.1] * 384
        elif re.search(rf"(UNWIND|IN)\s+\${name}\b|size\(\${name}\)|\${name}\s*\+", cypher):
            out[name] = []
        elif re.search(rf"(LIMIT|SKIP)\s+\${name}\b", cypher) or re.search(rf"range\([^)]*\${name}", cypher):
            out[name] = 1
        else:
            out[name] = None
    return out


def _rss(r: redis.Redis) -> int:
    time.sleep(SETTLE_S)
    return int(r.info("memory")["used_memory_rss"])


def run(graphs: int, only: str | None, console: Console) -> dict[str, Any]:
    chosen = {k: v for k, v in statements().items() if only is None or only in k or k == "return_1"}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="relay-bench-plan-bytes-") as tmp:
        server = EmbeddedFalkorDB(Path(tmp) / "data", free_port()).start()
        try:
            r = redis.Redis(host=server.host, port=server.port, decode_responses=True)
            for s, (name, cypher) in enumerate(chosen.items()):
                names = [f"g{s}-{i}" for i in range(graphs)]
                for g in names:
                    r.execute_command("GRAPH.QUERY", g, "CREATE (:Seed {n: 1}), (:Seed {n: 2})")
                before = _rss(r)
                text = params_header(neutral(cypher)) + cypher
                refused = None
                for g in names:
                    try:
                        r.execute_command("GRAPH.QUERY", g, text)
                    except redis.ResponseError as exc:
                        refused = str(exc)[:80]
                        break
                kb = None if refused else (_rss(r) - before) / graphs / 1e3
                rows.append({"statement": name, "chars": len(cypher), "kb_per_graph": kb, "refused": refused})
                console.print(f"  {name}: " + (f"refused ({refused})" if refused else f"{kb:.1f} KB a graph"))
            r.close()
        finally:
            server.stop(compact_timeout=5)
    rows.sort(key=lambda x: -(x["kb_per_graph"] or -1))
    return {"graphs": graphs, "load_avg": list(os.getloadavg()), "rows": rows}


def table(data: dict[str, Any]) -> Table:
    t = Table(title=f"A kept plan's cost to a graph ({data['graphs']} graphs a statement)")
    for col in ("statement", "Cypher chars", "RSS KB a graph"):
        t.add_column(col, justify="left" if col == "statement" else "right")
    for row in data["rows"]:
        t.add_row(row["statement"], str(row["chars"]),
                  "refused" if row["refused"] else f"{row['kb_per_graph']:.1f}")
    return t


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.plan_bytes", description=__doc__.split("\n")[0])
    p.add_argument("--graphs", type=int, default=100, help="graphs per statement (default 100)")
    p.add_argument("--only", help="only the statements whose name holds this")
    p.add_argument("--out", type=Path, default=RESULTS, help="where the JSON goes")
    args = p.parse_args(argv)
    if args.graphs < 1:
        p.error("--graphs must be at least 1")
    console = Console()
    data = run(args.graphs, args.only, console)
    return finish(console, data, table(data), args.out)


if __name__ == "__main__":
    raise SystemExit(main())
