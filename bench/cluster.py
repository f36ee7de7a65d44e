"""Recall and fact writes on one server vs a 3-shard cluster vs the same cluster with replica reads,
in one run: `python -m bench.cluster` (`--quick`: a smoke run).

It starts its own FalkorDB server and its own embedded cluster of three primaries with a replica
each (relay_graph.runtime.cluster, free ports, temp folders), loads the same tenants into both (the desk's
seven facts per customer and support conversations with their embeddings, one shared embedder),
then measures, in alternating rounds so every topology sees the same neighbours:

1. fact writes/s: `write_fact`, one per call, WRITERS concurrent writers over the tenants, the
   same facts into both (on the cluster each write also waits for its replica: WAIT 1; with
   replica reads the writes are the same, to the primaries, so they are not measured twice);
2. recalls/s: `Memory.recall`, CONCURRENCY at once, over the tenants, the questions' vectors
   already cached (so the figure is the graph's and the client's, not the model's);

and checks correctness: every topology gives the same answers (the top ten episode ids) to the
same question (an order may differ where two episodes score the same; `differences` shows them).
On a shared machine with two cores the six cluster nodes and the one server compete for the same
cores, so this shows the cluster's overhead (routing, WAIT, a second client) and that answers do
not change; with a core per shard, the tenants' queries would run on three servers' cores in
parallel, so throughput over many tenants would scale toward three times one server's (each
tenant's queries still run on one shard), and replica reads would add the replicas' cores.
Results go to bench/results/cluster.json.
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

from bench.memory_core import conversation, fact_range, questions
from relay_graph.runtime.cluster import EmbeddedCluster, free_ports
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port
from relay_graph.runtime.embeddings import Embedder
from relay_graph.memory.facade import Memory

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "cluster.json"
WRITERS, CONCURRENCY = 8, 8


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


async def run(quick: bool, console: Console) -> dict:
    customers, conversations = (20, 10) if quick else (60, 40)
    tenant_count, rounds, write_chunk, passes = (6, 1, 200, 1) if quick else (6, 2, 1000, 3)
    tenants = [f"bench-cl-{i}" for i in range(tenant_count)]
    model_dir = Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model"))
    embedder = Embedder(model_dir, threads=1)
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
            for c in clients.values():
                await c.close()
        finally:
            cl.stop()
            server.stop()
    return {"started_at": datetime.now(timezone.utc).isoformat(), "quick": quick,
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
            "sizes": {"tenants": tenant_count, "facts_loaded": customers * 7, "conversations": conversations,
                      "writers": WRITERS, "concurrency": CONCURRENCY, "passes": passes},
            "figures": figures}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    console = Console()
    data = asyncio.run(run(args.quick, console))
    table = Table(title="one server vs a 3-shard cluster (same machine, same run)")
    for col in ("topology", "fact writes/s", "recalls/s", "same top-10 as 1 server (set / order)"):
        table.add_column(col)
    for name, f in data["figures"].items():
        writes = f"{f['writes_per_s']:,}" if f["writes_per_s"] is not None else "(as 3 shards)"
        table.add_row(name, writes, f"{f['recalls_per_s']:,}", f"{f['same_sets']} / {f['same_answers']}")
    console.print(table)
    if not args.quick:
        RESULTS.write_text(json.dumps(data, indent=2) + "\n")
        console.print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
