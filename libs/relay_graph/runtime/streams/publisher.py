"""Publishing a notification: one XADD, trimmed, inside a `publish <stream>` span whose context
travels in the entry's trace headers. Many of one kind at once (a batch write's facts): one
script that XADDs them all, one round trip, inside one span. `Publisher` XADDs our fields itself
(the agents); `BrokerPublisher` has a FastStream broker publish them (the gateway). On a cluster an
entry is acknowledged once a replica of its stream's shard has it (WAIT)."""

from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable

import redis.asyncio as aioredis
from opentelemetry import trace
from opentelemetry.trace import SpanKind
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from relay_graph.runtime.cluster import (
    PUBLISH_WAIT_REPLICAS,
    PUBLISH_WAIT_TIMEOUT_MS,
    is_cluster,
    on_primary,
)
from relay_graph.runtime.errors import Unavailable
from relay_graph.runtime.streams.notifications import InvalidNotification, NotificationBase, encode
from relay_graph.runtime.streams.settings import StreamSettings
from relay_graph.runtime.streams.wire import DATA_KEY, envelope, envelope_headers, to_fields, trace_headers

TRACER_NAME = "relay_graph.runtime.streams"
log = logging.getLogger("relay_graph.runtime.streams")


def _attributes(notification: NotificationBase) -> dict[str, Any]:
    """The publish span's attributes for one notification."""
    return {
        "relay.kind": notification.kind,  # type: ignore[attr-defined]
        "relay.tenant": notification.tenant,
        "relay.id": notification.id,
        "relay.version": notification.version,
        "relay.notification_id": str(notification.notification_id),
    }


def _send_span(stream: str, attributes: dict[str, Any]) -> Any:
    return trace.get_tracer(TRACER_NAME).start_as_current_span(
        f"publish {stream}", kind=SpanKind.PRODUCER,
        attributes={"messaging.system": "redis", "messaging.operation.type": "send",
                    "messaging.destination.name": stream, **attributes})


def _one_stream(notifications: list[NotificationBase]) -> str:
    """The one stream a batch goes to; a batch of anything but notifications of one kind is refused."""
    if not all(isinstance(n, NotificationBase) for n in notifications):
        raise InvalidNotification("only notification models can be published")
    streams = {type(n).stream for n in notifications}
    if len(streams) != 1:
        raise InvalidNotification("publish_many takes notifications of one kind")
    return streams.pop()


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
        with _send_span(stream, _attributes(notification)) as span:
            fields = to_fields(notification)  # injects this span's context
            try:
                if is_cluster(self.redis):
                    flat = [x for kv in fields.items() for x in kv]
                    entry_id = await _on_primary(self.redis, stream, ("XADD", stream, "MAXLEN", "~", self.maxlen,
                                                                      "*", *flat))
                else:
                    entry_id = await self.redis.xadd(stream, fields, maxlen=self.maxlen, approximate=True)
            except (RedisError, OSError) as exc:  # not reachable, or refusing writes (OOM, READONLY, ACL)
                raise Unavailable("the notification streams are not taking entries; retry shortly") from exc
            entry_id = _text(entry_id)
            span.set_attribute("messaging.message.id", entry_id)
            return entry_id

    async def publish_many(self, notifications: list[NotificationBase]) -> list[str]:
        """XADD notifications of one kind in one round trip (one script: each entry stands alone,
        as if added one by one), inside one `publish <stream>` span whose context every entry
        carries; returns the entry ids in order. Unavailable if Redis cannot be reached."""
        if not notifications:
            return []
        stream = _one_stream(notifications)
        with _send_span(stream, {"messaging.batch.message_count": len(notifications),
                                 "relay.tenant": notifications[0].tenant}):
            headers = [x for kv in trace_headers().items() for x in kv]
            args: list[str] = [str(self.maxlen), str(len(headers))]
            args += headers
            for n in notifications:
                args += (n.kind, encode(n))  # type: ignore[attr-defined]
            try:
                if is_cluster(self.redis):
                    ids = await _on_primary(self.redis, stream, ("EVAL", _XADD_MANY, 1, stream, *args))
                else:
                    ids = await self.redis.eval(_XADD_MANY, 1, stream, *args)
            except (RedisError, OSError) as exc:  # as publish: not reachable, or refusing writes
                raise Unavailable("the notification streams are not taking entries; retry shortly") from exc
            return [_text(i) for i in ids]


async def _on_primary(redis, stream: str, command: tuple):
    """On a cluster: the XADD acknowledged once a replica has it too (cluster.on_primary): an entry
    only its primary had would be lost with it in a failover, and its change never handled."""
    reply, acked = await on_primary(redis, stream, command, wait_replicas=PUBLISH_WAIT_REPLICAS,
                                    wait_timeout_ms=PUBLISH_WAIT_TIMEOUT_MS)
    if isinstance(reply, Exception):
        raise reply
    if acked is not None and acked < PUBLISH_WAIT_REPLICAS:
        log.warning("no replica acknowledged an entry of %s in time; it stands on the primary alone", stream)
    return reply


