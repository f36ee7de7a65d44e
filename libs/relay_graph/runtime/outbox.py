"""The outbox: a graph write and its announcement never part.

Every announcement (a change notification for the streams) is kept in the tenant's graph, as an
`Outbox` node, before it is published, and leaves once it is on its stream. A publish that fails
after the write (the streams refusing entries, the process killed) loses nothing: a relay, which
every gateway and agent replica runs, publishes what is still kept. A chat turn's announcement is
kept by the very statement that numbers the turn (queries/chat.py); every other one by
`Outbox.announce`, in one graph write right after the write it announces.

Taking a published announcement out costs no graph write of its own: the process remembers it and
the next `announce` to the same tenant takes it out in the statement that keeps the new ones; what
is left is taken out by the process's relay within a second (`flush`). A process that dies before
leaves them to another replica's relay, which publishes them again (consumers drop the copy).

Two publishing the same kept announcement (the process that kept it and a relay, or two relays)
send the same notification id, and consumers drop the copy. A relay leaves an announcement alone
for `older_than_s` so the process that kept it publishes it first.

The relay's work follows the writes, never the number of tenants. Keeping an announcement first
marks its tenant in a Redis sorted set (PENDING_TENANTS, score = when), on every announce; a pass
reads only the tenants marked at least `older_than_s` ago (the process that kept an announcement
publishes it first), a bounded number of them, publishes what they kept, and takes a tenant's mark
out as soon as its outbox is empty, unless it was marked again meanwhile (a compare-and-remove on
the score). An idle tenant is never read. A full sweep of every graph (a backstop for a mark lost
with the server's data) runs rarely (`sweep_every_s`, an hour by default) and in bounded batches,
`sweep_batch` graphs per pass, until it has been round them all."""

from __future__ import annotations

import asyncio
import json
import logging
from collections import defaultdict
from typing import Any, Awaitable, Callable, Iterable

import redis.asyncio as aioredis

from relay_graph.runtime import tenant_data
from relay_graph.runtime.times import now_ms
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import Unavailable
from relay_graph.runtime.metrics import catalogue as metrics
from relay_graph.runtime.queries import outbox as q
from relay_graph.runtime.streams import NotificationBase, Publisher, TurnReceived, decode, encode
from relay_graph.runtime.tenancy import GRAPH_PREFIX, TENANT_RE, validate_tenant

log = logging.getLogger("relay_graph.runtime.outbox")

PENDING_TENANTS = "relay:outbox:tenants"  # sorted set: tenant -> when it last kept an announcement (ms)
tenant_data.declare(tenant_data.Member("outbox pending mark", PENDING_TENANTS))

Publish = Callable[[list[NotificationBase]], Awaitable[Any]]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


async def publish_all(publisher: Publisher, notifications: list[NotificationBase]) -> None:
    """Publish notifications of any kinds: one round trip per kind (Publisher.publish_many)."""
    by_kind: dict[type, list[NotificationBase]] = defaultdict(list)
    for n in notifications:
        by_kind[type(n)].append(n)
    for group in by_kind.values():
        if len(group) == 1:
            await publisher.publish(group[0])
        else:
            await publisher.publish_many(group)


