"""Many tenants on one FalkorDB, measured: `python -m bench.tenants [--quick] [--max N] [--desk N]
[--shards N [--replicas R]]`.

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

`--shards N` grows the same tenants on an embedded FalkorDB cluster of N primaries with R replicas
each (`--replicas`, 1 by default, as `relay up --shards N` runs it: each write then waits for its
shard's replica), on free ports in a temp folder. The bytes per tenant are then the growth of
used_memory and RSS summed over the primaries (the replicas' sum printed apart), with the graphs
each shard holds; CPU at rest is every node's; forks are the primaries' (the replicas' apart). After
the extrapolation, on one server or a cluster: the shards of 16, 32 and 64 GB that 100,000 tenants
take at the last step's RSS per tenant, a third of each node kept free as docs/operations.md does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import os
import random
import tempfile
import time
import zlib
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Awaitable, Callable

import redis.asyncio as aioredis
from rich.console import Console
from rich.table import Table

from relay_graph.desk import vocabulary  # noqa: F401 - the desk's predicates, as the gateway has them
from relay_graph.memory import entity_graph, episodes, fact_embeddings, facts, retention
from relay_graph.memory.facade import Memory
from relay_graph.memory.models import EpisodeInput, FactInput
from relay_graph.runtime import cluster as cluster_mod
from relay_graph.runtime import outbox as outbox_mod
from relay_graph.runtime.cluster import EmbeddedCluster, free_ports
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
PLAN_TENANTS, NODE_GB = 100_000, (16, 32, 64)
# A node's memory kept free: an AOF rewrite's copy-on-write grows with the writes during it, and
# tenants grow (docs/operations.md, "Shards for 100,000 tenants").
HEADROOM = 1 / 3


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


class Topology:
    """Where the tenants live: one server, or an embedded cluster of `shards` primaries with `replicas`
    replicas each (primaries first in `nodes`, as cluster.layout orders them). Each node also gets a
    plain client of its own: INFO and GRAPH.LIST answer for the node asked, not for the cluster."""

    def __init__(self, tmp: Path, shards: int, replicas: int):
        self.shards, self.replicas = shards, replicas if shards else 0
        self.cluster: EmbeddedCluster | None = None
        if shards:
            self.cluster = EmbeddedCluster(tmp / "cluster", 0, shards=shards, replicas=replicas, log_dir=tmp / "logs",
                                           ports=free_ports(shards * (1 + replicas))).start()
            self.nodes = self.cluster.nodes
        else:
            self.nodes = [EmbeddedFalkorDB(tmp / "data", free_port(), log_file=tmp / "falkordb.log").start()]
        self.primaries = self.nodes[:max(shards, 1)]
        self.replica_nodes = self.nodes[len(self.primaries):]
        self.clients = {n.port: aioredis.Redis(host=n.host, port=n.port, decode_responses=True) for n in self.nodes}

    def settings(self, model_dir: Path) -> GraphSettings:
        if self.cluster:
            return GraphSettings(falkordb_cluster=self.cluster.seeds, model_dir=model_dir)
        server = self.nodes[0]
        return GraphSettings(falkordb_host=server.host, falkordb_port=server.port, model_dir=model_dir)

    def describe(self) -> str:
        if not self.cluster:
            return "one server"
        return f"{self.shards} shards ({self.shards} primaries, {self.replicas} replica(s) each)"

    async def info(self, nodes: list[EmbeddedFalkorDB], section: str) -> list[dict[str, Any]]:
        return [await self.clients[n.port].info(section) for n in nodes]

    async def memory(self, nodes: list[EmbeddedFalkorDB] | None = None) -> dict[str, int]:
        """used_memory and RSS summed over `nodes` (the primaries by default)."""
        infos = await self.info(nodes if nodes is not None else self.primaries, "memory")
        return {"used": sum(int(i["used_memory"]) for i in infos),
                "rss": sum(int(i["used_memory_rss"]) for i in infos)}

    async def graphs_per_shard(self) -> list[int]:
        return [len(await self.clients[n.port].execute_command("GRAPH.LIST")) for n in self.primaries]

    async def lost_primaries(self) -> list[int]:
        """Ports of primaries that are one no more: a failover mid-run would make the sums above
        another node's."""
        infos = await self.info(self.primaries, "replication")
        return [n.port for n, i in zip(self.primaries, infos) if i.get("role") != "master"]

    def cpu_s(self) -> float:
        return sum(pid_cpu_s(n.process.pid) for n in self.nodes)

    async def forks(self) -> dict[str, int]:
        stats = await self.info(self.primaries, "stats")
        persistence = await self.info(self.primaries, "persistence")
        out = {"total_forks": sum(int(s.get("total_forks", 0)) for s in stats),
               "latest_fork_usec": max(int(s.get("latest_fork_usec", 0)) for s in stats),
               "aof_rewrites": sum(int(p.get("aof_rewrites", 0)) for p in persistence)}
        if self.replica_nodes:
            replica_stats = await self.info(self.replica_nodes, "stats")
            out["replica_forks"] = sum(int(s.get("total_forks", 0)) for s in replica_stats)
        return out

    async def close(self) -> None:
        for c in self.clients.values():
            await c.aclose()

    def stop(self) -> None:
        if self.cluster:
            self.cluster.stop()
        else:
            self.nodes[0].stop()


