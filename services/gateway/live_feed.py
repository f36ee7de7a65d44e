"""The gateway's one stream tail, and the two things it feeds: chat requests waiting for their
reply, and the tenants' live sockets.

One background task per process reads the tickets, replies, facts and outages streams with plain
XREAD (no consumer group: every gateway replica must see every entry, and nothing here needs
acknowledging). It starts at the streams' ends as they were when it started, so a client sees
what happens from then on. Every entry is decoded and handed to the listeners in order:

- `ReplyWaiters` resolves the in-process futures of chat requests keyed by (tenant, reply_to);
  a request registers its future before it publishes its turn, so the reply cannot slip past.
- `LiveHub` turns the notification into a small JSON event and puts it on the bounded queue of
  each socket of *that* tenant (the tenant comes from the notification, the socket's tenant from
  its key); a slow socket loses its oldest events, never blocks the tail or the other sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections import deque
from typing import Any, Callable, Iterable, Iterator

import redis.asyncio as aioredis

from relay_graph.runtime.cluster import is_cluster
from relay_graph.runtime.errors import Unavailable
from relay_graph.runtime.streams import (
    STREAM_FACTS,
    STREAM_OUTAGES,
    STREAM_REPLIES,
    STREAM_TASKS,
    STREAM_TICKETS,
    FactChanged,
    InvalidNotification,
    NotificationBase,
    OutageChanged,
    ReplyWritten,
    TaskChanged,
    TicketChanged,
)
from relay_graph.runtime.streams.wire import from_fields, text_fields

log = logging.getLogger("relay.gateway.live")

TAIL_STREAMS: tuple[str, ...] = (STREAM_TICKETS, STREAM_REPLIES, STREAM_FACTS, STREAM_OUTAGES, STREAM_TASKS)
LIVE_KINDS: tuple[str, ...] = ("ticket", "reply", "fact", "outage", "handoff")

Listener = Callable[[NotificationBase], None]


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


# ---------------------------------------------------------------- the tail


class StreamTail:
    """XREAD loop over `streams`, from their ends at `start()`, handing each notification to the
    listeners. `start()` is idempotent (and restarts a loop that ended); Unavailable if the streams
    do not answer, in which case nothing was started."""

    def __init__(
        self,
        redis: Callable[[], aioredis.Redis],
        listeners: Iterable[Listener],
        *,
        streams: Iterable[str] = TAIL_STREAMS,
        block_ms: int = 1_000,
        count: int = 500,
    ) -> None:
        self._redis = redis
        self.listeners = list(listeners)
        self.streams = tuple(streams)
        self.block_ms = block_ms
        self.count = count
        self._positions: dict[str, str] = {}
        self._tasks: list[asyncio.Task] = []
        self._lock = asyncio.Lock()
        self.delivered = 0

    @property
    def running(self) -> bool:
        return bool(self._tasks) and not any(t.done() for t in self._tasks)

    async def start(self) -> None:
        if self.running:
            return
        async with self._lock:
            if self.running:
                return
            redis = self._redis()
            try:
                # '$' resolved once, per stream, to the id it stands for now: reading again with '$'
                # after each batch would skip whatever arrived between two reads.
                positions = {s: await self._last_id(redis, s) for s in self.streams}
            except Exception as exc:
                raise Unavailable("the notification streams are not answering; retry shortly") from exc
            self._positions = positions
            # On a cluster each stream lives on its own slot (one XREAD of two would be cross-slot):
            # one read loop per stream there, one for all of them on a single server.
            groups = [(s,) for s in self.streams] if is_cluster(redis) else [self.streams]
            self._tasks = [asyncio.create_task(self._run(redis, g), name="relay-gateway-stream-tail") for g in groups]

    async def stop(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    @staticmethod
    async def _last_id(redis: aioredis.Redis, stream: str) -> str:
        last = await redis.xrevrange(stream, count=1)
        return _s(last[0][0]) if last else "0-0"

    async def _run(self, redis: aioredis.Redis, streams: tuple[str, ...]) -> None:
        delay = 0.0
        # A dead connection without a reset must not block the tail forever.
        read_timeout = self.block_ms / 1000 + 30
        while True:
            try:
                response = await asyncio.wait_for(
                    redis.xread({s: self._positions[s] for s in streams}, count=self.count, block=self.block_ms), read_timeout
                )
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the server went away: the client reconnects on the next read
                delay = min(5.0, delay * 2 or 0.1)
                log.warning("stream tail: %r; reading again in %.1fs", exc, delay)
                await asyncio.sleep(delay * random.uniform(0.75, 1.0))
                continue
            delay = 0.0
            for stream, entries in response or ():
                stream = _s(stream)
                for entry_id, raw in entries:
                    self._positions[stream] = _s(entry_id)
                    self._deliver(stream, raw)

    def _deliver(self, stream: str, raw: Any) -> None:
        try:
            notification = from_fields(text_fields(raw))
        except InvalidNotification as exc:
            log.debug("stream tail: skipping an entry of %s: %s", stream, exc.message)
            return
        self.delivered += 1
        for listener in self.listeners:
            try:
                listener(notification)
            except Exception:  # one listener's bug must not starve the others
                log.exception("stream tail listener %r failed", listener)


# ---------------------------------------------------------------- chat waiters


class ReplyWaiters:
    """Futures of chat requests waiting for the ReplyWritten that answers their turn."""

    def __init__(self) -> None:
        self._waiting: dict[tuple[str, str], list[asyncio.Future]] = {}

    def __len__(self) -> int:
        return sum(len(f) for f in self._waiting.values())

    @contextlib.contextmanager
    def expect(self, tenant: str, reply_to: str) -> Iterator[asyncio.Future]:
        """A future resolved with the first ReplyWritten of `tenant` whose reply_to is `reply_to`.
        Register it before publishing what the reply answers; it is dropped on leaving the block."""
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        key = (tenant, reply_to)
        self._waiting.setdefault(key, []).append(future)
        try:
            yield future
        finally:
            waiting = self._waiting.get(key, [])
            if future in waiting:
                waiting.remove(future)
            if not waiting:
                self._waiting.pop(key, None)
            if not future.done():
                future.cancel()

    def notify(self, notification: NotificationBase) -> None:
        if not isinstance(notification, ReplyWritten):
            return
        for future in self._waiting.get((notification.tenant, notification.reply_to), ()):
            if not future.done():
                future.set_result(notification)


# ---------------------------------------------------------------- live sockets


def live_event(n: NotificationBase) -> dict[str, Any] | None:
    """The live-feed event for a notification (None: not shown on the feed). Only ids, versions,
    the kind of change and who made it: the same thin facts the stream carries, never state."""
    base: dict[str, Any] = {"id": n.id, "at": n.at.isoformat(), "version": n.version, "actor": n.actor}
    if isinstance(n, TicketChanged):
        return {"kind": "handoff" if n.change == "handed_off" else "ticket", **base, "change": n.change}
    if isinstance(n, ReplyWritten):
        return {"kind": "reply", **base, "session": n.session, "reply_to": n.reply_to, "ticket_id": n.ticket_id}
    if isinstance(n, FactChanged):
        return {"kind": "fact", **base, "change": n.change}
    if isinstance(n, OutageChanged):
        return {"kind": "outage", **base, "change": n.change, "node_id": n.node_id}
    if isinstance(n, TaskChanged):
        return {"kind": "handoff" if n.change == "handed_off" else "task", **base, "change": n.change,
                "task_id": n.id}
    return None


class LiveSubscription:
    """One socket's queue: at most `size` events; when full the oldest is dropped and the next
    event sent carries `missed` (how many were dropped before it)."""

    def __init__(self, tenant: str, size: int) -> None:
        self.tenant = tenant
        self.size = max(1, size)
        self._queue: deque[dict[str, Any]] = deque()
        self._ready = asyncio.Event()
        self._missed = 0
        self.dropped = 0

    def put(self, event: dict[str, Any]) -> None:
        if len(self._queue) >= self.size:
            self._queue.popleft()
            self._missed += 1
            self.dropped += 1
        self._queue.append(event)
        self._ready.set()

    def pending(self) -> int:
        return len(self._queue)

    async def get(self) -> dict[str, Any]:
        while not self._queue:
            self._ready.clear()
            await self._ready.wait()
        event = self._queue.popleft()
        if self._missed:
            event = {**event, "missed": self._missed}
            self._missed = 0
        return event


class LiveHub:
    """The live sockets of this process, by tenant."""

    def __init__(self, queue_size: int = 256) -> None:
        self.queue_size = queue_size
        self._subs: dict[str, set[LiveSubscription]] = {}

    def sockets(self, tenant: str | None = None) -> int:
        if tenant is not None:
            return len(self._subs.get(tenant, ()))
        return sum(len(s) for s in self._subs.values())

    @contextlib.contextmanager
    def subscribe(self, tenant: str) -> Iterator[LiveSubscription]:
        sub = LiveSubscription(tenant, self.queue_size)
        self._subs.setdefault(tenant, set()).add(sub)
        try:
            yield sub
        finally:
            subs = self._subs.get(tenant)
            if subs is not None:
                subs.discard(sub)
                if not subs:
                    self._subs.pop(tenant, None)

    def notify(self, notification: NotificationBase) -> None:
        subs = self._subs.get(notification.tenant)
        if not subs:
            return
        event = live_event(notification)
        if event is None:
            return
        for sub in list(subs):
            sub.put(event)
