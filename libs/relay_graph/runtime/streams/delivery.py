"""What FastStream's subscribers do not do for us, as one broker middleware around each entry.

FastStream reads the entries (XREADGROUP `>` for fresh ones, XAUTOCLAIM for a dead consumer's),
decodes them and calls the subscriber; with `AckPolicy.MANUAL` it leaves acknowledging to us.
`DeliveryMiddleware.consume_scope` runs between the two, per entry:

1. Heartbeat from the moment the entry is ours until it is acknowledged or given up: a Lua
   script (XCLAIM JUSTID, only if this consumer still owns it, every `heartbeat_ms`) keeps its
   idle time low, so a slow handler's entry is never "reclaimed" by a healthy replica.
2. Delivery count from XPENDING (FastStream's XAUTOCLAIM path does not say; XAUTOCLAIM counts
   the claim as a delivery). An entry that cannot be decoded goes to the dead letters at once;
   one already delivered more than `max_deliveries` times goes there with its last error. One
   naming a tenant that does not exist (never created, or deleted since; when the app checks: the
   agents do) is acknowledged and dropped, counted and logged; so is one whose handler finds its
   tenant gone meanwhile (TenantNotFound).
3. Order: an entry with an order key (the turns of a session) runs only once no earlier entry
   with that key is pending in the group (`ordering.py` says why that is exact). While it
   waits it gives its handler slot back (up to `max_waiting` entries per subscriber wait in
   the background), so FastStream keeps reading and other sessions keep flowing. After
   `order_wait_ms` it is left pending for the reclaim subscriber, which applies the same rule.
4. Dedupe: a notification whose handled-mark exists is acknowledged without running.
5. The handler runs in a `handle <kind>` span whose parent is the publisher's (the entry's
   `traceparent`), with a timeout; Redis/FalkorDB not answering is retried in place for up
   to `transient_retry_s`. Success: the handled-mark and the XACK in one MULTI. Failure: the
   error is kept for the dead letter and the entry stays pending (reclaimed after
   `min_idle_ms`, by whichever replica's reclaim subscriber claims it first).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from faststream import BaseMiddleware
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from relay_graph.runtime.errors import TenantNotFound, Unavailable
from relay_graph.runtime.metrics import catalogue as metrics
from relay_graph.runtime.streams.notifications import InvalidNotification, Notification
from relay_graph.runtime.streams.publisher import TRACER_NAME
from relay_graph.runtime.streams.wire import carrier, text_fields

if TYPE_CHECKING:
    from relay_graph.runtime.streams.service import StreamApp

log = logging.getLogger("relay_graph.runtime.streams")

# Redis (the streams) or FalkorDB (the graph) not answering: not the message's fault.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (RedisConnectionError, RedisTimeoutError, Unavailable)
# Errors of our own Redis calls after which we back off and retry.
REDIS_DOWN: tuple[type[BaseException], ...] = (RedisConnectionError, RedisTimeoutError, ConnectionError, OSError)

_HEARTBEAT = """
local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1)
if #p == 1 and p[1][2] == ARGV[3] then
  redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[3], 0, ARGV[2], 'JUSTID')
  return 1
