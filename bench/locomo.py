"""Relay's recall on real conversations (LoCoMo), against the standard retrievers, in one run:
`python -m bench.locomo` (`--quick`: two conversations, no ablation).

Data: the five LoCoMo conversations in `shared/data/locomo-dev/` (CC BY-NC 4.0: read from there at
run time, never copied into this repository; `--data` or RELAY_LOCOMO_DIR points elsewhere).
Categories as the original LoCoMo code numbers them: 1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop, 5 adversarial (CATEGORIES). Halves, by conversation: DEV = 26, 30, 41 (the only ones recall's signals and the abstention
threshold were tuned on), TEST = 42, 43 (measured, never tuned on). Figures are printed for each
half and for the whole set.

1. Starts FalkorDB and a real gateway process (`python -m services.gateway`, as `relay up` starts
   it), creates one tenant per conversation and loads every session through `POST /episodes`
   (client ids "26/D1:3", the speaker, the session's date for each of its turns, the text as it
   is: line breaks, tabs and emoji joiners included).
2. Asks every question through `GET /recall?k=20`, and the same turns of the three standard
   retrievers computed here, in the same run, as the data's README describes: BM25 (rank_bm25
   Okapi over lower-cased word tokens), the vector store (the same embedder, cosine) and their
   reciprocal-rank fusion (1 / (60 + rank)), each over "[date] speaker: text".
3. Prints evidence any-hit@1/5/10/20 per category for the four side by side (a question counts at
   k when any of its evidence turns is among the first k), the abstention figures (adversarial
   questions answered `not_in_graph`; answerable questions wrongly so), and recall's latency
   through HTTP (noisy on a shared machine).
4. Ablation (dev half, the library's recall on the same graph, one signal's weight set to 0 at a
   time): what each signal earns.

Writes bench/results/locomo.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import secrets
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Sequence

import httpx
import numpy as np
from rank_bm25 import BM25Okapi
from rich.console import Console
from rich.table import Table

from relay_cli.services import by_name, service_env
from relay_cli.supervisor import SupervisedFalkorDB, spawn, stop_processes, tail
from relay_graph.memory.recall import tuning
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embedded import free_port
from relay_graph.runtime.embeddings import Embedder
from relay_graph.memory.facade import Memory
from relay_graph.memory.models import RecallShape

from .memory_core import percentile, say

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "locomo.json"
DEV = ("26", "30", "41")
TEST = ("42", "43")
CUTS = (1, 5, 10, 20)
K = max(CUTS)
RRF_K = 60
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
SYSTEMS = ("bm25", "vector", "fusion", "relay")
_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", re.I)
_TOKEN = re.compile(r"\w+")


# ------------------------------------------------------------------ the data


@dataclass(frozen=True)
class Turn:
    id: str  # "26/D1:3"
    session: str  # "26/session_1"
    speaker: str
    text: str
    at: datetime
    date_text: str  # the session's date as the data writes it ("1:56 pm on 8 May, 2023")


@dataclass(frozen=True)
class Question:
    conversation: str
    q: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    name: str
    speakers: tuple[str, str]
    turns: list[Turn]
    questions: list[Question]


def data_dir(given: Path | None = None) -> Path:
    """The folder of the conversations: given, RELAY_LOCOMO_DIR, or shared/ beside the repository
    (a worktree's shared/ is one level further up)."""
    if given is not None:
        return given
    if os.environ.get("RELAY_LOCOMO_DIR"):
        return Path(os.environ["RELAY_LOCOMO_DIR"])
    for base in (REPO.parent, REPO.parents[1]):
        path = base / "shared" / "data" / "locomo-dev"
        if path.is_dir():
            return path
    raise SystemExit("no LoCoMo data: shared/data/locomo-dev not found beside the repository (use --data)")


def session_time(text: str) -> datetime:
    """"1:56 pm on 8 May, 2023" -> that time (UTC: the data gives no zone)."""
    m = _DATE.search(text)
    if not m:
        raise ValueError(f"unreadable session date {text!r}")
    hour, minute, ampm, day, month, year = m.groups()
    h = int(hour) % 12 + (12 if ampm.lower() == "pm" else 0)
    when = datetime.strptime(f"{day} {month[:3]} {year}", "%d %b %Y")
    return when.replace(hour=h, minute=int(minute), tzinfo=timezone.utc)


def load_conversation(path: Path) -> Conversation:
    d = json.loads(path.read_text())
    name = path.stem
    turns: list[Turn] = []
    n = 1
    while f"session_{n}_date_time" in d:
        date_text = d[f"session_{n}_date_time"]
        at = session_time(date_text)
        for t in d.get(f"session_{n}") or []:
            turns.append(Turn(f"{name}/{t['dia_id']}", f"{name}/session_{n}", t["speaker"], t["text"], at, date_text))
        n += 1
    # a question without evidence cannot be scored (two in conversation 26): left out, as the data's README does
    questions = [Question(name, qa["question"], int(qa["category"]), tuple(f"{name}/{e}" for e in qa["evidence"]))
                 for qa in d["qa"] if qa["evidence"]]
    return Conversation(name, (d["speaker_a"], d["speaker_b"]), turns, questions)


def half(name: str) -> str:
    return "dev" if name in DEV else "test"


# ------------------------------------------------------------------ the standard retrievers


def baseline_text(t: Turn) -> str:
    return f"[{t.date_text}] {t.speaker}: {t.text}"


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


class Baselines:
    """BM25, the vector store and their reciprocal-rank fusion over one conversation's turns."""

    def __init__(self, embedder: Embedder, turns: Sequence[Turn]):
        self.embedder = embedder
        self.ids = [t.id for t in turns]
        texts = [baseline_text(t) for t in turns]
        self.bm25 = BM25Okapi([tokens(x) for x in texts])
        m = np.asarray(embedder.embed(texts), dtype=np.float32)
        self.matrix = m / np.linalg.norm(m, axis=1, keepdims=True)

    async def search(self, q: str, k: int = K) -> dict[str, list[str]]:
        bm = self.bm25.get_scores(tokens(q))
        v = np.asarray((await self.embedder.aembed([q]))[0], dtype=np.float32)
        cos = self.matrix @ (v / np.linalg.norm(v))
        by_bm = [self.ids[i] for i in np.argsort(-bm, kind="stable")]
        by_vec = [self.ids[i] for i in np.argsort(-cos, kind="stable")]
        fused: dict[str, float] = {}
        for ranked in (by_bm, by_vec):
            for r, i in enumerate(ranked, 1):
                fused[i] = fused.get(i, 0.0) + 1.0 / (RRF_K + r)
        by_rrf = sorted(fused, key=lambda i: -fused[i])
        return {"bm25": by_bm[:k], "vector": by_vec[:k], "fusion": by_rrf[:k]}


# ------------------------------------------------------------------ the gateway


@dataclass
class Gateway:
    falkordb: SupervisedFalkorDB
    proc: Any
    port: int
    admin_key: str
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        stop_processes([self.proc], timeout=20.0)
        self.falkordb.stop()


def start_gateway(workdir: Path, model_dir: Path) -> Gateway:
    (workdir / "logs").mkdir(parents=True, exist_ok=True)
    db = SupervisedFalkorDB(workdir / "falkordb", free_port(), log_file=workdir / "logs" / "falkordb.log").start()
    port, admin = free_port(), "bench-" + secrets.token_urlsafe(24)
    base = {k: v for k, v in os.environ.items() if k not in ("GROQ_API_KEY", "RELAY_GROQ_API_KEY")}
    # the bench measures recall, not the per-key rate limit; no desk agents run beside it
    base.update({"RELAY_RATE_LIMIT_PER_SECOND": "100000", "RELAY_RATE_LIMIT_BURST": "100000",
                 "RELAY_READY_AGENTS": "[]", "RELAY_LOG_LEVEL": os.environ.get("RELAY_LOG_LEVEL", "warning")})
    spec = by_name("gateway")
    env = service_env(spec, 1, base=base, falkordb_port=db.port, admin_key=admin, gateway_port=port,
                      model_dir=model_dir)
    log = workdir / "logs" / "gateway.log"
    try:
        proc = spawn(spec.command(sys.executable), log_path=log, env=env)
    except BaseException:
        db.stop()
        raise
    return Gateway(db, proc, port, admin, log)


async def wait_ready(gw: Gateway, timeout: float = 300.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    async with httpx.AsyncClient(timeout=3.0) as http:
        while loop.time() < deadline:
            if gw.proc.poll() is not None:
                raise RuntimeError(f"the gateway exited with {gw.proc.returncode}:\n{tail(gw.log)}")
            try:
                if (await http.get(f"{gw.url}/readyz")).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.25)
    raise RuntimeError(f"the gateway was not ready after {timeout:g}s:\n{tail(gw.log)}")


def tenant_of(name: str) -> str:
    return f"locomo-{name}"


async def create_tenant(http: httpx.AsyncClient, admin_key: str, tenant: str) -> dict[str, str]:
    r = await http.post("/v1/tenants", json={"tenant": tenant, "world": False}, headers={"Authorization": f"Bearer {admin_key}"})
    r.raise_for_status()
    return {"Authorization": f"Bearer {r.json()['api_key']}"}


def _body(t: Turn) -> dict[str, Any]:
    return {"id": t.id, "session": t.session, "speaker": t.speaker, "text": t.text, "at": t.at.isoformat()}


async def load(http: httpx.AsyncClient, headers: dict[str, str], c: Conversation) -> dict[str, int]:
    """Every session in one POST, its turns as they are (line breaks, tabs, emoji joiners): a
    refusal is an error of the run, not something to work around."""
    url = f"/v1/tenants/{tenant_of(c.name)}/episodes"
    sessions: dict[str, list[Turn]] = {}
    for t in c.turns:
        sessions.setdefault(t.session, []).append(t)
    for turns in sessions.values():
        r = await http.post(url, json={"episodes": [_body(t) for t in turns]}, headers=headers)
        if r.status_code != 201:
            raise RuntimeError(f"POST /episodes refused session {turns[0].session}: {r.status_code} {r.text[:300]}")
    return {"turns": len(c.turns), "sessions": len(sessions)}


async def ask(http: httpx.AsyncClient, headers: dict[str, str], q: Question) -> tuple[list[str], str, float]:
    start = time.perf_counter()
    r = await http.get(f"/v1/tenants/{tenant_of(q.conversation)}/recall", params={"q": q.q, "k": K},
                       headers=headers)
    ms = (time.perf_counter() - start) * 1000
    r.raise_for_status()
    body = r.json()
    return [i["episode_id"] for i in body["items"]], body["shape"], ms


# ------------------------------------------------------------------ scoring


def hit(found: Sequence[str], evidence: Sequence[str], k: int) -> bool:
    top = set(found[:k])
    return any(e in top for e in evidence)


def score(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """rows: {category, evidence, found}; any-hit@k per category and over the answerable ones."""
    out: dict[str, Any] = {}
    groups = [(CATEGORIES[c], [r for r in rows if r["category"] == c]) for c in sorted(CATEGORIES)]
    groups.append(("answerable", [r for r in rows if r["category"] != 5]))
    for name, sel in groups:
        if sel:
            out[name] = {"n": len(sel)} | {f"@{k}": round(statistics.fmean(hit(r["found"], r["evidence"], k)
                                                                           for r in sel), 4) for k in CUTS}
    return out


def abstention(rows: list[dict[str, Any]]) -> dict[str, Any]:
    adv = [r for r in rows if r["category"] == 5]
    ans = [r for r in rows if r["category"] != 5]
    said = lambda sel: sum(r["shape"] == RecallShape.NOT_IN_GRAPH.value for r in sel)  # noqa: E731
    return {"adversarial": len(adv), "adversarial_not_in_graph": said(adv),
            "adversarial_rate": round(said(adv) / len(adv), 4) if adv else None,
            "answerable": len(ans), "answerable_not_in_graph": said(ans),
            "answerable_rate": round(said(ans) / len(ans), 4) if ans else None}


# ------------------------------------------------------------------ ablation (dev half, the library)


ABLATIONS = ("vector", "words", "speakers", "time", "spoken_then", "dated", "neighbours", "entities", "joined")


async def ablation(memory: Memory, convs: list[Conversation], console: Console) -> dict[str, Any]:
    """Dev-half any-hit@k of the library's recall on the gateway's graph, as shipped and with each
    signal's weight set to 0 in turn (the module's weights are restored afterwards)."""
    saved = dict(tuning.WEIGHTS)
    qs = [q for c in convs if half(c.name) == "dev" for q in c.questions if q.category != 5]
    out: dict[str, Any] = {}
    try:
        for off in (None,) + ABLATIONS:
            tuning.WEIGHTS.clear()
            tuning.WEIGHTS.update(saved | ({off: 0.0} if off else {}))
            rows = []
            for q in qs:
                r = await memory.recall(tenant_of(q.conversation), q.q, k=K)
                rows.append({"category": q.category, "evidence": q.evidence, "found": [i.episode_id for i in r.items]})
            s = score(rows)["answerable"]
            out[off or "all signals"] = s
            say(console, f"  without {off or '(nothing)'}: " + " ".join(f"@{k} {s[f'@{k}']:.3f}" for k in CUTS))
    finally:
        tuning.WEIGHTS.clear()
        tuning.WEIGHTS.update(saved)
    return out


# ------------------------------------------------------------------ the run


async def run(*, names: Sequence[str], out: Path | None, data: Path | None, with_ablation: bool,
              console: Console | None = None) -> dict[str, Any]:
    console = console or Console(width=170)
    folder = data_dir(data)
    convs = [load_conversation(folder / f"{n}.json") for n in names]
    model_dir = Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model"))
    result: dict[str, Any] = {
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "halves": {"dev": [n for n in names if n in DEV], "test": [n for n in names if n not in DEV]},
        "weights": dict(tuning.WEIGHTS), "k": K,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_avg_before": [round(x, 2) for x in os.getloadavg()]},
        "set": {c.name: {"turns": len(c.turns), "questions": len(c.questions)} for c in convs},
    }
    with tempfile.TemporaryDirectory(prefix="relay-locomo-") as tmp:
        say(console, "starting FalkorDB and the gateway ...")
        gw = start_gateway(Path(tmp), model_dir)
        client = None
        try:
            say(console, f"loading the embedding model from {model_dir} (for the standard retrievers)")
            embedder = Embedder(model_dir, cache_size=50_000)
            await wait_ready(gw)
            rows: dict[str, list[dict[str, Any]]] = {s: [] for s in SYSTEMS}
            times: list[float] = []
            loaded: dict[str, dict[str, int]] = {}
            async with httpx.AsyncClient(base_url=gw.url, timeout=60.0) as http:
                for c in convs:
                    headers = await create_tenant(http, gw.admin_key, tenant_of(c.name))
                    start = time.perf_counter()
                    loaded[c.name] = await load(http, headers, c) | {"seconds": round(time.perf_counter() - start, 1)}
                    say(console, f"conversation {c.name}: {len(c.turns)} turns through POST /episodes "
                                 f"{loaded[c.name]}; asking its {len(c.questions)} questions ...")
                    base = Baselines(embedder, c.turns)
                    await ask(http, headers, Question(c.name, "warm up", 4, ()))
                    for q in c.questions:
                        found, shape, ms = await ask(http, headers, q)
                        times.append(ms)
                        other = await base.search(q.q)
                        common = {"conversation": c.name, "category": q.category, "evidence": q.evidence}
                        rows["relay"].append(common | {"found": found, "shape": shape})
                        for s in ("bm25", "vector", "fusion"):
                            rows[s].append(common | {"found": other[s]})
            result["loaded"] = loaded
            result["accuracy"] = {}
            for part in ("dev", "test", "all"):
                sel = lambda r: part == "all" or half(r["conversation"]) == part  # noqa: E731
                if any(sel(r) for r in rows["relay"]):
                    result["accuracy"][part] = {s: score([r for r in rows[s] if sel(r)]) for s in SYSTEMS}
            result["abstention"] = {part: abstention([r for r in rows["relay"]
                                                      if part == "all" or half(r["conversation"]) == part])
                                    for part in ("dev", "test", "all")}
            result["latency"] = {"calls": len(times), "p50_ms": round(percentile(times, 50), 2),
                                 "p95_ms": round(percentile(times, 95), 2), "max_ms": round(max(times), 2),
                                 "through": "GET /recall k=20, HTTP round trip, one client, sequential"}
            if with_ablation:
                say(console, "ablation on the dev half (the library's recall on the same graph) ...")
                client = GraphClient(GraphSettings(falkordb_host="127.0.0.1", falkordb_port=gw.falkordb.port,
                                                   model_dir=model_dir))
                result["ablation_dev"] = await ablation(Memory(client, embedder), convs, console)
        finally:
            if client is not None:
                await client.close()
            gw.stop()
    result["machine"]["load_avg_after"] = [round(x, 2) for x in os.getloadavg()]
    print_tables(console, result)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")
        say(console, f"results written to {out}")
    return result


# ------------------------------------------------------------------ printing


def accuracy_table(title: str, acc: dict[str, Any]) -> Table:
    table = Table(title=title)
    table.add_column("category")
    table.add_column("n", justify="right")
    for s in SYSTEMS:
        for k in CUTS:
            table.add_column(f"{s} @{k}", justify="right")
    for cat, v in acc["relay"].items():
        cells = [f"{100 * acc[s][cat][f'@{k}']:.1f}" for s in SYSTEMS for k in CUTS]
        table.add_row(cat, str(v["n"]), *cells, style="bold" if cat == "answerable" else None)
    return table


def print_tables(console: Console, data: dict[str, Any]) -> None:
    for part, acc in data["accuracy"].items():
        names = ", ".join(data["halves"]["dev"] if part == "dev" else data["halves"]["test"] if part == "test"
                          else data["halves"]["dev"] + data["halves"]["test"])
        console.print(accuracy_table(f"LoCoMo {part.upper()} ({names}): evidence any-hit@k, % "
                                     "(adversarial: its evidence is the turn the question twists)", acc))
    t = Table(title="Knowing when it does not know: answered not_in_graph")
    for col in ("half", "adversarial", "answerable (wrongly)"):
        t.add_column(col, justify="right")
    for part, a in data["abstention"].items():
        if a["adversarial"] or a["answerable"]:
            t.add_row(part, f"{a['adversarial_not_in_graph']} / {a['adversarial']}",
                      f"{a['answerable_not_in_graph']} / {a['answerable']}")
    console.print(t)
    lat = data["latency"]
    console.print(f"recall latency through HTTP ({lat['calls']} calls, k={data['k']}, few hundred turns per tenant; "
                  f"noisy on a shared machine): p50 {lat['p50_ms']:.1f} ms, p95 {lat['p95_ms']:.1f} ms, "
                  f"max {lat['max_ms']:.1f} ms")
    if "ablation_dev" in data:
        t = Table(title="Ablation, DEV half, answerable questions: any-hit@k, % (one signal's weight at 0)")
        t.add_column("recall without")
        for k in CUTS:
            t.add_column(f"@{k}", justify="right")
        for name, s in data["ablation_dev"].items():
            t.add_row(name, *[f"{100 * s[f'@{k}']:.1f}" for k in CUTS])
        console.print(t)
    m = data["machine"]
    console.print(f"{m['cpus']} CPUs; load average before {m['load_avg_before']}, after {m['load_avg_after']}")


def parse(argv: Iterable[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.locomo", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one dev and one test conversation, no ablation")
    ap.add_argument("--no-ablation", action="store_true", help="skip the dev-half ablation")
    ap.add_argument("--only", nargs="*", help="these conversations only (e.g. 26 30)")
    ap.add_argument("--data", type=Path, default=None, help="the folder of the conversations' JSON files")
    ap.add_argument("--out", type=Path, default=RESULTS, help=f"where the JSON goes (default {RESULTS})")
    return ap.parse_args(list(argv) if argv is not None else None)


def main(argv: Iterable[str] | None = None) -> dict[str, Any]:
    args = parse(argv)
    names = args.only or (["30", "42"] if args.quick else list(DEV + TEST))
    return asyncio.run(run(names=names, out=args.out, data=args.data,
                           with_ablation=not (args.quick or args.no_ablation)))


if __name__ == "__main__":
    main()
