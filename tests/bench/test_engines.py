"""bench.engines: figures of the two modules paired row by row, and a tiny real run on both."""

from __future__ import annotations

import json

import pytest

from bench import engines


def test_rows_pair_by_part_and_position():
    row = lambda part, fig, value, ok=None: {"part": part, "figure": fig, "value": value, "target": "t", "pass": ok}  # noqa: E731
    runs = {"4.16.3": {"rows": [row("fact_writes", "a (10 items)", "1/s"), row("fact_writes", "b", "2/s", False)]},
            "4.22.1": {"rows": [row("fact_writes", "a (12 items)", "3/s"), row("fact_writes", "b", "4/s", True)]}}
    out = engines.side_by_side(runs)
    assert [(r["figure"], r["values"], r["pass"]) for r in out] == [
        ("a (10 items)", {"4.16.3": "1/s", "4.22.1": "3/s"}, {"4.16.3": None, "4.22.1": None}),
        ("b", {"4.16.3": "2/s", "4.22.1": "4/s"}, {"4.16.3": False, "4.22.1": True})]
    text = engines.markdown({"started_at": "x", "quick": True, "modules": list(runs), "seconds": 1,
                             "load_avg_before": [1.0], "load_avg_after": [1.0], "rows": out})
    assert "| b | 2/s (**miss**) | 4/s | t |" in text


@pytest.mark.falkordb
async def test_a_tiny_run_on_both_modules(tmp_path):
    data = await engines.run(("fact_writes",), quick=True, out_dir=tmp_path)
    assert data["rows"] and all(all(r["values"][m] for m in engines.MODULES) for r in data["rows"])
    assert json.loads((tmp_path / "engines-quick.json").read_text())["modules"] == list(engines.MODULES)
    assert (tmp_path / "engines-quick.md").read_text().count("FalkorDB 4.22.1") == 1
