"""Tuning of the streams runtime, and the Redis connection it uses.

`StreamSettings` is a plain model, not a second pydantic-settings class: a service nests it in its
own settings (e.g. `streams: StreamSettings = StreamSettings()` with `env_nested_delimiter="__"`,
so `RELAY_STREAMS__MIN_IDLE_MS=30000` works) and hands it to `Consumer` / `Publisher`.
"""

from __future__ import annotations

import redis.asyncio as aioredis
from pydantic import BaseModel, ConfigDict, Field

from ..config import GraphSettings


class StreamSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    maxlen: int = Field(default=100_000, ge=1, description="approximate MAXLEN applied on every XADD")
    dead_letter_maxlen: int = Field(default=100_000, ge=1)
    block_ms: int = Field(default=1_000, ge=1, description="XREADGROUP BLOCK; also bounds how long stop() waits for a read")
    batch: int = Field(default=1, ge=1, description="entries per XREADGROUP; 1 spreads work evenly over replicas")
    concurrency: int = Field(default=1, ge=1, description="read loops (and so handlers in flight) per stream per replica")
    min_idle_ms: int = Field(default=15_000, ge=1, description="a pending entry idle this long belongs to a dead or failed consumer")
    reclaim_interval_ms: int = Field(default=5_000, ge=1)
    reclaim_batch: int = Field(default=100, ge=1)
    heartbeat_ms: int | None = Field(default=None, ge=1, description="refresh of in-flight entries; default min_idle_ms/3")
    max_deliveries: int = Field(default=5, ge=1, description="deliveries after which a failing entry is dead-lettered")
    handler_timeout_s: float = Field(default=300.0, gt=0)
    transient_retry_s: float = Field(default=60.0, ge=0, description="retry a handler in place this long while the database is unreachable")
    order_poll_ms: int = Field(default=50, ge=1, description="how often a turn waiting for its session's earlier turn looks again")
    order_wait_ms: int = Field(default=30_000, ge=1, description="after this, a waiting turn is left to the reclaim loop")
    dedupe_ttl_s: int = Field(default=86_400, ge=0, description="how long handled notification ids are remembered; 0: off")
    error_ttl_s: int = Field(default=7 * 86_400, ge=1, description="how long a failed entry's last error is kept for the dead letter")
    backoff_initial_ms: int = Field(default=100, ge=1)
    backoff_max_ms: int = Field(default=5_000, ge=1)
    consumer_gc_idle_ms: int = Field(default=3_600_000, ge=1, description="delete group consumers idle this long with nothing pending")

    @property
    def heartbeat_every_ms(self) -> int:
        return self.heartbeat_ms or max(1, self.min_idle_ms // 3)


def connect(settings: GraphSettings | None = None, *, host: str | None = None, port: int | None = None) -> aioredis.Redis:
    """A Redis client for the streams on the FalkorDB server. Bytes in, bytes out: the runtime
    decodes fields itself so that a message that is not UTF-8 becomes a dead letter instead of
    breaking the read loop. Reconnects by itself after the server comes back."""
    settings = settings or GraphSettings()
    return aioredis.Redis(
        host=host or settings.falkordb_host,
        port=port or settings.falkordb_port,
        password=settings.falkordb_password,
        decode_responses=False,
        socket_connect_timeout=5,
        socket_keepalive=True,
        health_check_interval=15,
    )
