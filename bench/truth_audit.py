"""The truth audit over a simulator run: `python -m bench.truth_audit [--minutes 3]`.

It starts its own FalkorDB and the desk as `relay up` does (bench.desk.start_stack: intake, resolver,
netops, gateway; no LLM key), makes a tenant, subscribes to its live feed (WS /v1/tenants/{t}/live)
and then starts the simulator (services/simulator) in that tenant for a bounded time. At each
`reply` event, the moment the desk's words go out, it reads through the public API what the graph
holds for that customer then (the reply's text and the customer's turns from /episodes, their
tickets with steps, visits and promises from /tickets, their facts now and before from /facts and
/facts/history) and checks every sentence of the reply with bench.truth_checks: ids and internals,
UTC, times in the customer's zone that are on file, the stage named, "visited" only after a visit,
places that are the customer's or asked about, coverage that agrees with the tenant's network (its
city hubs on the console's map, read once). The auditor shares no code with the desk's reply
check.

Printed, and written to bench/results/truth_audit.json: replies and sentences checked, sentences
failed (goal 0) with each failure, by rule; the stage checks left unsettled because the ticket
moved on before it could be read; the load average before and after."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import secrets
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from rich.console import Console

from bench import truth_checks as tc

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "truth_audit.json"
DEFAULT_MINUTES = 3.0
CONCURRENCY = 4  # checks reading the API at once (each reads a handful of routes)
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?$")
_COVERAGE = re.compile(r"\b(?:cover|coverage|serve|service in|services? (?:in|at)|available in|do you (?:have|offer)"
                       r" .* in|which cities|where do you)\b", re.I)
_PLACE_PREDICATES = re.compile(r"lives|area|address|city|moved", re.I)


@dataclass
class Audited:
    reply: str
    session: str
    customer: str | None
    ticket: str | None
    at: str
    sentences: int
    failures: list[dict[str, str]]
    unsettled: bool  # the ticket moved on before it was read: its stage was not judged
    text: str = ""


@dataclass
class Audit:
    served: frozenset[str] | None = None  # the tenant's served cities, folded (its network's city hubs)
    events: Counter = field(default_factory=Counter)
    missed: int = 0
    audited: list[Audited] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _datetimes(value: Any) -> list[datetime]:
    """Every ISO time anywhere in an API answer."""
    out: list[datetime] = []
    if isinstance(value, dict):
        for v in value.values():
            out += _datetimes(v)
    elif isinstance(value, list):
        for v in value:
            out += _datetimes(v)
    elif isinstance(value, str) and _ISO.match(value):
        with contextlib.suppress(ValueError):
            t = datetime.fromisoformat(value.replace("Z", "+00:00"))
            out.append(t if t.tzinfo else t.replace(tzinfo=timezone.utc))
    return out


def _at(event: dict[str, Any]) -> datetime:
    t = datetime.fromisoformat(str(event["at"]).replace("Z", "+00:00"))
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


async def _get(http: httpx.AsyncClient, path: str, **params: Any) -> Any:
    r = await http.get(path, params={k: v for k, v in params.items() if v is not None})
    r.raise_for_status()
    return r.json()


async def _session(http: httpx.AsyncClient, tenant: str, session: str) -> list[dict[str, Any]]:
    out, after = [], None
    while True:
        page = await _get(http, f"/v1/tenants/{tenant}/episodes", session=session, after=after, limit=1000)
        out += page["episodes"]
        after = page.get("next")
        if not after:
            return out


FOOTPRINT = REPO / "libs" / "relay_graph" / "desk" / "catalogue" / "data" / "footprint.json"


async def served_cities(http: httpx.AsyncClient, tenant: str) -> frozenset[str]:
    """The cities served: those with a city hub on the tenant's map (this desk), and the operator's
    published footprint (every region's served cities, its desks elsewhere: the data file, read as
    data)."""
    nodes = (await _get(http, f"/v1/console/tenants/{tenant}/network/map")).get("nodes", [])
    hubs = {p for n in nodes if n.get("kind") == "Pop" and n.get("city") for p in tc.known_place(n["city"])}
    published = json.loads(FOOTPRINT.read_text())["cities"]
    return frozenset(hubs | {p for c in published for name in {c["name"], c.get("gazetteer_name") or c["name"]}
                             for p in tc.known_place(name)})


async def moment_of(http: httpx.AsyncClient, tenant: str, event: dict[str, Any], served: frozenset[str] | None = None
                    ) -> tuple[str, str | None, tc.Moment, bool]:
    """(the reply's text, the customer, what the graph held for them now, whether the stage is unsettled)."""
    at = _at(event)
    episodes = await _session(http, tenant, event["session"])
    mine = next((e for e in episodes if e["episode_id"] == event["id"]), None)
    text = mine["text"] if mine else ""
    turns = [e for e in episodes if e["kind"] == "CustomerMessage"]
    asked = next((e for e in turns if e["episode_id"] == event.get("reply_to")), None)
    customer = (asked or (turns[-1] if turns else {})).get("speaker")
    named = frozenset(p for e in turns for p in tc.known_place(e["text"]))
    coverage = bool(asked and _COVERAGE.search(asked["text"]))
    if customer is None:
        return text, None, tc.Moment(at=at, named_places=named, coverage_question=coverage, served=served), False

    listed = (await _get(http, f"/v1/tenants/{tenant}/tickets", customer=customer)).get("tickets", [])
    ids = [t["id"] for t in listed][:6]
    if event.get("ticket_id") and event["ticket_id"] not in ids:
        ids.append(event["ticket_id"])
    tickets = []
    for tid in ids:
        r = await http.get(f"/v1/tenants/{tenant}/tickets/{quote(tid, safe='')}")
        if r.status_code == 200:
            tickets.append(r.json())
    about = next((t for t in tickets if t["id"] == event.get("ticket_id")), None)
    if about is None:
        open_ = [t for t in tickets if t.get("closed_at") is None]
        about = max(open_ or tickets, key=lambda t: t["updated_at"], default=None)
    def moved(t: dict[str, Any]) -> bool:  # changed after the reply went out: its stage then is not known
        return datetime.fromisoformat(t["updated_at"].replace("Z", "+00:00")) > at

    unsettled = bool(about and moved(about))
    stages = frozenset() if about is None or unsettled else frozenset({about["stage"]})

    facts = (await _get(http, f"/v1/tenants/{tenant}/facts", subject=customer)).get("facts", [])
    history = (await _get(http, f"/v1/tenants/{tenant}/facts/history", subject=customer)).get("facts", [])
    places = [f for f in [*facts, *history] if _PLACE_PREDICATES.search(f.get("predicate", ""))]
    own = frozenset(p for f in places for p in tc.known_place(str(f.get("object", ""))))
    city = next((f["object"] for f in facts if f.get("predicate") == "lives_in"), None)
    names = frozenset(w for f in [*facts, *history] if f.get("predicate") == "name" for w in tc.fold(str(f["object"])).split())
    return text, customer, tc.Moment(
        at=at, zone=tc.zone_of_city(city), times=tuple(_datetimes(tickets) + _datetimes(facts) + _datetimes(history)),
        stages=stages, has_ticket=bool(tickets), ticket_stages={t["id"]: t["stage"] for t in tickets if not moved(t)},
        booked=frozenset(x for t in tickets if any(v.get("status") == "scheduled" for v in t.get("visits", []))
                         for x in (t["id"], *([""] if t is about else []))),
        visit_done=any(v.get("status") == "done" for t in tickets for v in t.get("visits", [])),
        own_places=own, named_places=named, coverage_question=coverage, own_names=names, served=served), unsettled


async def audit_reply(http: httpx.AsyncClient, tenant: str, event: dict[str, Any], audit: Audit) -> None:
    try:
        text, customer, moment, unsettled = await moment_of(http, tenant, event, audit.served)
    except (httpx.HTTPError, KeyError, ValueError) as exc:
        audit.errors.append(f"reply {event.get('id')}: {exc!r}"[:300])
        return
    checked = tc.check_reply(text, moment)
    audit.audited.append(Audited(event["id"], event["session"], customer, event.get("ticket_id"), event["at"],
                                 checked.sentences, [asdict(f) for f in checked.failures], unsettled, text))


async def listen(url: str, tenant: str, key: str, http: httpx.AsyncClient, audit: Audit,
                 subscribed: asyncio.Event, stop: asyncio.Event) -> None:
    """Reads the live feed until `stop`; each reply event is audited at once (a few at a time)."""
    from websockets.asyncio.client import connect

    limit = asyncio.Semaphore(CONCURRENCY)
    pending: set[asyncio.Task] = set()

    async def one(event: dict[str, Any]) -> None:
        async with limit:
            await audit_reply(http, tenant, event, audit)

    ws_url = url.replace("http://", "ws://", 1) + f"/v1/tenants/{tenant}/live"
    async with connect(ws_url, additional_headers={"Authorization": f"Bearer {key}"}, max_queue=None) as ws:
        subscribed.set()
        while not stop.is_set():
            try:
                raw = await asyncio.wait_for(ws.recv(), timeout=0.5)
            except asyncio.TimeoutError:
                continue
            event = json.loads(raw)
            audit.events[event.get("kind", "?")] += 1
            audit.missed += int(event.get("missed", 0))
            if event.get("kind") == "reply":
                task = asyncio.create_task(one(event))
                pending.add(task)
                task.add_done_callback(pending.discard)
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)


