"""Tuning of the streams runtime, and the Redis connection it uses.

`StreamSettings` is a plain model, not a second pydantic-settings class: a service nests it in its
own settings (e.g. `streams: StreamSettings = StreamSettings()` with `env_nested_delimiter="__"`,
so `RELAY_STREAMS__MIN_IDLE_MS=30000` works) and hands it to `StreamApp` / `Publisher`.
"""

from __future__ import annotations

import redis.asyncio as aioredis
from pydantic import BaseModel, ConfigDict, Field

from relay_graph.runtime import cluster
from relay_graph.runtime.config import GraphSettings


class StreamSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    # Trimming: approximate MAXLEN on every XADD.
    maxlen: int = Field(default=100_000, ge=1)
    dead_letter_maxlen: int = Field(default=100_000, ge=1)
    # Reading: XREADGROUP BLOCK (also bounds how long stop() waits for a read) and COUNT
    # (1 spreads work evenly over replicas).
    block_ms: int = Field(default=1_000, ge=1)
    batch: int = Field(default=1, ge=1)
    # Handlers in flight per stream per replica (the reclaim subscriber handles one more at a time).
    concurrency: int = Field(default=1, ge=1)
    # Entries per replica that may wait for their session's earlier turn without a handler slot.
    max_waiting: int = Field(default=100, ge=0)
    # A pending entry idle this long belongs to a dead or failed consumer and is reclaimed.
    min_idle_ms: int = Field(default=15_000, ge=1)
    # How often the reclaim subscriber looks again once it found nothing idle.
    reclaim_interval_ms: int = Field(default=5_000, ge=1)
    # How often an in-flight entry's idle time is reset; default min_idle_ms / 3.
    heartbeat_ms: int | None = Field(default=None, ge=1)
    # Deliveries after which a still-failing entry goes to the dead letters.
    max_deliveries: int = Field(default=5, ge=1)
    handler_timeout_s: float = Field(default=300.0, gt=0)
    # On stop, how long the entries in flight may take to finish (then they are left pending
    # for another replica); a service must be gone within 5 s of SIGTERM.
    graceful_timeout_s: float = Field(default=3.0, ge=0)
    # A handler failing because Redis/FalkorDB is unreachable is retried in place this long.
    transient_retry_s: float = Field(default=60.0, ge=0)
    # A turn waiting for its session's earlier turn looks again this often, and gives up
    # (leaving itself to the reclaim loop) after order_wait_ms.
    order_poll_ms: int = Field(default=50, ge=1)
    order_wait_ms: int = Field(default=30_000, ge=1)
    # How long handled notification ids are remembered per group; 0 turns dedupe off.
    dedupe_ttl_s: int = Field(default=86_400, ge=0)
    # How long a failed entry's last error is kept for its dead letter.
    error_ttl_s: int = Field(default=7 * 86_400, ge=1)
    backoff_initial_ms: int = Field(default=100, ge=1)
    backoff_max_ms: int = Field(default=5_000, ge=1)
    # Consumers (old replicas) with nothing pending, idle this long, are removed from the group.
    consumer_gc_idle_ms: int = Field(default=3_600_000, ge=1)

    @property
    def heartbeat_every_ms(self) -> int:
        return self.heartbeat_ms or max(1, self.min_idle_ms // 3)


def connect(
    settings: GraphSettings | None = None, *, host: str | None = None, port: int | None = None
) -> aioredis.Redis:
    """A Redis client for the streams on the FalkorDB server (or the cluster, cluster.py: each
    stream on its slot's shard). Bytes in, bytes out: the runtime decodes fields itself so that a
    message that is not UTF-8 becomes a dead letter instead of breaking the read loop.
    Reconnects by itself after the server comes back."""
    settings = settings or GraphSettings()
    if host or port:
        settings = settings.model_copy(update={"falkordb_host": host or settings.falkordb_host,
                                               "falkordb_port": port or settings.falkordb_port,
                                               "falkordb_cluster": ""})
    return cluster.connect(settings, decode_responses=False, socket_connect_timeout=5, socket_keepalive=True,
                           health_check_interval=15)