class Outbox:
    """What a process announces through. `publish` sends a list of notifications (any kinds);
    `redis` holds the pending-tenants marker (the streams' server). enabled=False publishes
    straight after the write (the path before the outbox)."""

    def __init__(self, client: GraphClient, redis: aioredis.Redis, publish: Publish, *, enabled: bool = True):
        self.client = client
        self.redis = redis
        self.publish = publish
        self.enabled = enabled
        self._published: dict[str, list[str]] = {}  # tenant -> published, not yet taken out
        self._sweep: list[str] = []  # the graphs the running sweep has still to read (none: not sweeping)

    async def announce(self, tenant: str, notifications: Iterable[NotificationBase], *, strict: bool = False) -> bool:
        """Keep the notifications (one graph write), publish them, take them out. True: they are on
        their streams. False: the publish failed and they are kept for the relay (nothing is lost);
        strict=True raises Unavailable then instead (the caller answers 503). Keeping them failing
        (FalkorDB not answering) raises: the write they announce may be gone with it."""
        items = list(notifications)
        if not items:
            return True
        await self.client.check_tenant(tenant)  # a deleted tenant is not marked again
        if not self.enabled:
            await self.publish(items)
            return True
        await self._mark(tenant)  # before the node: no node is ever unmarked
        done = self._published.pop(tenant, [])
        try:
            await self.client.run(tenant, q.KEEP, {"at_ms": now_ms(), "done": done, "items": [
                {"notification_id": str(n.notification_id), "payload": encode(n)} for n in items]})
        except BaseException:
            self._published.setdefault(tenant, []).extend(done)
            raise
        try:
            await self.publish(items)
        except Exception as exc:  # noqa: BLE001 - kept: the relay publishes them
            if strict:
                raise Unavailable("the notification streams are not taking entries; the change is stored and "
                                  "will be announced shortly") from exc
            log.warning("could not publish %d announcement(s) of %s now (%s); the outbox relay will",
                        len(items), tenant, exc)
            return False
        await self.done(tenant, [str(n.notification_id) for n in items])
        return True

    async def publish_kept(self, tenant: str, notification: NotificationBase) -> None:
        """Publish an announcement its own write kept (a chat turn's, queries/chat.py) and take it
        out. Unavailable when the streams refuse it: it stays kept, and the relay publishes it."""
        await self.publish([notification])
        await self.done(tenant, [str(notification.notification_id)])

    async def done(self, tenant: str, notification_ids: list[str]) -> None:
        """Published: they leave the outbox, with this process's next write to the tenant or its
        relay's next `flush`."""
        self._published.setdefault(tenant, []).extend(notification_ids)

    async def flush(self) -> None:
        """Take out what this process published and no write took out yet (one statement per
        tenant). Failing to only means a relay sends them again (consumers drop the copy)."""
        for tenant in list(self._published):
            ids = self._published.pop(tenant, [])
            if ids:
                await self._take_out(tenant, ids)

    async def _take_out(self, tenant: str, notification_ids: list[str]) -> None:
        try:
            await self.client.run(tenant, q.DONE, {"ids": notification_ids})
        except Exception as exc:  # noqa: BLE001
            log.warning("could not take %d published announcement(s) of %s out of the outbox: %s",
                        len(notification_ids), tenant, exc)

    async def mark(self, tenant: str) -> None:
        """Mark a tenant as having kept announcements (a write that keeps its own, as chat's does)."""
        await self._mark(validate_tenant(tenant))

    async def _mark(self, tenant: str) -> None:
        # Every time: a relay takes a mark out as soon as the outbox is empty, so a mark this process
        # made a moment ago may be gone already.
        await self.redis.zadd(PENDING_TENANTS, {tenant: now_ms()})

    async def publish_pending(self, tenant: str, *, older_than_s: float = 2.0, limit: int = 200) -> tuple[int, int]:
        """Publish the tenant's kept announcements older than `older_than_s` and take them out.
        (published, left): left > 0 when the publish failed (they stay for the next pass)."""
        rows = await self.client.run(tenant, q.PENDING, {"before_ms": now_ms() - int(older_than_s * 1000),
                                                         "limit": limit})
        if not rows:
            return 0, 0
        notifications = []
        for row in rows:
            try:
                notifications.append(_notification(tenant, row))
            except Exception as exc:  # noqa: BLE001 - never published as it is: drop it, loudly
                log.error("dropping an outbox entry of %s that is not a notification (%s): %r", tenant, exc, row)
                await self._take_out(tenant, [_text(row["notification_id"])])
        try:
            await self.publish(notifications)
        except Exception as exc:  # noqa: BLE001
            log.warning("outbox relay: %d announcement(s) of %s still not published: %s", len(rows), tenant, exc)
            return 0, len(notifications)
        await self._take_out(tenant, [str(n.notification_id) for n in notifications])
        return len(notifications), 0

    async def relay_pass(self, *, older_than_s: float = 2.0, sweep: bool = False, batch: int = 500,
                         sweep_batch: int = 200, keep_s: float | None = None) -> int:
        """One pass of the relay: up to `batch` tenants marked at least `older_than_s` ago, and with
        `sweep` (or while a sweep is under way) the next `sweep_batch` graphs of a full sweep.
        Returns how many announcements it published. (`keep_s` is accepted and ignored: a mark
        leaves once its tenant's outbox is empty, not after a time.)"""
        await self.flush()  # first: what this process published is not published again
        marked = await self.redis.zrangebyscore(PENDING_TENANTS, "-inf", now_ms() - int(older_than_s * 1000),
                                                start=0, num=batch, withscores=True)
        scores = {_text(t): int(score) for t, score in marked}
        tenants = set(scores)
        if sweep and not self._sweep:
            names = await self.client.all_graphs()
            self._sweep = sorted(t for t in (n[len(GRAPH_PREFIX):] for n in names if n.startswith(GRAPH_PREFIX))
                                 if TENANT_RE.fullmatch(t))
        if self._sweep:
            tenants.update(self._sweep[:sweep_batch])
            del self._sweep[:sweep_batch]
        published = found = 0
        for tenant in sorted(tenants):
            try:
                validate_tenant(tenant)
                # A marked tenant whose graph is not there has no outbox; reading it would make one.
                if not await self.client.graph_exists(tenant):
                    if tenant in scores:
                        await self._unmark(tenant, scores[tenant])
                    continue
                sent, left = await self.publish_pending(tenant, older_than_s=older_than_s)
                published += sent
                found += sent + left
                if left:
                    await self.redis.zadd(PENDING_TENANTS, {tenant: now_ms()})  # stay marked: try again
                elif tenant in scores and not (await self.client.run(tenant, q.COUNT))[0]["kept"]:
                    await self._unmark(tenant, scores[tenant])
            except Exception as exc:  # noqa: BLE001 - the next pass tries again; other tenants go on
                log.warning("outbox of %s: %s", tenant, exc)
        metrics.OUTBOX_PENDING.set(found)
        metrics.OUTBOX_RELAYED.add(published)
        if published:
            log.info("outbox relay published %d pending announcement(s)", published)
        return published

    async def _unmark(self, tenant: str, score: int) -> None:
        """The tenant's mark out, unless a writer marked it again since it was read (its new
        announcement may not be in the graph yet)."""
        await self.redis.eval(_UNMARK, 1, PENDING_TENANTS, tenant, score)

    async def relay_loop(self, stop: asyncio.Event, *, every_s: float = 1.0, older_than_s: float = 2.0,
                         sweep_every_s: float = 3600.0, sweep_batch: int = 200, **_: Any) -> None:
        """Run relay passes until `stop` is set (every replica runs one); a full sweep every
        `sweep_every_s`, `sweep_batch` graphs a pass."""
        loop = asyncio.get_running_loop()
        next_sweep = loop.time() + sweep_every_s
        while not stop.is_set():
            sweep = loop.time() >= next_sweep
            try:
                await self.relay_pass(older_than_s=older_than_s, sweep=sweep, sweep_batch=sweep_batch)
                if sweep:
                    next_sweep = loop.time() + sweep_every_s
            except Exception as exc:  # noqa: BLE001 - FalkorDB/Redis not answering: next time
                log.debug("outbox relay: %s", exc)
            try:
                await asyncio.wait_for(stop.wait(), every_s)
            except asyncio.TimeoutError:
                pass
        try:
            await self.flush()
        except Exception as exc:  # noqa: BLE001 - another replica's relay publishes them again
            log.debug("outbox flush on stop: %s", exc)


# ZREM if the member's score is still the one read (scores are whole milliseconds).
_UNMARK = """local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s and tonumber(s) == tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0"""


def _notification(tenant: str, row: dict[str, Any]) -> NotificationBase:
    if row.get("payload"):
        n = decode(row["payload"])
        if n.tenant != tenant:
            raise ValueError(f"kept in {tenant}'s graph but for {n.tenant}")
        return n
    # a chat turn's (queries/chat.py ASSIGN_SEQ): its fields, not a payload
    return TurnReceived(tenant=tenant, id=row["episode_id"], version=int(row["seq"]), session=row["session"],
                        customer=row["customer"], actor="customer", notification_id=row["notification_id"])
