"""Publishing a notification: one XADD, trimmed, inside a `publish <stream>` span whose context
travels in the entry's trace headers."""

from __future__ import annotations

import redis.asyncio as aioredis
from opentelemetry import trace
from opentelemetry.trace import SpanKind
from redis.exceptions import RedisError

from ..errors import Unavailable
from .notifications import InvalidNotification, NotificationBase
from .settings import StreamSettings
from .wire import to_fields

TRACER_NAME = "relay_graph.streams"


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class Publisher:
    """Appends notifications to their kind's stream. Safe to share within a process."""

    def __init__(self, redis: aioredis.Redis, *, settings: StreamSettings | None = None, maxlen: int | None = None):
        self.redis = redis
        self.maxlen = maxlen or (settings or StreamSettings()).maxlen

    async def publish(self, notification: NotificationBase) -> str:
        """XADD the notification; returns the entry id. Unavailable if Redis cannot be reached or refuses
        (the caller decides whether to retry or answer 503)."""
        if not isinstance(notification, NotificationBase):
            raise InvalidNotification("only notification models can be published")
        stream = type(notification).stream
        tracer = trace.get_tracer(TRACER_NAME)
        with tracer.start_as_current_span(
            f"publish {stream}",
            kind=SpanKind.PRODUCER,
            attributes={
                "messaging.system": "redis",
                "messaging.operation.type": "send",
                "messaging.destination.name": stream,
                "relay.kind": notification.kind,  # type: ignore[attr-defined]
                "relay.tenant": notification.tenant,
                "relay.id": notification.id,
                "relay.version": notification.version,
                "relay.notification_id": str(notification.notification_id),
            },
        ) as span:
            fields = to_fields(notification)  # injects this span's context
            try:
                entry_id = await self.redis.xadd(stream, fields, maxlen=self.maxlen, approximate=True)
            except (RedisError, OSError) as exc:  # not reachable, or refusing writes (OOM, READONLY, ACL)
                raise Unavailable("the notification streams are not taking entries; retry shortly") from exc
            entry_id = _text(entry_id)
            span.set_attribute("messaging.message.id", entry_id)
            return entry_id
