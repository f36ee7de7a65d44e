"""Many tenants on one FalkorDB, measured: `python -m bench.tenants [--quick] [--max N] [--desk N]`.

Starts its own FalkorDB (a free port, a temp folder, the configuration `relay up` gives it), loads
the real embedding model, and grows memory-only tenants (`"world": false`: what the client and the
examples create) in steps, 10 -> 100 -> 1,000 (`--quick`: 10 -> 100; `--max N`: up to N, each
step ten times the last). Each tenant is made as the library makes one (registered, then its first
fact written: the graph and what it needs are made by that write), then given 100 facts and 50
episodes. Vectors come from a pool of model-made vectors (`--pool`, as `bench.retention` does): the
model on a shared two-core machine would otherwise take most of the run, and what is measured (the
graphs' size, their indexes, the loops' cost) does not depend on which vector a text carries.

Per step it prints:
- bytes per tenant: FalkorDB's used_memory and RSS (the memory the machine gives it), each as the
  growth since the step before divided by the tenants added; one tenant's GRAPH.MEMORY USAGE and
  its telemetry stream's MEMORY USAGE;
- create p50/p95 (register + first fact), recall and fact-write p95 on random tenants (recall
  embeds its question with the real model, a fact write embeds its claim);
- FalkorDB's CPU at rest (share of one core over a few idle seconds) and its forks so far (total,
  the longest of the latest);
- the background loops' time per pass: the outbox relay right after one announcement to every
  tenant (first pass, then the next one) and a full sweep's pass, a communities round and a
  retention round as netops runs them (each bounded: a round takes at most its batch).

Then the extrapolation of RSS to 10,000 and 100,000 tenants, labelled as such: the last step's
figure per tenant times the count, plus the empty server. `--desk N` also grows tenants with the
demo ISP's world (10 -> 100 -> N, N at most 300). Writes bench/results/tenants.json (`--out`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import tempfile
import time
import zlib
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Awaitable, Callable

from rich.console import Console
from rich.table import Table

from relay_graph.desk import vocabulary  # noqa: F401 - the desk's predicates, as the gateway has them
from relay_graph.memory import entity_graph, episodes, fact_embeddings, facts, retention
from relay_graph.memory.facade import Memory
from relay_graph.memory.models import EpisodeInput, FactInput
from relay_graph.runtime import outbox as outbox_mod
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.db import GraphClient, telemetry_key
from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port
from relay_graph.runtime.embeddings import Embedder
from relay_graph.runtime.streams import FactChanged
from relay_graph.runtime.tenancy import graph_name

from bench.registered import register

from .memory_core import percentile, pid_cpu_s, say

REPO = Path(__file__).resolve().parents[1]
CITIES = ["pune", "mumbai", "delhi", "chennai", "kolkata", "jaipur", "surat", "nagpur", "indore", "bhopal"]
PLACES = ["goa", "paris", "kyoto", "lisbon", "cairo", "lima", "oslo", "hanoi"]
PETS = ["a cat", "a dog", "a parrot", "a rabbit"]
TOPICS = ["router", "fibre", "bill", "speed", "outage", "wifi", "refund", "move", "plan", "modem"]
QUESTIONS = [f"what did they say about the {t}?" for t in TOPICS] + [f"who lives in {c}?" for c in CITIES]
FACTS, EPISODES, SAMPLE = 100, 50, 30


class PooledVectors:
    """An embedder for the writes: P model-made vectors, a text gets the one its CRC picks."""

    def __init__(self, embedder: Embedder, size: int):
        self.vectors = embedder.embed([f"sample text {i} about the {TOPICS[i % len(TOPICS)]}" for i in range(size)])

    async def aembed(self, texts: list[str]) -> list[list[float]]:
        return [self.vectors[zlib.crc32(t.encode()) % len(self.vectors)] for t in texts]


def tenant_facts(n: int) -> list[FactInput]:
    """n facts about n/5 people: where they live, two places visited, whom they know, a pet."""
    out: list[FactInput] = []
    for i in range(n):
        person, kind = f"person {i // 5}", i % 5
        if kind == 0:
            out.append(FactInput(subject=person, predicate="lives_in", object=CITIES[i % len(CITIES)], agent="bench"))
        elif kind in (1, 2):
            out.append(FactInput(subject=person, predicate="visited", object=PLACES[(i + kind) % len(PLACES)],
                                 agent="bench"))
        elif kind == 3:
            out.append(FactInput(subject=person, predicate="knows", object=f"person {(i // 5 + 1) % (n // 5)}",
                                 agent="bench"))
        else:
            out.append(FactInput(subject=person, predicate="has_pet", object=PETS[i % len(PETS)], agent="bench"))
    return out


def tenant_episodes(n: int, now: datetime) -> list[EpisodeInput]:
    return [EpisodeInput(session=f"s-{i // 10}", speaker=f"Person {i % 7}", id=f"ep-{i}",
                         at=now - timedelta(days=i, minutes=i),
                         text=f"Turn {i}: my {TOPICS[i % len(TOPICS)]} has trouble number {i * 7919 % 10007} again")
            for i in range(n)]


async def timed(fn: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await fn()
    return (time.perf_counter() - start) * 1000


async def memory_info(client: GraphClient) -> dict[str, int]:
    info = await client.redis.info("memory")
    return {"used": int(info["used_memory"]), "rss": int(info["used_memory_rss"])}


async def graph_usage(client: GraphClient, tenant: str) -> dict[str, Any]:
    raw = await client.redis.execute_command("GRAPH.MEMORY", "USAGE", graph_name(tenant))
    usage = dict(zip(raw[::2], raw[1::2])) if isinstance(raw, list) else dict(raw)
    usage["telemetry_bytes"] = await client.redis.memory_usage(telemetry_key(graph_name(tenant))) or 0
    return usage


class Run:
    def __init__(self, client: GraphClient, memory: Memory, pooled: PooledVectors, server: EmbeddedFalkorDB,
                 console: Console, *, desk: bool = False):
        self.client, self.memory, self.pooled, self.server, self.console = client, memory, pooled, server, console
        self.desk = desk
        self.tenants: list[str] = []
        self.now = datetime.now(timezone.utc)

    async def make_tenant(self, tenant: str) -> float:
        """Creates one tenant and fills it; returns its create time (ms: register + first fact)."""
        items = tenant_facts(FACTS)
        start = time.perf_counter()
        await register(self.client.redis, tenant)
        if self.desk:
            from relay_graph.lab import world  # the demo ISP's world, as POST /v1/tenants seeds it

            await world.seed_world(self.client, tenant, "india")
        first = await facts.write_facts(self.client, tenant, items[:1])
        created = (time.perf_counter() - start) * 1000
        rest = await facts.write_facts(self.client, tenant, items[1:])
        await fact_embeddings.embed_facts(self.client, self.pooled, tenant, first + rest)
        await episodes.write_episodes(self.client, self.pooled, tenant, tenant_episodes(EPISODES, self.now))
        return created

    async def grow(self, prefix: str, to: int) -> list[float]:
        creates = []
        while len(self.tenants) < to:
            tenant = f"{prefix}-{len(self.tenants):06d}"
            creates.append(await self.make_tenant(tenant))
            self.tenants.append(tenant)
            if len(self.tenants) % 100 == 0:
                say(self.console, f"  {len(self.tenants):,} tenants")
        return creates

    async def at_rest(self, seconds: float = 5.0) -> float:
        """FalkorDB's CPU over `seconds` with nothing asked of it, as a share of one core."""
        pid = self.server.process.pid
        before, start = pid_cpu_s(pid), time.perf_counter()
        await asyncio.sleep(seconds)
        return (pid_cpu_s(pid) - before) / (time.perf_counter() - start)

    async def loops(self) -> dict[str, float]:
        """Each background loop's one pass, as the services run them (ms)."""
        async def publish(_notifications) -> None:
            raise RuntimeError("streams down")  # kept: the relay finds each tenant's announcement

        box = outbox_mod.Outbox(self.client, self.client.redis, publish)
        for tenant in self.tenants:  # one announcement to every tenant, left for the relay
            await box.announce(tenant, [FactChanged(tenant=tenant, id="f-bench", version=1, actor="bench",
                                                     change="created")])
        sent = outbox_mod.Outbox(self.client, self.client.redis, _published)
        out = {"outbox_pass_1_ms": await timed(lambda: sent.relay_pass(older_than_s=0)),
               "outbox_pass_2_ms": await timed(lambda: sent.relay_pass(older_than_s=0)),
               "outbox_sweep_ms": await timed(lambda: sent.relay_pass(older_than_s=0, sweep=True))}
        out.update(await maintenance_passes(self.client))
        return out

    async def latencies(self) -> dict[str, float]:
        rng = random.Random(len(self.tenants))
        picks = [rng.choice(self.tenants) for _ in range(SAMPLE)]
        await self.memory.recall(picks[0], "warm the model up")
        recall_ms = [await timed(lambda t=t, i=i: self.memory.recall(t, QUESTIONS[i % len(QUESTIONS)], k=10))
                     for i, t in enumerate(picks)]
        write_ms = [await timed(lambda t=t, i=i: self.memory.write_fact(
            t, FactInput(subject=f"person {i % 20}", predicate="lives_in", object=CITIES[(i + 3) % len(CITIES)],
                         agent="bench-write"), embed=True)) for i, t in enumerate(picks)]
        return {"recall_p95_ms": percentile(recall_ms, 95), "fact_write_p95_ms": percentile(write_ms, 95)}


