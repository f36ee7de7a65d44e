"""What the metrics read from Redis, as a snapshot an async task refreshes.

A scrape runs the observable gauges' callbacks in the exporter's thread (the gateway's threadpool,
or prometheus_client's server thread in an agent). They must not block on Redis nor touch the
event loop's client from another thread, and a scrape every few seconds from several Prometheus
servers must not become load on FalkorDB: so `refresh_loop`, on the process's event loop, reads
everything every `every_s` into an immutable `Reading`, and the callbacks only look at the last
one (a reference swap, safe across threads). `relay_metrics_snapshot_age_seconds` says how old
it is: a value far beyond `every_s` means Redis has not answered since.

What is read (a few commands, whatever the number of tenants):
- per stream: XLEN, and XINFO GROUPS (each group's pending entries, lag, consumers);
- with `server`: each stream's dead letters (XLEN), the tenants registered (HLEN), the tenants
  the outbox relay watches (ZCARD), FalkorDB's used memory (INFO memory; summed over a cluster's
  primaries) and its graphs (GRAPH.LIST, through the caller's `count_graphs`).

The gateway reads all of it for every group; an agent reads the streams it consumes, for its own
group only, so each series has one source per process kind (a dashboard takes `max by (stream, group)`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Iterable

from opentelemetry.metrics import CallbackOptions, Observation
from redis.exceptions import NoPermissionError

from relay_graph.runtime.cluster import is_cluster
from relay_graph.runtime.outbox import PENDING_TENANTS
from relay_graph.runtime.streams.health import stream_groups
from relay_graph.runtime.streams.keys import STREAMS, dead_letter_stream
from relay_graph.runtime.tenancy import TENANTS_KEY

from . import METER
from . import catalogue as m

log = logging.getLogger("relay_graph.runtime.metrics")

DEFAULT_EVERY_S = 10.0
TENANTS = "relay_tenants"

Labels = dict[str, str]


@dataclass(frozen=True)
class Reading:
    """One refresh: series name -> [(labels, value)], and when it was taken (time.monotonic())."""

    taken_at: float | None = None
    points: dict[str, list[tuple[Labels, float]]] = field(default_factory=dict)


class Snapshot:
    def __init__(self) -> None:
        self.reading = Reading()

    def observe(self, name: str) -> list[Observation]:
        reading = self.reading  # one read of the reference: a refresh may swap it meanwhile
        return [Observation(value, labels) for labels, value in reading.points.get(name, ())]

    def age(self) -> list[Observation]:
        taken = self.reading.taken_at
        return [] if taken is None else [Observation(round(time.monotonic() - taken, 3))]


SNAPSHOT = Snapshot()

_GAUGES = (
    (m.STREAM_LENGTH, "{message}", "Entries in a stream (XLEN)"),
    (m.STREAM_PENDING, "{message}", "Entries delivered to a group and not acknowledged yet (XINFO GROUPS pending)"),
    (m.STREAM_LAG, "{message}", "Entries not yet delivered to a group (XINFO GROUPS lag)"),
    (m.STREAM_CONSUMERS, "{consumer}", "Consumers a group has (live or not yet forgotten)"),
    (m.DEAD_LETTERS, "{message}", "Entries in a stream's dead letters (XLEN of relay:dlq:{stream})"),
    (m.FALKORDB_USED_MEMORY, "By", "FalkorDB's used memory (INFO memory used_memory; summed over a cluster's primaries)"),
    (m.FALKORDB_GRAPHS, "{graph}", "Graphs on FalkorDB (GRAPH.LIST)"),
    (TENANTS, "{tenant}", "Tenants registered"),
    (m.OUTBOX_MARKED_TENANTS, "{tenant}", "Tenants whose outbox the relay watches (kept an announcement lately)"),
)


def _callback(name: str) -> Callable[[CallbackOptions], list[Observation]]:
    return lambda options: SNAPSHOT.observe(name)


for _name, _unit, _description in _GAUGES:
    METER.create_observable_gauge(_name, callbacks=[_callback(_name)], unit=_unit, description=_description)
METER.create_observable_gauge(m.SNAPSHOT_AGE, callbacks=[lambda options: SNAPSHOT.age()], unit="s",
                              description="How old the snapshot of what is read from Redis is")

CountGraphs = Callable[[], Awaitable[int]]


def _used_memory(info: Any) -> float | None:
    if not isinstance(info, dict):
        return None
    if "used_memory" in info:
        return float(info["used_memory"])
    per_node = [float(v["used_memory"]) for v in info.values() if isinstance(v, dict) and "used_memory" in v]
    return sum(per_node) if per_node else None


async def _info_memory(redis: Any) -> float | None:
    """FalkorDB's used memory; None when this connection's user may not ask (the other figures of the
    reading still count)."""
    try:
        if is_cluster(redis):
            return _used_memory(await redis.info("memory", target_nodes=redis.get_primaries()))
        return _used_memory(await redis.info("memory"))
    except NoPermissionError:
        return None


async def read(redis: Any, *, streams: Iterable[str] = STREAMS, groups: set[str] | None = None,
               server: bool = True, count_graphs: CountGraphs | None = None) -> Reading:
    """One reading (see the module doc). `groups` None: every group of each stream."""
    points: dict[str, list[tuple[Labels, float]]] = {}

    def put(name: str, labels: Labels, value: float | None) -> None:
        if value is not None:
            points.setdefault(name, []).append((labels, float(value)))

    for stream in streams:
        put(m.STREAM_LENGTH, {"stream": stream}, await redis.xlen(stream))
        for g in await stream_groups(redis, stream):
            if groups is not None and g.group not in groups:
                continue
            labels = {"stream": stream, "group": g.group}
            put(m.STREAM_PENDING, labels, g.pending)
            put(m.STREAM_LAG, labels, g.lag)  # None (Redis cannot tell after a trim): no point
            put(m.STREAM_CONSUMERS, labels, g.consumers)
        if server:
            put(m.DEAD_LETTERS, {"stream": stream}, await redis.xlen(dead_letter_stream(stream)))
    if server:
        put(TENANTS, {}, await redis.hlen(TENANTS_KEY))
        put(m.OUTBOX_MARKED_TENANTS, {}, await redis.zcard(PENDING_TENANTS))
        put(m.FALKORDB_USED_MEMORY, {}, await _info_memory(redis))
        if count_graphs is not None:
            put(m.FALKORDB_GRAPHS, {}, await count_graphs())
    return Reading(time.monotonic(), points)


async def refresh_loop(redis: Any, stop: asyncio.Event, *, every_s: float = DEFAULT_EVERY_S,
                       streams: Iterable[str] = STREAMS, groups: set[str] | None = None, server: bool = True,
                       count_graphs: CountGraphs | None = None) -> None:
    """Refresh SNAPSHOT every `every_s` until `stop` is set. A failed read keeps the last
    reading (its age grows) and is logged once per failure spell."""
    streams = tuple(streams)
    failing = False
    while not stop.is_set():
        try:
            SNAPSHOT.reading = await read(redis, streams=streams, groups=groups, server=server,
                                          count_graphs=count_graphs)
            failing = False
        except Exception as exc:  # noqa: BLE001 - Redis away: the gauges keep their last values
            if not failing:
                log.warning("metrics: could not read the streams' state (kept the last reading): %s", exc)
            failing = True
        try:
            await asyncio.wait_for(stop.wait(), every_s)
        except asyncio.TimeoutError:
            pass
