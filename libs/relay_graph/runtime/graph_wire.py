"""Read queries on the wire: the parameter header, the compact result set, and the connections
they travel on.

`GraphClient.run` sends every read-only query this way, on these connections; writes go in the
same text and are read by the same `rows`, on the redis-py pool (a 1,000-fact batch spent more of
its time in the falkordb client's parameter text and parser than in the server).
Why: recall makes five reads per question, and redis-py's pooled `execute_command` plus
falkordb's result parser (a coroutine per value) cost about 0.2-0.5 ms of the event loop's time
per read on top of the server's (measured on recall's reads: NAMES 0.43 ms on a bare socket,
0.79 ms through redis-py, 0.89 ms parsed by falkordb; the one-statement fusion 5.6 / 6.1 /
6.6 ms). Sent this way, recall at 100,000 facts came back 1.5 ms sooner on average and 2.3 ms
at p95 (four alternated runs of 200 questions). The protocol itself is hiredis's, with
redis-py's own error classes, so callers see the exceptions they saw before: `ResponseError`
(and its subclasses) from the server, `redis.exceptions.ConnectionError` when it cannot be
reached.

The text sent is the falkordb client's: `CYPHER name=value ... query`, strings in double quotes
with backslashes and double quotes escaped, map keys and parameter names in backticks (a name
with a backtick is refused, as there); bytes go as the text they hold (falkordb would send
Python's `b'...'` as it is). Results: strings, integers, floats, booleans, null,
lists, maps, points and vectors are read here; a node, edge, path or temporal value is handed to
falkordb's parser (recall's reads return none).
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

import hiredis
from falkordb.asyncio.query_result import parse_scalar as falkordb_parse_scalar
from redis._parsers.base import BaseParser
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse

# ------------------------------------------------------------------ parameters


def quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _name(key: object, what: str) -> str:
    text = key.decode() if isinstance(key, bytes) else str(key)
    if text == "":
        raise ValueError(f"Cypher {what} cannot be empty")
    if "`" in text:
        raise ValueError(f"Cypher {what} cannot contain a backtick: {text!r}")
    return text


def literal(value: Any) -> str:
    """A parameter value as Cypher text (falkordb's `stringify_param_value`, faster)."""
    kind = type(value)
    if kind is str:
        return quote(value)
    if value is None:
        return "null"
    if kind is list or kind is tuple:
        return "[" + ",".join([literal(v) for v in value]) + "]"
    if kind is dict:
        return "{" + ",".join([f"`{_name(k, 'map key')}`:{literal(v)}" for k, v in value.items()]) + "}"
    if isinstance(value, bytes):
        return quote(value.decode())
    if isinstance(value, str):  # a str subclass (an enum's value): its characters, as falkordb sends them
        return quote(value)
    if isinstance(value, (list, tuple)):
        return literal(list(value))
    if isinstance(value, dict):
        return literal(dict(value))
    return str(value)  # numbers, booleans, and values that carry their own text (episodes.VectorParam)


def params_header(params: dict[str, Any] | None) -> str:
    if not params:
        return ""
    return "CYPHER " + "".join([f"`{_name(k, 'parameter name')}`={literal(v)} " for k, v in params.items()])


# ------------------------------------------------------------------ results


class _NotScalar(Exception):
    """A node, edge, path or temporal value: falkordb's parser reads those."""


def value(cell: list) -> Any:
    """One compact result value ([type, value]) as Python."""
    kind, raw = cell[0], cell[1]
    if kind == 2 or kind == 3:  # string (decoded by the reader), integer
        return raw
    if kind == 5:
        return float(raw)
    if kind == 1:
        return None
    if kind == 6:  # a list: its strings, integers and doubles read in place (most of a recall's values)
        out = []
        for c in raw:
            k = c[0]
            out.append(c[1] if k == 2 or k == 3 else float(c[1]) if k == 5 else value(c))
        return out
    if kind == 10:
        return {raw[i]: value(raw[i + 1]) for i in range(0, len(raw), 2)}
    if kind == 4:
        return raw == "true"
    if kind == 11:
        return {"latitude": float(raw[0]), "longitude": float(raw[1])}
    if kind == 12:
        return [float(v) for v in raw]
    raise _NotScalar(kind)


def raise_for_errors(reply: Any) -> None:
    # the reader returns an error reply as the exception redis-py raises for it (not always a
    # ResponseError: NOAUTH and WRONGPASS are AuthenticationError)
    if isinstance(reply, Exception):
        raise reply
    if isinstance(reply, list) and reply and isinstance(reply[-1], Exception):
        raise reply[-1]  # a run-time error comes after the rows


async def rows(reply: list, graph: Any, plain) -> list[dict[str, Any]]:
    """The rows of a compact reply as dicts; `plain` shapes what falkordb's parser returns."""
    raise_for_errors(reply)
    if len(reply) == 1:  # statistics only
        return []
    cols = [h[1] if isinstance(h, list) else h for h in reply[0]]
    try:
        return [{c: value(v) for c, v in zip(cols, row)} for row in reply[1]]
    except _NotScalar:
        out = []
        for row in reply[1]:
            out.append({c: plain(await falkordb_parse_scalar(v, graph)) for c, v in zip(cols, row)})
        return out


# ------------------------------------------------------------------ connections


def pack(*args: str) -> bytes:
    parts = [a.encode() for a in args]
    return b"*%d\r\n" % len(parts) + b"".join([b"$%d\r\n%s\r\n" % (len(p), p) for p in parts])


class _Connection:
    __slots__ = ("reader", "writer", "parser", "loop")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.parser = hiredis.Reader(encoding="utf-8", protocolError=InvalidResponse,
                                     replyError=BaseParser.parse_error)
        self.loop = asyncio.get_running_loop()

    async def call(self, command: bytes) -> Any:
        self.writer.write(command)
        while (reply := self.parser.gets()) is False:
            data = await self.reader.read(65536)
            if not data:
                raise RedisConnectionError("FalkorDB closed the connection")
            self.parser.feed(data)
        return reply

    def close(self) -> None:
        try:
            self.writer.close()
        except RuntimeError:  # its event loop is closed, and the socket with it
            pass


class Connections:
    """At most `size` connections to one server, reused; one call at a time on each. A connection
    whose call did not end with a whole reply (cancelled, failed) is closed, never reused."""

    def __init__(self, host: str, port: int, password: str | None, size: int, *, username: str | None = None) -> None:
        self.host, self.port, self.password, self.username = host, port, password, username
        self.size = size
        self._idle: deque[_Connection] = deque()
        self._slots: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None

    def _limit(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots[0] is not loop:  # a semaphore serves one event loop
            self._slots = (loop, asyncio.Semaphore(self.size))
        return self._slots[1]

    async def _open(self) -> _Connection:
        try:
            reader, writer = await asyncio.open_connection(self.host, self.port)
        except OSError as exc:
            raise RedisConnectionError(f"cannot reach FalkorDB at {self.host}:{self.port}: {exc}") from exc
        conn = _Connection(reader, writer)
        if self.password is not None:
            try:
                auth = ("AUTH", self.username, self.password) if self.username else ("AUTH", self.password)
                raise_for_errors(await conn.call(pack(*auth)))
            except OSError as exc:  # reset while signing in (a server killed that moment): as unreachable
                conn.close()
                raise RedisConnectionError(f"lost FalkorDB at {self.host}:{self.port} while signing in: {exc}") from exc
            except BaseException:
                conn.close()
                raise
        return conn

    def _reuse(self) -> _Connection | None:
        loop = asyncio.get_running_loop()
        while self._idle:
            conn = self._idle.pop()
            if conn.loop is loop and not conn.writer.is_closing():
                return conn
            conn.close()  # made on another event loop, or closed: of no use here
        return None

    async def call(self, *args: str) -> Any:
        """One command's reply. A read may be sent twice: a reused connection that the server
        has since closed (a restart) fails before any reply, and the command goes again on a
        new one. Only read-only commands come here."""
        command = pack(*args)
        async with self._limit():
            conn = self._reuse()
            if conn is not None:
                try:
                    return await self._exchange(conn, command)
                except (RedisConnectionError, OSError):
                    pass  # closed by the server since its last use: once more, on a new connection
            conn = await self._open()
            try:
                return await self._exchange(conn, command)
            except OSError as exc:
                raise RedisConnectionError(f"lost FalkorDB at {self.host}:{self.port}: {exc}") from exc

    async def _exchange(self, conn: _Connection, command: bytes) -> Any:
        try:
            reply = await conn.call(command)
        except BaseException:
            conn.close()  # a reply may still be on its way: nobody else may read it
            raise
        self._idle.append(conn)
        return reply

    def close(self) -> None:
        while self._idle:
            self._idle.pop().close()
