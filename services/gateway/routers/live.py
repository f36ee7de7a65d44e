"""WS /v1/tenants/{t}/live: the tenant's changes as they happen, one JSON object per change.

The key comes in the `Authorization: Bearer` header or, for browsers that cannot set headers, as
`?token=`. The socket is accepted and then closed with 4401 (no or a bad key), 4403 (another
tenant's key, or the admin key), 4429 (rate limited) or 1013 (the streams are not answering), so a
client can tell why. Events come from the process's one stream tail (live_feed.py), filtered by the
tenant the key authenticates."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re

from fastapi import APIRouter, WebSocket
from starlette.websockets import WebSocketDisconnect, WebSocketState

from relay_graph.runtime.errors import RelayError
from relay_graph.usecases.context import Deps

from ..errors import Forbidden, RateLimited, Unauthorized
from ..feed import Feed

log = logging.getLogger("relay.gateway.live")

router = APIRouter(tags=["live"])

CLOSE_UNAUTHORIZED = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_RATE_LIMITED = 4429
CLOSE_TRY_AGAIN = 1013
_BEARER = re.compile(r"^\s*bearer\s+(\S+)\s*$", re.I)


_TOKEN_IN_QUERY = re.compile(r"([?&]token=)[^&\s\"]*", re.I)


class RedactTokens(logging.Filter):
    """uvicorn logs a socket's path with its query (`"WebSocket /v1/tenants/t/live?token=..."`);
    a key must not end up in the logs."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = _TOKEN_IN_QUERY.sub(r"\1***", record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_TOKEN_IN_QUERY.sub(r"\1***", a) if isinstance(a, str) else a for a in record.args)
        return True


def redact_tokens_in_server_logs() -> None:
    """Installs RedactTokens on uvicorn's logger (once per process)."""
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, RedactTokens) for f in logger.filters):
        logger.addFilter(RedactTokens())


def socket_token(websocket: WebSocket) -> str | None:
    """The key from `Authorization: Bearer <key>`, else from `?token=`. A header that is there but
    not a bearer token counts as a bad key (it is not silently ignored for the query)."""
    header = websocket.headers.get("authorization")
    if header is not None:
        m = _BEARER.match(header)
        return m.group(1) if m else ""
    return websocket.query_params.get("token")


def _close_code(exc: RelayError) -> int:
    if isinstance(exc, Unauthorized):
        return CLOSE_UNAUTHORIZED
    if isinstance(exc, Forbidden):
        return CLOSE_FORBIDDEN
    if isinstance(exc, RateLimited):
        return CLOSE_RATE_LIMITED
    return CLOSE_TRY_AGAIN


async def _refuse(websocket: WebSocket, code: int, reason: str) -> None:
    await websocket.accept()
    # A close reason is at most 123 bytes.
    await websocket.close(code, reason.encode()[:123].decode(errors="ignore"))


@router.websocket("/v1/tenants/{t}/live")
async def live(websocket: WebSocket, t: str) -> None:
    deps: Deps | None = getattr(websocket.app.state, "deps", None)
    if deps is None or deps.http is None:
        await _refuse(websocket, CLOSE_TRY_AGAIN, "the gateway is starting; retry shortly")
        return
    http = deps.http
    try:
        caller = await http.auth.tenant(socket_token(websocket), t)
        await http.admit(caller)
        await http.feed.tail.start()
    except RelayError as exc:
        await _refuse(websocket, _close_code(exc), exc.message)
        return
    except Exception as exc:  # the key store did not answer
        log.warning("live socket refused: %r", exc)
        await _refuse(websocket, CLOSE_TRY_AGAIN, "not ready; retry shortly")
        return
    tenant: str = caller.tenant  # type: ignore[assignment]

    await pump(websocket, http.feed, tenant)


async def pump(websocket: WebSocket, feed: Feed, tenant: str, keep=None, *, on_subscribed=None) -> None:
    """Accepts the socket (unless `on_subscribed` is given: it is awaited instead, on a socket the
    caller accepted) and sends it the tenant's events (those `keep(event)` passes, when given)
    until the client leaves."""
    # Subscribed before the handshake completes: whatever happens once the client is connected reaches it.
    with feed.hub.subscribe(tenant) as sub:
        if on_subscribed is None:
            await websocket.accept()
        else:
            await on_subscribed()

        async def send() -> None:
            while True:
                event = await sub.get()
                if keep is None or await keep(event):
                    await websocket.send_text(json.dumps(event))

        async def receive() -> None:
            # Nothing is expected from the client; this only notices that it left.
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    return

        tasks = [asyncio.create_task(send()), asyncio.create_task(receive())]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect, Exception):
                    await task
    if websocket.application_state == WebSocketState.CONNECTED and websocket.client_state == WebSocketState.CONNECTED:
        with contextlib.suppress(Exception):
            await websocket.close()
