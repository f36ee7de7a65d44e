"""The dead-letter streams: where an entry goes when it cannot be decoded or keeps failing.

A dead letter keeps the original entry's fields as they were and adds `dlq.*` fields: the error,
the original stream and entry id, the group and consumer that gave up, and the delivery count.
Writing it and acknowledging the original happen in one MULTI, so an entry is never both gone
from the pending list and missing from the dead letters.
"""

from __future__ import annotations

import logging
from typing import Any

import redis.asyncio as aioredis
from pydantic import BaseModel

from relay_graph.runtime.streams.keys import dead_letter_stream, error_key
from relay_graph.runtime.times import utcnow

log = logging.getLogger("relay_graph.runtime.streams")

MAX_ERROR_CHARS = 4_000


class DeadLetter(BaseModel):
    id: str
    stream: str
    original_id: str
    group: str
    consumer: str
    deliveries: int
    error: str
    at: str
    fields: dict[str, str]


async def dead_letter(
    redis: aioredis.Redis,
    *,
    stream: str,
    group: str,
    consumer: str,
    entry_id: str,
    fields: dict[Any, Any],
    error: str,
    deliveries: int,
    maxlen: int,
) -> str:
    """Copy the entry to its stream's dead letters with the error, then XACK the original."""
    dlq = dead_letter_stream(stream)
    error = error[:MAX_ERROR_CHARS]
    record: dict[Any, Any] = dict(fields)
    record.update(
        {
            "dlq.error": error,
            "dlq.stream": stream,
            "dlq.original_id": entry_id,
            "dlq.group": group,
            "dlq.consumer": consumer,
            "dlq.deliveries": str(deliveries),
            "dlq.at": utcnow().isoformat(),
        }
    )
    # Original field names could collide with ours only in a hand-made entry; ours win.
    for key in [k for k in record if isinstance(k, bytes) and k.decode("utf-8", "replace").startswith("dlq.")]:
        record.pop(key)
    async with redis.pipeline(transaction=True) as pipe:
        pipe.xadd(dlq, record, maxlen=maxlen, approximate=True)
        pipe.xack(stream, group, entry_id)
        pipe.delete(error_key(group, stream, entry_id))
        result = await pipe.execute()
    dlq_id = result[0].decode() if isinstance(result[0], bytes) else result[0]
    log.error(
        "dead-lettered %s %s (group %s, %d deliveries) to %s as %s: %s",
        stream, entry_id, group, deliveries, dlq, dlq_id, error,
    )
    return dlq_id


def _s(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


async def read_dead_letters(redis: aioredis.Redis, stream: str, count: int = 100) -> list[DeadLetter]:
    """The newest dead letters of a stream, newest first (the reader of what dead_letter writes)."""
    rows = await redis.xrevrange(dead_letter_stream(stream), count=count)
    out = []
    for dlq_id, raw in rows:
        fields = {_s(k): _s(v) for k, v in raw.items()}
        out.append(
            DeadLetter(
                id=_s(dlq_id),
                stream=fields.pop("dlq.stream", stream),
                original_id=fields.pop("dlq.original_id", ""),
                group=fields.pop("dlq.group", ""),
                consumer=fields.pop("dlq.consumer", ""),
                deliveries=int(fields.pop("dlq.deliveries", "0") or 0),
                error=fields.pop("dlq.error", ""),
                at=fields.pop("dlq.at", ""),
                fields=fields,
            )
        )
    return out