def summary(audit: Audit) -> dict[str, Any]:
    failed = [(a, f) for a in audit.audited for f in a.failures]
    failed_sentences = {(a.reply, f["sentence"]) for a, f in failed}
    return {
        "replies": len(audit.audited),
        "sentences": sum(a.sentences for a in audit.audited),
        "failed_sentences": len(failed_sentences),
        "by_rule": dict(Counter(f["rule"] for _, f in failed).most_common()),
        "unsettled_stage_checks": sum(a.unsettled for a in audit.audited),
        "events": dict(audit.events),
        "missed_events": audit.missed,
        "errors": audit.errors[:50],
        "failures": [{**f, "customer": a.customer, "ticket": a.ticket, "at": a.at} for a, f in failed],
    }


def print_summary(console: Console, data: dict[str, Any]) -> None:
    s = data["summary"]
    console.print(f"Truth audit ({data['minutes']:g} min of the simulator at {data['speed']:g} simulated h/s): "
                  f"{s['sentences']} sentences in {s['replies']} replies checked, {s['failed_sentences']} failed "
                  f"(goal 0); load average before {data['machine']['load_avg_before']}, after "
                  f"{data['machine']['load_avg_after']}")
    console.print(f"failures by rule: {s['by_rule'] or 'none'}; stage checks unsettled (the ticket moved on "
                  f"before it was read): {s['unsettled_stage_checks']}; live events {s['events']}, missed "
                  f"{s['missed_events']}; audit errors {len(s['errors'])}")
    for f in s["failures"]:
        console.print(f"[red]{f['rule']}[/red] {f['detail']}: {f['sentence']!r}", markup=True, highlight=False)


