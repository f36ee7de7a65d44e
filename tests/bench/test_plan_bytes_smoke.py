"""The kept-plan benchmark runs end to end at a tiny size on its own FalkorDB, and its neutral
parameters let a statement run without matching or writing anything. The bytes themselves are not
asserted (that is what the benchmark is for)."""

from __future__ import annotations

import json

import pytest

from bench import plan_bytes as bench


def test_neutral_parameters_follow_how_the_statement_uses_each():
    got = bench.neutral("WITH vecf32($v) AS qv UNWIND $rows AS r MATCH (n:A {id: $id}) WHERE n.k IN $keys "
                        "WITH n LIMIT $n UNWIND range(0, size($seeds) - 1) AS i RETURN n")
    assert got["rows"] == [] and got["keys"] == [] and got["seeds"] == []
    assert got["n"] == 1 and got["id"] is None and len(got["v"]) == 384


def test_the_statements_measured_include_the_engines_writes_and_reads():
    names = bench.statements()
    assert {"return_1", "episodes_write", "recall_neighbours_in_full", "outbox_keep"} <= set(names)
    assert "facts_batch_create_plain(2 predicates)" in names


@pytest.mark.falkordb
def test_a_tiny_run_measures_or_names_the_refusal(tmp_path):
    out = tmp_path / "plan_bytes.json"
    assert bench.main(["--graphs", "2", "--only", "outbox", "--out", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert {"return_1", "outbox_keep"} <= {r["statement"] for r in rows}
    assert all(r["refused"] is None and isinstance(r["kb_per_graph"], float) for r in rows)