async def graph_usage(client: GraphClient, tenant: str) -> dict[str, Any]:
    key = graph_name(tenant)
    # GRAPH.MEMORY is a module's command: the cluster client is told which node owns the key
    route = {"target_nodes": await cluster_mod.primary_for(client.redis, key)} if client.cluster else {}
    raw = await client.redis.execute_command("GRAPH.MEMORY", "USAGE", key, **route)
    usage = dict(zip(raw[::2], raw[1::2])) if isinstance(raw, list) else dict(raw)
    usage["telemetry_bytes"] = await client.redis.memory_usage(telemetry_key(key)) or 0
    return usage


class Run:
    def __init__(self, client: GraphClient, memory: Memory, pooled: PooledVectors, topology: Topology,
                 console: Console, *, desk: bool = False):
        self.client, self.memory, self.pooled, self.topology, self.console = client, memory, pooled, topology, console
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
        """FalkorDB's CPU (every node's, on a cluster) over `seconds` with nothing asked of it, as a
        share of one core."""
        before, start = self.topology.cpu_s(), time.perf_counter()
        await asyncio.sleep(seconds)
        return (self.topology.cpu_s() - before) / (time.perf_counter() - start)

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


async def memories(topology: Topology) -> dict[str, dict[str, int]]:
    out = {"primaries": await topology.memory()}
    if topology.replica_nodes:
        out["replicas"] = await topology.memory(topology.replica_nodes)
    return out


def per_tenant(mem: dict[str, dict[str, int]], last: dict[str, dict[str, int]], added: int) -> dict[str, float]:
    """Growth since the step before over the tenants added (MB), the primaries' and the replicas'."""
    out = {}
    for side, prefix in (("primaries", ""), ("replicas", "replica_")):
        if side in mem:
            out[f"{prefix}used_mb_per_tenant"] = (mem[side]["used"] - last[side]["used"]) / added / 1e6
            out[f"{prefix}rss_mb_per_tenant"] = (mem[side]["rss"] - last[side]["rss"]) / added / 1e6
    return out


async def spread(topology: Topology, console: Console) -> dict[str, Any]:
    """The graphs on each shard (a cluster only), and a warning if a primary is one no more."""
    if not topology.cluster:
        return {}
    lost = await topology.lost_primaries()
    if lost:
        say(console, f"[red]a failover happened: the nodes on ports {lost} are no longer primaries; the "
                     "figures summed over the primaries are not the tenants' from here[/red]")
    return {"graphs_per_shard": await topology.graphs_per_shard(), "lost_primaries": lost}


async def steps(run: Run, prefix: str, sizes: list[int]) -> list[dict[str, Any]]:
    topology, rows = run.topology, []
    await run.at_rest(1.0)
    base = await memories(topology)
    where = "empty server" if not topology.cluster else f"empty cluster, summed over the {topology.shards} primaries"
    say(run.console, f"{where}: used {base['primaries']['used'] / 1e6:.1f} MB, "
                     f"RSS {base['primaries']['rss'] / 1e6:.1f} MB")
    last, last_n = base, 0
    for size in sizes:
        say(run.console, f"{prefix}: growing to {size:,} tenants ...")
        creates = await run.grow(prefix, size)
        await asyncio.sleep(2.0)  # let FalkorDB's background work settle before reading its memory
        mem = await memories(topology)
        row: dict[str, Any] = {"tenants": size, "load_avg": os.getloadavg()[0], **per_tenant(mem, last, size - last_n),
                               "rss_mb_total": mem["primaries"]["rss"] / 1e6,
                               "create_p50_ms": percentile(creates, 50), "create_p95_ms": percentile(creates, 95)}
        row.update(await spread(topology, run.console))
        usage = await graph_usage(run.client, run.tenants[-1])
        row["graph_mb"] = float(usage.get("total_graph_sz_mb", 0))
        row["vector_index_mb"] = float(usage.get("indices_sz_mb", 0))
        row["telemetry_kb"] = usage["telemetry_bytes"] / 1e3
        row.update(await run.latencies())
        row["cpu_at_rest"] = await run.at_rest()
        row.update(await run.loops())
        row.update(await topology.forks())
        rows.append(row)
        say(run.console, json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}))
        last, last_n = await memories(topology), size
    return rows


