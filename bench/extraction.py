"""How well the rules extractor reads customers: `python -m bench.extraction`.

It runs `RulesExtractor` (no key, no network) over bench/data/extraction_labelled.jsonl: customer
messages written for this benchmark only (none is a message of the extractor's test table,
tests/relay_graph/desk/extraction/test_rules_table.py, and the smoke test checks that), each labelled
with the facts it states and the problem it reports. The set holds plain statements, moves and
endings, hard negatives (other people's details, questions, "if ..." sentences, idioms that look
like facts) and Hindi or Tamil written in Latin letters mixed with English. The extractor was not
tuned to it: labels say what a careful reader would file, not what the extractor happens to do.

What it prints (and writes to bench/results/extraction.json):

- facts: precision, recall and F1 over all messages, overall and per predicate. A predicted fact
  matches a gold fact when the predicate, the normalised object (the registry's own check, then
  `entities.name_key`: case, accents and spacing aside) and the ended flag are all equal. "Planned"
  items (a move the customer wants) are not facts and are not counted.
- problem kind: accuracy of `problem.kind` (or no problem) against the gold kind (or null), plus
  precision and recall of "there is a problem" as a yes/no.
- every proportion with its Wilson 95% interval (the set is small: read the intervals).

`--limit N` reads the first N lines (the smoke test's run); `--data`, `--out` move the files.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from relay_graph.memory import registry
from relay_graph.memory.entities import name_key
from relay_graph.runtime.errors import RelayError
from relay_graph.desk.conversation import guardrails as guardrails
from relay_graph.desk.extraction import ExtractionContext, RulesExtractor

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "bench" / "data" / "extraction_labelled.jsonl"
RESULTS = REPO / "bench" / "results" / "extraction.json"

# The tenant catalogue the messages are read against (what the intake agent would pass in).
CONTEXT = ExtractionContext(
    cities=("Pune", "Mumbai", "Chennai", "New Delhi", "Hyderabad", "Kochi", "Bengaluru", "Jaipur"),
    plans=("Fiber 100", "Fiber 300", "Fiber 1000"),
    routers=("Nokia G-140W-C", "Relay Home Gateway"),
)
Z = 1.959963984540054  # 95%


@dataclass(frozen=True)
class Example:
    id: str
    text: str
    facts: frozenset[tuple[str, str, bool]]
    problem: str | None
    tag: str = ""


def fact_key(predicate: str, obj: str, ended: bool) -> tuple[str, str, bool]:
    """How a fact is compared: the registry's normal form of the value, then name_key."""
    try:
        obj = registry.get(predicate).check(registry.clean_text(obj, "object"))
    except RelayError:
        pass  # a gold value the registry refuses still counts, as written
    return predicate, name_key(obj), bool(ended)


def load(path: Path = DATA, limit: int | None = None) -> list[Example]:
    out: list[Example] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            row = json.loads(line)
            out.append(Example(
                id=row["id"], text=row["text"], tag=row.get("tag", ""), problem=row.get("problem"),
                facts=frozenset(fact_key(f["predicate"], f["object"], f.get("ended", False)) for f in row["facts"]),
            ))
            if limit is not None and len(out) >= limit:
                break
    return out


def wilson(k: int, n: int) -> dict[str, Any]:
    """k of n with its Wilson score 95% interval; value and bounds None when n is 0."""
    if n <= 0:
        return {"value": None, "low": None, "high": None, "k": k, "n": n}
    p = k / n
    denom = 1 + Z * Z / n
    centre = (p + Z * Z / (2 * n)) / denom
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / denom
    return {"value": round(p, 4), "low": round(max(0.0, centre - half), 4), "high": round(min(1.0, centre + half), 4),
            "k": k, "n": n}


def prf(tp: int, fp: int, fn: int) -> dict[str, Any]:
    precision = wilson(tp, tp + fp)
    recall = wilson(tp, tp + fn)
    p, r = precision["value"], recall["value"]
    f1 = None if p is None or r is None else (0.0 if p + r == 0 else round(2 * p * r / (p + r), 4))
    return {"tp": tp, "fp": fp, "fn": fn, "precision": precision, "recall": recall, "f1": f1}


