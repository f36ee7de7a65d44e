"""Figures before and after a change, in one run: `python -m bench.before_after [REF]` (the desk's
figures), or `python -m bench.before_after [REF] --suite [suite args]` (every figure of `make bench`,
bench.suite, run on REF and then on this checkout; `--quick` passes through for a smoke run).

It checks REF (default `main`) out into a temporary git worktree and runs `bench.desk` there
(the same venv; PYTHONPATH puts that checkout's `libs/` and services first, so every process the
bench starts runs REF's code), then runs it on this checkout, with the same arguments (the
rest of the command line, passed to bench.desk; default a short run), one after the other,
and prints chat p50/p95 and tickets/s per resolver replica count side by side with the load
average around each. The machine is shared: read the two columns together, not against other runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_ARGS = ["--turns", "60", "--warmup", "10", "--tickets", "60", "--repeat", "1", "--replicas", "1,2,4"]


def run_desk(checkout: Path, out: Path, args: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(checkout / "libs"), str(checkout)])}
    # bench.desk exits 1 when a target is missed; the figures are written all the same
    subprocess.run([sys.executable, "-m", "bench.desk", "--out", str(out), *args], cwd=checkout, env=env)
    if not out.exists():
        raise SystemExit(f"bench.desk wrote no results in {checkout}")
    return json.loads(out.read_text())


def run_suite(checkout: Path, out_dir: Path, args: list[str]) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(checkout / "libs"), str(checkout)])}
    # the suite exits 1 when a target is missed; the figures are written all the same
    subprocess.run([sys.executable, "-m", "bench.suite", "--out-dir", str(out_dir), *args], cwd=checkout, env=env)
    written = sorted(out_dir.glob("suite*.json"))
    if not written:
        raise SystemExit(f"bench.suite wrote no results in {checkout}")
    data = json.loads(written[0].read_text())
    rows: dict[str, object] = {f"{r['part']}: {r['figure']}": r["value"] for r in data["rows"]}
    for part, info in data.get("parts", {}).items():
        rows[f"{part}: load avg before -> after"] = f"{info.get('load_avg_before')} -> {info.get('load_avg_after')}"
    return rows


def figures(report: dict) -> dict[str, object]:
    chat = report.get("chat_latency", {})
    rows: dict[str, object] = {"chat p50 ms": chat.get("p50_ms"), "chat p95 ms": chat.get("p95_ms")}
    for n, r in sorted((report.get("tickets_per_second") or {}).items(), key=lambda kv: int(kv[0])):
        rows[f"tickets/s, {n} resolver(s)"] = r.get("tickets_per_s")
    machine = report.get("machine", {})
    rows["load avg before -> after"] = f"{machine.get('load_avg_before')} -> {machine.get('load_avg_after')}"
    return rows


def main(argv: list[str]) -> int:
    ref = argv[0] if argv and not argv[0].startswith("-") else "main"
    suite = "--suite" in argv
    args = [a for a in argv[1 if argv and argv[0] == ref else 0:] if a != "--suite"]
    if not suite:
        args = args or DEFAULT_ARGS
    with tempfile.TemporaryDirectory(prefix="relay-before-") as tmp:
        before_dir = Path(tmp) / "checkout"
        subprocess.run(["git", "worktree", "add", "--detach", str(before_dir), ref], cwd=REPO, check=True,
                       capture_output=True)
        try:
            model = REPO / ".relay" / "model"
            os.environ.setdefault("RELAY_MODEL_DIR", str(model))
            if suite:
                before = run_suite(before_dir, Path(tmp) / "before", args)
            else:
                before = figures(run_desk(before_dir, Path(tmp) / "before.json", args))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(before_dir)], cwd=REPO, check=False,
                           capture_output=True)
        if suite:
            after = run_suite(REPO, Path(tmp) / "after", args)
        else:
            after = figures(run_desk(REPO, Path(tmp) / "after.json", args))
    width = max(32, *(len(n) for n in [*before, *after]))
    print(f"\n{'figure':{width}} {ref + ' (before)':>26} {'this checkout (after)':>26}")
    for name in dict.fromkeys([*before, *after]):
        print(f"{name:{width}} {str(before.get(name)):>26} {str(after.get(name)):>26}")
    print("(one run on a shared machine: noisy; compare the columns with each other only)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
