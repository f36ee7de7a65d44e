"""Readiness checks: named async probes the composition root hands to /readyz. A probe fails by
raising or by returning False; each gets the same time limit and they run concurrently. The agents'
consumer groups join the list later as more probes."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Awaitable, Callable, Sequence

from .backend import Backend

# A graph of its own, so the probe never creates or touches a tenant's graph.
PROBE_GRAPH = "relay-health"


@dataclass(frozen=True)
class ReadinessCheck:
    name: str
    probe: Callable[[], Awaitable[object]]


def falkordb_check(backend: Backend) -> ReadinessCheck:
    async def probe() -> bool:
        client = (await backend.memory()).client
        if not await client.ping():
            return False
        res = await client.db.select_graph(PROBE_GRAPH).query("RETURN 1")
        return res.result_set == [[1]]

    return ReadinessCheck("falkordb", probe)


async def missing(checks: Sequence[ReadinessCheck], timeout: float) -> list[str]:
    """The names of the checks that did not pass within `timeout` seconds."""

    async def passes(check: ReadinessCheck) -> bool:
        try:
            return await asyncio.wait_for(check.probe(), timeout) is not False
        except Exception:  # noqa: BLE001 - any failure means "not ready", the reason is not the caller's
            return False

    results = await asyncio.gather(*(passes(c) for c in checks))
    return [c.name for c, ok in zip(checks, results) if not ok]