async def run(*, minutes: float = DEFAULT_MINUTES, speed: float = 4.0, customers: int = 12, seed: int = 7,
              out: Path | None = RESULTS, console: Console | None = None) -> dict[str, Any]:
    from bench.desk import HTTP_LIMITS, load_avg, start_stack, wait_ready
    from relay_graph.runtime.config import GraphSettings

    console = console or Console()
    before = load_avg()
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    audit = Audit()
    with tempfile.TemporaryDirectory(prefix="relay-truth-") as tmp:
        stack = start_stack(Path(tmp), 1, GraphSettings().model_dir)
        try:
            await wait_ready(stack)
            tenant = "truth-" + secrets.token_hex(4)
            async with httpx.AsyncClient(base_url=stack.url, timeout=30, limits=HTTP_LIMITS) as admin:
                r = await admin.post("/v1/tenants", json={"tenant": tenant},
                                     headers={"Authorization": f"Bearer {stack.admin_key}"})
                r.raise_for_status()
                key = r.json()["api_key"]
            async with httpx.AsyncClient(base_url=stack.url, timeout=30, limits=HTTP_LIMITS,
                                         headers={"Authorization": f"Bearer {key}"}) as http:
                audit.served = await served_cities(http, tenant)
                stop, subscribed = asyncio.Event(), asyncio.Event()
                listener = asyncio.create_task(listen(stack.url, tenant, key, http, audit, subscribed, stop))
                await asyncio.wait_for(subscribed.wait(), 60)
                stack.base_env.update(RELAY_TENANT=tenant, RELAY_TENANT_KEY=key, RELAY_SPEED=str(speed),
                                      RELAY_CUSTOMERS=str(customers), RELAY_SEED=str(seed))
                stack.start("simulator")
                t0 = time.monotonic()
                while time.monotonic() - t0 < minutes * 60:
                    stack.check_alive()
                    await asyncio.sleep(1.0)
                stack.stop_service("simulator")
                await asyncio.sleep(3.0)  # the replies to the last turns come through the feed
                stop.set()
                await listener
        finally:
            stack.stop()
    data = {"started_at": started_at, "minutes": minutes, "speed": speed, "customers": customers, "seed": seed,
            "summary": summary(audit),
            "machine": {"cpus": os.cpu_count(), "load_avg_before": before, "load_avg_after": load_avg()},
            "llm": False, "replies": [asdict(a) for a in audit.audited]}
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    print_summary(console, data)
    return data


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=DEFAULT_MINUTES, help="how long the simulator plays")
    ap.add_argument("--speed", type=float, default=4.0, help="simulated hours per second (0.5 to 8)")
    ap.add_argument("--customers", type=int, default=12, help="simulated customers per round")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    asyncio.run(run(minutes=args.minutes, speed=args.speed, customers=args.customers, seed=args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