async def _published(_notifications) -> None:
    return None


async def maintenance_passes(client: GraphClient) -> dict[str, float]:
    """One communities round and one retention round, as netops runs them (ms): a round takes the
    tenants changed since their last run (every tenant was just written to), a bounded number."""
    return {"communities_round_ms": await timed(lambda: entity_graph.refresh_changed(client, settle_s=0)),
            "retention_round_ms": await timed(lambda: retention.compact_due(client, every_s=3600))}


async def forks(client: GraphClient) -> dict[str, int]:
    stats = await client.redis.info("stats")
    persistence = await client.redis.info("persistence")
    return {"total_forks": int(stats.get("total_forks", 0)), "latest_fork_usec": int(stats.get("latest_fork_usec", 0)),
            "aof_rewrites": int(persistence.get("aof_rewrites", 0))}


async def steps(run: Run, prefix: str, sizes: list[int]) -> list[dict[str, Any]]:
    client, rows = run.client, []
    await run.at_rest(1.0)
    base = await memory_info(client)
    say(run.console, f"empty server: used {base['used'] / 1e6:.1f} MB, RSS {base['rss'] / 1e6:.1f} MB")
    last, last_n = base, 0
    for size in sizes:
        say(run.console, f"{prefix}: growing to {size:,} tenants ...")
        creates = await run.grow(prefix, size)
        await asyncio.sleep(2.0)  # let FalkorDB's background work settle before reading its memory
        mem = await memory_info(client)
        added = size - last_n
        row: dict[str, Any] = {
            "tenants": size, "load_avg": os.getloadavg()[0],
            "used_mb_per_tenant": (mem["used"] - last["used"]) / added / 1e6,
            "rss_mb_per_tenant": (mem["rss"] - last["rss"]) / added / 1e6,
            "rss_mb_total": mem["rss"] / 1e6,
            "create_p50_ms": percentile(creates, 50), "create_p95_ms": percentile(creates, 95),
        }
        usage = await graph_usage(client, run.tenants[-1])
        row["graph_mb"] = float(usage.get("total_graph_sz_mb", 0))
        row["vector_index_mb"] = float(usage.get("indices_sz_mb", 0))
        row["telemetry_kb"] = usage["telemetry_bytes"] / 1e3
        row.update(await run.latencies())
        row["cpu_at_rest"] = await run.at_rest()
        row.update(await run.loops())
        row.update(await forks(client))
        rows.append(row)
        say(run.console, json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}))
        last, last_n = await memory_info(client), size
    return rows


