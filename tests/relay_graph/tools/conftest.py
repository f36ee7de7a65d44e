"""Tool-catalogue fixtures: a Call on the session's real FalkorDB, with every query the
tools run recorded (name and whether it could write), and a way to count what the graph holds."""

from __future__ import annotations

from typing import Any

import pytest

from relay_graph.runtime.db import GraphClient
from relay_graph.memory.facade import Memory
from relay_graph.runtime.queries import Query
from relay_graph.runtime.streams import NotificationBase
from relay_graph.tools import Call

# What the graph holds, counted directly (tests only: the tools never hold Cypher).
COUNTS = Query(
    "test_counts",
    "MATCH (n) WITH labels(n) AS ls UNWIND ls AS l RETURN l AS k, count(*) AS n "
    "UNION ALL MATCH ()-[r]->() RETURN type(r) AS k, count(r) AS n",
    read_only=True,
)

# The lookups a tool resolves its names with; for an unknown name nothing else may run.
RESOLUTION = {"entity_lookup", "names_match", "entity_by_key", "peek_ticket", "network_get_node", "fact_provenance"}


class RecordingClient:
    """The real client, with a log of the named queries run through it."""

    def __init__(self, inner: GraphClient) -> None:
        self.inner = inner
        self.ran: list[Query] = []

    async def run(self, tenant: str, query: Query, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        self.ran.append(query)
        return await self.inner.run(tenant, query, params)

    def names(self) -> list[str]:
        return [q.name for q in self.ran]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def counts(client: GraphClient, tenant: str) -> dict[str, int]:
    return {r["k"]: r["n"] for r in await client.run(tenant, COUNTS)}


@pytest.fixture
def recorder(graph_client) -> RecordingClient:
    return RecordingClient(graph_client)


@pytest.fixture
def announced() -> list[NotificationBase]:
    return []


@pytest.fixture
def make_ctx(recorder, embedder, announced):
    """Call(tenant, agent) over the recording client; announcements are collected."""

    class Collect:
        async def announce(self, tenant: str, notifications: list[NotificationBase]) -> bool:
            announced.extend(notifications)
            return True

    def make(tenant: str, agent: str = "mcp:tester") -> Call:
        return Call(Memory(recorder, embedder), tenant, agent, announcer=Collect())

    return make


@pytest.fixture
def ctx(make_ctx, tenant) -> Call:
    return make_ctx(tenant)
