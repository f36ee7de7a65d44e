"""Recall's cost before and after a change, in one run: `python -m bench.recall_ab [REF]` (default
`main`; `--quick`: 1,500 turns and 60 questions).

It loads bench.recall_hybrid's crowded tenant (10,000 turns of generated conversations, one tenant)
into its own FalkorDB through this checkout's write path, checks REF out into a temporary git
worktree, and starts two recall processes on that database (bench/recall_worker.py, the
gateway's model threads, no embedding cache): one with REF's code, one with this checkout's. Each
question goes to both, the one that goes first alternating, and then to the plain vector query
of the same database (the question embedded by an embedder of its own, the Episode vector index,
k=10), so the machine's load falls on all three alike. Printed: p50 / p95 of each, recall's p95
over the plain query's p95 for each side, statements per recall, and how many questions the two
sides answered with the same ids, with the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable

from rich.console import Console

from relay_graph.memory.facade import Memory
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embedded import EmbeddedFalkorDB, compact_aof, free_port
from relay_graph.runtime.embeddings import Embedder
from services.gateway.settings import GatewaySettings

from .memory_core import percentile, say
from .recall_hybrid import FULL, QUICK, crowd, load, plain_vector
from .registered import register

REPO = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).resolve().parent / "recall_worker.py"
TENANT = "crowd"


class Worker:
    """A recall process of one checkout."""

    def __init__(self, checkout: Path, port: int, model_dir: Path, threads: int):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(checkout / "libs"), str(checkout)])}
        self.proc = subprocess.Popen([sys.executable, str(WORKER), str(port), TENANT, str(model_dir), str(threads)],
                                     cwd=checkout, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        if message:
            self.proc.stdin.write(json.dumps(message) + "\n")  # type: ignore[union-attr]
            self.proc.stdin.flush()  # type: ignore[union-attr]
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        if not line:
            raise SystemExit(f"a recall worker stopped (exit {self.proc.wait()})")
        return json.loads(line)

    def stop(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


async def run(ref: str, *, quick: bool) -> dict[str, Any]:
    sizes = QUICK if quick else FULL
    model_dir = Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model"))
    threads = GatewaySettings.model_fields["embed_threads"].default
    out: dict[str, Any] = {"ref": ref, "load_avg_before": [round(x, 2) for x in os.getloadavg()]}
    with tempfile.TemporaryDirectory(prefix="relay-ab-") as tmp:
        server = EmbeddedFalkorDB(Path(tmp) / "data", free_port(), log_file=Path(tmp) / "falkordb.log")
        server.start()
        client = GraphClient(GraphSettings(falkordb_host=server.host, falkordb_port=server.port, model_dir=model_dir))
        before_dir = Path(tmp) / "before"
        workers: list[Worker] = []
        try:
            turns, qs = crowd(sizes, sizes.latency_episodes)
            await register(client.redis, TENANT)
            console = Console()
            say_ = lambda text: say(console, text)  # noqa: E731
            say_(f"loading {len(turns):,} turns into one tenant ...")
            await load(Memory(client, Embedder(model_dir, cache_size=50_000)), TENANT, turns)
            await asyncio.to_thread(compact_aof, server.host, server.port, 120.0)
            subprocess.run(["git", "worktree", "add", "--detach", str(before_dir), ref], cwd=REPO, check=True,
                           capture_output=True)
            workers = [Worker(checkout, server.port, model_dir, threads) for checkout in (before_dir, REPO)]
            for w in workers:
                w.ask({})  # ready
            plain = Embedder(model_dir, cache_size=1, threads=threads)
            await plain_vector(client, plain, TENANT, "warm up the plain query")
            qs = random.Random(5).sample(qs, min(sizes.latency_calls, len(qs)))
            say_(f"{len(qs)} questions, each to {ref}, to this checkout and to the plain vector query ...")
            got: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
            base: list[float] = []
            for i, q in enumerate(qs):
                order = (("before", workers[0]), ("after", workers[1]))
                for side, w in (order if i % 2 == 0 else order[::-1]):
                    got[side].append(w.ask({"q": q.q}))
                start = time.perf_counter()
                await plain_vector(client, plain, TENANT, q.q)
                base.append((time.perf_counter() - start) * 1000)
        finally:
            for w in workers:
                w.stop()
            subprocess.run(["git", "worktree", "remove", "--force", str(before_dir)], cwd=REPO, check=False,
                           capture_output=True)
            await client.close()
            server.stop()
    base_p95 = percentile(base, 95)
    for side, rows in got.items():
        ms = [r["ms"] for r in rows]
        out[side] = {"p50_ms": round(percentile(ms, 50), 2), "p95_ms": round(percentile(ms, 95), 2),
                     "p95_over_plain_vector": round(percentile(ms, 95) / base_p95, 2),
                     "statements_per_recall": round(sum(r["statements"] for r in rows) / len(rows), 2)}
    out["plain_vector"] = {"p50_ms": round(percentile(base, 50), 2), "p95_ms": round(base_p95, 2)}
    out["same_answer"] = sum(a["ids"] == b["ids"] for a, b in zip(got["before"], got["after"]))
    out["questions"] = len(base)
    out["episodes"] = sizes.latency_episodes
    out["load_avg_after"] = [round(x, 2) for x in os.getloadavg()]
    return out


def print_report(r: dict[str, Any]) -> None:
    print(f"\nrecall at {r['episodes']:,} episodes, {r['questions']} questions, alternated; load average "
          f"{r['load_avg_before']} -> {r['load_avg_after']}")
    print(f"{'':28}{r['ref'] + ' (before)':>22}{'this checkout (after)':>24}")
    for label, key in (("recall p50 ms", "p50_ms"), ("recall p95 ms", "p95_ms"),
                       ("p95 / plain vector p95", "p95_over_plain_vector"),
                       ("statements per recall", "statements_per_recall")):
        print(f"{label:28}{r['before'][key]:>22}{r['after'][key]:>24}")
    print(f"plain vector query p50 / p95: {r['plain_vector']['p50_ms']} / {r['plain_vector']['p95_ms']} ms; "
          f"the same ids from both sides for {r['same_answer']} of {r['questions']} questions")


def parse(argv: Iterable[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.recall_ab", description=__doc__.split("\n\n")[0])
    ap.add_argument("ref", nargs="?", default="main", help="the code before (a git ref; default main)")
    ap.add_argument("--quick", action="store_true", help="1,500 turns and 60 questions")
    ap.add_argument("--out", type=Path, default=None, help="also write the figures here (JSON)")
    return ap.parse_args(list(argv) if argv is not None else None)


def main(argv: Iterable[str] | None = None) -> dict[str, Any]:
    args = parse(argv)
    report = asyncio.run(run(args.ref, quick=args.quick))
    print_report(report)
    if args.out is not None:
        args.out.write_text(json.dumps(report, indent=2) + "\n")
    return report


if __name__ == "__main__":
    main()
