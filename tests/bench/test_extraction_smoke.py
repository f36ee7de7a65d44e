"""The extraction benchmark runs on the first lines of its labelled set and reports every figure;
its set shares no message with the extractor's own test table. Pure logic: no graph, no model."""

from __future__ import annotations

import json

from bench import extraction
from tests.relay_graph.desk.extraction.test_rules_table import CASES


def _complete(w: dict) -> None:
    assert set(w) == {"value", "low", "high", "k", "n"}
    assert w["n"] > 0 and 0 <= w["low"] <= w["value"] <= w["high"] <= 1


def test_first_ten_lines_report_every_figure(tmp_path, capsys):
    out = tmp_path / "extraction.json"
    assert extraction.main(["--limit", "10", "--out", str(out)]) == 0
    data = json.loads(out.read_text())

    assert data["messages"] == 10 and data["limit"] == 10
    facts = data["facts"]
    assert facts["tp"] + facts["fn"] == data["gold_facts"] > 0
    _complete(facts["precision"])
    _complete(facts["recall"])
    assert 0 <= facts["f1"] <= 1
    assert data["per_predicate"] and all({"precision", "recall", "f1"} <= set(m) for m in data["per_predicate"].values())
    _complete(data["problem_kind_accuracy"])
    assert data["problem_kind_accuracy"]["n"] == 10
    assert {"precision", "recall", "f1"} <= set(data["problem_detected"])
    printed = capsys.readouterr().out
    assert "problem kind accuracy" in printed and "precision" in printed and "recall" in printed


def test_scoring_counts_exact_predicate_object_and_ended():
    assert extraction.fact_key("email", "A.B@Example.COM", False) == extraction.fact_key("email", "a.b@example.com", False)
    assert extraction.fact_key("lives_in", "Pune", True) != extraction.fact_key("lives_in", "Pune", False)
    m = extraction.prf(tp=3, fp=1, fn=3)
    assert m["precision"]["value"] == 0.75 and m["recall"]["value"] == 0.5 and m["f1"] == 0.6
    w = extraction.wilson(0, 10)
    assert w["value"] == 0 and w["low"] == 0 and 0.2 < w["high"] < 0.35  # Wilson, not the zero-width Wald


def test_the_labelled_set_is_big_enough_and_not_the_test_table():
    examples = extraction.load()
    assert len(examples) >= 120
    assert len({e.text for e in examples}) == len(examples)
    table = {c.text.strip().casefold() for c in CASES}
    assert not [e.text for e in examples if e.text.strip().casefold() in table]
    assert any(e.tag == "mixed" for e in examples) and any(e.tag == "negative" for e in examples)
