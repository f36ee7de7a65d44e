"""The performance suite, in one run: `python -m bench.suite` (`make bench`; `--quick` for a smoke run).

It runs, one after the other, each on its own FalkorDB (and, for the desk, its own processes):

1. bench.fact_writes: fact writes per second against raw FalkorDB, side by side in rounds;
   then bench.http_writes: the same through the gateway's HTTP API, one by one and batched;
2. bench.desk: chat turn latency p50/p95/p99 through the real processes, tickets per second with
   1/2/4 resolver replicas;
3. bench.memory_core: recall latency at 10,000 and 100,000 facts (and its own write figures);
4. bench.safety: concurrent writers under load (duplicates, two current values, lost writes) and
   racing resolver replicas (owners per ticket, PICKED_UP edges);
5. bench.recall_hybrid: recall latency at 10,000 episodes beside the plain vector query of the same
   database (the baseline of recall's cost).

The top-level `ratios` of suite.json put three figures beside their baselines of the same run
(`ratios()`): recall p95 over the plain vector query's, POST /facts/batch over raw MERGE (the
median of the rounds), and the chat turn's p95 in ms.

Each part's full report goes into bench/results/suite.json (and, in a full run, into the part's
own JSON as its own command writes it). One row per figure (figure, value, target, pass/miss) is
derived from those reports, and bench/results/suite.md is rendered from the JSON alone, so it can
be rebuilt without measuring again (`--render`). `--docs` puts that table, with the command to
reproduce it, between the `<!-- bench:start -->` and `<!-- bench:end -->` markers of
docs/benchmarks.md.
The machine's load average is recorded before and after every part: the machine is shared, and
the speed figures move with its load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from rich.console import Console

from bench import desk, fact_writes, http_writes, memory_core, recall_hybrid, safety
from bench.desk import load_avg

REPO = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO / "bench" / "results"
PAGE = REPO / "docs" / "benchmarks.md"  # the benchmarks page, whose suite table --docs rewrites
START, END = "<!-- bench:start -->", "<!-- bench:end -->"
COMMAND = "make bench"  # = python -m bench.suite --docs
PARTS = ("fact_writes", "http_writes", "desk", "memory_core", "safety", "recall_hybrid")
# recall_hybrid is in by default: its plain vector query of the same database is the baseline of
# the ratio of recall's cost (`ratios`)
DEFAULT_PARTS = PARTS


@dataclass(frozen=True)
class Profile:
    fact_writes: fact_writes.Sizes = fact_writes.FULL
    desk: desk.Sizes = field(default_factory=desk.Sizes)
    memory_core: memory_core.Sizes = memory_core.FULL
    safety: safety.Sizes = safety.Sizes()
    http_writes: http_writes.Sizes = http_writes.FULL
    recall_hybrid: recall_hybrid.Sizes = recall_hybrid.FULL


FULL = Profile()
QUICK = Profile(fact_writes.QUICK, desk.QUICK, memory_core.QUICK, safety.QUICK, http_writes.QUICK,
                recall_hybrid.QUICK)


def say(console: Console, text: str) -> None:
    console.print(f"[dim]{time.strftime('%H:%M:%S')}[/dim] [bold]{text}[/bold]")


# ---------------------------------------------------------------- rows (pure: JSON in, rows out)


def _n(x: float, unit: str = "") -> str:
    return f"{x:,.0f}{unit}" if abs(x) >= 100 else f"{x:,.1f}{unit}"


def _row(part: str, figure: str, value: str, target: str = "", ok: bool | None = None) -> dict[str, Any]:
    return {"part": part, "figure": figure, "value": value, "target": target, "pass": ok}


def fact_write_rows(r: dict[str, Any]) -> list[dict[str, Any]]:
    f, t = r["figures"], r["targets"]
    raw = f[fact_writes.RAW]["per_s"]
    rows = [_row("fact_writes", "raw FalkorDB MERGE, 1 connection, one per call", f"{_n(raw)}/s")]
    for mode in (fact_writes.SINGLE, fact_writes.SINGLE_4):
        rows.append(_row("fact_writes", f[mode]["label"],
                         f"{_n(f[mode]['per_s'])}/s ({f[mode]['vs_raw']:.2f}x raw)"))
    b, e = f[fact_writes.BATCHED], f[fact_writes.EMBEDDED]
    rows.append(_row("fact_writes", f"fact writes without embeddings: {b['label']}",
                     f"{_n(b['per_s'])}/s ({b['vs_raw']:.2f}x raw)", t["fact_writes_plain"]["target"],
                     t["fact_writes_plain"]["pass"]))
    rows.append(_row("fact_writes", f"fact writes with embeddings: {e['label']}", f"{_n(e['per_s'])}/s",
                     t["fact_writes_embedded"]["target"], t["fact_writes_embedded"]["pass"]))
    if (worst := f.get("batch_embedded_new")) is not None:  # runs of bench.fact_writes since it measures it
        rows.append(_row("fact_writes", f"fact writes with embeddings, {worst['label']}", f"{_n(worst['per_s'])}/s"))
    return rows


def http_write_rows(r: dict[str, Any]) -> list[dict[str, Any]]:
    f, t = r["figures"], r["targets"]["http_batch_vs_raw"]
    raw = f[http_writes.RAW]["per_s"]
    one, batch = f[http_writes.SINGLE], f[http_writes.BATCHED]
    return [
        _row("http_writes", f"{one['label']} (raw MERGE in the same run: {_n(raw)}/s)",
             f"{_n(one['per_s'])}/s ({one['vs_raw']:.2f}x raw)"),
        _row("http_writes", batch["label"], f"{_n(batch['per_s'])}/s ({batch['vs_raw']:.2f}x raw)",
             t["target"], t["pass"]),
    ]


def desk_rows(r: dict[str, Any]) -> list[dict[str, Any]]:
    lat = r["chat_latency"]
    rows = [_row("desk", f"chat turn latency p50 / p95 / p99 ({lat['n']} turns through the processes, no LLM key)",
                 f"{lat['p50_ms']:.0f} / {lat['p95_ms']:.0f} / {lat['p99_ms']:.0f} ms",
                 r["targets"]["chat_p95_ms"]["target"].replace("<", "p95 <") + " ms",
                 r["targets"]["chat_p95_ms"]["pass"])]
    tps = r["tickets_per_second"]
    counts = sorted(tps, key=int)
    complete = all(tps[n]["complete"] for n in counts)
    rows.append(_row("desk", f"tickets/s with {' / '.join(counts)} resolver replicas "
                             f"({tps[counts[0]]['tickets']} tickets each, median of "
                             f"{len(tps[counts[0]]['rounds'])} round(s))",
                     " / ".join(f"{tps[n]['tickets_per_s']:.2f}" for n in counts)
                     + ("" if complete else " (incomplete)")))
    return rows


def memory_core_rows(r: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    tg = r["targets"]["recall_p95"]
    for size, lat in r["figures"]["recall"].items():
        is_target = int(size) >= memory_core.TARGET_RECALL_AT
        with_c = lat.get("with_communities")
        rows.append(_row("memory_core", f"recall latency p50 / p95 at {int(size):,} facts, {lat['episodes']:,} "
                                        f"episodes (question embedding included){', no communities' if with_c else ''}",
                         f"{lat['p50_ms']:.1f} / {lat['p95_ms']:.1f} ms",
                         tg["target"] if is_target and not with_c else "",
                         tg["pass"] if is_target and not with_c else None))
        if with_c:
            c = lat["communities"]
            rows.append(_row("memory_core", f"recall latency p50 / p95 at {int(size):,} facts with its communities "
                                            f"({c['communities']:,}, computed in {c['seconds']:.1f} s)",
                             f"{with_c['p50_ms']:.1f} / {with_c['p95_ms']:.1f} ms",
                             tg["target"] if is_target else "", tg["pass"] if is_target else None))
    return rows


def safety_rows(r: dict[str, Any]) -> list[dict[str, Any]]:
    rows, t = [], r["targets"]
    if (w := r.get("writers")) is not None:
        what = (f"{w['rounds']} rounds x {w['writers_per_predicate']} writers x {len(w['per_predicate'])} "
                f"predicates, {w['background_facts_written']:,} background facts")
        per = w["per_predicate"]
        dup = {kind: sum(v["duplicate_fact_nodes"] for v in per.values() if v["single_valued"] is kind)
               for kind in (True, False)}
        names = {kind: ", ".join(p for p, v in per.items() if v["single_valued"] is kind) for kind in (True, False)}
        rows.append(_row("safety", f"concurrent writers ({what}): duplicate fact nodes, single-valued ({names[True]}) "
                                   f"/ multi-valued ({names[False]})",
                         f"{dup[True]} / {dup[False]}", "0 / 0", t["duplicates"]["pass"]))
        rows.append(_row("safety", f"concurrent writers: two current values, reads that saw it ({w['observations']:,} "
                                   "reads) / slots left with it",
                         f"{w['observations_with_two_current']} / {w['slots_with_two_current_at_end']}", "0",
                         t["two_current"]["pass"]))
        rows.append(_row("safety", "concurrent writers: acknowledged writes not on file", str(w["lost_writes"]), "0",
                         t["lost_writes"]["pass"]))
    if (x := r.get("replicas")) is not None:
        o = x["owners"]
        rows.append(_row("safety", f"racing replicas ({x['replicas']} resolvers, {x['tickets']} tickets, each "
                                   f"announced {x['announced_per_ticket']}x): tickets with 0 / 1 / >1 owners",
                         f"{o['0']} / {o['1']} / {o['>1']}", f"0 / {x['tickets']} / 0",
                         t["one_owner_per_ticket"]["pass"]))
        rows.append(_row("safety", "racing replicas: PICKED_UP edges", str(x["picked_up_edges"]),
                         t["picked_up_edges"]["target"], t["picked_up_edges"]["pass"]))
        rows.append(_row("safety", "racing replicas: tickets at a final stage (fixed / technician)",
                         f"{x['at_final_stage']} of {x['tickets']}", str(x["tickets"]),
                         x["at_final_stage"] == x["tickets"]))
    return rows


def recall_hybrid_rows(r: dict[str, Any]) -> list[dict[str, Any]]:
    lat = r.get("latency")
    if not lat:
        return []
    tg = r.get("targets", {}).get("recall_p95", {})
    rows = [_row("recall_hybrid", f"hybrid recall latency p50 / p95 at {lat.get('episodes', 0):,} episodes",
                 f"{lat['p50_ms']:.1f} / {lat['p95_ms']:.1f} ms", tg.get("target", ""), tg.get("pass"))]
    if "p95_over_plain_vector" in lat:
        rows.append(_row("recall_hybrid", "recall p95 over the plain vector query's p95 of the same database, "
                                          f"interleaved (vector p50 / p95 {lat['plain_vector_p50_ms']:.1f} / "
                                          f"{lat['plain_vector_p95_ms']:.1f} ms)",
                         f"{lat['p95_over_plain_vector']:.2f}x", "<= 1.5x", lat["p95_over_plain_vector"] <= 1.5))
    return rows


def ratios(data: dict[str, Any]) -> dict[str, float | None]:
    """The figures each measured against its baseline of the same run (None: the part did not run):
    recall p95 over the plain vector query's p95 (bench.recall_hybrid, interleaved), POST
    /facts/batch with embeddings over raw one-per-call MERGE (bench.http_writes, the median of its
    rounds' ratios), and the chat turn's p95 through the processes (bench.desk)."""
    def report(part: str) -> dict[str, Any] | None:
        return data["parts"].get(part, {}).get("report")

    out: dict[str, float | None] = {"recall_p95_vs_vector_p95": None, "http_batch_vs_raw_merge": None,
                                    "chat_p95_ms": None}
    if (r := report("recall_hybrid")) and (lat := r.get("latency")) and "p95_over_plain_vector" in lat:
        out["recall_p95_vs_vector_p95"] = lat["p95_over_plain_vector"]
    if (r := report("http_writes")) is not None:
        b = r["figures"][http_writes.BATCHED]
        rounds = b.get("vs_raw_per_round") or [b["vs_raw"]]
        out["http_batch_vs_raw_merge"] = round(statistics.median(rounds), 3)
    if (r := report("desk")) is not None:
        out["chat_p95_ms"] = r["chat_latency"]["p95_ms"]
    return out


ROWS: dict[str, Callable[[dict[str, Any]], list[dict[str, Any]]]] = {
    "fact_writes": fact_write_rows, "http_writes": http_write_rows, "desk": desk_rows, "memory_core": memory_core_rows, "safety": safety_rows,
    "recall_hybrid": recall_hybrid_rows,
}


def rows_of(data: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in PARTS:
        if part in data["parts"]:
            out.extend(ROWS[part](data["parts"][part]["report"]))
    return out


# ---------------------------------------------------------------- markdown (pure: JSON in, text out)


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _verdict(ok: bool | None) -> str:
    return "" if ok is None else ("pass" if ok else "**miss**")


def markdown(data: dict[str, Any]) -> str:
    """The table and how it was taken, from the suite's JSON alone: the same JSON, the same text."""
    m = data["machine"]
    lines = [
        f"Suite run of {data['started_at']}{' (quick sizes: a smoke run, not figures)' if data['quick'] else ''}, "
        f"{data['seconds']:,.0f} s, on {m['cpus']} CPUs ({m['platform']}, Python {m['python']}); load average "
        f"(1/5/15 min) {_load(m['load_avg_before'])} before, {_load(m['load_avg_after'])} after. The machine is "
        "shared: speed figures taken under load are pessimistic.",
        "",
        "| figure | value | target | pass/miss |",
        "|---|---|---|---|",
    ]
    for r in data["rows"]:
        lines.append(f"| {_cell(r['figure'])} | {_cell(r['value'])} | {_cell(r['target'])} | {_verdict(r['pass'])} |")
    if ratios_ := data.get("ratios"):
        lines += ["", "Against their baselines of the same run: " + ", ".join(
            f"{k} {'n/a' if v is None else v}" for k, v in ratios_.items()) + "."]
    loads = ", ".join(f"{p} {_load(v['load_avg_before'])} -> {_load(v['load_avg_after'])}"
                      for p, v in data["parts"].items())
    lines += ["", f"Load average around each part: {loads}."]
    return "\n".join(lines) + "\n"


def _load(values: list[float]) -> str:
    return "/".join(f"{x:g}" for x in values)


def page_section(data: dict[str, Any]) -> str:
    return (f"{START}\n{markdown(data)}\nReproduce: `{COMMAND}` (`python -m bench.suite --docs`; about "
            f"{data['seconds'] / 60:.0f} minutes). Every part's full report is in `bench/results/suite.json`, "
            f"this table in `bench/results/suite.md`.\n{END}")


def replace_section(text: str, section: str) -> str:
    """The page's text with what lies between the markers (markers included) replaced by `section`."""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the page has no {START} ... {END} section")
    return text[:start] + section + text[end + len(END):]


def write_outputs(data: dict[str, Any], out_dir: Path, page: Path | None) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = "suite-quick" if data["quick"] else "suite"
    (out_dir / f"{stem}.json").write_text(json.dumps(data, indent=2) + "\n")
    (out_dir / f"{stem}.md").write_text(markdown(data))
    if page is not None:
        page.write_text(replace_section(page.read_text(), page_section(data)))


# ---------------------------------------------------------------- the run


async def run(profile: Profile, *, quick: bool, out_dir: Path | None = RESULTS_DIR, page: Path | None = None,
              parts: tuple[str, ...] = DEFAULT_PARTS, console: Console | None = None, model_dir: Path | None = None) -> dict[str, Any]:
    console = console or Console(width=150)
    model_dir = model_dir or Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model"))
    data: dict[str, Any] = {
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "quick": quick,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "load_avg_before": load_avg()},
        "parts": {},
    }
    # a full run refreshes each part's own JSON as its own command would; a quick run leaves them be
    own = (lambda p: p) if (not quick and out_dir == RESULTS_DIR) else (lambda p: None)
    calls: dict[str, Callable[[], Any]] = {
        "fact_writes": lambda: fact_writes.run(profile.fact_writes, quick=quick, out=own(fact_writes.RESULTS),
                                               model_dir=model_dir, console=console),
        "http_writes": lambda: http_writes.run(profile.http_writes, quick=quick, out=own(http_writes.RESULTS),
                                               model_dir=model_dir, console=console),
        "desk": lambda: desk.run(profile.desk, quick=quick, out=own(desk.RESULTS), model_dir=model_dir,
                                 console=console),
        "memory_core": lambda: memory_core.run(profile.memory_core, quick=quick, out=own(memory_core.RESULTS),
                                               model_dir=model_dir, console=console),
        "safety": lambda: safety.run(profile.safety, quick=quick, out=own(safety.RESULTS), model_dir=model_dir,
                                     console=console),
        "recall_hybrid": lambda: recall_hybrid.run(profile.recall_hybrid, quick=quick, out=own(recall_hybrid.RESULTS),
                                                   model_dir=model_dir, console=console),
    }
    started = time.perf_counter()
    for part in PARTS:
        if part not in parts:
            continue
        say(console, f"== {part} (load average {load_avg()})")
        before, t0 = load_avg(), time.perf_counter()
        report = await calls[part]()
        data["parts"][part] = {"seconds": round(time.perf_counter() - t0, 1), "load_avg_before": before,
                               "load_avg_after": load_avg(), "report": report}
    data["seconds"] = round(time.perf_counter() - started, 1)
    data["machine"]["load_avg_after"] = load_avg()
    data["rows"] = rows_of(data)
    data["ratios"] = ratios(data)
    text = markdown(data)
    console.print()
    console.print(text, markup=False, highlight=False)
    if out_dir is not None:
        write_outputs(data, out_dir, page)
        say(console, f"results written to {out_dir}" + (f"; {page.name} updated" if page else ""))
    return data


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.suite", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes for a smoke run (writes suite-quick.*)")
    ap.add_argument("--docs", action="store_true",
                    help="put the table into docs/benchmarks.md between the bench markers")
    ap.add_argument("--render", action="store_true",
                    help="measure nothing: rebuild suite.md (and docs/benchmarks.md with --docs) from suite.json")
    ap.add_argument("--only", default=",".join(DEFAULT_PARTS), help=f"parts to run, of {','.join(PARTS)}")
    ap.add_argument("--desk-repeat", type=int, help="rounds per resolver replica count (default "
                                                   f"{desk.Sizes.repeat}, quick {desk.QUICK.repeat})")
    ap.add_argument("--out-dir", type=Path, default=RESULTS_DIR)
    args = ap.parse_args(argv)
    args.parts = tuple(p.strip() for p in args.only.split(",") if p.strip())
    if unknown := set(args.parts) - set(PARTS):
        ap.error(f"unknown part(s) {sorted(unknown)}; the parts are {', '.join(PARTS)}")
    if args.quick and args.docs:
        ap.error("--docs takes the figures of a full run, not --quick")
    profile = QUICK if args.quick else FULL
    if args.desk_repeat:
        profile = Profile(profile.fact_writes, desk.Sizes(**{**asdict(profile.desk), "repeat": args.desk_repeat}),
                          profile.memory_core, profile.safety, profile.http_writes, profile.recall_hybrid)
    args.profile = profile
    return args


def render(out_dir: Path, page: Path | None) -> dict[str, Any]:
    data = json.loads((out_dir / "suite.json").read_text())
    data["rows"] = rows_of(data)
    data["ratios"] = ratios(data)
    write_outputs(data, out_dir, page)
    return data


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    page = PAGE if args.docs else None
    if args.render:
        data = render(args.out_dir, page)
        print(markdown(data), end="")
    else:
        data = asyncio.run(run(args.profile, quick=args.quick, out_dir=args.out_dir, page=page, parts=args.parts))
    # speed misses are reported, not failed (they move with the machine's load); a safety miss is a bug
    return 0 if all(r["pass"] is not False for r in data["rows"] if r["part"] == "safety") else 1


if __name__ == "__main__":
    raise SystemExit(main())
