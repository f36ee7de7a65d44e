"""The graph-bytes benchmark runs end to end at a tiny size on its own FalkorDB: every layout is
made and measured, each graph holds what its layout says. The bytes themselves are not asserted
(that is what the benchmark is for)."""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

import pytest
import redis

from bench import graph_bytes as bench
from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port

pytestmark = [pytest.mark.falkordb]


def test_a_tiny_run_measures_every_layout(tmp_path):
    out = tmp_path / "graph_bytes.json"
    assert bench.main(["--graphs", "2", "--nodes", "16", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert [r["layout"] for r in data["rows"]] == ["plain", "labels", "ranges", "fulltext", "vectors", "vector_ix",
                                                      "plan_two", "plan_all"]
    assert data["graphs"] == 2 and data["nodes"] == 16 and data["dimension"] == 384
    assert all(isinstance(r["rss_mb_per_graph"], float) for r in data["rows"])


def test_each_layout_makes_the_graph_it_names():
    with tempfile.TemporaryDirectory() as tmp:
        server = EmbeddedFalkorDB(Path(tmp), free_port()).start()
        r = redis.Redis(host=server.host, port=server.port, decode_responses=True)
        try:
            for name, make in bench.layouts(16, random.Random(1)).items():
                make(r, name)
                nodes = r.execute_command("GRAPH.QUERY", name, "MATCH (n) RETURN count(n)")[1][0][0]
                kinds = " ".join(str(row[0]) for row in r.execute_command(
                    "GRAPH.QUERY", name, "CALL db.indexes() YIELD types RETURN types")[1])
                assert nodes == 16, name
                assert ("RANGE" in kinds) == (name == "ranges"), (name, kinds)
                assert ("FULLTEXT" in kinds) == (name == "fulltext"), (name, kinds)
                assert ("VECTOR" in kinds) == (name == "vector_ix"), (name, kinds)
        finally:
            r.close()
            server.stop(compact_timeout=5)


def test_bad_sizes_are_refused(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--graphs", "0"])
    assert "--graphs must be at least 1" in capsys.readouterr().err