def extrapolate(rows: list[dict[str, Any]], base_rss_mb: float) -> dict[str, float]:
    per = rows[-1]["rss_mb_per_tenant"]
    return {f"{n:,} tenants (extrapolated)": round(base_rss_mb + per * n, 1) for n in (10_000, 100_000)}


def sizes_up_to(top: int, first: int = 10) -> list[int]:
    out, n = [], first
    while n < top:
        out.append(n)
        n *= 10
    return out + [top]


async def run(args: argparse.Namespace, console: Console) -> dict[str, Any]:
    model_dir = Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model"))
    data: dict[str, Any] = {"label": args.label, "pool": args.pool, "load_avg_before": os.getloadavg(),
                            "falkordb_module": os.environ.get("RELAY_FALKORDB_MODULE", "4.22.1")}
    with tempfile.TemporaryDirectory(prefix="relay-bench-tenants-") as tmp:
        server = EmbeddedFalkorDB(Path(tmp) / "data", free_port(), log_file=Path(tmp) / "falkordb.log").start()
        settings = GraphSettings(falkordb_host=server.host, falkordb_port=server.port, model_dir=model_dir)
        client = GraphClient(settings)
        try:
            embedder = Embedder(model_dir, batch_size=settings.embed_batch_size)
            pooled = PooledVectors(embedder, args.pool)
            memory = Memory(client, embedder)
            base = await memory_info(client)
            data["base_rss_mb"] = base["rss"] / 1e6
            memory_only = Run(client, memory, pooled, server, console)
            data["memory_only"] = await steps(memory_only, "mem", sizes_up_to(args.max))
            data["extrapolated"] = extrapolate(data["memory_only"], data["base_rss_mb"])
            if args.desk:
                desk = Run(client, memory, pooled, server, console, desk=True)
                data["desk"] = await steps(desk, "desk", sizes_up_to(min(args.desk, 300)))
            data["load_avg_after"] = os.getloadavg()
        finally:
            await client.close()
            server.stop()
    return data


