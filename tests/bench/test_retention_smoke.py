"""The retention benchmark runs end to end at a tiny size and measures both sides. Speed is not
asserted (that is what the benchmark is for), only what compaction must change."""

from __future__ import annotations

import pytest
from rich.console import Console

from bench import retention as bench

pytestmark = [pytest.mark.falkordb, pytest.mark.model]


async def test_a_tiny_run_measures_before_and_after():
    data = await bench.run(60, 30, Console(record=True))
    before, after = data["before"], data["after"]
    assert before["episodes"] == 60 and after["episodes"] == 60 - data["compacted"] > 0
    assert after["nodes"] == before["nodes"] - data["compacted"] + 1  # the Setting node stays
    assert after["edges"] < before["edges"]
    for side in (before, after):
        assert side["recall_p50_ms"] > 0 and side["recall_p95_ms"] >= side["recall_p50_ms"]