def extrapolate(rows: list[dict[str, Any]], base_rss_mb: float) -> dict[str, float]:
    per = rows[-1]["rss_mb_per_tenant"]
    return {f"{n:,} tenants (extrapolated)": round(base_rss_mb + per * n, 1) for n in (10_000, 100_000)}


def planned_replicas(replicas: int) -> int:
    # at least one, as `relay up --shards` runs a shard: without one a shard is down for as long as
    # its primary is (nothing to fail over to); a replica is sized as its primary (a failover makes it one)
    return max(replicas, 1)


def shard_plan(per_tenant_mb: float, replicas: int, tenants: int = PLAN_TENANTS) -> list[dict[str, Any]]:
    """For each node size: the tenants a shard holds at `per_tenant_mb` with HEADROOM kept free, the
    shards (primaries) `tenants` take, and the nodes with planned_replicas(replicas) replicas each. GB
    are 1,000 MB, as docs/operations.md counts them. Empty when the figure is no growth at all (a
    small step on a noisy machine can measure that): nothing to plan from."""
    if per_tenant_mb <= 0:
        return []
    out = []
    for gb in NODE_GB:
        per_shard = int(gb * 1000 * (1 - HEADROOM) / per_tenant_mb)
        shards = math.ceil(tenants / per_shard)
        out.append({"node_gb": gb, "tenants_per_shard": per_shard, "shards": shards,
                    "nodes": shards * (1 + planned_replicas(replicas))})
    return out


def sizes_up_to(top: int, first: int = 10) -> list[int]:
    out, n = [], first
    while n < top:
        out.append(n)
        n *= 10
    return out + [top]


async def run(args: argparse.Namespace, console: Console) -> dict[str, Any]:
    data: dict[str, Any] = {"label": args.label, "pool": args.pool, "load_avg_before": os.getloadavg(),
                            "falkordb_module": os.environ.get("RELAY_FALKORDB_MODULE", "4.22.1"),
                            "shards": args.shards, "replicas": args.replicas if args.shards else 0}
    with tempfile.TemporaryDirectory(prefix="relay-bench-tenants-") as tmp:
        topology = Topology(Path(tmp), args.shards, args.replicas)
        try:
            say(console, f"FalkorDB: {topology.describe()}")
            await measure(args, topology, console, data)
        finally:
            try:
                await topology.close()
            finally:
                topology.stop()
    return data


async def measure(args: argparse.Namespace, topology: Topology, console: Console, data: dict[str, Any]) -> None:
    model_dir = Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model"))
    settings = topology.settings(model_dir)
    client = GraphClient(settings)
    try:
        embedder = Embedder(model_dir, batch_size=settings.embed_batch_size)
        pooled = PooledVectors(embedder, args.pool)
        memory = Memory(client, embedder)
        data["base_rss_mb"] = (await topology.memory())["rss"] / 1e6
        memory_only = Run(client, memory, pooled, topology, console)
        data["memory_only"] = await steps(memory_only, "mem", sizes_up_to(args.max))
        data["extrapolated"] = extrapolate(data["memory_only"], data["base_rss_mb"])
        data["shard_plan"] = shard_plan(data["memory_only"][-1]["rss_mb_per_tenant"], data["replicas"])
        if args.desk:
            desk = Run(client, memory, pooled, topology, console, desk=True)
            data["desk"] = await steps(desk, "desk", sizes_up_to(min(args.desk, 300)))
        data["load_avg_after"] = os.getloadavg()
    finally:
        await client.close()


