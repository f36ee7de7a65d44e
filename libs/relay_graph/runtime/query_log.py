"""The query log every process shares: each named statement a process runs on a tenant's graph
(its name, the process, ok, rows, milliseconds, when, and its parameters when small) goes to that tenant's capped Redis stream `relay:querylog:<tenant>` on the FalkorDB
server, so the console's query drawer lists what the agents just ran, not only the gateway's own
queries (GraphClient.recent is one process's).

Entries are buffered and written in one pipeline at most every `query_log_flush_s` by a
background task, never on the query's own path; a server that is away loses log entries, never a
query. The stream is capped (MAXLEN) and expires an hour after its last entry. Parameters are kept
only when small (no embeddings), so the console can EXPLAIN a run with the values it ran with, and
PROFILE a read-only run again (PROFILE executes; a read changes nothing, a write is never profiled)."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
from dataclasses import dataclass
from typing import Any

from relay_graph.runtime import tenant_data
from relay_graph.runtime.errors import InvalidValue
from relay_graph.runtime.tenancy import TENANTS_KEY, validate_tenant

log = logging.getLogger("relay_graph.runtime.query_log")

PREFIX = "relay:querylog:"
MAX_PARAMS_CHARS = 2_000  # parameters above this (an embedding, a batch) are not kept
TTL_S = 3_600


def _at_most(limit: int) -> str:
    """A regular expression for the decimal numbers 0..limit, without leading zeros: a stream
    id's parts are unsigned 64-bit numbers, and a pattern is what the OpenAPI can state."""
    digits = str(limit)
    shorter = f"[1-9][0-9]{{0,{len(digits) - 2}}}" if len(digits) > 1 else ""
    same_length = [digits]
    for i, d in enumerate(digits):  # the same prefix, a smaller digit here, anything after
        low = 1 if i == 0 else 0
        if int(d) > low:
            smaller = str(low) if int(d) - 1 == low else f"[{low}-{int(d) - 1}]"
            rest = len(digits) - i - 1
            same_length.append(digits[:i] + smaller + (f"[0-9]{{{rest}}}" if rest else ""))
    return "(?:" + "|".join(["0", *([shorter] if shorter else []), *same_length]) + ")"


_PART = _at_most(2**64 - 1)
# A logged run's id is its entry's stream id, `<ms>-<seq>`: what XRANGE takes, nothing larger.
RUN_ID_PATTERN = f"^{_PART}-{_PART}$"
_RUN_ID = re.compile(RUN_ID_PATTERN)


def check_run_id(value: str) -> str:
    """A logged run's id (`<ms>-<seq>`, each part below 2^64); InvalidValue otherwise."""
    if not _RUN_ID.fullmatch(value):
        raise InvalidValue(f"a run id is two numbers below 2^64 joined by '-', not {value[:64]!r}")
    return value


def key(tenant: str) -> str:
    return PREFIX + validate_tenant(tenant)


def polls_key(tenant: str) -> str:
    """Housekeeping polls (Query.housekeeping: the outbox relay's, run by every process on a
    timer) go to a capped stream of their own, so they never push a person's queries out."""
    return PREFIX + validate_tenant(tenant) + POLLS_SUFFIX


POLLS_SUFFIX = ":polls"
tenant_data.declare(tenant_data.Key("query log", key))
tenant_data.declare(tenant_data.Key("query log polls", polls_key))


def process_name() -> str:
    """What runs this process: `services.resolver` -> `resolver`, anything else its script."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    name = getattr(spec, "name", None) or (sys.argv[0].rsplit("/", 1)[-1] if sys.argv and sys.argv[0] else "python")
    name = name.removesuffix(".__main__")
    return name.removeprefix("services.") if name.startswith("services.") else name.rsplit(".", 1)[-1]


VECTOR_MIN = 16  # a list of this many floats or more is an embedding


class _TooBig(Exception):
    pass


def _measure(value: Any, used: int) -> int:
    """`used` plus at least as many characters as `value` takes as JSON; raises _TooBig once past
    MAX_PARAMS_CHARS or at an embedding, so a batch's rows or a vector are never walked whole."""
    if isinstance(value, dict):
        for k, v in value.items():
            used = _measure(v, used + len(str(k)) + 3)
    elif isinstance(value, (list, tuple)):
        if len(value) >= VECTOR_MIN and all(isinstance(v, float) for v in value[:VECTOR_MIN]):
            raise _TooBig  # an embedding
        for v in value:
            used = _measure(v, used + 1)
    else:
        used += len(str(value)) + (2 if isinstance(value, str) else 0)
    if used > MAX_PARAMS_CHARS:
        raise _TooBig
    return used


def kept_params(params: dict[str, Any] | None) -> str | None:
    """The parameters as JSON when small enough to keep and free of embeddings, else None. Runs on
    every query: what is too big is found within MAX_PARAMS_CHARS characters' work, never by
    serialising it."""
    try:
        _measure(params or {}, 0)
        text = json.dumps(params or {}, separators=(",", ":"), default=str)
    except (_TooBig, TypeError, ValueError):
        return None
    return text if len(text) <= MAX_PARAMS_CHARS else None


