"""Recall and fact writes on one server vs a 3-shard cluster vs the same cluster with replica reads,
and tickets/s by resolver replicas on one server vs the cluster, in one run: `python -m bench.cluster`
(`--quick`: a smoke run).

It starts its own FalkorDB server and its own embedded cluster of three primaries with a replica
each (relay_graph.runtime.cluster, free ports, temp folders), loads the same tenants into both (the desk's
seven facts per customer and support conversations with their embeddings, one shared embedder),
then measures, in alternating rounds so every topology sees the same neighbours:

1. fact writes/s: `write_fact`, one per call, WRITERS concurrent writers over the tenants, the
   same facts into both (on the cluster each write also waits for its replica: WAIT 1; with
   replica reads the writes are the same, to the primaries, so they are not measured twice);
2. recalls/s: `Memory.recall`, CONCURRENCY at once, over the tenants, the questions' vectors
   already cached (so the figure is the graph's and the client's, not the model's);

3. tickets/s with 1, 2 and 4 resolver replicas: the desk's processes (intake, resolver, netops and
   the gateway, started as `relay up` starts them: bench.desk) run on the server and on the cluster
   at once, and for each replica count the server's round and then the cluster's
   (bench.desk.throughput_round: TICKETS tickets opened and handed off in a fresh tenant, announced,
   timed until every one is fixed or sent to a technician);

and checks correctness: every topology gives the same answers (the top ten episode ids) to the
same question (an order may differ where two episodes score the same; `differences` shows them),
and every ticket of every round settles.
On a shared machine with two cores the six cluster nodes and the one server compete for the same
cores, so this shows the cluster's overhead (routing, WAIT, a second client) and that answers do
not change; CORE_PER_SHARD (printed after the tables) says what it would show with a core per shard.
The load average is recorded before and after. Results go to bench/results/cluster.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Console
from rich.table import Table

import httpx

from bench import desk as desk_bench
from bench.memory_core import conversation, fact_range, questions
from relay_graph.runtime.cluster import EmbeddedCluster, free_ports
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port
from relay_graph.runtime.embeddings import Embedder
from relay_graph.memory.facade import Memory
from relay_graph.runtime.streams import connect as streams_connect
from bench.registered import register

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "cluster.json"
WRITERS, CONCURRENCY = 8, 8
RESOLVER_REPLICAS = (1, 2, 4)
TICKETS, QUICK_TICKETS = 100, 8
CORE_PER_SHARD = (
    "With a core per shard (and per replica, and per resolver): a tenant's graph is one key, so each "
    "tenant's queries run on its shard's server and many tenants' on three servers at once; recall and "
    "fact writes over many tenants would scale toward three times one server's (each tenant still on one "
    "shard), less the WAIT each cluster write spends on its replica, and replica reads would add the "
    "replicas' cores to recall. Tickets/s would grow with resolver replicas until the shard holding the "
    "round's one tenant is busy (here every process shares two cores, so more replicas mostly share them); "
    "tickets of many tenants would spread over the shards.")


async def load(memory: Memory, tenants: list[str], customers: int, conversations: int) -> None:
    for i, t in enumerate(tenants):
        await memory.write_facts(t, fact_range(0, customers * 7))
        for c in range(conversations):
            await memory.write_episodes(t, conversation(c, customers, salt=f"{i}-"))


async def writes(memory: Memory, tenants: list[str], start: int, count: int) -> float:
    todo = iter(range(start, start + count))

    async def writer() -> None:
        for n in todo:
            [fact] = fact_range(n, n + 1)
            await memory.write_fact(tenants[n % len(tenants)], fact)

    t0 = time.perf_counter()
    await asyncio.gather(*(writer() for _ in range(WRITERS)))
    return count / (time.perf_counter() - t0)


async def recalls(memory: Memory, tenants: list[str], qs: list[dict], rounds: int) -> tuple[float, dict]:
    jobs = iter([(t, q) for _ in range(rounds) for t in tenants for q in qs])
    answers: dict[tuple[str, str], list[str]] = {}

    async def reader() -> None:
        for t, q in jobs:
            r = await memory.recall(t, q["q"], subject=q.get("subject"), k=10)
            answers[(t, q["q"])] = [i.episode_id for i in r.items]

    t0 = time.perf_counter()
    n = rounds * len(tenants) * len(qs)
    await asyncio.gather(*(reader() for _ in range(CONCURRENCY)))
    return n / (time.perf_counter() - t0), answers


async def tickets_by_replicas(workdir: Path, servers: dict, clients: dict[str, GraphClient], model_dir: Path,
                              tickets: int, console: Console) -> dict:
    """Part 3: the desk on each topology at once, then for each replica count a round on each."""
    progress = lambda text: desk_bench.say(console, text)  # noqa: E731
    stacks, rediss, https = {}, {}, {}
    try:
        for name, (db, seeds) in servers.items():
            progress(f"starting the desk's processes on {name} ...")
            stacks[name] = await asyncio.to_thread(desk_bench.start_stack, workdir / name.replace(" ", "-"), 1,
                                                   model_dir, falkordb=db, seeds=seeds)
            await desk_bench.wait_ready(stacks[name])
            rediss[name] = streams_connect(clients[name].settings)
            https[name] = httpx.AsyncClient(base_url=stacks[name].url, timeout=30.0, limits=desk_bench.HTTP_LIMITS)
        rounds: dict[str, dict[int, dict]] = {name: {} for name in servers}
        for n in RESOLVER_REPLICAS:
            for name in servers:
                progress(f"tickets/s on {name} with {n} resolver replica(s): {tickets} tickets "
                         f"(load average {desk_bench.load_avg()[0]})")
                r = await desk_bench.throughput_round(stacks[name], https[name], clients[name], rediss[name], n,
                                                      tickets, progress, timeout=600.0)
                rounds[name][n] = r
                progress(f"  {r['settled']}/{r['tickets']} settled in {r['seconds']}s: {r['tickets_per_s']} tickets/s")
                await desk_bench.wait_quiet(rediss[name])
        return rounds
    finally:
        for name in list(stacks):
            if name in https:
                await https[name].aclose()
            if name in rediss:
                await rediss[name].aclose()
            await asyncio.to_thread(stacks[name].stop)


async def run(quick: bool, console: Console) -> dict:
    customers, conversations = (20, 10) if quick else (60, 40)
    tenant_count, rounds, write_chunk, passes = (6, 1, 200, 1) if quick else (6, 2, 1000, 3)
    tenants = [f"bench-cl-{i}" for i in range(tenant_count)]
    model_dir = Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model"))
    embedder = Embedder(model_dir, threads=1)
    load_before = desk_bench.load_avg()
    with tempfile.TemporaryDirectory() as tmp:
        server = EmbeddedFalkorDB(Path(tmp) / "single", free_port()).start()
        cl = EmbeddedCluster(Path(tmp) / "cluster", 0, shards=3, replicas=1, ports=free_ports(6)).start()
        try:
            topologies = {
                "1 server": GraphSettings(falkordb_port=server.port, model_dir=model_dir),
                "3 shards": GraphSettings(falkordb_cluster=cl.seeds, model_dir=model_dir),
                "3 shards, replica reads": GraphSettings(falkordb_cluster=cl.seeds, read_from="replica",
                                                         model_dir=model_dir),
            }
            clients = {name: GraphClient(s) for name, s in topologies.items()}
            memories = {name: Memory(c, embedder) for name, c in clients.items()}
            for c in clients.values():  # the server and the cluster each have their registry
                await register(c.redis, *tenants)
            console.print(f"loading {tenant_count} tenants x ({customers * 7} facts, {conversations} conversations) "
                          "into the server and the cluster ...")
            await load(memories["1 server"], tenants, customers, conversations)
            await load(memories["3 shards"], tenants, customers, conversations)
            qs = questions(10 if quick else 25, customers)
            for q in qs:  # the vectors once, so recall measures the graph
                embedder.embed([q["q"]])
            figures = {name: {"writes_per_s": [], "recalls_per_s": []} for name in topologies}
            answers = {}
            next_fact = customers * 7
            for p in range(passes):
                # the same facts into the server and the cluster (replica reads write as "3 shards" does:
                # to the primaries), so both hold the same memory when recall is compared
                for name in ("1 server", "3 shards"):
                    figures[name]["writes_per_s"].append(await writes(memories[name], tenants, next_fact, write_chunk))
                next_fact += write_chunk
                for name, memory in memories.items():
                    rate, answers[name] = await recalls(memory, tenants, qs, rounds)
                    figures[name]["recalls_per_s"].append(rate)
                console.print(f"pass {p + 1}/{passes} done")
            base = answers["1 server"]
            for name in topologies:
                same = sum(answers[name][k] == base[k] for k in base)
                figures[name]["same_answers"] = f"{same}/{len(base)}"
                figures[name]["same_sets"] = f"{sum(set(answers[name][k]) == set(base[k]) for k in base)}/{len(base)}"
                figures[name]["differences"] = [{"tenant": k[0], "q": k[1], "1 server": base[k], name: answers[name][k]}
                                                for k in base if answers[name][k] != base[k]][:3]
                w = figures[name]["writes_per_s"]
                figures[name]["writes_per_s"] = round(sum(w) / len(w), 1) if w else None
                figures[name]["recalls_per_s"] = round(sum(figures[name]["recalls_per_s"]) / passes, 1)
            figures["3 shards, replica reads"]["replica_reads"] = clients["3 shards, replica reads"].replica_reads
            tickets = await tickets_by_replicas(Path(tmp) / "desk", {"1 server": (server, ""), "3 shards": (cl.nodes[0], cl.seeds)},
                                                clients, model_dir, QUICK_TICKETS if quick else TICKETS, console)
            for c in clients.values():
                await c.close()
        finally:
            cl.stop()
            server.stop()
    return {"started_at": datetime.now(timezone.utc).isoformat(), "quick": quick,
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "load_avg_before": load_before,
                        "load_avg_after": desk_bench.load_avg()},
            "sizes": {"tenants": tenant_count, "facts_loaded": customers * 7, "conversations": conversations,
                      "writers": WRITERS, "concurrency": CONCURRENCY, "passes": passes,
                      "tickets_per_round": QUICK_TICKETS if quick else TICKETS},
            "figures": figures,
            "tickets_per_second": {name: {str(n): r for n, r in by_n.items()} for name, by_n in tickets.items()},
            "with_a_core_per_shard": CORE_PER_SHARD}


def print_tables(console: Console, data: dict) -> None:
    table = Table(title="one server vs a 3-shard cluster (same machine, same run)")
    for col in ("topology", "fact writes/s", "recalls/s", "same top-10 as 1 server (set / order)"):
        table.add_column(col)
    for name, f in data["figures"].items():
        writes = f"{f['writes_per_s']:,}" if f["writes_per_s"] is not None else "(as 3 shards)"
        table.add_row(name, writes, f"{f['recalls_per_s']:,}", f"{f['same_sets']} / {f['same_answers']}")
    console.print(table)
    k = Table(title="tickets/s by resolver replicas (handed off -> fixed / technician; rounds alternate)")
    k.add_column("topology")
    for n in RESOLVER_REPLICAS:
        k.add_column(f"{n} replica{'s' if n > 1 else ''}: tickets/s (settled, 1-min load)")
    for name, by_n in data["tickets_per_second"].items():
        k.add_row(name, *(f"{r['tickets_per_s']} ({r['settled']}/{r['tickets']}, {r['load_avg_1m']})"
                          for r in by_n.values()))
    console.print(k)
    m = data["machine"]
    console.print(f"{m['cpus']} CPUs shared with whatever else runs: load average before {m['load_avg_before']}, "
                  f"after {m['load_avg_after']}; the figures move with it.")
    console.print(CORE_PER_SHARD)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    console = Console()
    data = asyncio.run(run(args.quick, console))
    print_tables(console, data)
    if not args.quick:
        RESULTS.write_text(json.dumps(data, indent=2) + "\n")
        console.print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
