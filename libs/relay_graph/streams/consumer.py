"""The consumer runtime: one consumer group per service, one consumer per replica.

How a notification is delivered
-------------------------------
* Groups are created with `XGROUP CREATE <stream> <group> 0 MKSTREAM`, so a group that is new
  (a service deployed later, or recreated after data loss) sees every entry still in the stream.
  BUSYGROUP is ignored; NOGROUP at any later point (the server lost its data) recreates the group
  and carries on.
* Each replica has a unique consumer name (`consumer_name(service)`: service, host, pid, random)
  and, per stream, one read loop doing `XREADGROUP ... COUNT batch BLOCK block_ms STREAMS
  <stream> >` whenever one of its `concurrency` handler slots is free; each entry is then
  processed in its own task.
* A handler is a plain `async def handler(notification)` or `async def handler(notification,
  delivery)`. It runs inside a span `handle <kind>` whose parent is the publisher's span (trace
  context from the entry's `traceparent`). The entry is acknowledged only after the handler
  returned; its handled-mark (dedupe) and the XACK go in one MULTI. An exception leaves the entry
  pending and its text is kept for the dead letter. Errors that say "Redis/FalkorDB is not
  reachable" are retried in place with backoff for up to `transient_retry_s` before counting as
  a failure, so a database restart does not burn deliveries.
* From delivery until acknowledgement (or until we give up on it), a heartbeat (a Lua script:
  XCLAIM JUSTID, only if this consumer still owns the entry, every `heartbeat_ms`) keeps the
  entry's idle time low, so a slow handler is never "reclaimed" by a healthy replica; only a
  dead or stuck consumer's entries age. (An event loop stalled for longer than `min_idle_ms`
  does look dead: its entry is handled twice, which idempotent handlers tolerate.)
* Every replica runs a reclaim loop per stream: `XPENDING ... IDLE min_idle_ms` lists entries
  idle that long with their delivery counts. An entry delivered `max_deliveries` times already is
  dead-lettered (XCLAIM JUSTID so exactly one replica does it, then XADD to `relay:dlq:<name>`
  with the original fields, the last error, the original id, stream, group and delivery count,
  and XACK in one MULTI; logged at ERROR). Otherwise it is XCLAIMed (atomic with the idle check:
  of several replicas exactly one wins) and handled like a fresh entry. An entry that cannot be
  decoded (not UTF-8, no payload, invalid notification) goes to the dead letters at once.
  We use XPENDING+XCLAIM rather than XAUTOCLAIM because we need the delivery count (XAUTOCLAIM
  does not return it) and because XAUTOCLAIM claims blindly, which would count a delivery
  against an entry that is only waiting for its session's earlier turn.
* Streams are trimmed by `MAXLEN ~` on every XADD (publisher and dead letters). Trimming does
  not wait for slow groups, so `maxlen` must cover what a group can fall behind by (the default
  100 000 is hours of desk traffic); a pending entry that was trimmed away is logged and dropped
  from the pending list, since there is nothing left to handle.
* Connection errors anywhere: log, back off exponentially (`backoff_initial_ms` to
  `backoff_max_ms`), retry; the redis client reconnects by itself.
* `stop()` sets an asyncio.Event: read loops stop reading (a blocked XREADGROUP returns within
  `block_ms`), the in-flight handler finishes and is acknowledged, then `run()` returns.
* Consumers of dead replicas that have nothing pending and were idle `consumer_gc_idle_ms` are
  removed from the group now and then, so the group does not grow forever with restarts.

Ordering: turns of one session are handled in order
----------------------------------------------------
A notification may have an order key (`TurnReceived`: a hash of tenant + session). An entry
with a key is handled only when no earlier entry with the same key is still pending in the
group (see `ordering.py` for why that is exact). A replica that receives turn 2 while turn 1 is
still in flight on another replica keeps turn 2 (heartbeat on) and looks again every
`order_poll_ms`; while it waits it gives its handler slot back (up to `max_waiting` waiting
entries), so other sessions keep flowing. After `order_wait_ms` it leaves the entry pending for
the reclaim loop, which applies the same rule before claiming. So the handlers of one session's
turns never overlap and run in publish (stream) order, on whichever replicas they land.

We chose this over a per-session lease (SET NX PX): a lease gives mutual exclusion but not order
(turn 2's replica could take it first), needs TTL tuning and renewal, and adds keys; the pending
list already holds exactly the information needed, and a turn that keeps failing stops blocking
its successors once it is dead-lettered (acknowledged).

What the publisher and handlers must do: publish a session's turns in the order of their
sequence numbers (the gateway writes the episode, gets its `seq`, then publishes). If two turns
of a session could be published concurrently, stream order may differ from `seq`; handlers
therefore re-read the session from the graph and work through its unhandled turns in `seq`
order (the later notification then finds nothing new: a version check), which keeps the effects
in `seq` order either way.

Dedupe: a small per-group mark `relay:seen:<group>:<notification_id>` (TTL `dedupe_ttl_s`)
written with the XACK; a notification whose mark exists is acknowledged without running the
handler. It is a cheap first filter; handlers remain idempotent through graph versions.

Why not faststream (0.7.8, installed)
-------------------------------------
We checked it against the requirements above (its source in .venv, the embedded server's
version) and stopped at these:
its stream subscriber creates a new group at `$` (entries published before the group existed are
never seen), and with `last_id="0"` as a workaround a replica that finds the group already there
keeps reading with id `0`, i.e. only its own (empty) history, never new entries; on NOGROUP it
stops the subscriber for good ("restart the application"); a handler exception leaves the entry
pending and nothing ever redelivers it unless a second subscriber with `min_idle_time` (XAUTOCLAIM,
under another consumer name) is added; that path does not expose delivery counts, so dead-lettering
needs our own XPENDING anyway; XREADGROUP CLAIM (`claim_min_idle_time`) needs Redis 8.4 and the
embedded server is 8.2; session ordering needs to look at the group's pending list before
running a handler, which its per-message pipeline has no place for; and its TestRedisBroker is
in-memory, so the real-broker tests would be ours anyway. With all those workarounds, faststream would only be
carrying XREADGROUP for us. The runtime below is plain redis.asyncio (XREADGROUP, XPENDING,
XCLAIM, XACK, XADD) and small enough to read in one sitting.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import random
import re
import secrets
import signal
import socket
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Iterable, Mapping

import redis.asyncio as aioredis
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ..errors import InvalidInput, Unavailable
from .dead_letters import dead_letter
from .dedupe import Deduper
from .keys import error_key, validate_group
from .notifications import InvalidNotification, Notification, NotificationBase, kind_of, stream_for
from .ordering import OrderGuard
from .publisher import TRACER_NAME
from .settings import StreamSettings
from .wire import carrier, from_fields, text_fields

log = logging.getLogger("relay_graph.streams")

Handler = Callable[..., Awaitable[Any]]

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


def consumer_name(service: str) -> str:
    """A name no other replica has: service, host, pid and a random part."""
    host = re.sub(r"[^A-Za-z0-9._-]", "-", socket.gethostname())[:40] or "host"
    return f"{validate_group(service)}-{host}-{os.getpid()}-{secrets.token_hex(3)}"


@dataclass(frozen=True)
class Delivery:
    """What the runtime knows about one delivery; handlers may take it as a second argument."""

    stream: str
    entry_id: str
    group: str
    consumer: str
    deliveries: int
    reclaimed: bool


@dataclass
class ConsumerStats:
    handled: int = 0
    failed: int = 0
    dead_lettered: int = 0
    reclaimed: int = 0
    reclaim_scans: int = 0
    order_waits: int = 0
    duplicates: int = 0
    reconnects: int = 0
    groups_recreated: int = 0


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _wants_delivery(fn: Callable[..., Any]) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2


def _describe(exc: BaseException) -> str:
    """Type and message (redis-py's own repr leaves the message out)."""
    return f"{type(exc).__name__}: {exc}"


def _is_nogroup(exc: BaseException) -> bool:
    return isinstance(exc, ResponseError) and "NOGROUP" in str(exc)


class _Backoff:
    def __init__(self, settings: StreamSettings):
        self.initial = settings.backoff_initial_ms / 1000
        self.cap = settings.backoff_max_ms / 1000
        self.current = 0.0

    def next(self) -> float:
        self.current = self.initial if not self.current else min(self.cap, self.current * 2)
        return self.current * random.uniform(0.75, 1.0)

    def reset(self) -> None:
        self.current = 0.0


class Consumer:
    """Runs handlers for the notification kinds of one service (its consumer group).

    `handlers` maps a notification class (or its kind string) to an async handler. Each kind has
    one stream; the consumer reads the streams of the kinds it handles.
    """

    def __init__(
        self,
        redis: aioredis.Redis,
        *,
        group: str,
        handlers: Mapping[type[NotificationBase] | str, Handler],
        settings: StreamSettings | None = None,
        name: str | None = None,
    ):
        self.redis = redis
        self.group = validate_group(group)
        self.settings = settings or StreamSettings()
        self.name = name or consumer_name(group)
        if not handlers:
            raise InvalidInput("a consumer needs at least one handler")
        self._handlers: dict[str, tuple[Handler, bool]] = {}
        for key, fn in handlers.items():
            if not callable(fn):
                raise InvalidInput(f"handler for {key!r} is not callable")
            self._handlers[kind_of(key)] = (fn, _wants_delivery(fn))
        self.streams: tuple[str, ...] = tuple(sorted({stream_for(k) for k in self._handlers}))
        self._guards = {s: OrderGuard(redis, s, self.group) for s in self.streams}
        self._dedupe = Deduper(redis, self.group, self.settings.dedupe_ttl_s)
        self._heartbeat = redis.register_script(_HEARTBEAT)
        self._stop = asyncio.Event()
        self.ready = asyncio.Event()
        self.stats = ConsumerStats()
        self._running = False
        self._parked = 0
        self._beats: set[asyncio.Task] = set()

    # ---- lifecycle -------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop reading; the handler in flight finishes and is acknowledged, then run() returns."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    async def ensure_groups(self) -> None:
        for stream in self.streams:
            await self._create_group(stream)

    async def _create_group(self, stream: str) -> None:
        try:
            await self.redis.xgroup_create(stream, self.group, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def run(self) -> None:
        """Consume until stop() is called. Safe to cancel (pending entries are reclaimed)."""
        if self._running:
            raise RuntimeError("this consumer is already running")
        self._running = True
        try:
            backoff = _Backoff(self.settings)
            while not self.stopping:
                try:
                    await self.ensure_groups()
                    break
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    await self._trouble(None, exc, backoff)
            if self.stopping:
                return
            self.ready.set()
            log.info("consumer %s of group %s reading %s", self.name, self.group, ", ".join(self.streams))
            tasks = []
            for stream in self.streams:
                tasks.append(asyncio.create_task(self._read_loop(stream)))
                tasks.append(asyncio.create_task(self._reclaim_loop(stream)))
            try:
                await asyncio.gather(*tasks)
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            self.ready.clear()
            self._running = False

    # ---- loops -----------------------------------------------------------------------------

    async def _sleep(self, seconds: float) -> None:
        """Sleep, but wake up at once when stop() is called."""
        try:
            await asyncio.wait_for(self._stop.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    async def _trouble(self, stream: str | None, exc: BaseException, backoff: _Backoff) -> None:
        if stream and _is_nogroup(exc):
            log.warning("group %s is gone from %s (server lost its data?); recreating it", self.group, stream)
            try:
                await self._create_group(stream)
                self.stats.groups_recreated += 1
                return
            except Exception as again:  # the server may still be down
                exc = again
        delay = backoff.next()
        if isinstance(exc, REDIS_DOWN):
            self.stats.reconnects += 1
            log.warning("redis unreachable (%s); retrying in %.2fs", exc, delay)
        else:
            log.error("error in consumer %s (%s): %s; retrying in %.2fs", self.name, stream, _describe(exc), delay,
                      exc_info=exc)
        await self._sleep(delay)

    async def _read_loop(self, stream: str) -> None:
        """Read one entry whenever a handler slot is free; each entry runs in its own task."""
        slots = asyncio.Semaphore(self.settings.concurrency)
        tasks: set[asyncio.Task] = set()
        backoff = _Backoff(self.settings)
        # A dead connection without a reset must not block a read forever.
        read_timeout = self.settings.block_ms / 1000 + 30
        try:
            while not self.stopping:
                await slots.acquire()
                if self.stopping:
                    slots.release()
                    break
                try:
                    response = await asyncio.wait_for(
                        self.redis.xreadgroup(
                            self.group,
                            self.name,
                            {stream: ">"},
                            count=self.settings.batch,
                            block=self.settings.block_ms,
                        ),
                        read_timeout,
                    )
                except asyncio.CancelledError:
                    slots.release()
                    raise
                except Exception as exc:
                    slots.release()
                    await self._trouble(stream, exc, backoff)
                    continue
                backoff.reset()
                entries = [entry for _stream, batch in (response or ()) for entry in batch]
                if not entries:
                    slots.release()
                    continue
                for i, (entry_id, raw) in enumerate(entries):
                    if i:
                        await slots.acquire()
                    # Entries already delivered to us are finished even when stop() came meanwhile.
                    task = asyncio.create_task(self._process(stream, _s(entry_id), raw, slots))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
        except asyncio.CancelledError:
            for task in list(tasks):
                task.cancel()
            raise
        if tasks:  # graceful stop: the handlers in flight finish and acknowledge
            await asyncio.gather(*list(tasks), return_exceptions=True)

    async def _reclaim_loop(self, stream: str) -> None:
        backoff = _Backoff(self.settings)
        while not self.stopping:
            try:
                await self._reclaim_pass(stream)
                self.stats.reclaim_scans += 1
                backoff.reset()
                if self.stats.reclaim_scans % 50 == 1:
                    await self._forget_dead_consumers(stream)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                await self._trouble(stream, exc, backoff)
                continue
            await self._sleep(self.settings.reclaim_interval_ms / 1000)

    # ---- one entry -------------------------------------------------------------------------

    def _decode(self, stream: str, raw: Any) -> tuple[dict[str, str], Notification]:
        fields = text_fields(raw)
        notification = from_fields(fields)
        if stream_for(notification) != stream:
            raise InvalidNotification(f"a {notification.kind} notification does not belong on {stream}")
        if notification.kind not in self._handlers:
            raise InvalidNotification(f"group {self.group} has no handler for {notification.kind}")
        return fields, notification

    async def _process(self, stream: str, entry_id: str, raw: Any, slots: asyncio.Semaphore) -> None:
        """A fresh delivery (XREADGROUP >), holding one of the stream's handler slots."""
        holding = True
        beat = self._start_heartbeat(stream, entry_id)  # from the moment the entry is ours
        try:
            try:
                fields, notification = self._decode(stream, raw)
            except InvalidNotification as exc:
                await self._dead_letter(stream, entry_id, raw or {}, f"undecodable entry: {exc.message}", 1)
                return
            key = notification.order_key()
            guard = self._guards[stream]
            guard.remember(entry_id, key)
            if key is not None:
                blockers = await guard.blockers(entry_id, key)
                if blockers:
                    # Wait without a slot (up to a bound), so other sessions keep flowing meanwhile.
                    park = self._parked < self.settings.max_waiting
                    if park:
                        slots.release()
                        holding = False
                    ok = await self._wait_for_turn(stream, entry_id, blockers, slots if park else None)
                    holding = ok or not park
                    if not ok:
                        return
            await self._handle(stream, entry_id, fields, notification, deliveries=1, reclaimed=False)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # e.g. Redis went away mid-way: the entry stays pending and is reclaimed
            log.warning("could not process %s %s: %s; it stays pending", stream, entry_id, _describe(exc))
        finally:
            beat.set()
            if holding:
                slots.release()

    async def _wait_for_turn(
        self, stream: str, entry_id: str, blockers: set[str], slots: asyncio.Semaphore | None
    ) -> bool:
        """Wait until the earlier entries with the same order key are acknowledged, then (if we
        gave our slot up) take a slot again. False: leave the entry pending for the reclaim loop.
        The caller keeps the entry's heartbeat going meanwhile."""
        guard = self._guards[stream]
        self.stats.order_waits += 1
        parked = slots is not None
        if parked:
            self._parked += 1
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.order_wait_ms / 1000
        try:
            while blockers:
                if self.stopping or loop.time() >= deadline:
                    log.info("leaving %s %s pending: earlier entries %s with its order key are not done",
                             stream, entry_id, sorted(blockers))
                    return False
                await self._sleep(self.settings.order_poll_ms / 1000)
                blockers = await guard.still_pending(blockers)
            if parked:
                self._parked -= 1
                parked = False
                await slots.acquire()  # type: ignore[union-attr]
            return True
        finally:
            if parked:
                self._parked -= 1

    async def _handle(
        self,
        stream: str,
        entry_id: str,
        fields: dict[str, str],
        notification: Notification,
        *,
        deliveries: int,
        reclaimed: bool,
    ) -> bool:
        if await self._dedupe.seen(notification):
            self.stats.duplicates += 1
            log.info("%s %s: notification %s already handled by %s; acknowledging",
                     stream, entry_id, notification.notification_id, self.group)
            await self._ack(stream, entry_id, None)
            return True
        handler, wants_delivery = self._handlers[notification.kind]
        delivery = Delivery(stream, entry_id, self.group, self.name, deliveries, reclaimed)
        parent = propagate.extract(carrier(fields))
        tracer = trace.get_tracer(TRACER_NAME)
        with tracer.start_as_current_span(
            f"handle {notification.kind}",
            context=parent,
            kind=SpanKind.CONSUMER,
            record_exception=False,
            set_status_on_exception=False,
            attributes={
                "messaging.system": "redis",
                "messaging.operation.type": "process",
                "messaging.destination.name": stream,
                "messaging.consumer.group.name": self.group,
                "messaging.message.id": entry_id,
                "relay.consumer": self.name,
                "relay.kind": notification.kind,
                "relay.tenant": notification.tenant,
                "relay.id": notification.id,
                "relay.version": notification.version,
                "relay.deliveries": deliveries,
            },
        ) as span:
            error = await self._run_handler(handler, wants_delivery, notification, delivery)
            if error is not None:
                span.record_exception(error)
                span.set_status(Status(StatusCode.ERROR, str(error)[:200]))
                self.stats.failed += 1
                log.warning("handler for %s %s (%s, delivery %d) failed, left pending: %s",
                            stream, entry_id, notification.kind, deliveries, _describe(error))
                await self._remember_error(stream, entry_id, error)
                return False
            await self._ack(stream, entry_id, notification)
            self.stats.handled += 1
            return True

    async def _run_handler(self, handler: Handler, wants_delivery: bool, notification: Notification,
                           delivery: Delivery) -> BaseException | None:
        """Run the handler; retry in place while the database is unreachable. The error, if any."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + self.settings.transient_retry_s
        backoff = _Backoff(self.settings)
        limit = self.settings.handler_timeout_s
        while True:
            started = loop.time()
            try:
                call = handler(notification, delivery) if wants_delivery else handler(notification)
                await asyncio.wait_for(call, limit)
                return None
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if isinstance(exc, TimeoutError) and loop.time() - started >= limit:
                    return TimeoutError(f"handler timed out after {limit}s")
                error: BaseException = exc
            if not isinstance(error, TRANSIENT_ERRORS) or self.stopping or loop.time() >= give_up:
                return error
            delay = backoff.next()
            log.warning("handler for %s %s hit an unreachable database (%s); retrying in %.2fs",
                        delivery.stream, delivery.entry_id, _describe(error), delay)
            await self._sleep(delay)

    def _start_heartbeat(self, stream: str, entry_id: str) -> asyncio.Event:
        """Keep an entry we are working on fresh; set the returned event to end the heartbeat.

        Ended by an event, not by cancelling: a Redis command cancelled mid-flight can swallow
        the cancellation (and costs a connection), which would leave us waiting for it forever.
        """
        done = asyncio.Event()
        task = asyncio.create_task(self._beat(stream, entry_id, done))
        self._beats.add(task)
        task.add_done_callback(self._beats.discard)
        return done

    async def _beat(self, stream: str, entry_id: str, done: asyncio.Event) -> None:
        every = self.settings.heartbeat_every_ms / 1000
        while True:
            try:
                await asyncio.wait_for(done.wait(), every)
                return
            except asyncio.TimeoutError:
                pass
            try:
                owned = await self._heartbeat(keys=[stream], args=[self.group, entry_id, self.name])
            except Exception:  # the next beat tries again; the handler is not disturbed
                continue
            if not owned and not done.is_set():
                log.warning("%s %s was taken over by another consumer while %s was still on it",
                            stream, entry_id, self.name)
                return

    async def _ack(self, stream: str, entry_id: str, notification: NotificationBase | None) -> bool:
        backoff = _Backoff(self.settings)
        for _ in range(10):
            try:
                async with self.redis.pipeline(transaction=True) as pipe:
                    if notification is not None:
                        self._dedupe.mark(pipe, notification)
                    pipe.xack(stream, self.group, entry_id)
                    await pipe.execute()
                return True
            except REDIS_DOWN as exc:
                delay = backoff.next()
                log.warning("could not acknowledge %s %s (%s); retrying in %.2fs", stream, entry_id, exc, delay)
                await asyncio.sleep(delay)  # not cut short by stop(): finishing the ack is the point
            except ResponseError as exc:
                if _is_nogroup(exc):
                    await self._trouble(stream, exc, backoff)
                    return False
                raise
        log.error("gave up acknowledging %s %s; it will be handled again (handlers are idempotent)", stream, entry_id)
        return False

    async def _remember_error(self, stream: str, entry_id: str, error: BaseException) -> None:
        text = _describe(error)[:4000]
        try:
            await self.redis.set(error_key(self.group, stream, entry_id), text, ex=self.settings.error_ttl_s)
        except Exception as exc:  # losing the error text must not stop the consumer
            log.warning("could not record the error of %s %s: %s", stream, entry_id, _describe(exc))

    async def _last_error(self, stream: str, entry_id: str) -> str | None:
        value = await self.redis.get(error_key(self.group, stream, entry_id))
        return _s(value) if value is not None else None

    async def _dead_letter(self, stream: str, entry_id: str, raw: Any, error: str, deliveries: int) -> None:
        await dead_letter(
            self.redis,
            stream=stream,
            group=self.group,
            consumer=self.name,
            entry_id=entry_id,
            fields=dict(raw),
            error=error,
            deliveries=deliveries,
            maxlen=self.settings.dead_letter_maxlen,
        )
        self.stats.dead_lettered += 1

    # ---- reclaiming ------------------------------------------------------------------------

    async def _reclaim_pass(self, stream: str) -> None:
        start = "-"
        size = self.settings.reclaim_batch
        while not self.stopping:
            rows = await self.redis.xpending_range(
                stream, self.group, start, "+", size, idle=self.settings.min_idle_ms
            )
            for row in rows:
                if self.stopping:
                    return
                await self._reclaim_one(stream, _s(row["message_id"]), int(row["times_delivered"]))
            if len(rows) < size:
                return
            start = "(" + _s(rows[-1]["message_id"])

    async def _claim(self, stream: str, entry_id: str, *, justid: bool) -> bool:
        """XCLAIM if still idle: of several replicas trying, exactly one gets it."""
        claimed = await self.redis.xclaim(
            stream, self.group, self.name, self.settings.min_idle_ms, [entry_id], justid=justid
        )
        return bool(claimed)

    async def _reclaim_one(self, stream: str, entry_id: str, delivered: int) -> None:
        rows = await self.redis.xrange(stream, entry_id, entry_id, count=1)
        if not rows:
            # Trimmed away before anyone finished it: there is nothing left to handle.
            log.warning("%s %s was trimmed from the stream while pending in %s; dropping the reference",
                        stream, entry_id, self.group)
            await self.redis.xack(stream, self.group, entry_id)
            return
        raw = rows[0][1]
        try:
            fields, notification = self._decode(stream, raw)
        except InvalidNotification as exc:
            if await self._claim(stream, entry_id, justid=True):
                await self._dead_letter(stream, entry_id, raw, f"undecodable entry: {exc.message}", delivered)
            return
        if delivered >= self.settings.max_deliveries:
            if await self._claim(stream, entry_id, justid=True):
                error = await self._last_error(stream, entry_id) or (
                    "no error recorded: the consumers it was delivered to stopped while handling it"
                )
                await self._dead_letter(
                    stream, entry_id, raw, f"failed {delivered} deliveries; last error: {error}", delivered
                )
            return
        key = notification.order_key()
        guard = self._guards[stream]
        guard.remember(entry_id, key)
        if key is not None and await guard.blockers(entry_id, key):
            return  # its session's earlier turn goes first; no delivery is counted
        if not await self._claim(stream, entry_id, justid=False):
            return
        self.stats.reclaimed += 1
        log.info("%s reclaimed %s %s (delivery %d)", self.name, stream, entry_id, delivered + 1)
        beat = self._start_heartbeat(stream, entry_id)
        try:
            await self._handle(stream, entry_id, fields, notification, deliveries=delivered + 1, reclaimed=True)
        finally:
            beat.set()

    async def _forget_dead_consumers(self, stream: str) -> None:
        for info in await self.redis.xinfo_consumers(stream, self.group):
            name = _s(info["name"])
            idle_long = int(info["idle"]) > self.settings.consumer_gc_idle_ms
            if name != self.name and int(info["pending"]) == 0 and idle_long:
                await self.redis.xgroup_delconsumer(stream, self.group, name)
                log.info("removed idle consumer %s from %s/%s", name, stream, self.group)


def stop_on_signals(*consumers: Consumer, signals: Iterable[int] = (signal.SIGTERM, signal.SIGINT)) -> None:
    """For service entry points: SIGTERM/SIGINT stop the consumers gracefully."""
    loop = asyncio.get_running_loop()
    for sig in signals:
        loop.add_signal_handler(sig, lambda: [c.stop() for c in consumers])
