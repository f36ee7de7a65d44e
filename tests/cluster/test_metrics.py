"""The metrics' snapshot on a cluster: the streams' state read through the cluster client, and
FalkorDB's used memory summed over the primaries (INFO memory of each)."""

from __future__ import annotations

import pytest

from relay_graph.runtime.metrics import snapshot
from relay_graph.runtime.streams import STREAMS, connect

pytestmark = [pytest.mark.cluster, pytest.mark.falkordb]


async def test_the_snapshot_reads_a_cluster(cluster3, cluster_settings, cluster_client):
    redis = connect(cluster_settings)
    try:
        async def graphs() -> int:
            return len(await cluster_client.all_graphs())

        reading = await snapshot.read(redis, count_graphs=graphs)
        primaries = redis.get_primaries()
        each = [int((await redis.info("memory", target_nodes=node))["used_memory"]) for node in primaries]
    finally:
        await redis.aclose()
    (memory,) = reading.points["relay_falkordb_used_memory"]
    assert len(each) == 3 and min(each) > 0
    assert abs(memory[1] - sum(each)) < 0.2 * sum(each), ("the sum over the three primaries", memory, each)
    assert {labels["stream"] for labels, _ in reading.points["relay_stream_length_messages"]} == set(STREAMS)
    assert {labels["stream"] for labels, _ in reading.points["relay_stream_dead_letter_messages"]} == set(STREAMS)
    assert reading.points["relay_falkordb_graphs"][0][1] >= 0
