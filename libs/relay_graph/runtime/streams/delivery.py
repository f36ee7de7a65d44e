"""What FastStream's subscribers do not do for us: one broker middleware around each entry
(`DeliveryMiddleware`, with the app it serves in service.py), and what it works with here: the
Delivery a handler is given, the backoff, the heartbeat script and the errors that are not a
message's fault.

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

import contextvars
import logging
import random
from dataclasses import dataclass
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from relay_graph.runtime.errors import Unavailable
from relay_graph.runtime.streams.notifications import Notification

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


def text(value: Any) -> str:
    """A Redis reply's bytes as text (anything else as its str)."""
    return value.decode() if isinstance(value, bytes) else str(value)
