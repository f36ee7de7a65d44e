"""Where one tenant's bytes go: `python -m bench.tenant_bytes [--graphs N] [--desk]`.

Grows memory-only tenants as bench.tenants does (100 facts and 50 episodes each, vectors from a
pool of model-made ones) on its own FalkorDB, N first (not counted: the server's first-use
allocations), then N more, and measures FalkorDB's RSS growth per tenant of the second N: that is
a tenant as it lives, with the plans FalkorDB keeps of every statement it ran (CACHE_SIZE, per
graph). Then it makes N `GRAPH.COPY`s of one of them: a copy holds the same data and indexes and no
plan. Then N copies of variants with one more part taken away each time: the vector index, the
full-text indexes, every range index, the vectors themselves. Each row's growth per graph, and
the difference between rows, says what that part costs a tenant. `--desk` does the same for
tenants made with the demo ISP's world. Writes bench/results/tenant_bytes.json (`--out`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from relay_graph.memory.facade import Memory
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embeddings import Embedder
from relay_graph.runtime.tenancy import graph_name

from .memory_core import say
from .tenants import PooledVectors, Run, Topology

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "tenant_bytes.json"
SETTLE_S = 1.0


def index_drops(indexes: list[list[Any]]) -> dict[str, list[str]]:
    """The statements that take each kind of index away, from `CALL db.indexes()` rows (label,
    properties, types per property)."""
    vector, fulltext, rng = [], [], []
    for label, props, types in indexes:
        for prop in props:
            kinds = types.get(prop, []) if isinstance(types, dict) else []
            if "VECTOR" in kinds:
                vector.append(f"DROP VECTOR INDEX FOR (n:{label}) ON (n.{prop})")
            if "FULLTEXT" in kinds:
                fulltext.append(f"CALL db.idx.fulltext.drop('{label}')")
            if "RANGE" in kinds:
                rng.append(f"DROP INDEX FOR (n:{label}) ON (n.{prop})")
    return {"vector": vector, "fulltext": sorted(set(fulltext)), "range": rng}


def variants(drops: dict[str, list[str]]) -> list[tuple[str, list[str]]]:
    """Copies with one more part taken away each row."""
    gone: list[str] = []
    out = [("copied: the same data and indexes (its kept plans away)", [])]
    for key, label in (("vector", "without the vector index"), ("fulltext", "and the full-text indexes"),
                       ("range", "and every range index")):
        gone = gone + drops[key]
        out.append((label, gone))
    out.append(("and the vectors themselves", gone + ["MATCH (n) WHERE n.embedding IS NOT NULL SET n.embedding = NULL"]))
    return out


async def rss(redis) -> int:
    await asyncio.sleep(SETTLE_S)
    return int((await redis.info("memory"))["used_memory_rss"])


async def copy_graph(redis, source: str, target: str) -> None:
    """GRAPH.COPY forks; one refused ("could not fork", "copy failed") while another fork runs
    (FalkorDB's GC, an AOF rewrite) is tried again."""
    for attempt in range(100):
        try:
            await redis.execute_command("GRAPH.COPY", source, target)
            return
        except Exception as exc:  # noqa: BLE001 - "could not fork" while another fork runs
            if not ("fork" in str(exc) or "copy failed" in str(exc)) or attempt == 99:
                raise
            await asyncio.sleep(0.2)


async def copies(redis, source: str, n: int, prefix: str) -> float:
    """RSS growth per graph of n copies of `source` (MB)."""
    before = await rss(redis)
    for i in range(n):
        await copy_graph(redis, source, f"{prefix}-{i}")
    return (await rss(redis) - before) / n / 1e6


async def breakdown(run: Run, prefix: str, n: int, console: Console) -> list[dict[str, Any]]:
    # the node's own client: no socket timeout (a copy waits for the fork before it)
    redis = run.topology.clients[run.topology.nodes[0].port]
    await run.grow(prefix, n)  # not counted: the server's first-use allocations
    before = await rss(redis)
    await run.grow(prefix, 2 * n)
    rows = [{"what": "as it lives (grown: its kept plans too)", "rss_mb": (await rss(redis) - before) / n / 1e6}]
    source = graph_name(run.tenants[0])
    raw = await redis.execute_command("GRAPH.RO_QUERY", source, "CALL db.indexes() YIELD label, properties, types "
                                      "RETURN label, properties, types", "--compact")
    indexes = _compact_rows(raw)
    for i, (what, statements) in enumerate(variants(index_drops(indexes))):
        variant = f"{source}-v{i}"
        await copy_graph(redis, source, variant)
        for statement in statements:
            await redis.execute_command("GRAPH.QUERY", variant, statement)
        say(console, f"  {n} copies: {what}")
        rows.append({"what": what, "rss_mb": await copies(redis, variant, n, f"{variant}-c")})
    for before_row, row in zip([None] + rows, rows):
        # what this row took away from the one before (the kept plans, for the first copy)
        row["part_mb"] = round(before_row["rss_mb"] - row["rss_mb"], 3) if before_row is not None else None
    for row in rows:
        row["rss_mb"] = round(row["rss_mb"], 3)
    return rows


def _compact_rows(raw: list) -> list[list[Any]]:
    """Rows of a `--compact` reply of scalars, lists and maps (db.indexes' columns)."""
    return [[_value(cell) for cell in row] for row in raw[1]]


def _value(cell: list) -> Any:
    kind, value = cell
    if kind == 6:  # array
        return [_value(v) for v in value]
    if kind == 10:  # map: key, value, key, value ...
        return {_text(value[i]): _value(value[i + 1]) for i in range(0, len(value), 2)}
    return _text(value)


def _text(v: Any) -> Any:
    return v.decode() if isinstance(v, bytes) else v


def table(title: str, rows: list[dict[str, Any]]) -> Table:
    t = Table(title=title, title_justify="left", caption="the last row: the nodes, edges and their other properties")
    t.add_column("a tenant")
    t.add_column("RSS per graph", justify="right")
    t.add_column("what the row took away", justify="right")
    for row in rows:
        t.add_row(row["what"], f"{row['rss_mb']:.3f} MB", "" if row["part_mb"] is None else f"{row['part_mb']:.3f} MB")
    return t


async def run(args: argparse.Namespace, console: Console) -> dict[str, Any]:
    data: dict[str, Any] = {"graphs": args.graphs, "load_avg_before": os.getloadavg()}
    model_dir = Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model"))
    with tempfile.TemporaryDirectory(prefix="relay-bench-tenant-bytes-") as tmp:
        topology = Topology(Path(tmp), 0, 0)
        try:
            client = GraphClient(topology.settings(model_dir))
            try:
                embedder = Embedder(model_dir)
                pooled = PooledVectors(embedder, 64)
                memory = Memory(client, embedder)
                say(console, f"{args.graphs} memory-only tenants, then copies of one")
                data["memory_only"] = await breakdown(Run(client, memory, pooled, topology, console), "mem",
                                                      args.graphs, console)
                if args.desk:
                    say(console, f"{args.graphs} desk tenants (the demo ISP's world), then copies of one")
                    data["desk"] = await breakdown(Run(client, memory, pooled, topology, console, desk=True),
                                                   "desk", args.graphs, console)
            finally:
                await client.close()
        finally:
            try:
                await topology.close()
            finally:
                topology.stop()
    data["load_avg_after"] = os.getloadavg()
    return data


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.tenant_bytes", description=__doc__.split("\n\n")[0])
    parser.add_argument("--graphs", type=int, default=100, help="tenants grown, and copies of each variant")
    parser.add_argument("--desk", action="store_true", help="also tenants with the demo ISP's world")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.graphs < 1:
        parser.error("--graphs must be at least 1")
    console = Console()
    data = asyncio.run(run(args, console))
    console.print(table("memory-only tenant (100 facts, 50 episodes)", data["memory_only"]))
    if "desk" in data:
        console.print(table("desk tenant (the demo ISP's world, then the same memory)", data["desk"]))
    console.print(f"load average {data['load_avg_before']} -> {data['load_avg_after']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
