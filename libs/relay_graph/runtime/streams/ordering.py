"""In-order handling of notifications that share an order key (the turns of one session).

The rule: an entry may be handled only when no *earlier* entry of the same stream with the same
order key is still pending (delivered but not acknowledged) in the group.

Why that is enough: XREADGROUP `>` hands entries out in id order and puts each one in the group's
pending list in the same step, so when entry E has been delivered to anyone, every earlier entry
has been delivered too, and it is either acknowledged (done or dead-lettered) or still pending.
An earlier turn of the same session that is still pending therefore shows up in XPENDING, and E
waits until it is acknowledged. Acknowledgement happens only after a handler returned, so the
handlers of one session's turns never overlap and run in publish order, whichever replica each
turn was delivered to, and whether it came fresh or was reclaimed from a dead replica.

Cost: one XPENDING range per ordered entry, plus one XRANGE for each earlier pending entry not
seen before (entries are immutable, so their order keys are cached).
"""

from __future__ import annotations

from collections import OrderedDict

import redis.asyncio as aioredis

from relay_graph.runtime.streams.notifications import InvalidNotification
from relay_graph.runtime.streams.wire import from_fields, text_fields

PAGE = 500


def _s(value) -> str:
    return value.decode() if isinstance(value, bytes) else value


class OrderGuard:
    def __init__(self, redis: aioredis.Redis, stream: str, group: str, cache_size: int = 20_000):
        self.redis = redis
        self.stream = stream
        self.group = group
        self.cache_size = cache_size
        self._keys: OrderedDict[str, str | None] = OrderedDict()

    def remember(self, entry_id: str, key: str | None) -> None:
        self._keys[entry_id] = key
        self._keys.move_to_end(entry_id)
        while len(self._keys) > self.cache_size:
            self._keys.popitem(last=False)

    async def _pending_before(self, entry_id: str) -> list[str]:
        ids: list[str] = []
        start = "-"
        while True:
            rows = await self.redis.xpending_range(self.stream, self.group, start, "(" + entry_id, PAGE)
            ids.extend(_s(r["message_id"]) for r in rows)
            if len(rows) < PAGE:
                return ids
            start = "(" + ids[-1]

    async def _key_of(self, ids: list[str]) -> None:
        missing = [i for i in ids if i not in self._keys]
        if not missing:
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            for entry_id in missing:
                pipe.xrange(self.stream, entry_id, entry_id, count=1)
            results = await pipe.execute()
        for entry_id, rows in zip(missing, results):
            key = None
            if rows:  # an entry trimmed away can never be handled, so it blocks nothing
                try:
                    key = from_fields(text_fields(rows[0][1])).order_key()
                except InvalidNotification:
                    key = None  # goes to the dead letters on its own; blocks nothing
            self.remember(entry_id, key)

    async def blockers(self, entry_id: str, key: str) -> set[str]:
        """Earlier pending entries with the same order key."""
        earlier = await self._pending_before(entry_id)
        await self._key_of(earlier)
        return {i for i in earlier if self._keys.get(i) == key}

    async def still_pending(self, ids: set[str]) -> set[str]:
        """Which of these entries are still pending (the set only ever shrinks)."""
        if not ids:
            return set()
        ordered = sorted(ids, key=lambda i: tuple(int(p) for p in i.split("-")))
        rows = await self.redis.xpending_range(self.stream, self.group, ordered[0], ordered[-1], len(ids) + PAGE)
        pending = {_s(r["message_id"]) for r in rows}
        if len(rows) == len(ids) + PAGE:  # a crowded range: ask one by one
            pending = set()
            for i in ordered:
                if await self.redis.xpending_range(self.stream, self.group, i, i, 1):
                    pending.add(i)
        return ids & pending
