"""bench.tenants on an embedded cluster (`--shards`) runs end to end at its smallest size and reports
what it promises there: the bytes per tenant summed over the primaries (and the replicas' apart),
the graphs on each shard, the shard plan for 100,000 tenants. The bytes themselves are not asserted
(that is what the benchmark is for); the plan's arithmetic is."""

from __future__ import annotations

import argparse
import json

import pytest
from rich.console import Console

from bench import tenants as bench


def test_the_shard_plan_keeps_a_third_free_and_counts_each_replica():
    plan = {p["node_gb"]: p for p in bench.shard_plan(1.65, replicas=1)}
    assert plan[32]["tenants_per_shard"] == int(32_000 * 2 / 3 / 1.65) and plan[32]["shards"] == 8
    assert plan[32]["nodes"] == 16 and plan[64]["shards"] == 4 and plan[16]["shards"] == 16
    assert bench.shard_plan(0.0, replicas=1) == [] and bench.shard_plan(-0.2, replicas=0) == []  # noise: no plan


@pytest.mark.falkordb
@pytest.mark.cluster
@pytest.mark.model
async def test_ten_tenants_on_three_shards():
    args = argparse.Namespace(max=10, desk=0, pool=8, label="smoke", shards=3, replicas=1)
    console = Console(record=True, width=200)
    data = await bench.run(args, console)

    assert data["shards"] == 3 and data["replicas"] == 1
    [row] = data["memory_only"]
    assert row["tenants"] == 10 and sum(row["graphs_per_shard"]) == 10 and len(row["graphs_per_shard"]) == 3
    assert row["lost_primaries"] == []
    for key in ("used_mb_per_tenant", "rss_mb_per_tenant", "replica_used_mb_per_tenant", "replica_rss_mb_per_tenant"):
        assert row[key] > 0, key
    assert row["recall_p95_ms"] > 0 and row["fact_write_p95_ms"] > 0 and row["cpu_at_rest"] >= 0
    assert {"outbox_pass_1_ms", "communities_round_ms", "total_forks", "replica_forks"} <= set(row)
    assert [p["node_gb"] for p in data["shard_plan"]] == list(bench.NODE_GB)

    bench.print_results(console, data, "smoke")
    text = console.export_text()
    assert "graphs_per_shard" in text and "summed over the 3 primaries" in text and "x 100,000 =" in text
    json.dumps(data, default=str)  # what --out writes