# ARGV: maxlen, the envelope's field name, then one envelope per entry (BrokerPublisher.publish_many).
_XADD_ENVELOPES = """
local ids = {}
for i = 3, #ARGV do
    ids[#ids + 1] = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', ARGV[2], ARGV[i])
end
return ids
"""

# ARGV: maxlen, the number of header strings h, h header strings (name, value, ...), then kind and
# payload of each entry. An entry's fields are kind, payload and the headers, as to_fields lays them out.
_XADD_MANY = """
local maxlen, h = ARGV[1], tonumber(ARGV[2])
local ids = {}
for i = 3 + h, #ARGV, 2 do
    local entry = {'kind', ARGV[i], 'payload', ARGV[i + 1]}
    for j = 3, 2 + h do entry[#entry + 1] = ARGV[j] end
    ids[#ids + 1] = redis.call('XADD', KEYS[1], 'MAXLEN', '~', maxlen, '*', unpack(entry))
end
return ids
"""


async def _once_more_on_a_new_connection(broker: Any, send: Callable[[], Awaitable[Any]]) -> Any:
    """The broker's pooled connections die with the server (a FalkorDB restart) and FastStream's
    client does not retry: the first publish after one fails on a dead connection. Then every
    pooled connection is dropped (the others died too) and the publish goes out once more on a new
    one. A retried XADD that had reached the server is a second copy of the same notification id,
    which consumers drop."""
    try:
        return await send()
    except (RedisConnectionError, OSError):
        pool = getattr(await broker.connect(), "connection_pool", None)
        if pool is not None:
            await pool.disconnect()
        return await send()


class BrokerPublisher:
    """`Publisher`'s interface over a FastStream RedisBroker (the gateway's, from FastStream's
    FastAPI integration): the broker XADDs each notification as its envelope (body: the payload;
    headers: `kind` and the trace context, see wire.py), trimmed by `MAXLEN ~`, inside the same
    `publish <stream>` span. Many at once: the broker's publishes queued on one pipeline of the
    broker's own connection, one round trip."""

    def __init__(self, broker: Any, *, settings: StreamSettings | None = None, maxlen: int | None = None):
        self.broker = broker
        self.maxlen = maxlen or (settings or StreamSettings()).maxlen

    async def _send(self, notification: NotificationBase, pipeline: Any = None) -> Any:
        await self.broker.connect()  # once (the app's lifespan starts the broker; a bare app has none)
        return await self.broker.publish(encode(notification).encode(), stream=type(notification).stream,
                                         headers=envelope_headers(notification), maxlen=self.maxlen,
                                         pipeline=pipeline)

    async def publish(self, notification: NotificationBase) -> str:
        """Publish through the broker; returns the entry id. Unavailable if Redis cannot be reached
        or refuses."""
        if not isinstance(notification, NotificationBase):
            raise InvalidNotification("only notification models can be published")
        stream = type(notification).stream
        with _send_span(stream, _attributes(notification)) as span:
            try:
                entry_id = _text(await _once_more_on_a_new_connection(self.broker, lambda: self._send(notification)))
            except (RedisError, OSError) as exc:
                raise Unavailable("the notification streams are not taking entries; retry shortly") from exc
            span.set_attribute("messaging.message.id", entry_id)
            return entry_id

    async def publish_many(self, notifications: list[NotificationBase]) -> list[str]:
        """Notifications of one kind in one round trip, inside one span: each envelope made as the
        broker makes it (FastStream's message format), all XADDed by one script: the broker's own
        publish, once per entry, was a large share of a big batch's request."""
        if not notifications:
            return []
        stream = _one_stream(notifications)
        with _send_span(stream, {"messaging.batch.message_count": len(notifications),
                                 "relay.tenant": notifications[0].tenant}):
            trace = trace_headers()  # the one span's context, read once for every entry
            envelopes = [await envelope(n, trace) for n in notifications]

            async def send_all() -> list:
                client = await self.broker.connect()
                command = ("EVAL", _XADD_ENVELOPES, 1, stream, str(self.maxlen), DATA_KEY, *envelopes)
                if is_cluster(client):
                    return await _on_primary(client, stream, command)
                return await client.execute_command(*command)

            try:
                ids = await _once_more_on_a_new_connection(self.broker, send_all)
            except (RedisError, OSError) as exc:
                raise Unavailable("the notification streams are not taking entries; retry shortly") from exc
            return [_text(i) for i in ids]