COLUMNS = [("tenants", "{:,}"), ("load_avg", "{:.2f}"), ("used_mb_per_tenant", "{:.2f}"), ("rss_mb_per_tenant", "{:.2f}"),
           ("graph_mb", "{:.2f}"), ("telemetry_kb", "{:.0f}"), ("create_p50_ms", "{:.0f}"), ("create_p95_ms", "{:.0f}"),
           ("recall_p95_ms", "{:.1f}"), ("fact_write_p95_ms", "{:.1f}"), ("cpu_at_rest", "{:.1%}"),
           ("outbox_pass_1_ms", "{:.0f}"), ("outbox_pass_2_ms", "{:.0f}"), ("outbox_sweep_ms", "{:.0f}"),
           ("communities_round_ms", "{:.0f}"), ("retention_round_ms", "{:.0f}"), ("total_forks", "{}"),
           ("latest_fork_usec", "{}")]


def table(title: str, rows: list[dict[str, Any]]) -> Table:
    t = Table(title=title)
    t.add_column("figure")
    for row in rows:
        t.add_column(f"{row['tenants']:,}", justify="right")
    for key, fmt in COLUMNS[1:]:
        t.add_row(key, *(fmt.format(row[key]) if key in row else "-" for row in rows))
    return t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="10 -> 100 memory-only tenants")
    parser.add_argument("--max", type=int, default=1000, help="the last step's memory-only tenants")
    parser.add_argument("--desk", type=int, default=0, help="also grow desk tenants (with their world) to N (<= 300)")
    parser.add_argument("--pool", type=int, default=64, help="model-made vectors the writes reuse")
    parser.add_argument("--label", default="", help="a note kept with the results (e.g. 'before')")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "tenants.json")
    args = parser.parse_args()
    if args.quick:
        args.max = min(args.max, 100)
    console = Console(width=160)
    logging.getLogger("relay_graph.runtime.outbox").setLevel(logging.ERROR)  # the kept announcements, on purpose
    data = asyncio.run(run(args, console))
    console.print(table(f"memory-only tenants ({FACTS} facts, {EPISODES} episodes each) {args.label}",
                        data["memory_only"]))
    if "desk" in data:
        console.print(table("desk tenants (the demo ISP's world, then the same memory)", data["desk"]))
    console.print(f"empty server RSS {data['base_rss_mb']:.1f} MB; RSS at " + ", ".join(
        f"{k}: {v / 1000:.1f} GB" for k, v in data["extrapolated"].items()), soft_wrap=True)
    console.print(f"load average {data['load_avg_before']} before, {data['load_avg_after']} after "
                  "(a shared machine: noisy figures)", soft_wrap=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
