"""Readiness checks: named async probes the composition root hands to /readyz. A probe fails by
raising or by returning False; each gets the same time limit and they run concurrently.

The real process checks FalkorDB, the streams, and each desk agent (`intake`, `resolver`,
`netops`): its consumer group exists on the stream it reads and at least one of its replicas has a
fresh heartbeat (`full_readiness`). `create_app` without a list checks FalkorDB only."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Awaitable, Callable, Sequence

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import AuthenticationError

from relay_graph.runtime.cluster import parse_seeds
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.heartbeat import alive
from relay_graph.runtime.streams import STREAM_NETWORK, STREAM_TICKETS, STREAM_TURNS, missing_groups

from relay_graph.usecases.context import Deps

# A graph of its own, so the probe never creates or touches a tenant's graph.
PROBE_GRAPH = "relay-health"


@dataclass(frozen=True)
class ReadinessCheck:
    name: str
    probe: Callable[[], Awaitable[object]]


def falkordb_check(deps: Deps) -> ReadinessCheck:
    async def probe() -> bool:
        client = (await deps.open()).client
        if not await client.ping():
            return False
        res = await client.db.select_graph(PROBE_GRAPH).query("RETURN 1")
        return res.result_set == [[1]]

    return ReadinessCheck("falkordb", probe)


def streams_check(deps: Deps) -> ReadinessCheck:
    async def probe() -> bool:
        return bool(await deps.redis.ping())

    return ReadinessCheck("streams", probe)


# Each desk agent's consumer group (named after the service) and the stream it must be reading.
AGENT_STREAMS: dict[str, tuple[str, ...]] = {
    "intake": (STREAM_TURNS,),
    "resolver": (STREAM_TICKETS,),
    "netops": (STREAM_NETWORK,),
}


def agent_check(deps: Deps, agent: str) -> ReadinessCheck:
    """Passes when `agent`'s group exists on its streams and one of its replicas beats."""
    if agent not in AGENT_STREAMS:
        raise ValueError(f"unknown agent {agent!r}; known: {', '.join(AGENT_STREAMS)}")

    async def probe() -> bool:
        redis = deps.redis
        lacking = await missing_groups(redis, {s: [agent] for s in AGENT_STREAMS[agent]})
        return not lacking and await alive(redis, agent) > 0

    return ReadinessCheck(agent, probe)


def full_readiness(deps: Deps, agents: Sequence[str]) -> list[ReadinessCheck]:
    """FalkorDB, the streams, and every agent in `agents`."""
    return [falkordb_check(deps), streams_check(deps), *(agent_check(deps, a) for a in agents)]


async def missing(checks: Sequence[ReadinessCheck], timeout: float) -> list[str]:
    """The names of the checks that did not pass within `timeout` seconds."""

    async def passes(check: ReadinessCheck) -> bool:
        try:
            return await asyncio.wait_for(check.probe(), timeout) is not False
        except Exception:  # noqa: BLE001 - any failure means "not ready", the reason is not the caller's
            return False

    results = await asyncio.gather(*(passes(c) for c in checks))
    return [c.name for c, ok in zip(checks, results) if not ok]


async def refuses_password(settings: GraphSettings, timeout: float) -> bool:
    """True if FalkorDB turns a client with the settings' password (or none) away. One try: the
    usual clients retry a refused sign-in with backoff, past any readiness time limit."""
    seeds = parse_seeds(settings.falkordb_cluster)  # on a cluster: the first seed says for all
    host, port = seeds[0] if seeds else (settings.falkordb_host, settings.falkordb_port)
    client = aioredis.Redis(host=host, port=port,
                            username=settings.falkordb_user, password=settings.falkordb_password,
                            socket_connect_timeout=timeout,
                            socket_timeout=timeout, retry=Retry(NoBackoff(), 0))
    try:
        await client.ping()
        return False
    except AuthenticationError:
        return True
    except Exception:  # noqa: BLE001 - unreachable or anything else: not a password problem
        return False
    finally:
        await client.aclose()
