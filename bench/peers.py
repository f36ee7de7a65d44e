"""The peer, side by side: Graphiti (graphiti-core) and Relay on one seeded workload, on the same
FalkorDB with the same embedder, in alternating rounds: `python -m bench.peers` (`--quick`: a small
run). Needs the optional extra `peers` (`pip install -e .[peers]`: graphiti-core, pinned); without
it Graphiti is skipped and said so. Not part of `make test` or `make bench`.

Workload (seeded, SEED): customers with four facts each (where they live, their plan, their router,
a device), then moves (a new city) and plan changes (a new plan), the desk's own vocabulary
(bench.memory_core). Both systems write every fact one call at a time, in rounds of ROUND facts,
the two taking turns to go first; then every customer that moved or changed plan is asked about it
("Where does Aarav Shah 17 live?"), alternating which system answers first.

- Relay: `Memory.write_fact(..., embed=True)` (a single-valued predicate's new value supersedes the
  old one in the same write); search is `recall(q, k=10)`; the current read is `facts(subject,
  predicate)`.
- Graphiti: `add_triplet` (a fact given as source, edge and target: no extraction call), its nodes
  with fixed ids so a customer or a city is one node; search is `Graphiti.search(q, num_results=10)`
  (its default, hybrid RRF over edges); its current read is what that search returns that Graphiti
  has not invalidated. Its LLM is a stub that answers at once (`InstantLLM`): with `--oracle`
  (default) perfectly - a fact of the same customer and predicate with another value is
  contradicted, the same fact is a duplicate - which is Graphiti's best case (no model latency,
  no model mistakes); with `--no-oracle` it finds nothing, the cheapest answer. Its embedder is
  Relay's (all-MiniLM-L6-v2, 384 dimensions), its reranker a stub that keeps the order.

Printed: writes/s (sequential), search p50 / p95 (ms), and per system how many current reads return
only the new value, and how many searches hold the old value in their first five. Writes
bench/results/peers.json.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import logging
import os
import random
import re
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from rich.console import Console
from rich.table import Table

from relay_graph.memory.facade import Memory
from relay_graph.memory.models import FactInput
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port
from relay_graph.runtime.embeddings import DIMENSION, Embedder

from .memory_core import CITIES, DEVICES, PLANS, ROUTERS, customer, finish, percentile, say
from .registered import register

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "peers.json"
SEED = 33
ROUND = 50
TENANT = "peers"
# Graphiti on FalkorDB keeps a group in the graph of that name: its graph and its group are one.
GROUP = GRAPHITI_GRAPH = "graphiti_peers"
AGENT = "bench"
# How each predicate reads as a sentence (Graphiti's fact text; a question asks about the first two).
PHRASES = {"lives_in": "lives in", "on_plan": "is on plan", "has_router": "has router", "owns_device": "owns"}
QUESTIONS = {"lives_in": "Where does {c} live?", "on_plan": "Which plan is {c} on?"}


@dataclass(frozen=True)
class Write:
    subject: str
    predicate: str
    object: str
    old: str | None = None  # the value it replaces (a move, a plan change)

    @property
    def fact(self) -> str:
        return f"{self.subject} {PHRASES[self.predicate]} {self.object}"


def workload(customers: int, updates: int, seed: int = SEED) -> list[Write]:
    """Four facts per customer, then `updates` moves and plan changes (half each) of customers
    picked at random, each to a value other than the current one."""
    rng = random.Random(seed)
    now: dict[tuple[str, str], str] = {}
    out: list[Write] = []
    for i in range(customers):
        c = customer(i)
        for pred, pool in (("lives_in", CITIES), ("on_plan", PLANS), ("has_router", ROUTERS), ("owns_device", DEVICES)):
            out.append(Write(c, pred, rng.choice(pool)))
            now[(c, pred)] = out[-1].object
    for j in range(updates):
        c = customer(rng.randrange(customers))
        pred, pool = (("lives_in", CITIES), ("on_plan", PLANS))[j % 2]
        new = rng.choice([x for x in pool if x != now[(c, pred)]])
        out.append(Write(c, pred, new, old=now[(c, pred)]))
        now[(c, pred)] = new
    return out


def latest_changes(writes: list[Write]) -> dict[tuple[str, str], tuple[Write, frozenset[str]]]:
    """Each changed (customer, predicate): its last write (the value a current read must give) and
    every value it had before that is not that one (what must be gone)."""
    had: dict[tuple[str, str], list[str]] = {}
    last: dict[tuple[str, str], Write] = {}
    for w in writes:
        had.setdefault((w.subject, w.predicate), []).append(w.object)
        if w.old is not None:
            last[(w.subject, w.predicate)] = w
    return {k: (w, frozenset(v for v in had[k] if v != w.object)) for k, w in last.items()}


# ------------------------------------------------------------------ Relay


class RelaySide:
    name = "relay"

    def __init__(self, memory: Memory):
        self.memory = memory

    async def write(self, w: Write) -> None:
        await self.memory.write_fact(TENANT, FactInput(subject=w.subject, predicate=w.predicate, object=w.object,
                                                       agent=AGENT), embed=True)

    async def search(self, question: str) -> list[str]:
        r = await self.memory.recall(TENANT, question, k=10)
        return [f"{f.subject} {PHRASES.get(f.predicate, f.predicate)} {f.object}" for f in r.facts] + \
            [i.text for i in r.items]

    async def current(self, w: Write) -> set[str]:
        return {f.object.lower() for f in await self.memory.facts(TENANT, w.subject, w.predicate)}


# ------------------------------------------------------------------ Graphiti


def graphiti_side(host: str, port: int, embedder: Embedder, oracle: bool):
    """Graphiti on the same server, or None (and why) when graphiti-core is not installed."""
    os.environ.setdefault("EMBEDDING_DIM", str(DIMENSION))  # read when graphiti-core is imported
    os.environ.setdefault("GRAPHITI_TELEMETRY_ENABLED", "false")  # no posting of usage from a bench
    # an empty answer to its node resolution prompt (every node is new, as here) is logged as a warning
    logging.getLogger("graphiti_core").setLevel(logging.ERROR)
    try:
        from graphiti_core import Graphiti
        from graphiti_core.cross_encoder.client import CrossEncoderClient
        from graphiti_core.driver.falkordb_driver import FalkorDriver
        from graphiti_core.edges import EntityEdge
        from graphiti_core.embedder.client import EmbedderClient
        from graphiti_core.llm_client.client import LLMClient
        from graphiti_core.llm_client.config import LLMConfig
        from graphiti_core.nodes import EntityNode
    except ImportError as exc:
        return None, f"graphiti-core is not installed ({exc.name}): pip install -e .[peers]"

    class SameEmbedder(EmbedderClient):
        async def create(self, input_data):  # type: ignore[override]
            text = input_data if isinstance(input_data, str) else " ".join(map(str, input_data))
            return (await embedder.aembed([text]))[0]

        async def create_batch(self, input_data_list):  # type: ignore[override]
            return await embedder.aembed(list(input_data_list))

    class KeepOrder(CrossEncoderClient):
        async def rank(self, query, passages):  # type: ignore[override]
            return [(p, 1.0 - i / max(1, len(passages))) for i, p in enumerate(passages)]

    class InstantLLM(LLMClient):
        """Answers every prompt at once: edge resolution perfectly with `oracle` (same customer and
        predicate, another value: contradicted; the same fact: a duplicate), else finding nothing;
        any other prompt with an empty answer of its response model."""

        def __init__(self) -> None:
            super().__init__(LLMConfig(api_key="stub", model="stub"), cache=False)
            self.calls: dict[str, int] = {}

        async def _generate_response(self, messages, response_model=None, max_tokens=0, model_size=None):
            return self._answer(messages, response_model)

        async def generate_response(self, messages, response_model=None, max_tokens=None, model_size=None,
                                    group_id=None, prompt_name=None, **_: Any):  # type: ignore[override]
            self.calls[prompt_name or "?"] = self.calls.get(prompt_name or "?", 0) + 1
            return self._answer(messages, response_model)

        def _answer(self, messages, response_model) -> dict[str, Any]:
            if response_model is not None and response_model.__name__ == "EdgeDuplicate":
                return edge_resolution(messages[-1].content) if oracle else \
                    {"duplicate_facts": [], "contradicted_facts": []}
            return empty_answer(response_model)

    driver = FalkorDriver(host=host, port=port, database=GRAPHITI_GRAPH)
    llm = InstantLLM()
    g = Graphiti(graph_driver=driver, llm_client=llm, embedder=SameEmbedder(), cross_encoder=KeepOrder())

    def node_of(name: str) -> EntityNode:
        return EntityNode(uuid=str(uuid.uuid5(uuid.NAMESPACE_URL, f"peers/{name}")), name=name, group_id=GROUP,
                          labels=["Entity"], summary="")

    class GraphitiSide:
        name = "graphiti"
        llm_calls = llm.calls

        async def setup(self) -> None:
            await g.build_indices_and_constraints()

        async def write(self, w: Write) -> None:
            now = datetime.now(timezone.utc)
            edge = EntityEdge(group_id=GROUP, source_node_uuid="", target_node_uuid="",
                              name=w.predicate.upper(), fact=w.fact, episodes=[], created_at=now, valid_at=now)
            await g.add_triplet(node_of(w.subject), edge, node_of(w.object))

        async def search(self, question: str) -> list[Any]:
            return await g.search(question, group_ids=[GROUP], num_results=10)

        async def close(self) -> None:
            await g.close()

    return GraphitiSide(), None


def edge_resolution(prompt: str) -> dict[str, list[int]]:
    """The perfect answer to Graphiti's edge resolution prompt (prompts.dedupe_edges.resolve_edge):
    the new fact's customer and predicate read from its text."""
    new = _between(prompt, "<NEW FACT>", "</NEW FACT>").strip()
    existing = ast.literal_eval(_between(prompt, "<EXISTING FACTS>", "</EXISTING FACTS>").strip() or "[]")
    candidates = ast.literal_eval(_between(prompt, "<FACT INVALIDATION CANDIDATES>",
                                           "</FACT INVALIDATION CANDIDATES>").strip() or "[]")
    key = fact_key(new)
    dup = [e["idx"] for e in existing if e["fact"] == new]
    contra = [e["idx"] for e in existing + candidates if key and fact_key(e["fact"]) == key and e["fact"] != new]
    return {"duplicate_facts": dup, "contradicted_facts": contra}


