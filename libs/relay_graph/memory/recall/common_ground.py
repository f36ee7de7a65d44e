"""A tenant's common ground: the mean direction of its turns' vectors, which a question of meaning
is asked without.

Sentence vectors share a direction: a tenant's small talk ("How was your week?") sits near any
question, and a remark that depends on an earlier turn without sharing its words ("How is the new
furry family member settling in?" after "We adopted a golden retriever puppy") finds the small
talk first. Asked with the mean of the tenant's turns taken away (the question's vector minus
COMMON_SHIFT times that mean's unit vector), what every turn shares counts for nothing and what a
turn says of its own leads: the `distinct` signal (memory.recall.signals). The mean is estimated
from the tenant's first COMMON_SAMPLE embedded turns (bench.implicit_cues and bench.locomo's
questions that share no word with their evidence: the sample's mean ranks as the whole one does).

Kept per graph client and tenant, read again after COMMON_TTL_S (COMMON_YOUNG_TTL_S while the
tenant has fewer turns than the sample: its mean still moves); a tenant with fewer than
COMMON_MIN turns has no common ground worth taking away yet. A read still under way when the
tenant is forgotten (`GraphClient.forget_tenant`) answers its callers but is not kept.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np

from relay_graph.memory.episodes import VectorParam, wire_vector
from relay_graph.memory.queries import recall as q
from relay_graph.memory.recall import tuning
from relay_graph.runtime.db import GraphClient

_KEPT = "memory.recall.common_ground"
_READING = "memory.recall.common_ground.reading"  # tenant -> the read under way (one per tenant at a time)
_MAX_TENANTS = 10_000  # a process that reads more tenants forgets the oldest read


def _tenants(client: GraphClient) -> dict[str, tuple[np.ndarray | None, int, float]]:
    return client.kept(_KEPT, dict)


async def read(client: GraphClient, tenant: str) -> np.ndarray | None:
    """The tenant's common ground as a unit vector (None: too few turns), read at most once per TTL;
    recalls that find it due at the same time share one read."""
    entry = _tenants(client).get(tenant)
    if entry is not None:
        mean, n, at = entry
        ttl = tuning.COMMON_TTL_S if n >= tuning.COMMON_SAMPLE else tuning.COMMON_YOUNG_TTL_S
        if time.monotonic() - at < ttl:
            return mean
    reading: dict[str, asyncio.Task] = client.kept(_READING, dict)
    shared = reading.get(tenant)
    if shared is None:
        shared = reading[tenant] = asyncio.ensure_future(_read(client, tenant))
        shared.add_done_callback(lambda t: _done(reading, tenant, t))
    # one recall given up (cancelled) does not cancel the read the others wait for
    return await asyncio.shield(shared)


def _done(reading: dict[str, asyncio.Task], tenant: str, t: asyncio.Task) -> None:
    if reading.get(tenant) is t:
        del reading[tenant]
    if not t.cancelled():
        t.exception()  # retrieved: whoever awaited it has it; nobody may be left to


async def _read(client: GraphClient, tenant: str) -> np.ndarray | None:
    tenants = _tenants(client)
    now = time.monotonic()
    rows = await client.run(tenant, q.COMMON_GROUND, {"n": tuning.COMMON_SAMPLE})
    mean = unit_mean([r["v"] for r in rows])
    if client.kept(_READING, dict).get(tenant) is not asyncio.current_task():
        return mean  # the tenant was forgotten (deleted, restored) while this read ran: not kept
    if len(tenants) >= _MAX_TENANTS and tenant not in tenants:
        tenants.pop(next(iter(tenants)))
    tenants.pop(tenant, None)
    tenants[tenant] = (mean, len(rows), now)
    return mean


def unit_mean(vectors: list[Any]) -> np.ndarray | None:
    """The unit vector of the vectors' mean (each taken as a unit vector); None for fewer than
    COMMON_MIN of them, or ones that cancel out."""
    if len(vectors) < tuning.COMMON_MIN:
        return None
    m = np.asarray(vectors, dtype=np.float64)
    m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
    mean = m.mean(axis=0)
    size = float(np.linalg.norm(mean))
    return (mean / size).astype(np.float32) if size > 1e-6 else None  # kept per tenant: 1.5 KB each


def without(v: Any, ground: np.ndarray | None) -> VectorParam | None:
    """The question's vector with COMMON_SHIFT of the common ground taken away (None without one)."""
    if ground is None or len(v) != len(ground):
        return None
    return wire_vector(np.asarray(list(v), dtype=np.float64) - tuning.COMMON_SHIFT * ground)
