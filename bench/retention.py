"""Retention, measured: `python -m bench.retention [--episodes N] [--days D]`.

Starts its own FalkorDB (a free port, a temp folder), loads the real embedding model, writes N
episodes (default 2,000) of one tenant spread evenly over the last 365 days (one session per
day, one customer per ten sessions), then measures the graph (nodes, edges, GRAPH.MEMORY USAGE)
and `recall(q, k=10)` (p50 / p95 over distinct questions) before and after the tenant's
retention of D days (default 30) is applied. Both columns come from the same run. Prints a table
and writes bench/results/retention.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from rich.console import Console
from rich.table import Table

from relay_graph import retention
from relay_graph.config import GraphSettings
from relay_graph.db import GraphClient
from relay_graph.embedded import EmbeddedFalkorDB, free_port
from relay_graph.embeddings import Embedder
from relay_graph.memory import Memory
from relay_graph.models import EpisodeInput
from relay_graph.queries import Query
from relay_graph.tenancy import graph_name

from .memory_core import percentile, say

REPO = Path(__file__).resolve().parents[1]
TENANT = "bench-retention"
TOPICS = ["router", "fibre", "bill", "speed", "outage", "wifi", "refund", "move", "plan", "modem"]
QUESTIONS = [f"what did the customer say about the {t} {n}?" for n in range(6) for t in TOPICS]


def episodes(n: int, now: datetime) -> list[EpisodeInput]:
    out = []
    for i in range(n):
        day = i * 365 // n
        topic = TOPICS[i % len(TOPICS)]
        out.append(EpisodeInput(session=f"day-{day}", speaker=f"Customer {day // 10}", customer=f"Customer {day // 10}",
                                id=f"ep-{i}", at=now - timedelta(days=day, minutes=i % 600),
                                text=f"Message {i}: my {topic} has trouble number {i * 7919 % 10007} again"))
    return out


async def measure(client: GraphClient, memory: Memory) -> dict:
    nodes = (await client.run(TENANT, Query("bench_nodes", "MATCH (n) RETURN count(n) AS n", True)))[0]["n"]
    edges = (await client.run(TENANT, Query("bench_edges", "MATCH ()-[r]->() RETURN count(r) AS n", True)))[0]["n"]
    eps = (await client.run(TENANT, Query("bench_eps", "MATCH (e:Episode) RETURN count(e) AS n", True)))[0]["n"]
    mem = await client.redis.execute_command("GRAPH.MEMORY", "USAGE", graph_name(TENANT))
    mem = dict(zip(mem[::2], mem[1::2])) if isinstance(mem, list) else mem
    await memory.recall(TENANT, "warm up the model and the pool")
    times = []
    for q in QUESTIONS:
        start = time.perf_counter()
        await memory.recall(TENANT, q, k=10)
        times.append((time.perf_counter() - start) * 1000)
    return {"episodes": eps, "nodes": nodes, "edges": edges, "memory_mb": mem.get("total_graph_sz_mb"),
            "recall_p50_ms": round(percentile(times, 50), 2), "recall_p95_ms": round(percentile(times, 95), 2)}


async def run(n: int, days: int, console: Console) -> dict:
    model_dir = Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model"))
    data: dict = {"episodes_written": n, "retention_days": days}
    with tempfile.TemporaryDirectory(prefix="relay-bench-") as tmp:
        server = EmbeddedFalkorDB(Path(tmp) / "data", free_port(), log_file=Path(tmp) / "falkordb.log").start()
        settings = GraphSettings(falkordb_host=server.host, falkordb_port=server.port, model_dir=model_dir)
        client = GraphClient(settings)
        try:
            memory = Memory(client, Embedder(model_dir, batch_size=settings.embed_batch_size))
            now = datetime.now(timezone.utc)
            items = episodes(n, now)
            say(console, f"writing {n:,} episodes over 365 days ...")
            for b in range(0, n, 250):
                await memory.write_episodes(TENANT, items[b:b + 250])
            data["before"] = await measure(client, memory)
            await retention.set_retention(client, TENANT, days)
            start = time.perf_counter()
            receipt = await retention.compact(client, TENANT)
            data["compact_s"] = round(time.perf_counter() - start, 2)
            data["compacted"] = receipt.episodes
            data["after"] = await measure(client, memory)
        finally:
            await client.close()
            server.stop()
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--days", type=int, default=30)
    args = parser.parse_args()
    console = Console()
    data = asyncio.run(run(args.episodes, args.days, console))
    console.print(f"retention {args.days} days on {args.episodes:,} episodes: {data['compacted']:,} compacted "
                  f"in {data['compact_s']} s", soft_wrap=True)
    table = Table()
    table.add_column("figure")
    table.add_column("before", justify="right")
    table.add_column("after", justify="right")
    for key in data["before"]:
        table.add_row(key, str(data["before"][key]), str(data["after"][key]))
    console.print(table)
    out = REPO / "bench" / "results" / "retention.json"
    out.write_text(json.dumps(data, indent=2) + "\n")
    say(console, f"wrote {out}")


if __name__ == "__main__":
    main()
