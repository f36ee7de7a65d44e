"""bench.http_writes at a tiny size: its own FalkorDB and the gateway process, every figure
reported and every fact the bench sent on file once. Speed is not asserted (that is the bench's job)."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from bench import http_writes

pytestmark = [pytest.mark.falkordb, pytest.mark.processes, pytest.mark.model]


async def test_a_tiny_run_reports_every_figure_and_writes_every_fact(tmp_path):
    out = tmp_path / "http_writes.json"
    console = Console(record=True, width=160)
    sizes = http_writes.Sizes(rounds=2, raw=20, single=5, batch=40)
    report = await http_writes.run(sizes, quick=True, out=out, console=console)

    assert json.loads(out.read_text()) == json.loads(json.dumps(report))
    fig = report["figures"]
    assert set(fig) == {http_writes.RAW, http_writes.SINGLE, http_writes.BATCHED}
    for mode, n in ((http_writes.RAW, 20), (http_writes.SINGLE, 5), (http_writes.BATCHED, 40)):
        assert fig[mode]["count"] == 2 * n and fig[mode]["per_s"] > 0 and len(fig[mode]["vs_raw_per_round"]) == 2
    assert fig[http_writes.RAW]["vs_raw"] == 1.0
    # every fact sent through HTTP is on file, once (warm-up included)
    assert report["fact_nodes"] == report["fact_nodes_expected"] == {http_writes.SINGLE: 14 + 10,
                                                                     http_writes.BATCHED: 140 + 80}
    target = report["targets"]["http_batch_vs_raw"]
    assert target["measure"] == http_writes.BATCHED and isinstance(target["pass"], bool)
    assert "Relay fact writes through HTTP vs raw FalkorDB" in console.export_text()
