"""Skip notifications a group already handled (same `notification_id`): a publisher that
retried an XADD whose first attempt had landed, or a dead letter that an operator re-published.

This is a cheap first filter, not the guarantee: handlers stay idempotent in the graph (MERGE,
versions). The mark is written in the same MULTI as the XACK, after the handler returned, so a
failed handler never marks anything.
"""

from __future__ import annotations

import redis.asyncio as aioredis

from relay_graph.runtime.streams.keys import seen_key
from relay_graph.runtime.streams.notifications import NotificationBase, stream_for


class Deduper:
    def __init__(self, redis: aioredis.Redis, group: str, ttl_s: int):
        self.redis = redis
        self.group = group
        self.ttl_s = ttl_s

    @property
    def enabled(self) -> bool:
        return self.ttl_s > 0

    async def seen(self, notification: NotificationBase) -> bool:
        if not self.enabled:
            return False
        return bool(await self.redis.exists(seen_key(self.group, notification.notification_id, stream_for(notification))))

    def mark(self, pipe, notification: NotificationBase) -> None:
        if self.enabled:
            pipe.set(seen_key(self.group, notification.notification_id, stream_for(notification)), b"1", ex=self.ttl_s)
