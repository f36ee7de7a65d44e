"""An embedded FalkorDB cluster of three primaries with a replica each (relay_graph.runtime.cluster), and
clients on it: the topology `RELAY_FALKORDB_CLUSTER` chooses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.db import GraphClient
from tests.conftest import REPO
from tests.support import start_cluster
from tests.markers import needs


@pytest.fixture(scope="session")
@needs("cluster", "falkordb")
def cluster3(tmp_path_factory):
    """3 primaries + 3 replicas, each node its own data folder and log."""
    cluster = start_cluster(tmp_path_factory.mktemp("cluster"), 3, 1)
    yield cluster
    cluster.stop()


def settings_for(cluster) -> GraphSettings:
    return GraphSettings(falkordb_cluster=cluster.seeds,
                         model_dir=Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model")))


@pytest.fixture(scope="session")
def cluster_settings(cluster3) -> GraphSettings:
    return settings_for(cluster3)


@pytest.fixture(scope="session")
async def cluster_client(cluster_settings):
    client = GraphClient(cluster_settings)
    yield client
    await client.close()


@pytest.fixture(scope="session")
async def replica_client(cluster_settings):
    client = GraphClient(cluster_settings.model_copy(update={"read_from": "replica"}))
    yield client
    await client.close()
