"""The gateway's handle on the notification streams (which live on the FalkorDB server): a bytes
Redis client opened on first need, the Publisher, and the process's one stream tail feeding the
chat waiters and the live sockets (see live_feed.py)."""

from __future__ import annotations

import logging
from typing import Any

import redis.asyncio as aioredis

from relay_graph.streams import NotificationBase, Publisher, connect

from .live_feed import LiveHub, ReplyWaiters, StreamTail
from .settings import GatewaySettings

log = logging.getLogger("relay.gateway")

PUBLISH_CHUNK = 1_000


class Bus:
    def __init__(self, settings: GatewaySettings, *, redis: aioredis.Redis | None = None) -> None:
        self.settings = settings
        self.owns_redis = redis is None
        self._redis = redis
        self._publisher: Publisher | None = None
        self.waiters = ReplyWaiters()
        self.hub = LiveHub(queue_size=settings.live_queue_size)
        self.tail = StreamTail(self.redis, [self.waiters.notify, self.hub.notify])

    def redis(self) -> aioredis.Redis:
        # Building the client does not connect; it connects (and reconnects) on use.
        if self._redis is None:
            self._redis = connect(self.settings)
        return self._redis

    @property
    def publisher(self) -> Publisher:
        if self._publisher is None:
            self._publisher = Publisher(self.redis())
        return self._publisher

    async def publish(self, notification: NotificationBase) -> str:
        """XADD the notification; Unavailable if the streams cannot be reached."""
        return await self.publisher.publish(notification)

    async def publish_quietly(self, kind: type[NotificationBase], **fields: Any) -> str | None:
        """For announcements nothing acts on (the live feed): building or sending the notification
        may fail without failing the request, so a write that succeeded is not reported as failed."""
        try:
            return await self.publish(kind(**fields))
        except Exception as exc:  # noqa: BLE001
            log.warning("could not announce %s %s: %s", kind.__name__, fields.get("id"), exc)
            return None

    async def publish_many_quietly(self, kind: type[NotificationBase], items: list[dict[str, Any]]) -> int:
        """`publish_quietly` for many of one kind (a batch write's facts), in one pipelined round
        trip per PUBLISH_CHUNK. Returns how many were announced."""
        announced = 0
        for start in range(0, len(items), PUBLISH_CHUNK):
            chunk = items[start : start + PUBLISH_CHUNK]
            try:
                announced += len(await self.publisher.publish_many([kind(**fields) for fields in chunk]))
            except Exception as exc:  # noqa: BLE001
                log.warning("could not announce %d %s: %s", len(chunk), kind.__name__, exc)
        return announced

    async def close(self) -> None:
        await self.tail.stop()
        if self.owns_redis and self._redis is not None:
            redis, self._redis, self._publisher = self._redis, None, None
            await redis.aclose()
