"""Fixtures for the desk agents: Deps built by each service's bootstrap against the session's real
FalkorDB (shared client and embedder; `intake`, `resolver`, `netops`), the gateway's part of a
turn (`gateway`: the customer's episode, then TurnReceived), graph counters and bounded polling."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest

from relay_graph.memory.facade import Memory
from relay_graph.memory.models import EpisodeInput
from relay_graph.runtime.queries import Query
from relay_graph.runtime.streams import Publisher, TurnReceived
from tests import support
from tests.support import FAST, published  # noqa: F401 (the desk's tests import published from here)

# What the graph holds, counted directly (tests only: the services never hold raw Cypher).
COUNTS = Query(
    "test_desk_counts",
    "MATCH (n) WITH labels(n) AS ls UNWIND ls AS l RETURN 'node:' + l AS k, count(*) AS n "
    "UNION ALL MATCH ()-[r]->() RETURN 'edge:' + type(r) AS k, count(r) AS n",
    read_only=True,
)
PROPS = Query(
    "test_desk_ticket_props",
    "MATCH (t:Ticket {ticket_id: $id}) RETURN properties(t) AS p",
    read_only=True,
)
CONSULTED = Query(
    "test_desk_consulted",
    "MATCH (a:Agent {name: $agent})-[c:CONSULTED]->(f:Fact) RETURN f.fact_id AS fact_id, c.count AS count",
    read_only=True,
)


async def counts(client, tenant: str) -> dict[str, int]:
    """What the desk wrote, by label and edge type. Outbox nodes are left out: they are the
    delivery's bookkeeping, and a published one lingers until its process takes it out (within a
    second, relay_graph.runtime.outbox)."""
    return {r["k"]: r["n"] for r in await client.run(tenant, COUNTS) if r["k"] != "node:Outbox"}


async def eventually(check, *, timeout: float = 30.0, interval: float = 0.05, what: str = "condition"):
    return await support.eventually(check, timeout=timeout, interval=interval, what=what)


def _settings(cls, graph_settings, **extra):
    extra.setdefault("streams", FAST)
    return cls(
        falkordb_host=graph_settings.falkordb_host,
        falkordb_port=graph_settings.falkordb_port,
        falkordb_cluster=graph_settings.falkordb_cluster,
        model_dir=graph_settings.model_dir,
        preload_model=False,
        **extra,
    )


@pytest.fixture
def agent_deps(graph_settings, graph_client, memory, stream_redis):
    """`await agent_deps("intake")` -> Deps from that service's bootstrap, on the shared client."""
    from services.intake.bootstrap import bootstrap as intake_bootstrap
    from services.intake.settings import IntakeSettings
    from services.netops.bootstrap import bootstrap as netops_bootstrap
    from services.netops.settings import NetopsSettings
    from services.resolver.bootstrap import bootstrap as resolver_bootstrap
    from services.resolver.settings import ResolverSettings

    table = {
        "intake": (intake_bootstrap, IntakeSettings),
        "resolver": (resolver_bootstrap, ResolverSettings),
        "netops": (netops_bootstrap, NetopsSettings),
    }

    async def build(service: str, *, consumer_name: str | None = None, clock=None, **settings_extra):
        boot, cls = table[service]
        deps = await boot(_settings(cls, graph_settings, **settings_extra), memory=memory, redis=stream_redis,
                          consumer_name=consumer_name or f"{service}-test-{uuid.uuid4().hex[:6]}", clock=clock)
        return deps

    return build  # nothing to close: the client, memory and redis are the session's


@pytest.fixture
async def intake(agent_deps):
    return await agent_deps("intake")


@pytest.fixture
async def resolver(agent_deps):
    return await agent_deps("resolver", consumer_name="resolver-host-1-aaaaaa")


@pytest.fixture
async def netops(agent_deps):
    return await agent_deps("netops")


@pytest.fixture
def gateway(memory, stream_redis, tenant):
    """The gateway's part of a turn in the test's tenant, published on the session's streams."""
    return Gateway(memory, Publisher(stream_redis), tenant)


class Gateway:
    """The gateway's part of a chat turn, as the gateway does it: the customer's episode first,
    then TurnReceived. Sequence numbers count per session."""

    def __init__(self, memory: Memory, publisher, tenant: str):
        self.memory, self.publisher, self.tenant = memory, publisher, tenant
        self.seqs: dict[str, int] = {}
        self.clock = datetime(2000, 1, 1, tzinfo=timezone.utc)

    async def write_turn(self, customer: str, text: str, session: str | None = None,
                         at: datetime | None = None) -> TurnReceived:
        session = session or f"s-{uuid.uuid4().hex[:10]}"
        self.seqs[session] = self.seqs.get(session, 0) + 1
        if at is None:  # now, and never the same millisecond as the turn before
            at = max(datetime.now(timezone.utc), self.clock + timedelta(milliseconds=1))
        self.clock = max(self.clock, at)
        eid = f"ep-{uuid.uuid4().hex[:16]}"
        await self.memory.write_episodes(self.tenant, [EpisodeInput(
            session=session, speaker=customer, text=text, at=at, id=eid, kind="CustomerMessage",
            customer=customer)])
        return TurnReceived(tenant=self.tenant, id=eid, version=self.seqs[session], session=session,
                            customer=customer)

    async def say(self, customer: str, text: str, session: str | None = None, at: datetime | None = None):
        n = await self.write_turn(customer, text, session, at)
        await self.publisher.publish(n)
        return n
