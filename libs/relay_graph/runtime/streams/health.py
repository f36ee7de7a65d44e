"""What the gateway's /readyz and operators need to know about the streams."""

from __future__ import annotations

import redis.asyncio as aioredis
from pydantic import BaseModel
from redis.exceptions import ResponseError

from relay_graph.runtime.streams.keys import validate_stream


class GroupInfo(BaseModel):
    stream: str
    group: str
    consumers: int
    pending: int
    lag: int | None  # entries not yet delivered to the group (None: Redis cannot tell)


def _s(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


async def stream_groups(redis: aioredis.Redis, stream: str) -> list[GroupInfo]:
    """The consumer groups reading a stream (empty if the stream does not exist yet)."""
    try:
        rows = await redis.xinfo_groups(validate_stream(stream))
    except ResponseError as exc:
        if "no such key" in str(exc).lower():
            return []
        raise
    return [
        GroupInfo(
            stream=stream,
            group=_s(r["name"]),
            consumers=int(r["consumers"]),
            pending=int(r["pending"]),
            lag=None if r.get("lag") is None else int(r["lag"]),
        )
        for r in rows
    ]


async def missing_groups(redis: aioredis.Redis, expected: dict[str, list[str]]) -> dict[str, list[str]]:
    """`{stream: [group, ...]}` expected -> the ones that do not exist yet (empty when ready)."""
    missing: dict[str, list[str]] = {}
    for stream, groups in expected.items():
        have = {g.group for g in await stream_groups(redis, stream)}
        lacking = [g for g in groups if g not in have]
        if lacking:
            missing[stream] = lacking
    return missing
