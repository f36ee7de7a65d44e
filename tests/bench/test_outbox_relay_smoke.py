"""The outbox relay benchmark runs end to end at a tiny size and measures every pass it reports.
Speed is not asserted (that is what the benchmark is for), only what each pass reads."""

from __future__ import annotations

import pytest

from bench import outbox_relay as bench

pytestmark = pytest.mark.falkordb


async def test_a_tiny_run_measures_every_pass():
    data = await bench.run(5, 3, None)
    assert data["every_tenant"]["graph_queries_per_pass"] == 5  # one look at each tenant's outbox
    assert data["marked_none"]["graph_queries_per_pass"] == 0
    assert data["marked_one"]["graph_queries_per_pass"] == 2  # its outbox read, and that it is empty before its mark goes
    for key in ("every_tenant", "marked_none", "marked_one"):
        assert data[key]["p95_ms"] >= data[key]["p50_ms"] > 0