async def evaluate(examples: list[Example], context: ExtractionContext = CONTEXT, *,
                   normalise: bool = False) -> dict[str, Any]:
    """`normalise`: read each message the way the intake agent does, after the guardrails'
    romanised Hindi/Tamil normalisation (intake extracts from `Guard.text`)."""
    extractor = RulesExtractor()
    counts: dict[str, Counter] = {}
    total = Counter()
    kind_right = 0
    has_problem = Counter()
    misses: list[dict[str, Any]] = []
    for ex in examples:
        text = guardrails.normalise_mixed_language(ex.text) if normalise else ex.text
        got = await extractor.extract(text, context)
        predicted = {fact_key(f.predicate, f.object, f.ended) for f in got.facts}
        gold = set(ex.facts)
        for key in predicted | gold:
            c = counts.setdefault(key[0], Counter())
            outcome = "tp" if key in predicted and key in gold else ("fp" if key in predicted else "fn")
            c[outcome] += 1
            total[outcome] += 1
        kind = got.problem.kind.value if got.problem is not None else None
        kind_right += kind == ex.problem
        has_problem["tp"] += kind is not None and ex.problem is not None
        has_problem["fp"] += kind is not None and ex.problem is None
        has_problem["fn"] += kind is None and ex.problem is not None
        if predicted != gold or kind != ex.problem:
            misses.append({"id": ex.id, "text": ex.text,
                           "extra": sorted(map(list, predicted - gold)), "missed": sorted(map(list, gold - predicted)),
                           "problem": {"gold": ex.problem, "got": kind}})
    return {
        "messages": len(examples),
        "gold_facts": sum(len(e.facts) for e in examples),
        "messages_without_facts": sum(1 for e in examples if not e.facts),
        "facts": prf(total["tp"], total["fp"], total["fn"]),
        "per_predicate": {p: prf(c["tp"], c["fp"], c["fn"]) for p, c in sorted(counts.items())},
        "problem_kind_accuracy": wilson(kind_right, len(examples)),
        "problem_detected": prf(has_problem["tp"], has_problem["fp"], has_problem["fn"]),
        "by_tag": dict(Counter(e.tag for e in examples)),
        "misses": misses,
    }


def _pct(w: dict[str, Any]) -> str:
    if w["value"] is None:
        return "n/a"
    return f"{100 * w['value']:5.1f}% [{100 * w['low']:5.1f}, {100 * w['high']:5.1f}]  ({w['k']}/{w['n']})"


def report(result: dict[str, Any]) -> str:
    lines = [
        f"rules extractor on {result['messages']} labelled messages ({result['gold_facts']} gold facts, "
        f"{result['messages_without_facts']} messages with none); Wilson 95% intervals in brackets",
        "",
        f"{'facts':<18}{'precision':<40}{'recall':<40}F1",
    ]

    def row(name: str, m: dict[str, Any]) -> str:
        f1 = "n/a" if m["f1"] is None else f"{m['f1']:.3f}"
        return f"{name:<18}{_pct(m['precision']):<40}{_pct(m['recall']):<40}{f1}"

    lines.append(row("all", result["facts"]))
    for p, m in result["per_predicate"].items():
        lines.append(row(p, m))
    lines += [
        "",
        f"problem kind accuracy   {_pct(result['problem_kind_accuracy'])}",
        "problem found (yes/no), precision and recall:",
        row("  problem", result["problem_detected"]),
        "",
        f"{len(result['misses'])} messages not read exactly right (listed in the JSON under 'misses')",
    ]
    return "\n".join(lines)


def run(data: Path = DATA, out: Path | None = RESULTS, limit: int | None = None) -> dict[str, Any]:
    examples = load(data, limit)
    result = asyncio.run(evaluate(examples))
    intake = asyncio.run(evaluate(examples, normalise=True))
    result = {"data": str(data.relative_to(REPO) if data.is_relative_to(REPO) else data), "limit": limit, **result,
              "intake_pipeline": {k: intake[k] for k in ("facts", "problem_kind_accuracy") if k in intake}}
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.extraction", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--limit", type=int, default=None, help="read only the first N messages")
    args = parser.parse_args(argv)
    result = run(args.data, args.out, args.limit)
    print(report(result))
    pipe = result["intake_pipeline"]
    if "facts" in pipe:
        f = pipe["facts"]
        print(f"\nas the intake agent reads them (after the guardrails' romanised Hindi/Tamil normalisation): "
              f"facts precision {f['precision']['value']:.1%}, recall {f['recall']['value']:.1%}, F1 {f['f1']}; "
              f"problem kind accuracy {pipe['problem_kind_accuracy']['value']:.1%}")
    print(f"\nresults written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