def fact_key(fact: str) -> str | None:
    """"Aarav Shah 17 lives in pune" -> "Aarav Shah 17 lives in" (None for another kind of text)."""
    for phrase in PHRASES.values():
        m = re.match(rf"^(.*? {re.escape(phrase)}) ", fact)
        if m:
            return m.group(1)
    return None


def _between(text: str, start: str, end: str) -> str:
    i = text.find(start)
    j = text.find(end, i + len(start))
    return text[i + len(start):j] if i >= 0 and j >= 0 else ""


def empty_answer(model) -> dict[str, Any]:
    """An answer that finds nothing, in the shape of `model` (lists empty, text empty)."""
    if model is None:
        return {}
    out: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        if not field.is_required():
            continue
        kind = getattr(field.annotation, "__origin__", field.annotation)
        out[name] = [] if kind is list else "" if kind is str else 0 if kind is int else False if kind is bool else None
    return out


# ------------------------------------------------------------------ the run


async def run(*, customers: int, updates: int, oracle: bool, out: Path | None,
              console: Console | None = None) -> dict[str, Any]:
    console = console or Console(width=150)
    writes = workload(customers, updates)
    changed = latest_changes(writes)
    result: dict[str, Any] = {
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "seed": SEED,
        "workload": {"customers": customers, "facts": len(writes), "updates": updates, "asked": len(changed)},
        "graphiti_llm": "stub, instant, " + ("perfect (its best case)" if oracle else "finds nothing"),
        "machine": {"cpus": os.cpu_count(), "load_avg_before": [round(x, 2) for x in os.getloadavg()]},
    }
    model_dir = Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model"))
    with tempfile.TemporaryDirectory(prefix="relay-peers-") as tmp:
        server = EmbeddedFalkorDB(Path(tmp) / "data", free_port(), log_file=Path(tmp) / "falkordb.log")
        server.start()
        client = GraphClient(GraphSettings(falkordb_host=server.host, falkordb_port=server.port, model_dir=model_dir))
        try:
            embedder = Embedder(model_dir, cache_size=50_000)
            await register(client.redis, TENANT)
            relay = RelaySide(Memory(client, embedder))
            graphiti, why = graphiti_side(server.host, server.port, embedder, oracle)
            sides: list[Any] = [relay]
            if graphiti is None:
                say(console, f"Graphiti skipped: {why}")
                result["graphiti_skipped"] = why
            else:
                await graphiti.setup()
                sides.append(graphiti)
            spent = {s.name: 0.0 for s in sides}
            say(console, f"{len(writes)} facts, one call at a time, rounds of {ROUND}, alternating ...")
            for r, start in enumerate(range(0, len(writes), ROUND)):
                chunk = writes[start:start + ROUND]
                for side in (sides if r % 2 == 0 else sides[::-1]):
                    t0 = time.perf_counter()
                    for w in chunk:
                        await side.write(w)
                    spent[side.name] += time.perf_counter() - t0
            say(console, f"asking about {len(changed)} changed facts ...")
            times: dict[str, list[float]] = {s.name: [] for s in sides}
            right = {s.name: 0 for s in sides}
            old_top5 = {s.name: 0 for s in sides}
            for i, (w, olds) in enumerate(changed.values()):
                q = QUESTIONS[w.predicate].format(c=w.subject)
                gone = {f"{w.subject} {PHRASES[w.predicate]} {o}".lower() for o in olds}
                for side in (sides if i % 2 == 0 else sides[::-1]):
                    t0 = time.perf_counter()
                    found = await side.search(q)
                    times[side.name].append((time.perf_counter() - t0) * 1000)
                    if side is relay:
                        right[side.name] += await relay.current(w) == {w.object}
                        old_top5[side.name] += any(t.lower() in gone for t in found[:5])
                    else:
                        mine = [e for e in found if fact_key(e.fact) == fact_key(w.fact)]
                        valid = {e.fact for e in mine if e.invalid_at is None and e.expired_at is None}
                        right[side.name] += valid == {w.fact}
                        old_top5[side.name] += any(e.fact.lower() in gone for e in found[:5])
            result["systems"] = {s.name: {
                "writes_per_s": round(len(writes) / spent[s.name], 1),
                "search_p50_ms": round(percentile(times[s.name], 50), 2),
                "search_p95_ms": round(percentile(times[s.name], 95), 2),
                "current_read_only_new": right[s.name], "old_value_in_top5": old_top5[s.name],
                "asked": len(changed)} for s in sides}
            if graphiti is not None:
                result["systems"]["graphiti"]["llm_calls"] = dict(graphiti.llm_calls)
                await graphiti.close()
        finally:
            await client.close()
            server.stop()
    return finish(result, console, table, out)


