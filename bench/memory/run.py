"""The whole run: plan the storyline and the questions (gold fixed first), start the desk, play the
storyline through it, ask both systems every question, score, write the JSON and the report."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from relay_graph.desk.tickets import store as tickets
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embeddings import Embedder
from relay_graph.runtime.streams import connect

from .. import desk
from ..desk import say
from .contexts import RelayTools, VectorStore
from .loader import Loader
from .questions import Question, questions
from .reader import LlmReader, correct, gold_in_context, read
from .report import render, summarise
from .storyline import plan

REPO = Path(__file__).resolve().parents[2]
RESULTS_JSON = REPO / "bench" / "results" / "memory.json"
RESULTS_MD = REPO / "bench" / "results" / "memory.md"


@dataclass(frozen=True)
class Sizes:
    customers: int = 40
    per_type: int = 24


FULL = Sizes()
QUICK = Sizes(customers=8, per_type=4)


def asked(q: Question, step_at: dict[int, str]) -> tuple[str, str | None]:
    """The question as put to the systems (a step named by its real moment), and that moment."""
    if q.as_of_step is None:
        return q.text, None
    moment = step_at[q.as_of_step]
    return q.text.replace(f"step {q.as_of_step}", moment), moment


async def answer_all(qs: list[Question], loaded, tools: RelayTools, store: VectorStore, embedder: Embedder,
                     llm: LlmReader | None, progress) -> list[dict[str, Any]]:
    out = []
    texts = [asked(q, loaded.step_at) for q in qs]
    query_vectors = embedder.embed([t for t, _ in texts])
    for i, (q, (text, moment), qv) in enumerate(zip(qs, texts, query_vectors), start=1):
        contexts = {}
        cid = loaded.ids.get(q.customer)  # the question names a person; both systems are asked by id
        relay_lines, called = await tools.context(q, cid, moment)
        contexts["relay"] = relay_lines
        contexts["vector"] = store.context(cid, qv)
        row: dict[str, Any] = {**q.to_json(), "customer_id": cid, "asked": text, "as_of": moment}
        for system, lines in contexts.items():
            if llm is None:
                answer = read(q, lines, moment)
            else:
                answer = await llm.read(q, text, lines, moment)
            row[system] = {"answer": answer, "correct": correct(q, answer),
                           "gold_in_context": gold_in_context(q, lines), "context": [list(ln) for ln in lines]}
        row["relay"]["tools"] = called
        out.append(row)
        if i % 20 == 0 or i == len(qs):
            r = sum(x["relay"]["correct"] for x in out)
            v = sum(x["vector"]["correct"] for x in out)
            progress(f"  {i}/{len(qs)} questions answered; so far Relay {r}, vector store {v} right")
    return out


async def run(sizes: Sizes, *, quick: bool, seed: int = 7, out_json: Path | None = RESULTS_JSON,
              out_md: Path | None = RESULTS_MD, model_dir: Path | None = None,
              console: Console | None = None) -> dict[str, Any]:
    console = console or (Console() if sys.stdout.isatty() else Console(width=140))
    progress = lambda text: say(console, text)  # noqa: E731
    model_dir = model_dir or Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model"))
    story = plan(seed, sizes.customers)
    qs = questions(story, sizes.per_type)
    progress(f"storyline (seed {seed}): {len(story.customers)} customers, {story.turns} turns, {len(story.events)} "
             f"events {story.kinds()}; {len(qs)} questions with gold answers fixed")
    llm = LlmReader() if os.environ.get("GROQ_API_KEY") else None
    data: dict[str, Any] = {
        "benchmark": "memory",
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "quick": quick, "seed": seed,
        "reader": f"llm {llm.model}" if llm else "deterministic (no LLM key)",
        "storyline": {"customers": len(story.customers), "turns": story.turns, "events": len(story.events),
                      "kinds": story.kinds()},
    }
    workdir = Path(tempfile.mkdtemp(prefix="relay-bench-memory-"))
    progress(f"starting FalkorDB, intake, resolver, netops and the gateway ({workdir})")
    stack = await asyncio.to_thread(desk.start_stack, workdir, 1, model_dir)
    redis = connect(host="127.0.0.1", port=stack.falkordb_port)
    try:
        await desk.wait_ready(stack)
        progress(f"ready at {stack.url}; loading the embedder")
        embedder = await asyncio.to_thread(Embedder, model_dir)
        async with httpx.AsyncClient(base_url=stack.url, timeout=30.0) as http:
            tenant = f"memory-{secrets.token_hex(3)}"
            headers = await desk.create_tenant(http, stack.admin_key, tenant)
            progress(f"playing the storyline through the desk ({tenant})")
            loader = Loader(http, tenant, headers, progress)
            loaded = await loader.play(story)
            data["load"] = loaded.summary()
            progress("waiting for the desk to finish what the storyline started ...")
            data["load"]["quiet"] = await desk.wait_quiet(redis)
            data["load"]["ids"] = await loader.check_ids()
            data["load"]["tickets"] = await ticket_truth(stack, model_dir, tenant)
            progress(f"embedding {len(loaded.turns)} turns for the vector store")
            store = await asyncio.to_thread(VectorStore.build, loaded.turns, embedder)
            tools = RelayTools(http, tenant, headers)
            progress(f"asking {len(qs)} questions of both systems")
            results = await answer_all(qs, loaded, tools, store, embedder, llm, progress)
            data["relay_tools"] = {"calls": tools.calls, "errors": len(tools.errors), "first_errors": tools.errors[:10]}
    finally:
        if llm is not None:
            await llm.aclose()
        await redis.aclose()
        progress("stopping the desk ...")
        await asyncio.to_thread(stack.stop)
    shutil.rmtree(workdir, ignore_errors=True)  # kept only when the run failed (its logs are there)
    data["questions"] = results
    data["summary"] = summarise(results, seed=seed)
    show(console, data)
    write(data, out_json, out_md, progress)
    return data


async def ticket_truth(stack, model_dir, tenant: str) -> dict[str, Any]:
    """The storyline's tickets and the desk's invariant over them: the tickets that reached `fixed`
    without a passing reading taken after their last action (tickets.unproven_fixes; {} when none)."""
    client = await asyncio.to_thread(GraphClient, GraphSettings(falkordb_host="127.0.0.1",
                                                                falkordb_port=stack.falkordb_port,
                                                                model_dir=model_dir))
    try:
        rows = await tickets.list_tickets(client, tenant, limit=tickets.MAX_LIST)
        return {"total": len(rows), "stages": dict(sorted(Counter(r.stage.value for r in rows).items())),
                "unproven_fixes": await tickets.unproven_fixes(client, tenant)}
    finally:
        await client.close()


def write(data: dict[str, Any], out_json: Path | None, out_md: Path | None, progress=print) -> None:
    if out_json is not None:
        out_json.parent.mkdir(parents=True, exist_ok=True)
        out_json.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        progress(f"results written to {out_json}")
    if out_md is not None:
        out_md.parent.mkdir(parents=True, exist_ok=True)
        out_md.write_text(render(json.loads(json.dumps(data))))
        progress(f"report written to {out_md}")


def rebuild_report(json_path: Path, md_path: Path) -> str:
    """--report-only: the markdown from the JSON alone."""
    text = render(json.loads(json_path.read_text()))
    md_path.write_text(text)
    return text


def show(console: Console, data: dict[str, Any]) -> None:
    s = data["summary"]
    t = Table(title=f"memory benchmark: {s['overall']['n']} questions, reader {data['reader']}", title_justify="left")
    for col in ("type", "n", "Relay acc", "vector acc", "Relay gold-in-ctx", "vector gold-in-ctx", "winner"):
        t.add_column(col, justify="left" if col in ("type", "winner") else "right")
    for name, row in list(s["by_type"].items()) + [("overall", s["overall"])]:
        r, v = row["relay"], row["vector"]
        t.add_row(name, str(row["n"]), f"{100 * r['accuracy']:.1f} %", f"{100 * v['accuracy']:.1f} %",
                  f"{100 * r['gold_in_context_rate']:.1f} %", f"{100 * v['gold_in_context_rate']:.1f} %",
                  row["winner"])
    console.print(t)
    bs, mc = s["bootstrap"], s["mcnemar"]
    console.print(f"Relay - vector store: {100 * bs['diff']:+.1f} points, 95 % paired bootstrap "
                  f"[{100 * bs['low']:+.1f}, {100 * bs['high']:+.1f}]; exact McNemar: Relay alone right "
                  f"{mc['only_a']}, vector alone right {mc['only_b']}, p = {mc['p_value']:.3g}")
    console.print(f"types Relay lost: {', '.join(s['relay_lost']) or 'none'}")
    ld = data["load"]
    console.print(f"load: {ld['events']} events, {ld['turns']} turns in {ld['seconds']} s, {ld['errors']} errors "
                  f"{ld['outcomes']}")
    ids = ld["ids"]
    console.print(f"ids: {ids['customers']} customers given ids by their first turn; {ids['found_by_name']} found by "
                  f"name as exactly their id")
