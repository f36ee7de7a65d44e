"""The performance suite: its table and its section of docs/benchmarks.md are rebuilt from its JSON
alone, the same way every time, touching nothing outside the markers; and a tiny run of every
part, through the real FalkorDB and processes, fills every row. Speed is not asserted (that is the suite's job)."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from bench import desk, fact_writes, http_writes, memory_core, recall_hybrid, safety, suite


def _reports() -> dict:
    """Part reports as the benches write them, cut down to what the rows read."""
    fw = {m: {"label": fact_writes.LABELS[m], "per_s": p, "vs_raw": round(p / 1500, 3)}
          for m, p in ((fact_writes.RAW, 1500.0), (fact_writes.SINGLE, 210.5), (fact_writes.SINGLE_4, 260.0),
                       (fact_writes.BATCHED, 800.0), (fact_writes.EMBEDDED, 320.4))}
    rounds = lambda n: {"tickets": 200, "tickets_per_s": n, "complete": True, "rounds": [{}, {}]}  # noqa: E731
    hw = {m: {"label": http_writes.LABELS[m], "per_s": p, "vs_raw": round(p / 1400, 3)}
          for m, p in ((http_writes.RAW, 1400.0), (http_writes.SINGLE, 60.0), (http_writes.BATCHED, 1610.0))}
    return {
        "http_writes": {"figures": hw, "targets": {
            "http_batch_vs_raw": {"measure": "http_batch", "target": ">= 1 x raw", "pass": True}}},
        "fact_writes": {"figures": fw, "targets": {
            "fact_writes_plain": {"measure": "batch", "target": ">= 0.5 x raw", "pass": True},
            "fact_writes_embedded": {"measure": "batch_embedded", "target": ">= 500/s", "pass": False}}},
        "desk": {"chat_latency": {"n": 400, "p50_ms": 80.2, "p95_ms": 130.9, "p99_ms": 240.0},
                 "targets": {"chat_p95_ms": {"target": "< 100", "value": 130.9, "pass": False}},
                 "tickets_per_second": {"1": rounds(2.0), "2": rounds(3.1), "4": rounds(3.9)}},
        "memory_core": {"figures": {"recall": {"10000": {"p50_ms": 20.0, "p95_ms": 30.0, "episodes": 3000},
                                               "100000": {"p50_ms": 28.0, "p95_ms": 49.6, "episodes": 3000}}},
                        "targets": {"recall_p95": {"target": "< 25 ms at 100,000 facts", "pass": False}}},
        "recall_hybrid": {"latency": {"episodes": 10000, "p50_ms": 9.0, "p95_ms": 15.3, "plain_vector_p50_ms": 3.1,
                                      "plain_vector_p95_ms": 4.8, "p95_over_plain_vector": 3.19},
                          "targets": {"recall_p95": {"target": "< 25 ms at 10,000 episodes", "pass": True}}},
        "safety": {"writers": {"rounds": 40, "writers_per_predicate": 32, "per_predicate": {
                                   "lives_in": {"single_valued": True, "duplicate_fact_nodes": 0},
                                   "name": {"single_valued": True, "duplicate_fact_nodes": 0},
                                   "owns_device": {"single_valued": False, "duplicate_fact_nodes": 0}},
                               "background_facts_written": 9000, "duplicate_fact_nodes": 0, "observations": 500,
                               "observations_with_two_current": 0, "slots_with_two_current_at_end": 0,
                               "lost_writes": 0},
                   "replicas": {"replicas": 8, "tickets": 200, "announced_per_ticket": 2, "at_final_stage": 200,
                                "owners": {"0": 0, "1": 200, ">1": 0}, "picked_up_edges": 200,
                                "owner_not_the_picker": 0}},
    }


def _data() -> dict:
    data = {"started_at": "2026-11-30T03:00:00+00:00", "quick": False, "seconds": 1500.0,
            "machine": {"cpus": 2, "python": "3.11.7", "platform": "Linux", "load_avg_before": [3.1, 2.0, 1.5],
                        "load_avg_after": [4.0, 3.0, 2.5]},
            "parts": {p: {"seconds": 10.0, "load_avg_before": [1.0, 1.0, 1.0], "load_avg_after": [2.0, 1.0, 1.0],
                          "report": r} for p, r in _reports().items()}}
    data["safety_targets"] = safety.evaluate(data["parts"]["safety"]["report"])
    data["parts"]["safety"]["report"]["targets"] = data.pop("safety_targets")
    data["rows"] = suite.rows_of(data)
    data["ratios"] = suite.ratios(data)
    return data


def test_rows_carry_figure_value_target_and_verdict():
    rows = suite.rows_of(_data())
    assert all(set(r) == {"part", "figure", "value", "target", "pass"} for r in rows)
    assert [r["part"] for r in rows][:1] == ["fact_writes"] and rows[-1]["part"] == "recall_hybrid"
    by = {r["figure"]: r for r in rows}
    chat = next(r for f, r in by.items() if f.startswith("chat turn latency"))
    assert chat["value"] == "80 / 131 / 240 ms" and chat["target"] == "p95 < 100 ms" and chat["pass"] is False
    tickets = next(r for f, r in by.items() if f.startswith("tickets/s with 1 / 2 / 4"))
    assert tickets["value"] == "2.00 / 3.10 / 3.90" and tickets["pass"] is None
    recall = [r for f, r in by.items() if f.startswith("recall latency")]
    assert [r["pass"] for r in recall] == [None, False]  # the target is about 100k facts only
    owners = next(r for f, r in by.items() if "owners" in f)
    assert owners["value"] == "0 / 200 / 0" and owners["pass"] is True
    assert all(r["pass"] is True for r in rows if r["part"] == "safety")
    batch = next(r for f, r in by.items() if f.startswith("HTTP POST /facts/batch"))
    assert (batch["value"], batch["target"], batch["pass"]) == ("1,610/s (1.15x raw)", ">= 1 x raw", True)
    one = next(r for f, r in by.items() if f.startswith("HTTP POST /facts,"))
    assert one["value"] == "60.0/s (0.04x raw)" and "raw MERGE in the same run: 1,400/s" in one["figure"]
    dup = next(r for f, r in by.items() if "duplicate fact nodes" in f)
    assert "single-valued (lives_in, name) / multi-valued (owns_device)" in dup["figure"] and dup["value"] == "0 / 0"


def test_ratios_put_three_figures_beside_their_baselines_of_the_same_run():
    data = _data()
    data["parts"]["http_writes"]["report"]["figures"][http_writes.BATCHED]["vs_raw_per_round"] = [0.9, 1.2, 1.1]
    assert suite.ratios(data) == {"recall_p95_vs_vector_p95": 3.19, "http_batch_vs_raw_merge": 1.1,
                                  "chat_p95_ms": 130.9}
    del data["parts"]["recall_hybrid"]
    assert suite.ratios(data)["recall_p95_vs_vector_p95"] is None
    rows = [r for r in suite.rows_of(_data()) if r["part"] == "recall_hybrid"]
    assert rows[1]["value"] == "3.19x" and rows[1]["pass"] is False


def test_markdown_and_the_pages_section_are_rebuilt_from_the_json_alone(tmp_path):
    data = _data()
    (tmp_path / "suite.json").write_text(json.dumps(data, indent=2))
    page = tmp_path / "benchmarks.md"
    before, after = "# Benchmarks\n\n## The suite\n\nintro\n\n", "\n\n## Outside the suite\n\nrest | of it\n"
    page.write_text(before + f"{suite.START}\nold table\n{suite.END}" + after)

    rebuilt = suite.render(tmp_path, page)
    md = (tmp_path / "suite.md").read_text()
    assert md == suite.markdown(data) == suite.markdown(json.loads(json.dumps(rebuilt)))
    assert md.count("\n| ") == len(data["rows"]) + 1  # header + one line per row
    assert "| fact writes with embeddings: " in md and "| **miss** |" in md and "| pass |" in md
    assert "3.1/2/1.5 before, 4/3/2.5 after" in md

    text = page.read_text()
    assert text.startswith(before) and text.endswith(after)  # nothing outside the markers moved
    assert text == before + suite.page_section(data) + after
    assert "old table" not in text and "`make bench`" in text and md in text
    suite.render(tmp_path, page)
    assert page.read_text() == text  # the same JSON, the same page


def test_the_benchmarks_page_has_the_markers_make_bench_fills():
    text = suite.PAGE.read_text()
    assert suite.PAGE.name == "benchmarks.md" and suite.PAGE.parent.name == "docs"
    assert text.count(suite.START) == 1 and text.count(suite.END) == 1 and text.index(suite.START) < text.index(suite.END)


def test_a_page_without_markers_is_refused():
    with pytest.raises(ValueError):
        suite.replace_section("# no markers here\n", "x")


def test_command_line():
    args = suite.parse(["--quick"])
    assert args.profile == suite.QUICK and args.parts == suite.DEFAULT_PARTS
    assert "http_writes" in args.parts
    assert suite.parse(["--desk-repeat", "1"]).profile.desk.repeat == 1
    assert suite.parse(["--only", "safety"]).parts == ("safety",)
    for bad in (["--quick", "--docs"], ["--only", "nonsense"]):
        with pytest.raises(SystemExit):
            suite.parse(bad)


TINY = suite.Profile(
    fact_writes=fact_writes.Sizes(rounds=1, raw=50, single=14, single_x4=14, batch=64, embedded=64, embedded_new=16),
    desk=desk.Sizes(turns=4, warmup=1, tickets=3, replicas=(1, 2), repeat=1),
    memory_core=memory_core.Sizes(raw_merges=50, plain_facts=20, embedded_facts=40, fact_batch=16, fact_writers=2,
                                  episodes=24, episode_batch=8, recall_facts=(70, 140), recall_episodes=16,
                                  recall_calls=10),
    safety=safety.Sizes(rounds=1, replicas=2, tickets=4),
    http_writes=http_writes.Sizes(rounds=1, raw=20, single=4, batch=30),
    recall_hybrid=recall_hybrid.Sizes(conversations=2, sessions=2, turns_per_session=6, latency_episodes=60,
                                      latency_calls=5),
)


@pytest.mark.falkordb
@pytest.mark.processes
@pytest.mark.model
async def test_a_tiny_run_of_every_part_fills_every_row(tmp_path):
    console = Console(record=True, width=160)
    data = await suite.run(TINY, quick=True, out_dir=tmp_path, console=console)

    assert set(data["parts"]) == {"fact_writes", "http_writes", "desk", "memory_core", "safety", "recall_hybrid"}
    assert all(isinstance(v, float) for v in data["ratios"].values()), data["ratios"]
    for part in data["parts"].values():
        assert part["seconds"] > 0 and len(part["load_avg_before"]) == len(part["load_avg_after"]) == 3
    assert json.loads((tmp_path / "suite-quick.json").read_text()) == json.loads(json.dumps(data))
    assert (tmp_path / "suite-quick.md").read_text() == suite.markdown(data)
    parts = [r["part"] for r in data["rows"]]
    assert parts.count("fact_writes") == 6 and parts.count("http_writes") == 2 and parts.count("desk") == 2 and parts.count("memory_core") == 4  # each size without and with its communities
    assert parts.count("safety") == 6
    safety_rows = [r for r in data["rows"] if r["part"] == "safety"]
    assert all(r["pass"] is True for r in safety_rows), safety_rows
    race = data["parts"]["safety"]["report"]["replicas"]
    assert race["owners"] == {"0": 0, "1": 4, ">1": 0} and race["picked_up_edges"] == 4
    assert "| figure | value | target | pass/miss |" in console.export_text()
