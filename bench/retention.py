"""Retention, measured: `python -m bench.retention [--episodes N] [--days D] [--pool P]`.

Starts its own FalkorDB (a free port, a temp folder), loads the real embedding model, writes N
episodes (default 2,000) of one tenant spread evenly over the last 365 days (one session per
day, one customer per ten sessions) through the library's write path (`episodes.write_episodes`,
batches of 500), then measures the graph (nodes, edges, GRAPH.MEMORY USAGE) and
`recall(q, k=10)` (p50 / p95 over distinct questions, each embedded by the model) before and
after the tenant's retention of D days (default 30) is applied. Both columns come from the same
run. Prints a table and writes bench/results/retention.json (with `--out`, elsewhere).

`--pool P` (default 0: every text through the model) embeds only P distinct episode texts with the
real model and gives each episode one of those vectors (by its number): at 100,000 episodes the
model on a shared 2-core machine would take most of the run, and what is measured (the graph's
size, compaction, recall over the vector index and the signals) does not depend on which
model-made vector an episode carries. The texts stay distinct, so the full-text index is as big as
it would be.
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

from relay_graph.memory import episodes as episodes_mod
from relay_graph.memory import retention
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port
from relay_graph.runtime.embeddings import Embedder
from relay_graph.memory.facade import Memory
from relay_graph.memory.models import EpisodeInput
from relay_graph.runtime.queries import Query
from relay_graph.runtime.tenancy import graph_name
from bench.registered import register

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


class PooledVectors:
    """An embedder for the episodes' write: P model-made vectors, episode i gets vector i mod P
    (the episode's number is its text's first word after "Message")."""

    def __init__(self, embedder: Embedder, texts: list[str]):
        self.vectors = embedder.embed(texts)

    async def aembed(self, texts: list[str]) -> list[list[float]]:
        return [self.vectors[int(t.split()[1].rstrip(":")) % len(self.vectors)] for t in texts]


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


async def run(n: int, days: int, console: Console, pool: int = 0, batch: int = 500) -> dict:
    model_dir = Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model"))
    data: dict = {"episodes_written": n, "retention_days": days, "vector_pool": pool or None,
                  "falkordb_module": os.environ.get("RELAY_FALKORDB_MODULE", "4.22.1"),
                  "load_avg_before": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="relay-bench-") as tmp:
        server = EmbeddedFalkorDB(Path(tmp) / "data", free_port(), log_file=Path(tmp) / "falkordb.log").start()
        settings = GraphSettings(falkordb_host=server.host, falkordb_port=server.port, model_dir=model_dir)
        client = GraphClient(settings)
        try:
            embedder = Embedder(model_dir, batch_size=settings.embed_batch_size)
            memory = Memory(client, embedder)
            await register(client.redis, TENANT)
            now = datetime.now(timezone.utc)
            items = episodes(n, now)
            writer = PooledVectors(embedder, [e.text for e in items[:pool]]) if pool else embedder
            say(console, f"writing {n:,} episodes over 365 days{f' ({pool:,} model vectors reused)' if pool else ''} ...")
            start = time.perf_counter()
            for b in range(0, n, batch):
                await episodes_mod.write_episodes(client, writer, TENANT, items[b:b + batch])
                if (b + batch) % 10_000 < batch:
                    say(console, f"  {min(n, b + batch):,} written, {time.perf_counter() - start:.0f} s")
            data["write_s"] = round(time.perf_counter() - start, 1)
            say(console, f"written in {data['write_s']} s; measuring before ...")
            data["before"] = await measure(client, memory)
            await retention.set_retention(client, TENANT, days)
            start = time.perf_counter()
            receipt = await retention.compact(client, TENANT)
            data["compact_s"] = round(time.perf_counter() - start, 2)
            data["compacted"] = receipt.episodes
            say(console, f"compacted {receipt.episodes:,} in {data['compact_s']} s; measuring after ...")
            data["after"] = await measure(client, memory)
            data["load_avg_after"] = os.getloadavg()
        finally:
            await client.close()
            server.stop()
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--pool", type=int, default=0, help="model-made vectors reused by the episodes (0: every text)")
    parser.add_argument("--batch", type=int, default=500, help="episodes per write (at most 500)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "retention.json")
    args = parser.parse_args()
    console = Console()
    data = asyncio.run(run(args.episodes, args.days, console, args.pool, args.batch))
    console.print(f"retention {args.days} days on {args.episodes:,} episodes: {data['compacted']:,} compacted "
                  f"in {data['compact_s']} s", soft_wrap=True)
    table = Table()
    table.add_column("figure")
    table.add_column("before", justify="right")
    table.add_column("after", justify="right")
    for key in data["before"]:
        table.add_row(key, str(data["before"][key]), str(data["after"][key]))
    console.print(table)
    console.print(f"load average {data['load_avg_before']} before, {data['load_avg_after']} after "
                  "(a shared machine: noisy figures)", soft_wrap=True)
    out = args.out
    out.write_text(json.dumps(data, indent=2) + "\n")
    say(console, f"wrote {out}")


if __name__ == "__main__":
    main()
