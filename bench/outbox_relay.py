"""The outbox relay's cost, measured: `python -m bench.outbox_relay [--tenants N] [--passes P]`.

Starts its own FalkorDB (a free port, a temp folder) with N tenant graphs (default 300, each with
a few nodes and no pending announcement), then times P relay passes (default 20) two ways in the
same run:

* every tenant, every pass (what the relay did before the pending marker: one look at each
  tenant's outbox per second): `Outbox.relay_pass(sweep=True)`;
* the marked tenants only (what it does now): `Outbox.relay_pass()` with one tenant marked as
  having kept an announcement in the last minute, and with none.

Reports per pass: milliseconds (p50, p95) and graph queries. Prints a table and writes
bench/results/outbox_relay.json. The machine is shared: the figures move with its load.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from relay_graph.runtime import outbox as ob
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port
from relay_graph.runtime.queries import outbox as q
from relay_graph.runtime.streams import Publisher, connect
from bench.registered import register

from .memory_core import percentile, say

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "outbox_relay.json"


async def timed_passes(box: ob.Outbox, client: GraphClient, passes: int, **kw) -> dict:
    times, queries = [], []
    for _ in range(passes):
        client.recent.clear()
        started = time.perf_counter()
        await box.relay_pass(older_than_s=0, **kw)
        times.append((time.perf_counter() - started) * 1000)
        queries.append(len(client.recent))
    return {"p50_ms": round(percentile(times, 50), 3), "p95_ms": round(percentile(times, 95), 3),
            "graph_queries_per_pass": max(queries)}


async def run(tenants: int, passes: int, out: Path | None) -> dict:
    with tempfile.TemporaryDirectory(prefix="relay-bench-outbox-") as tmp:
        server = EmbeddedFalkorDB(Path(tmp), free_port(), log_file=Path(tmp) / "server.log")
        server.start()
        try:
            settings = GraphSettings(falkordb_host=server.host, falkordb_port=server.port,
                                     query_log_size=100_000)
            client = GraphClient(settings)
            redis = connect(settings)
            box = ob.Outbox(client, redis, functools.partial(ob.publish_all, Publisher(redis)))
            names = [f"bench-outbox-{i:04d}" for i in range(tenants)]
            await register(client.redis, *names)
            for name in names:  # a graph each (its schema, an empty outbox)
                await client.run(name, q.PENDING, {"before_ms": 0, "limit": 1})
            await redis.delete(ob.PENDING_TENANTS)
            await box.relay_pass(sweep=True)  # warm: the pool's connections
            every = await timed_passes(box, client, passes, sweep=True)
            none = await timed_passes(box, client, passes)
            await box.mark(names[0])
            one = await timed_passes(box, client, passes)
            await redis.aclose()
            await client.close()
        finally:
            server.stop()
    data = {"tenants": tenants, "passes": passes, "every_tenant": every, "marked_none": none, "marked_one": one,
            "load_avg": list(os.getloadavg())}
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(data, indent=2) + "\n")
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.outbox_relay", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tenants", type=int, default=300)
    parser.add_argument("--passes", type=int, default=20)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    console = Console()
    data = asyncio.run(run(args.tenants, args.passes, args.out))
    table = Table(title=f"outbox relay pass over {data['tenants']} tenants (noisy: shared machine, "
                        f"load {', '.join(f'{x:.1f}' for x in data['load_avg'])})")
    for col in ("pass", "p50 ms", "p95 ms", "graph queries"):
        table.add_column(col)
    for label, key in (("every tenant (before)", "every_tenant"), ("marked: none", "marked_none"),
                       ("marked: one tenant", "marked_one")):
        r = data[key]
        table.add_row(label, f"{r['p50_ms']:.2f}", f"{r['p95_ms']:.2f}", str(r["graph_queries_per_pass"]))
    console.print(table)
    say(console, f"results: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
