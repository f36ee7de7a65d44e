"""Request body size limit (ASGI middleware), a token bucket per tenant (used after auth), a
per-client-address one for requests without a valid key, and the limits each tenant runs with: the
gateway's settings, overridden per tenant by the admin (`PUT /v1/tenants/{t}/limits`)."""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, replace
from typing import Any, Callable

import redis.asyncio as aioredis
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from relay_graph.runtime import tenancy, tenant_data
from relay_graph.runtime.metrics import catalogue as metrics

from .errors import RateLimited


class _TooLarge(Exception):
    pass


class BodyLimitMiddleware:
    """Answers 413 for a body over `max_bytes` without reading it: a declared Content-Length over the
    limit is refused before the app runs; an undeclared (chunked) body is counted as it streams and
    refused at the first chunk that crosses the limit, whatever the app made of the cut-off read."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._refuse(send)
            return

        seen = 0
        over = False
        started = False

        async def counted_receive() -> Message:
            nonlocal seen, over
            if over:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    over = True
                    raise _TooLarge()
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if over and not started:
                return  # the app's answer to a cut-off body is replaced by the 413 below
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except Exception:
            if not over:
                raise
        if over and not started:
            await self._refuse(send)

    async def _refuse(self, send: Send) -> None:
        body = json.dumps({"error": {
            "code": "payload_too_large",
            "message": f"the request body is over the limit of {self.max_bytes} bytes; send less per request",
        }}).encode()
        await send({"type": "http.response.start", "status": 413, "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]})
        await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class RateLimiter:
    """A token bucket per key, in this process's memory: `rate` tokens a second, at most `burst`
    (or the rate and burst a call passes: a tenant's own limits). Keys are authenticated tenants
    and the admin only, so the table is bounded by the number of tenants. `name` labels its
    refusals in relay_rate_limit_refusals_total (never the key: no tenant in the metrics)."""

    def __init__(self, rate: float, burst: int, *, clock: Callable[[], float] = time.monotonic,
                 name: str = "tenant") -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("rate must be > 0 and burst >= 1")
        self.name = name
        metrics.zero(metrics.RATE_LIMIT_REFUSALS, [{"limiter": name}])
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}

    def hit(self, key: str, *, rate: float | None = None, burst: int | None = None, who: str = "this client",
            advice: str = "") -> None:
        """Takes one token for `key` or raises RateLimited with the seconds until one is back; the
        refusal says whose bucket ran dry (`who`) and what else the caller can do (`advice`)."""
        rate = self.rate if rate is None else rate
        burst = self.burst if burst is None else burst
        now = self.clock()
        tokens, last = self._buckets.get(key, (float(burst), now))
        tokens = min(float(burst), tokens + (now - last) * rate)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            metrics.RATE_LIMIT_REFUSALS.add(1, {"limiter": self.name})
            wait = max(1, math.ceil((1.0 - tokens) / rate))
            raise RateLimited(f"over {rate:g} requests/s (burst {burst}) for {who}; retry after {wait}s{advice}",
                              retry_after=wait)
        self._buckets[key] = (tokens - 1.0, now)

    def forget(self, key: str) -> None:
        """The key's bucket starts full again (a deleted tenant's, should its name come back)."""
        self._buckets.pop(key, None)


@dataclass(frozen=True)
class Limits:
    """What one tenant may do: requests a second and their burst (shared by every key of the
    tenant), and facts in one batch request."""

    rate_per_second: float
    burst: int
    batch_max_facts: int

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


LIMITS_KEY = tenancy.ADMIN_PREFIX + "tenant-limits"  # tenant -> JSON of the limits set for it (the rest: defaults)
tenant_data.declare(tenant_data.Field("limits", LIMITS_KEY))


class LimitStore:
    """The tenants' limits: the defaults, and what the admin set per tenant (in Redis, beside the
    tenant registry). Read through a cache of `ttl` seconds; a change made here is seen at once."""

    def __init__(self, defaults: Limits, redis: Callable[[], Any], *, ttl: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.defaults = defaults
        self._redis = redis  # async: the registry's client, opened on first need
        self.ttl = ttl
        self.clock = clock
        self._cache: dict[str, tuple[float, Limits]] = {}

    async def _client(self) -> aioredis.Redis:
        return await self._redis()

    async def get(self, tenant: str) -> Limits:
        hit = self._cache.get(tenant)
        if hit is not None and self.clock() - hit[0] < self.ttl:
            return hit[1]
        raw = await (await self._client()).hget(LIMITS_KEY, tenant)
        limits = replace(self.defaults, **json.loads(raw)) if raw else self.defaults
        self._cache[tenant] = (self.clock(), limits)
        return limits

    async def overrides(self, tenant: str) -> dict[str, Any]:
        raw = await (await self._client()).hget(LIMITS_KEY, tenant)
        return json.loads(raw) if raw else {}

    async def set(self, tenant: str, overrides: dict[str, Any]) -> Limits:
        """Replaces the tenant's overrides (fields left out or null take the default)."""
        kept = {k: v for k, v in overrides.items() if v is not None}
        client = await self._client()
        if kept:
            await client.hset(LIMITS_KEY, tenant, json.dumps(kept, sort_keys=True))
        else:
            await client.hdel(LIMITS_KEY, tenant)
        self._cache.pop(tenant, None)
        return await self.get(tenant)

    def forget(self, tenant: str) -> None:
        """This process's cached limits of a deleted tenant (another gateway's cache follows within `ttl`)."""
        self._cache.pop(tenant, None)
class AddressLimiter(RateLimiter):
    """The bucket of requests that brought no valid key, per client address (a key-guessing or
    broken client gets 429 instead of an endless stream of 401s). The table is bounded: past
    `max_addresses`, the buckets that are full again (nothing to remember) are dropped, then the
    oldest."""

    def __init__(self, rate: float, burst: int, *, max_addresses: int = 100_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(rate, burst, clock=clock, name="keyless")
        self.max_addresses = max_addresses

    def hit(self, key: str) -> None:
        if key not in self._buckets and len(self._buckets) >= self.max_addresses:
            now = self.clock()
            full = [k for k, (tokens, last) in self._buckets.items()
                    if tokens + (now - last) * self.rate >= self.burst]
            for k in full or list(self._buckets)[: max(1, self.max_addresses // 10)]:
                del self._buckets[k]
        super().hit(key, who=f"requests without a valid key from {key}",
                    advice="; send a valid key as `Authorization: Bearer <key>`")
