"""bench.cluster runs end to end at quick sizes (its own server, its own 3+3 cluster, the desk's real
processes on each) and reports every figure it promises; speed is not asserted (that is the
benchmark's job), only that everything was measured and hangs together."""

from __future__ import annotations

import pytest
from rich.console import Console

from bench import cluster as bench_cluster

pytestmark = [pytest.mark.falkordb, pytest.mark.cluster, pytest.mark.processes, pytest.mark.model]


async def test_quick_run_reports_every_figure():
    console = Console(record=True, width=200)
    data = await bench_cluster.run(True, console)

    m = data["machine"]
    assert len(m["load_avg_before"]) == 3 and len(m["load_avg_after"]) == 3 and m["cpus"] >= 1
    figures = data["figures"]
    assert set(figures) == {"1 server", "3 shards", "3 shards, replica reads"}
    assert figures["1 server"]["writes_per_s"] > 0 and figures["3 shards"]["writes_per_s"] > 0
    assert figures["3 shards, replica reads"]["writes_per_s"] is None  # the same writes as 3 shards
    assert all(f["recalls_per_s"] > 0 for f in figures.values())
    assert figures["3 shards, replica reads"]["replica_reads"] > 0, "replica reads went to replicas"
    assert figures["1 server"]["same_answers"] == figures["1 server"]["same_sets"]  # itself

    tickets = data["tickets_per_second"]
    assert set(tickets) == {"1 server", "3 shards"}
    for by_n in tickets.values():
        assert set(by_n) == {str(n) for n in bench_cluster.RESOLVER_REPLICAS}
        for n, r in by_n.items():
            assert r["replicas"] == int(n) and r["tickets"] == bench_cluster.QUICK_TICKETS
            assert r["complete"] and r["settled"] == r["tickets"], r  # every ticket settled
            assert r["tickets_per_s"] > 0

    bench_cluster.print_tables(console, data)
    text = console.export_text()
    assert "tickets/s by resolver replicas" in text and "With a core per shard" in text
    assert "load average before" in text
    assert data["with_a_core_per_shard"] == bench_cluster.CORE_PER_SHARD