def table(result: dict[str, Any]) -> Table:
    m, wl = result["machine"], result["workload"]
    t = Table(title=f"Relay and Graphiti, {wl['facts']} facts ({wl['customers']} customers, {wl['updates']} moves and "
                    f"plan changes), {wl['asked']} asked; Graphiti's LLM: {result['graphiti_llm']}; "
                    f"load average {m['load_avg_before']} -> {m.get('load_avg_after')}")
    for col in ("system", "writes/s", "search p50 ms", "search p95 ms", "current read: only the new value",
                "old value in the first 5"):
        t.add_column(col, justify="left" if col == "system" else "right")
    for name, s in result["systems"].items():
        t.add_row(name, f"{s['writes_per_s']:.1f}", f"{s['search_p50_ms']:.1f}", f"{s['search_p95_ms']:.1f}",
                  f"{s['current_read_only_new']}/{s['asked']}", f"{s['old_value_in_top5']}/{s['asked']}")
    return t


def parse(argv: Iterable[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.peers", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="60 customers and 60 changes instead of 400 and 400")
    ap.add_argument("--no-oracle", dest="oracle", action="store_false",
                    help="Graphiti's stub LLM finds no duplicate or contradiction (default: it answers perfectly)")
    ap.add_argument("--out", type=Path, default=RESULTS, help=f"where the JSON goes (default {RESULTS})")
    return ap.parse_args(list(argv) if argv is not None else None)


def main(argv: Iterable[str] | None = None) -> dict[str, Any]:
    args = parse(argv)
    n = 60 if args.quick else 400
    return asyncio.run(run(customers=n, updates=n, oracle=args.oracle, out=args.out))


if __name__ == "__main__":
    main()
