"""The markdown report comes from the JSON alone, byte for byte, and a type Relay loses is shown
as lost."""

from __future__ import annotations

import json

from bench.memory import __main__ as cli
from bench.memory.report import render, summarise
from bench.memory.run import rebuild_report, write


def _row(i: int, kind: str, relay: bool, vector: bool) -> dict:
    def side(ok: bool) -> dict:
        return {"answer": "Pune" if ok else None, "correct": ok, "gold_in_context": ok, "context": [[None, "x"]]}

    return {"id": f"{kind}-{i:03d}", "type": kind, "text": "Where?", "asked": "Where | now?", "customer": "A B",
            "answer_kind": "city", "gold": "Pune", "as_of": None, "relay": {**side(relay), "tools": ["facts_at"]},
            "vector": side(vector)}


def _data() -> dict:
    results = ([_row(i, "current", True, i % 2 == 0) for i in range(6)]
               + [_row(i, "procedural", i == 0, True) for i in range(5)]  # the vector store wins this one
               + [_row(i, "refusal", True, True) for i in range(3)])
    return {"benchmark": "memory", "started_at": "2026-01-01T00:00:00+00:00", "quick": True, "seed": 7,
            "reader": "deterministic (no LLM key)",
            "storyline": {"customers": 2, "turns": 10, "events": 20, "kinds": {"chat": 5, "note": 5}},
            "load": {"events": 20, "turns": 10, "seconds": 1.5, "outcomes": {}, "errors": 0, "first_errors": []},
            "questions": results, "summary": summarise(results, resamples=500)}


def test_report_is_rebuilt_identically_from_the_json(tmp_path):
    data = _data()
    js, md = tmp_path / "memory.json", tmp_path / "memory.md"
    write(data, js, md, progress=lambda _: None)
    first = md.read_bytes()
    md.unlink()
    rebuild_report(js, md)
    assert md.read_bytes() == first
    assert render(json.loads(js.read_text())).encode() == first
    md.write_text("stale")
    assert cli.main(["--report-only", "--json", str(js), "--md", str(md)]) == 0
    assert md.read_bytes() == first


def test_a_type_relay_loses_is_reported_as_lost():
    data = _data()
    s = data["summary"]
    assert s["relay_lost"] == ["procedural"]
    assert s["by_type"]["procedural"]["winner"] == "vector store (Relay lost)"
    assert s["by_type"]["current"]["winner"] == "Relay" and s["by_type"]["refusal"]["winner"] == "tie"
    text = render(data)
    row = next(line for line in text.splitlines() if line.startswith("| procedural |"))
    assert "vector store (Relay lost)" in row and "20.0 % (1)" in row and "100.0 % (5)" in row
    lost = text.split("## Types Relay lost", 1)[1].split("##", 1)[0]
    assert "**procedural**" in lost and "current" not in lost


def test_summary_counts_and_tests():
    s = _data()["summary"]
    assert s["overall"]["n"] == 14
    assert s["overall"]["relay"]["correct"] == 6 + 1 + 3 and s["overall"]["vector"]["correct"] == 3 + 5 + 3
    assert (s["mcnemar"]["only_a"], s["mcnemar"]["only_b"]) == (3, 4)
    assert s["bootstrap"]["low"] <= s["bootstrap"]["diff"] <= s["bootstrap"]["high"]


def test_cells_with_pipes_do_not_break_the_table():
    text = render(_data())
    assert "Where \\| now?" in text