@dataclass(frozen=True)
class LoggedQuery:
    id: str  # the stream entry's id: what PROFILE asks for
    query: str
    process: str
    ok: bool
    rows: int
    ms: float
    at_ms: int
    read_only: bool
    params: dict[str, Any] | None  # kept when small
    housekeeping: bool = False


class SharedQueryLog:
    def __init__(self, redis, *, size: int, flush_s: float, process: str | None = None):
        self.redis, self.size, self.flush_s = redis, size, flush_s
        self.process = process or process_name()
        self._buffer: list[tuple[str, dict[str, str]]] = []
        self._task: asyncio.Task | None = None
        self.dropped = 0  # entries lost to a server that did not answer

    @property
    def on(self) -> bool:
        return self.size > 0 and self.flush_s > 0

    def record(self, tenant: str, entry: dict[str, Any], *, read_only: bool, params: dict[str, Any] | None,
               housekeeping: bool = False) -> None:
        if not self.on:
            return
        fields = {"query": entry["query"], "process": self.process, "ok": "1" if entry["ok"] else "0",
                  "rows": str(entry["rows"]), "ms": str(entry["ms"]), "at_ms": str(entry["at_ms"]),
                  "ro": "1" if read_only else "0"}
        if (kept := kept_params(params)) is not None:
            fields["params"] = kept
        if housekeeping:
            fields["hk"] = "1"
        self._buffer.append((tenant, fields))
        if self._task is None or self._task.done():
            try:
                self._task = asyncio.get_running_loop().create_task(self._flush_later())
            except RuntimeError:  # no loop: nothing to flush on
                self._buffer.clear()

    async def _flush_later(self) -> None:
        await asyncio.sleep(self.flush_s)
        await self.flush()

    async def flush(self) -> None:
        batch, self._buffer = self._buffer, []
        if not batch:
            return
        try:
            # a tenant deleted since its entries were buffered (by this process or another) gets no
            # log again: an entry written now would outlive the delete by the log's TTL
            tenants = sorted({t for t, _ in batch})
            alive = {t for t, reg in zip(tenants, await self.redis.hmget(TENANTS_KEY, tenants)) if reg is not None}
            batch = [(t, f) for t, f in batch if t in alive]
            if not batch:
                return
            pipe = self.redis.pipeline(transaction=False)
            for tenant, fields in batch:
                pipe.xadd(polls_key(tenant) if "hk" in fields else key(tenant), fields, maxlen=self.size,
                          approximate=False)
            for name in {polls_key(t) if "hk" in f else key(t) for t, f in batch}:
                pipe.expire(name, TTL_S)
            await pipe.execute()
        except Exception as exc:  # noqa: BLE001 - the log must never cost a query
            self.dropped += len(batch)
            log.debug("query log entries dropped (%s)", exc)

    async def forget(self, tenant: str) -> bool:
        """Drops this process's unwritten entries of the tenant and the tenant's whole log (a
        deleted tenant, a forgotten customer whose values a run's parameters may hold); True when
        there was a log to remove. Another process's entries still in its buffer are dropped at its
        next flush once the tenant is deleted (it is no longer registered); for a forgotten
        customer of a live tenant they may start a new log, which expires as any log does."""
        self._buffer = [(t, f) for t, f in self._buffer if t != tenant]
        removed = await self.redis.delete(key(tenant))
        return bool(await self.redis.delete(polls_key(tenant)) + removed)

    async def close(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        await self.flush()


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _entry(entry_id: Any, fields: dict) -> LoggedQuery:
    f = {_s(k): _s(v) for k, v in fields.items()}
    params = f.get("params")
    return LoggedQuery(id=_s(entry_id), query=f.get("query", ""), process=f.get("process", ""), ok=f.get("ok") == "1",
                       rows=int(f.get("rows", 0)), ms=float(f.get("ms", 0)), at_ms=int(f.get("at_ms", 0)),
                       read_only=f.get("ro") == "1", params=json.loads(params) if params else None,
                       housekeeping=f.get("hk") == "1")


def _stream_order(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


async def read(redis, tenant: str, limit: int, *, housekeeping: bool = False) -> list[LoggedQuery]:
    """The tenant's last `limit` logged queries from every process, newest first; with
    `housekeeping`, the polls' stream merged in by time."""
    runs = [_entry(i, f) for i, f in await redis.xrevrange(key(tenant), count=limit)]
    if housekeeping:
        runs += [_entry(i, f) for i, f in await redis.xrevrange(polls_key(tenant), count=limit)]
        runs.sort(key=lambda r: _stream_order(r.id), reverse=True)
    return runs[:limit]


async def one(redis, tenant: str, entry_id: str) -> LoggedQuery | None:
    """One logged run by its id, from the tenant's log or, failing that, its polls' stream."""
    check_run_id(entry_id)
    for name in (key(tenant), polls_key(tenant)):
        got = await redis.xrange(name, min=entry_id, max=entry_id, count=1)
        if got:
            return _entry(*got[0])
    return None
