"""One FastStream app per service: one consumer group, one consumer per replica.

    app = StreamApp(redis, group="resolver", handlers={TicketChanged: handle}, settings=...)
    await app.run()        # until app.stop() (or SIGTERM, with handle_signals=True)

What FastStream does: per notification kind, a subscriber reading the kind's stream with
XREADGROUP `>` (`StreamSub(group=<service>, consumer=<replica>)`) and a second one with
`min_idle_time` (XAUTOCLAIM) taking over a dead or failed consumer's entries, both under the
replica's one consumer name and with `AckPolicy.MANUAL`; the decoding of the entry into the
notification model (`parser`/`decoder` below: the entry's `payload` field is the body, the other
fields are headers); the AsyncAPI description (`asyncapi.py`); graceful stop (the entry in flight
finishes, up to `graceful_timeout_s`).

What we add, because FastStream 0.7.8 does not (checked against its source):
* Groups are created by our start-up hook before the broker starts, with `XGROUP CREATE <stream>
  <group> 0 MKSTREAM` (FastStream would create a new group at `$`, so entries published before a
  service was first deployed would never be seen); FastStream then finds the group there and
  reads `>`.
* NOGROUP (the server lost its data): FastStream stops the subscriber and exits the app; `run()`
  then runs the start-up again (groups recreated) and carries on, counting `groups_recreated`.
* `DeliveryMiddleware` (below; its parts in delivery.py): heartbeat, delivery counts and dead letters, per-session
  order, dedupe, the handler span, transient retries, the acknowledgement.
* A housekeeping task: notices Redis going away (`stats.reconnects`) and removes consumers of
  long-gone replicas from the group.
We do not use XREADGROUP CLAIM (`claim_min_idle_time`): it needs Redis 8.4, the embedded server
is 8.2. Streams are trimmed by `MAXLEN ~` on every XADD (the publisher and the dead letters);
`maxlen` must cover what a group can fall behind by.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import logging
import os
import re
import secrets
import signal
import socket
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Coroutine, Mapping

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from faststream import AckPolicy, BaseMiddleware, FastStream
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from faststream.redis import RedisBroker, RedisClusterBroker, StreamSub
from faststream.redis.message import RedisStreamMessage
from redis.exceptions import ResponseError

from relay_graph.runtime import cluster
from relay_graph.runtime.errors import InvalidInput, TenantNotFound
from relay_graph.runtime.metrics import catalogue as metrics
from relay_graph.runtime.streams.dead_letters import dead_letter
from relay_graph.runtime.streams.dedupe import Deduper
from relay_graph.runtime.streams.delivery import (
    _HEARTBEAT,
    CURRENT,
    REDIS_DOWN,
    TRANSIENT_ERRORS,
    Backoff,
    Delivery,
    text as _s,
    describe,
    is_nogroup,
)
from relay_graph.runtime.streams.keys import error_key, validate_group
from relay_graph.runtime.streams.notifications import (
    KINDS,
    InvalidNotification,
    Notification,
    NotificationBase,
    kind_of,
    stream_for,
)
from relay_graph.runtime.streams.ordering import OrderGuard
from relay_graph.runtime.streams.settings import StreamSettings
from relay_graph.runtime.streams.publisher import TRACER_NAME
from relay_graph.runtime.streams.wire import PAYLOAD, carrier, from_fields, text_fields

log = logging.getLogger("relay_graph.runtime.streams")

Handler = Callable[..., Awaitable[Any]]
DATA_KEY = b"__data__"  # FastStream's own envelope (TestRedisBroker publishes that way)


def consumer_name(service: str) -> str:
    """A name no other replica has: service, host, pid and a random part."""
    host = re.sub(r"[^A-Za-z0-9._-]", "-", socket.gethostname())[:40] or "host"
    return f"{validate_group(service)}-{host}-{os.getpid()}-{secrets.token_hex(3)}"


@dataclass
class StreamStats:
    handled: int = 0
    failed: int = 0
    dead_lettered: int = 0
    reclaimed: int = 0
    order_waits: int = 0
    duplicates: int = 0
    dropped: int = 0  # entries of a tenant that is not there (deleted): acknowledged, never handled
    reconnects: int = 0
    groups_recreated: int = 0


def _wants_delivery(fn: Callable[..., Any]) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2


def _subscriber(kind: str, handler: Handler) -> Callable[..., Coroutine[Any, Any, None]]:
    """The function FastStream calls: it decodes the body into the kind's model (which is also
    what the AsyncAPI document shows) and hands it to the plain handler, with the Delivery the
    middleware worked out (None under TestRedisBroker without the middleware)."""
    wants_delivery = _wants_delivery(handler)

    async def subscriber(notification: Any) -> None:
        current = CURRENT.get(None)
        delivery = current[1] if current else None
        if wants_delivery:
            await handler(notification, delivery)
        else:
            await handler(notification)

    subscriber.__annotations__ = {"notification": KINDS[kind], "return": None}
    subscriber.__name__ = subscriber.__qualname__ = f"on_{kind}"
    plain = getattr(handler, "func", handler)  # functools.partial(handler, deps) from agents.bind
    subscriber.__doc__ = (plain.__doc__ or KINDS[kind].__doc__ or kind).strip()
    return subscriber


def _broker(redis: aioredis.Redis, **kwargs: Any) -> RedisBroker:
    """A broker on what `redis` is connected to: the one server, or the cluster (each stream read
    on its slot's shard, redirected after a failover)."""
    if isinstance(redis, RedisCluster):
        seeds = [(n.host, n.port) for n in redis.nodes_manager.startup_nodes.values()]
        kw = redis.nodes_manager.connection_kwargs
        return RedisClusterBroker(startup_nodes=seeds, username=kw.get("username"), password=kw.get("password"),
                                  socket_connect_timeout=kw.get("socket_connect_timeout") or 5, **kwargs)
    return RedisBroker(**_connection_options(redis), **kwargs)


def _connection_options(redis: aioredis.Redis) -> dict[str, Any]:
    kw = redis.connection_pool.connection_kwargs
    return {
        "host": kw.get("host", "127.0.0.1"),
        "port": int(kw.get("port", 6379)),
        "password": kw.get("password"),
        "username": kw.get("username"),
        "db": kw.get("db", 0),
        "socket_connect_timeout": kw.get("socket_connect_timeout") or 5,
    }


class StreamApp:
    """The FastStream app of one service (its consumer group), in one replica.

    `handlers` maps a notification class (or its kind) to a plain async handler taking the
    notification (and, if it takes a second positional argument, the `Delivery`). Each kind has
    one stream. `tenant_exists` given (asked for every entry: it caches, db.GraphClient.is_registered):
    an entry naming a tenant it denies (never created, or deleted) is acknowledged and dropped before
    any handler (or graph) sees it. `delivery=False` leaves the delivery middleware out: for `TestRedisBroker`
    tests of the subscribers' wiring, where there is no Redis to ask.
    """

    def __init__(
        self,
        redis: aioredis.Redis,
        *,
        group: str,
        handlers: Mapping[type[NotificationBase] | str, Handler],
        settings: StreamSettings | None = None,
        name: str | None = None,
        delivery: bool = True,
        handle_signals: bool = False,
        tenant_exists: Callable[[str], Awaitable[bool]] | None = None,
    ):
        self.redis = redis
        self.group = validate_group(group)
        self.settings = settings or StreamSettings()
        self.name = name or consumer_name(group)
        self.handle_signals = handle_signals
        self.delivery = delivery
        self.tenant_exists = tenant_exists
        if not handlers:
            raise InvalidInput("a service needs at least one handler")
        self.kinds: dict[str, Handler] = {}
        for key, fn in handlers.items():
            if not callable(fn):
                raise InvalidInput(f"handler for {key!r} is not callable")
            self.kinds[kind_of(key)] = fn
        self.streams: tuple[str, ...] = tuple(sorted({stream_for(k) for k in self.kinds}))
        metrics.zero_stream_counters(self.streams, self.group)
        self.guards = {s: OrderGuard(redis, s, self.group) for s in self.streams}
        self.slots = {s: asyncio.Semaphore(self.settings.concurrency) for s in self.streams}
        self.dedupe = Deduper(redis, self.group, self.settings.dedupe_ttl_s)
        self._heartbeat = redis.register_script(_HEARTBEAT)
        self._stop = asyncio.Event()
        self.ready = asyncio.Event()
        self.stats = StreamStats()
        self.parked = 0
        self._background: set[asyncio.Task] = set()
        self._housekeeping: asyncio.Task | None = None
        self._running = False

        middlewares = (functools.partial(DeliveryMiddleware, app=self),) if delivery else ()
        self.broker = _broker(
            redis,
            middlewares=middlewares,
            graceful_timeout=self.settings.graceful_timeout_s,
            log_level=logging.DEBUG,
        )
        for kind, handler in self.kinds.items():
            self._subscribe(kind, handler)
        self.app = FastStream(
            self.broker,
            on_startup=[self._on_startup],
            after_startup=[self._after_startup],
            on_shutdown=[self._on_shutdown],
            after_shutdown=[self._after_shutdown],
        )

    # ---- wiring ----------------------------------------------------------------------------

    def _subscribe(self, kind: str, handler: Handler) -> None:
        stream = stream_for(kind)
        s = self.settings
        fn = _subscriber(kind, handler)
        common = dict(ack_policy=AckPolicy.MANUAL, parser=self._parse, decoder=_decode)
        fresh = StreamSub(stream, group=self.group, consumer=self.name, polling_interval=s.block_ms,
                          max_records=s.batch)
        workers = {"max_workers": s.concurrency} if s.concurrency > 1 else {}
        self.broker.subscriber(stream=fresh, title=f"{stream}:{self.group}", **workers, **common)(fn)
        if not self.delivery:
            return  # TestRedisBroker hands each message to every subscriber of its stream
        # A dead (or failed) consumer's entries: XAUTOCLAIM once idle for min_idle_ms.
        reclaim = StreamSub(stream, group=self.group, consumer=self.name, min_idle_time=s.min_idle_ms,
                            polling_interval=s.reclaim_interval_ms)
        self.broker.subscriber(stream=reclaim, title=f"{stream}:{self.group}:reclaim",
                               include_in_schema=False, **common)(fn)

    async def _parse(self, msg: Mapping[str, Any], original: Callable[..., Awaitable[Any]]) -> Any:
        """Our entries: `payload` is the body, the other fields are headers. Never fails: an entry
        that cannot be decoded reaches the middleware, which dead-letters it."""
        data = msg.get("data") or {}
        if DATA_KEY in data:
            return await original(msg)
        headers = {}
        for k, v in data.items():
            key = k.decode("utf-8", "replace") if isinstance(k, bytes) else str(k)
            if key != PAYLOAD:
                headers[key] = v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
        body = data.get(PAYLOAD.encode(), data.get(PAYLOAD, b""))
        entry_id = _s(msg["message_ids"][0]) if msg.get("message_ids") else None
        return RedisStreamMessage(
            raw_message=msg,
            body=body if isinstance(body, bytes) else str(body).encode(),
            headers=headers,
            content_type="application/json",
            message_id=entry_id,
            correlation_id=entry_id,
            consumer=self.redis,
            group=self.group,
        )

    # ---- lifecycle -------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop reading; the entry in flight finishes and is acknowledged, then run() returns."""
        self._stop.set()
        self.app.exit()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    @property
    def stopping_event(self) -> asyncio.Event:
        """Set once stop() was called (for a runner that bounds how long stopping may take)."""
        return self._stop

    async def run(self) -> None:
        """Run the app until stop(). NOGROUP makes FastStream exit the app; we start it again."""
        if self._running:
            raise RuntimeError("this service is already running")
        self._running = True
        try:
            while not self.stopping:
                self.app._should_exit = False  # run() again after a NOGROUP exit
                await self.app.run(log_level=logging.DEBUG)
                if not self.stopping:
                    self.stats.groups_recreated += 1
                    log.warning("%s: a subscriber lost its group (server lost its data?); starting again",
                                self.name)
        finally:
            self.ready.clear()
            self._running = False

    async def _on_startup(self) -> None:
        if self.handle_signals:  # FastStream's own handlers only exit the app; ours mean "stop"
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, self.stop)
        backoff = Backoff(self.settings.backoff_initial_ms, self.settings.backoff_max_ms)
        while not self.stopping:
            try:
                await self.ensure_groups()
                return
            except REDIS_DOWN as exc:
                self.stats.reconnects += 1
                delay = backoff.next()
                log.warning("%s: cannot create the groups yet (%s); retrying in %.2fs", self.name, describe(exc), delay)
                await self.sleep(delay)

    async def _after_startup(self) -> None:
        if self.stopping:
            self.app.exit()
            return
        self._housekeeping = asyncio.create_task(self._housekeep())
        self.ready.set()
        log.info("%s of group %s reading %s", self.name, self.group, ", ".join(self.streams))

    async def _on_shutdown(self) -> None:
        self.ready.clear()
        if self._housekeeping is not None:
            self._housekeeping.cancel()
            await asyncio.gather(self._housekeeping, return_exceptions=True)
            self._housekeeping = None

    async def _after_shutdown(self) -> None:
        # On stop, entries waiting for their turn give up (they stay pending for another replica).
        if self.stopping and self._background:
            await asyncio.wait(set(self._background), timeout=self.settings.graceful_timeout_s)

    async def ensure_groups(self) -> None:
        for stream in self.streams:
            await self.create_group(stream)

    async def create_group(self, stream: str) -> None:
        try:
            await self.redis.xgroup_create(stream, self.group, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def sleep(self, seconds: float) -> None:
        """Sleep, but wake up at once when stop() is called."""
        try:
            await asyncio.wait_for(self._stop.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    async def _housekeep(self) -> None:
        every = self.settings.reclaim_interval_ms / 1000
        down = False
        passes = 0
        while not self.stopping:
            await self.sleep(every)
            try:
                if isinstance(self.redis, RedisCluster):
                    await self._heal_cluster_clients()
                await self.redis.ping()
                if down:
                    down = False
                    log.info("%s: Redis is back", self.name)
                passes += 1
                if passes % 100 == 0:
                    for stream in self.streams:
                        await self._forget_dead_consumers(stream)
                if any(not sub.running for sub in self.broker.subscribers) and not self.stopping:
                    self.app.exit()  # a subscriber gave up (NOGROUP): run() starts again
                    return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not down:
                    down = True
                    self.stats.reconnects += 1
                    log.warning("%s: Redis is not answering (%s)", self.name, describe(exc))

    async def _heal_cluster_clients(self) -> None:
        """After a failover: no client of ours (nor FastStream's) keeps a dead default node."""
        await cluster.heal_default_node(self.redis)
        state = self.broker.config.broker_config.connection
        if state:  # connected
            await cluster.heal_default_node(state.client)

    async def _forget_dead_consumers(self, stream: str) -> None:
        for info in await self.redis.xinfo_consumers(stream, self.group):
            name = _s(info["name"])
            idle_long = int(info["idle"]) > self.settings.consumer_gc_idle_ms
            if name != self.name and int(info["pending"]) == 0 and idle_long:
                await self.redis.xgroup_delconsumer(stream, self.group, name)
                log.info("removed idle consumer %s from %s/%s", name, stream, self.group)

    # ---- what the middleware uses ----------------------------------------------------------

    def decode(self, stream: str, fields: dict[str, str]) -> Notification:
        notification = from_fields(fields)
        if stream_for(notification) != stream:
            raise InvalidNotification(f"a {notification.kind} notification does not belong on {stream}")
        if notification.kind not in self.kinds:
            raise InvalidNotification(f"group {self.group} has no handler for {notification.kind}")
        return notification

    async def known_tenant(self, tenant: str) -> bool:
        return self.tenant_exists is None or await self.tenant_exists(tenant)

    async def drop(self, stream: str, entry_id: str, notification: NotificationBase, why: str) -> None:
        """Acknowledges an entry that is not to be handled (its tenant is gone), counted and logged;
        not a dead letter: nothing went wrong, and nothing is left to do."""
        if await self.ack(stream, entry_id, None):
            self.stats.dropped += 1
            log.info("%s dropped %s %s (%s of %s): %s", self.name, stream, entry_id, notification.kind,
                     notification.tenant, why)

    async def pending_state(self, stream: str, entry_id: str) -> tuple[str | None, int]:
        """(owner, delivery count) of a pending entry; (None, 0) if it is not pending."""
        rows = await self.redis.xpending_range(stream, self.group, entry_id, entry_id, 1)
        if not rows:
            return None, 0
        return _s(rows[0]["consumer"]), int(rows[0]["times_delivered"])

    def park(self, coro: Coroutine[Any, Any, None]) -> None:
        self.parked += 1
        task = asyncio.create_task(coro)
        self._background.add(task)

        def done(t: asyncio.Task) -> None:
            self._background.discard(t)
            self.parked -= 1

        task.add_done_callback(done)

    async def wait_for_turn(self, stream: str, entry_id: str, blockers: set[str]) -> bool:
        """Wait until the earlier entries with the same order key are acknowledged. False: leave
        the entry pending for the reclaim subscriber (the caller's heartbeat goes on meanwhile)."""
        guard = self.guards[stream]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.order_wait_ms / 1000
        while blockers:
            if self.stopping or loop.time() >= deadline:
                log.info("leaving %s %s pending: earlier entries %s with its order key are not done",
                         stream, entry_id, sorted(blockers))
                return False
            await self.sleep(self.settings.order_poll_ms / 1000)
            blockers = await guard.still_pending(blockers)
        return True

    def start_heartbeat(self, stream: str, entry_id: str) -> asyncio.Event:
        """Keep an entry we are working on fresh; set the returned event to end the heartbeat.

        Ended by an event, not by cancelling: a Redis command cancelled mid-flight can swallow
        the cancellation (and costs a connection), which would leave us waiting for it forever.
        """
        done = asyncio.Event()
        task = asyncio.create_task(self._beat(stream, entry_id, done))
        self._background.add(task)
        task.add_done_callback(self._background.discard)
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

    async def ack(self, stream: str, entry_id: str, notification: NotificationBase | None) -> bool:
        backoff = Backoff(self.settings.backoff_initial_ms, self.settings.backoff_max_ms)
        for _ in range(10):
            try:
                async with self.redis.pipeline(transaction=True) as pipe:
                    if notification is not None:
                        self.dedupe.mark(pipe, notification)
                    pipe.xack(stream, self.group, entry_id)
                    await pipe.execute()
                return True
            except REDIS_DOWN as exc:
                delay = backoff.next()
                log.warning("could not acknowledge %s %s (%s); retrying in %.2fs", stream, entry_id, exc, delay)
                await asyncio.sleep(delay)  # not cut short by stop(): finishing the ack is the point
            except ResponseError as exc:
                if is_nogroup(exc):
                    return False  # the group (and this entry's place in it) is gone with the data
                raise
        log.error("gave up acknowledging %s %s; it will be handled again (handlers are idempotent)", stream, entry_id)
        return False

    async def remember_error(self, stream: str, entry_id: str, error: BaseException) -> None:
        text = describe(error)[:4000]
        try:
            await self.redis.set(error_key(self.group, stream, entry_id), text, ex=self.settings.error_ttl_s)
        except Exception as exc:  # losing the error text must not stop the consumer
            log.warning("could not record the error of %s %s: %s", stream, entry_id, describe(exc))

    async def last_error(self, stream: str, entry_id: str) -> str | None:
        value = await self.redis.get(error_key(self.group, stream, entry_id))
        return _s(value) if value is not None else None

    async def dead_letter(self, stream: str, entry_id: str, raw: Any, error: str, deliveries: int) -> None:
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
        metrics.STREAM_DEAD_LETTERED.add(1, {"stream": stream, "group": self.group})


async def _decode(msg: Any, original: Callable[..., Awaitable[Any]]) -> Any:
    """JSON body, or None when it is not JSON (the middleware dead-letters such an entry before
    anything would validate it)."""
    try:
        return json.loads(msg.body)
    except (ValueError, TypeError):
        return None


class DeliveryMiddleware(BaseMiddleware):
    """Built per entry by FastStream; `app` (bound with functools.partial) holds the state."""

    def __init__(self, msg: Any, /, *, context: Any, app: StreamApp):
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
