"""State other layers keep with a GraphClient (GraphClient.kept): per client, made once."""

import pytest

from relay_graph.runtime.db import GraphClient

pytestmark = pytest.mark.falkordb


async def test_kept_state_is_made_once_per_client_and_never_shared(graph_settings):
    a, b = GraphClient(graph_settings), GraphClient(graph_settings)
    made = []

    def make() -> set[str]:
        made.append(1)
        return set()

    a.kept("test.ready", make).add("t1")
    assert a.kept("test.ready", make) == {"t1"}
    assert b.kept("test.ready", make) == set()
    assert len(made) == 2  # once for each client
    assert a.kept("test.other", dict) == {}
    await a.close()
    await b.close()
