"""The gateway's own side of the notification streams (which live on the FalkorDB server), beside
what its process context (relay_graph.usecases.context.Deps) holds for every process (the bytes
Redis client, the publisher, the outbox every announcement goes through): FastStream's FastAPI
integration (`router`, a RedisRouter the app includes: its broker is started and stopped with the
app's lifespan, and publishes the gateway's notifications), and the process's one
stream tail feeding the chat waiters and the live sockets (see live_feed.py)."""

from __future__ import annotations

import asyncio
import logging
from typing import ContextManager

import redis.asyncio as aioredis
from faststream.redis import RedisClusterBroker
from faststream.redis.fastapi import RedisRouter

from relay_graph.runtime.cluster import is_cluster
from relay_graph.runtime.streams import ReplyWritten

from .live_feed import LiveHub, ReplyWaiters, StreamTail

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
        return RedisClusterRouter(startup_nodes=seeds, username=kw.get("username"), password=kw.get("password"),
                                  socket_connect_timeout=kw.get("socket_connect_timeout") or 5, **common)
    kw = redis.connection_pool.connection_kwargs
    return RedisRouter(host=kw.get("host", "127.0.0.1"), port=int(kw.get("port", 6379)),
                       password=kw.get("password"), username=kw.get("username"),
                       socket_connect_timeout=kw.get("socket_connect_timeout") or 5, **common)


class Feed:
    def __init__(self, redis: aioredis.Redis, *, live_queue_size: int = 256) -> None:
        self.redis = redis
        self.router = _router(redis)
        self.waiters = ReplyWaiters()
        self.hub = LiveHub(queue_size=live_queue_size)
        self.tail = StreamTail(lambda: self.redis, [self.waiters.notify, self.hub.notify])

    # What the chat use case waits for a reply with (relay_graph.usecases.chat.Replies).
    async def start(self) -> None:
        await self.tail.start()

    def expect(self, tenant: str, episode_id: str) -> ContextManager[asyncio.Future[ReplyWritten]]:
        return self.waiters.expect(tenant, episode_id)

    async def close(self) -> None:
        await self.tail.stop()
        try:
            await self.router.broker.stop()  # the lifespan stops it too; a bare app's Feed has only this
        except Exception as exc:  # noqa: BLE001 - closing goes on
            log.debug("stopping the stream broker: %s", exc)
