"""The gateway's handle on the notification streams (which live on the FalkorDB server): a bytes
Redis client opened on first need (the stream tail, the outbox's marker, readiness), FastStream's
FastAPI integration (`router`, a RedisRouter the app includes: its broker is started and stopped
with the app's lifespan) whose broker publishes every notification (BrokerPublisher), the outbox
every announcement goes through (relay_graph.runtime.outbox: kept in the graph until it is on its stream),
and the process's one stream tail feeding the chat waiters and the live sockets (see
live_feed.py)."""

from __future__ import annotations

import logging
from typing import Awaitable, Callable

import redis.asyncio as aioredis
from faststream.redis import RedisClusterBroker
from faststream.redis.fastapi import RedisRouter

from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.outbox import Outbox, publish_all
from relay_graph.runtime.cluster import is_cluster
from relay_graph.runtime.streams import BrokerPublisher, NotificationBase, Publisher, connect

from .live_feed import LiveHub, ReplyWaiters, StreamTail
from .settings import GatewaySettings

log = logging.getLogger("relay.gateway")


class RedisClusterRouter(RedisRouter):
    """FastStream's FastAPI integration over a Redis Cluster (as its RedisSentinelRouter is over
    Sentinel): the same router, a cluster broker."""

    broker_class = RedisClusterBroker  # type: ignore[assignment]


def _router(redis: aioredis.Redis) -> RedisRouter:
    """The router on the server (or cluster) `redis` is connected to, as the same user."""
    common = {"schema_url": None, "include_in_schema": False, "logger": None}
    if is_cluster(redis):
        seeds = [(n.host, n.port) for n in redis.nodes_manager.startup_nodes.values()]
        kw = redis.nodes_manager.connection_kwargs
        return RedisClusterRouter(startup_nodes=seeds, password=kw.get("password"),
                                  socket_connect_timeout=kw.get("socket_connect_timeout") or 5, **common)
    kw = redis.connection_pool.connection_kwargs
    return RedisRouter(host=kw.get("host", "127.0.0.1"), port=int(kw.get("port", 6379)),
                       password=kw.get("password"), username=kw.get("username"),
                       socket_connect_timeout=kw.get("socket_connect_timeout") or 5, **common)


class Bus:
    def __init__(self, settings: GatewaySettings, *, redis: aioredis.Redis | None = None,
                 graph: Callable[[], Awaitable[GraphClient]] | None = None) -> None:
        self.settings = settings
        self.owns_redis = redis is None
        self._redis = redis
        self._publisher: BrokerPublisher | None = None
        self.router = _router(self.redis())
        self._graph = graph  # the graph client the outbox keeps announcements in (the backend's)
        self._outbox: Outbox | None = None
        self.waiters = ReplyWaiters()
        self.hub = LiveHub(queue_size=settings.live_queue_size)
        self.tail = StreamTail(self.redis, [self.waiters.notify, self.hub.notify])

    def redis(self) -> aioredis.Redis:
        # Building the client does not connect; it connects (and reconnects) on use.
        if self._redis is None:
            self._redis = connect(self.settings)
        return self._redis

    @property
    def publisher(self) -> BrokerPublisher | Publisher:
        if self._publisher is None:
            # On a cluster an acknowledged announcement must be on a replica of its shard too
            # (WAIT), which FastStream's cluster producer does not do: the streams' own Publisher
            # publishes there, through the same cluster client.
            self._publisher = (Publisher(self.redis()) if is_cluster(self.redis())
                               else BrokerPublisher(self.router.broker))
        return self._publisher

    async def publish(self, notification: NotificationBase) -> str:
        """XADD the notification, outside the outbox (a chat turn's announcement, kept by the
        statement that stored the turn); Unavailable if the streams cannot be reached."""
        return await self.publisher.publish(notification)

    async def _send(self, notifications: list[NotificationBase]) -> None:
        await publish_all(self.publisher, notifications)

    async def outbox(self) -> Outbox:
        if self._outbox is None:
            if self._graph is None:
                raise RuntimeError("this Bus was built without a graph client; it cannot keep announcements")
            self._outbox = Outbox(await self._graph(), self.redis(), self._send, enabled=self.settings.outbox)
        return self._outbox

    async def announce(self, tenant: str, notifications: list[NotificationBase]) -> bool:
        """Announce a write that succeeded, through the outbox: False when the streams refused
        it now (it is kept, and the relay publishes it). Raises only when it could not be kept."""
        return await (await self.outbox()).announce(tenant, notifications)

    async def close(self) -> None:
        await self.tail.stop()
        try:
            await self.router.broker.stop()  # the lifespan stops it too; a bare app's Bus has only this
        except Exception as exc:  # noqa: BLE001 - closing goes on
            log.debug("stopping the stream broker: %s", exc)
        self._publisher = None
        if self.owns_redis and self._redis is not None:
            redis, self._redis, self._publisher, self._outbox = self._redis, None, None, None
            await redis.aclose()
