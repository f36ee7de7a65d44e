"""Scores from the per-question results, and the markdown report, made from the JSON alone.

`summarise(results)` gives accuracy and "gold fact in context" per type and overall for both
systems, the winner of each type, the paired bootstrap interval and the exact McNemar test.
`render(data)` turns the JSON (as written to bench/results/memory.json) into markdown; it reads
nothing else, so `--report-only` rebuilds the same bytes from the same JSON."""

from __future__ import annotations

from typing import Any

from .questions import TYPES
from .stats import mcnemar_exact, paired_bootstrap

SYSTEMS = ("relay", "vector")
LABEL = {"relay": "Relay", "vector": "vector store"}


def winner(relay: float, vector: float) -> str:
    if relay > vector:
        return "Relay"
    if vector > relay:
        return "vector store (Relay lost)"
    return "tie"


def _rates(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(rows)}
    for s in SYSTEMS:
        right = sum(r[s]["correct"] for r in rows)
        held = sum(r[s]["gold_in_context"] for r in rows)
        out[s] = {"correct": right, "accuracy": right / len(rows) if rows else 0.0,
                  "gold_in_context": held, "gold_in_context_rate": held / len(rows) if rows else 0.0}
    out["winner"] = winner(out["relay"]["accuracy"], out["vector"]["accuracy"])
    return out


def summarise(results: list[dict[str, Any]], *, seed: int = 7, resamples: int = 10_000) -> dict[str, Any]:
    types = [t for t in TYPES if any(r["type"] == t for r in results)]
    types += sorted({r["type"] for r in results} - set(types))
    by_type = {t: _rates([r for r in results if r["type"] == t]) for t in types}
    a = [r["relay"]["correct"] for r in results]
    b = [r["vector"]["correct"] for r in results]
    return {
        "by_type": by_type,
        "overall": _rates(results),
        "relay_lost": [t for t, row in by_type.items() if row["relay"]["accuracy"] < row["vector"]["accuracy"]],
        "bootstrap": paired_bootstrap(a, b, resamples=resamples, seed=seed) if results else None,
        "mcnemar": mcnemar_exact(a, b),
    }


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _answer(value: Any) -> str:
    if value is None:
        return "(refused)"
    if isinstance(value, list):
        return ", ".join(value) if value else "(empty)"
    return str(value)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(data: dict[str, Any]) -> str:
    s = data["summary"]
    st, ld = data["storyline"], data["load"]
    out = ["# Memory benchmark: Relay vs a vector store", ""]
    out.append(f"Run {data['started_at']}, seed {data['seed']}{' (quick)' if data['quick'] else ''}; reader: "
               f"{data['reader']}. Storyline: {st['customers']} customers, {st['turns']} turns, {st['events']} events "
               f"({', '.join(f'{k} {n}' for k, n in st['kinds'].items())}), played through the desk in "
               f"{ld['seconds']} s with {ld['errors']} errors. {s['overall']['n']} questions.")
    out.append("")
    out.append("Relay answers through its tools over HTTP; the vector store holds the same conversation turns, "
               "embedded with the same embedder, filtered to the customer, top 10 by similarity, dated, newest "
               "first. One reader answers for both.")
    out += ["", "## Accuracy by question type", ""]
    out.append("| type | questions | Relay accuracy | vector accuracy | Relay gold in context "
               "| vector gold in context | winner |")
    out.append("|---|---:|---:|---:|---:|---:|---|")
    rows = list(s["by_type"].items()) + [("**overall**", s["overall"])]
    for name, row in rows:
        r, vec = row["relay"], row["vector"]
        out.append(f"| {name} | {row['n']} | {_pct(r['accuracy'])} ({r['correct']}) | {_pct(vec['accuracy'])} "
                   f"({vec['correct']}) | {_pct(r['gold_in_context_rate'])} | {_pct(vec['gold_in_context_rate'])} "
                   f"| {row['winner']} |")
    out += ["", "## Relay minus the vector store, paired over the same questions", ""]
    bs, mc = s["bootstrap"], s["mcnemar"]
    if bs is not None:
        out.append(f"- accuracy difference: {100 * bs['diff']:+.1f} points, {int(bs['level'] * 100)} % paired "
                   f"bootstrap interval [{100 * bs['low']:+.1f}, {100 * bs['high']:+.1f}] points "
                   f"({bs['resamples']} resamples, seed {bs['seed']})")
    out.append(f"- exact McNemar (two-sided): Relay alone right on {mc['only_a']}, the vector store alone right on "
               f"{mc['only_b']}, p = {mc['p_value']:.3g}")
    out += ["", "## Types Relay lost", ""]
    if s["relay_lost"]:
        for t in s["relay_lost"]:
            row = s["by_type"][t]
            out.append(f"- **{t}**: Relay {_pct(row['relay']['accuracy'])} vs vector store "
                       f"{_pct(row['vector']['accuracy'])}")
    else:
        out.append("- none")
    out += ["", "## Every question", ""]
    out.append("| id | question | gold | Relay | vector store |")
    out.append("|---|---|---|---|---|")
    for q in data["questions"]:
        marks = {sys_: ("✓ " if q[sys_]["correct"] else "✗ ") + _answer(q[sys_]["answer"]) for sys_ in SYSTEMS}
        out.append(f"| {q['id']} | {_cell(q['asked'])} | {_cell(_answer(q['gold']))} | {_cell(marks['relay'])} "
                   f"| {_cell(marks['vector'])} |")
    return "\n".join(out) + "\n"