end
return 0
"""


@dataclass(frozen=True)
class Delivery:
    """What the runtime knows about one delivery; handlers may take it as a second argument."""

    stream: str
    entry_id: str
    group: str
    consumer: str
    deliveries: int
    reclaimed: bool


# The entry being handled, for the subscriber function FastStream calls (set around call_next).
CURRENT: contextvars.ContextVar[tuple[Notification, Delivery]] = contextvars.ContextVar("relay_delivery")


def describe(exc: BaseException) -> str:
    """Type and message (redis-py's own repr leaves the message out)."""
    return f"{type(exc).__name__}: {exc}"


def is_nogroup(exc: BaseException) -> bool:
    return isinstance(exc, ResponseError) and "NOGROUP" in str(exc)


class Backoff:
    def __init__(self, initial_ms: int, max_ms: int):
        self.initial = initial_ms / 1000
        self.cap = max_ms / 1000
        self.current = 0.0

    def next(self) -> float:
        self.current = self.initial if not self.current else min(self.cap, self.current * 2)
        return self.current * random.uniform(0.75, 1.0)

    def reset(self) -> None:
        self.current = 0.0


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class DeliveryMiddleware(BaseMiddleware):
    """Built per entry by FastStream; `app` (bound with functools.partial) holds the state."""

    def __init__(self, msg: Any, /, *, context: Any, app: "StreamApp"):
        super().__init__(msg, context=context)
        self.app = app

    async def consume_scope(self, call_next: Callable[[Any], Awaitable[Any]], msg: Any) -> Any:
        raw = msg.raw_message
        stream = _s(raw["channel"])
        entry_id = _s(raw["message_ids"][0])
        app = self.app
        beat = app.start_heartbeat(stream, entry_id)
        parked = False
        try:
            owner, deliveries = await app.pending_state(stream, entry_id)
            if owner is None:
                return None  # acknowledged meanwhile (or trimmed): nothing to do
            try:
                fields = text_fields(raw["data"])
                notification = app.decode(stream, fields)
            except InvalidNotification as exc:
                await app.dead_letter(stream, entry_id, raw["data"] or {}, f"undecodable entry: {exc.message}",
                                      deliveries)
                return None
            if deliveries > app.settings.max_deliveries:
                error = await app.last_error(stream, entry_id) or (
                    "no error recorded: the consumers it was delivered to stopped while handling it"
                )
                handled = deliveries - 1
                await app.dead_letter(stream, entry_id, raw["data"],
                                      f"failed {handled} deliveries; last error: {error}", handled)
                return None
            if not await app.known_tenant(notification.tenant):
                await app.drop(stream, entry_id, notification, "no such tenant (never created, or deleted)")
                return None
            delivery = Delivery(stream, entry_id, app.group, app.name, deliveries, deliveries > 1)
            if delivery.reclaimed:
                app.stats.reclaimed += 1
                metrics.STREAM_RECLAIMED.add(1, {"stream": stream, "group": app.group})
                log.info("%s reclaimed %s %s (delivery %d)", app.name, stream, entry_id, deliveries)
            key = notification.order_key()
            guard = app.guards[stream]
            guard.remember(entry_id, key)
            blockers = await guard.blockers(entry_id, key) if key is not None else set()
            if blockers:
                app.stats.order_waits += 1
                if app.parked < app.settings.max_waiting:
                    # Give FastStream its worker back: the wait goes on in the background.
                    parked = True
                    app.park(self._wait_then_handle(call_next, msg, notification, delivery, fields, blockers,
                                                    beat))
                    return None
                if not await app.wait_for_turn(stream, entry_id, blockers):
                    return None
            async with app.slots[stream]:
                await self._handle(call_next, msg, notification, delivery, fields)
            return None
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # e.g. Redis went away mid-way: the entry stays pending and is reclaimed
            log.warning("could not process %s %s: %s; it stays pending", stream, entry_id, describe(exc))
            return None
        finally:
            if not parked:
                beat.set()

    async def _wait_then_handle(self, call_next, msg, notification, delivery, fields, blockers, beat) -> None:
        app = self.app
        try:
            if await app.wait_for_turn(delivery.stream, delivery.entry_id, blockers):
                async with app.slots[delivery.stream]:
                    await self._handle(call_next, msg, notification, delivery, fields)
        except Exception as exc:
            log.warning("could not process %s %s: %s; it stays pending", delivery.stream, delivery.entry_id,
                        describe(exc))
        finally:
            beat.set()

    async def _handle(self, call_next, msg, notification: Notification, delivery: Delivery,
                      fields: dict[str, str]) -> None:
        app = self.app
        stream, entry_id = delivery.stream, delivery.entry_id
        if await app.dedupe.seen(notification):
            log.info("%s %s: notification %s already handled by %s; acknowledging",
                     stream, entry_id, notification.notification_id, app.group)
            await app.ack(stream, entry_id, None)
            app.stats.duplicates += 1  # counted once acknowledged, as `handled` is
            return
        parent = propagate.extract(carrier(fields))
        with trace.get_tracer(TRACER_NAME).start_as_current_span(
            f"handle {notification.kind}",
            context=parent,
            kind=SpanKind.CONSUMER,
            record_exception=False,
            set_status_on_exception=False,
            attributes={
                "messaging.system": "redis",
                "messaging.operation.type": "process",
                "messaging.destination.name": stream,
                "messaging.consumer.group.name": app.group,
                "messaging.message.id": entry_id,
                "relay.consumer": app.name,
                "relay.kind": notification.kind,
                "relay.tenant": notification.tenant,
                "relay.id": notification.id,
                "relay.version": notification.version,
                "relay.deliveries": delivery.deliveries,
            },
        ) as span:
            labels = {"stream": stream, "group": app.group}
            started = asyncio.get_running_loop().time()
            error = await self._run(call_next, msg, notification, delivery)
            metrics.HANDLER_DURATION.record(asyncio.get_running_loop().time() - started, labels)
            if isinstance(error, TenantNotFound):  # deleted while this entry was on its way
                await app.drop(stream, entry_id, notification, "its tenant was deleted")
                return
            if error is not None:
                span.record_exception(error)
                span.set_status(Status(StatusCode.ERROR, str(error)[:200]))
                app.stats.failed += 1
                metrics.STREAM_FAILED.add(1, labels)
                log.warning("handler for %s %s (%s, delivery %d) failed, left pending: %s",
                            stream, entry_id, notification.kind, delivery.deliveries, describe(error))
                await app.remember_error(stream, entry_id, error)
                return
            await app.ack(stream, entry_id, notification)
            app.stats.handled += 1
            metrics.STREAM_HANDLED.add(1, labels)

    async def _run(self, call_next, msg, notification: Notification, delivery: Delivery) -> BaseException | None:
        """Run the subscriber; retry in place while the database is unreachable. The error, if any."""
        app = self.app
        loop = asyncio.get_running_loop()
        give_up = loop.time() + app.settings.transient_retry_s
        backoff = Backoff(app.settings.backoff_initial_ms, app.settings.backoff_max_ms)
        limit = app.settings.handler_timeout_s
        token = CURRENT.set((notification, delivery))
        try:
            while True:
                started = loop.time()
                try:
                    await asyncio.wait_for(call_next(msg), limit)
                    return None
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    if isinstance(exc, TimeoutError) and loop.time() - started >= limit:
                        return TimeoutError(f"handler timed out after {limit}s")
                    error: BaseException = exc
                if not isinstance(error, TRANSIENT_ERRORS) or app.stopping or loop.time() >= give_up:
                    return error
                delay = backoff.next()
                log.warning("handler for %s %s hit an unreachable database (%s); retrying in %.2fs",
                            delivery.stream, delivery.entry_id, describe(error), delay)
                await app.sleep(delay)
        finally:
            CURRENT.reset(token)