COLUMNS = [("tenants", "{:,}"), ("load_avg", "{:.2f}"), ("used_mb_per_tenant", "{:.2f}"), ("rss_mb_per_tenant", "{:.2f}"),
           ("replica_used_mb_per_tenant", "{:.2f}"), ("replica_rss_mb_per_tenant", "{:.2f}"),
           ("graphs_per_shard", " / ".join), ("graph_mb", "{:.2f}"), ("telemetry_kb", "{:.0f}"),
           ("create_p50_ms", "{:.0f}"), ("create_p95_ms", "{:.0f}"),
           ("recall_p95_ms", "{:.1f}"), ("fact_write_p95_ms", "{:.1f}"), ("cpu_at_rest", "{:.1%}"),
           ("outbox_pass_1_ms", "{:.0f}"), ("outbox_pass_2_ms", "{:.0f}"), ("outbox_sweep_ms", "{:.0f}"),
           ("communities_round_ms", "{:.0f}"), ("retention_round_ms", "{:.0f}"), ("total_forks", "{}"),
           ("latest_fork_usec", "{}"), ("replica_forks", "{}")]


def cell(fmt: Any, value: Any) -> str:
    if isinstance(value, list):
        return fmt(str(v) for v in value)
    return fmt.format(value)


def table(title: str, rows: list[dict[str, Any]]) -> Table:
    t = Table(title=title)
    t.add_column("figure")
    for row in rows:
        t.add_column(f"{row['tenants']:,}", justify="right")
    for key, fmt in COLUMNS[1:]:
        if any(key in row for row in rows):  # a cluster's figures only on a cluster
            t.add_row(key, *(cell(fmt, row[key]) if key in row else "-" for row in rows))
    return t


def plan_table(data: dict[str, Any]) -> Table:
    per = data["memory_only"][-1]["rss_mb_per_tenant"]
    t = Table(title=f"shards for {PLAN_TENANTS:,} memory-only tenants at {per:.2f} MB RSS each, "
                    f"{HEADROOM:.0%} of each node kept free (arithmetic from this run)")
    replicas = planned_replicas(data["replicas"])
    for col in ("node RAM", "tenants per shard", "shards (primaries)", f"nodes with {replicas} replica(s) each"):
        t.add_column(col, justify="right")
    if not data["shard_plan"]:
        t.caption = "not planned: the last step measured no growth per tenant"
    for p in data["shard_plan"]:
        t.add_row(f"{p['node_gb']} GB", f"{p['tenants_per_shard']:,}", str(p["shards"]), str(p["nodes"]))
    return t


def print_results(console: Console, data: dict[str, Any], label: str) -> None:
    where = "one server" if not data["shards"] else f"{data['shards']} shards, {data['replicas']} replica(s) each"
    console.print(table(f"memory-only tenants ({FACTS} facts, {EPISODES} episodes each) on {where} {label}",
                        data["memory_only"]))
    if "desk" in data:
        console.print(table("desk tenants (the demo ISP's world, then the same memory)", data["desk"]))
    empty = "empty server RSS" if not data["shards"] else f"empty primaries' RSS (summed over {data['shards']})"
    console.print(f"{empty} {data['base_rss_mb']:.1f} MB; RSS at " + ", ".join(
        f"{k}: {v / 1000:.1f} GB" for k, v in data["extrapolated"].items()), soft_wrap=True)
    per = data["memory_only"][-1]["rss_mb_per_tenant"]
    summed = "" if not data["shards"] else f" (summed over the {data['shards']} primaries)"
    console.print(f"per-tenant RSS {per:.2f} MB{summed} x {PLAN_TENANTS:,} = {per * PLAN_TENANTS / 1000:.0f} GB",
                  soft_wrap=True)
    console.print(plan_table(data))
    console.print(f"load average {data['load_avg_before']} before, {data['load_avg_after']} after "
                  "(a shared machine: noisy figures)", soft_wrap=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="10 -> 100 memory-only tenants")
    parser.add_argument("--max", type=int, default=1000, help="the last step's memory-only tenants")
    parser.add_argument("--desk", type=int, default=0, help="also grow desk tenants (with their world) to N (<= 300)")
    parser.add_argument("--pool", type=int, default=64, help="model-made vectors the writes reuse")
    parser.add_argument("--label", default="", help="a note kept with the results (e.g. 'before')")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "tenants.json")
    parser.add_argument("--shards", type=int, default=0, help="an embedded cluster of N primaries (0: one server)")
    parser.add_argument("--replicas", type=int, default=1, help="with --shards: replicas per primary (relay up's 1)")
    args = parser.parse_args()
    if args.quick:
        args.max = min(args.max, 100)
    console = Console(width=160)
    logging.getLogger("relay_graph.runtime.outbox").setLevel(logging.ERROR)  # the kept announcements, on purpose
    data = asyncio.run(run(args, console))
    print_results(console, data, args.label)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
