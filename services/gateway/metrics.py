"""The gateway's metrics: `GET /metrics` (Prometheus text, no key, like /healthz), the HTTP series
of every request, and the task that keeps the snapshot of what is read from Redis
(relay_graph.runtime.metrics).

A request is counted under its route's template (`/v1/tenants/{t}/chat`), never its raw path,
which carries tenant ids and customers' names; a request no route matched is `unmatched`. The
method is one of the known ones or `_OTHER`, the status its class (`2xx` ... `5xx`), so the
series stay a few hundred whatever clients send. WebSockets (the live feed) are not requests here:
a socket lives for hours.

The gateway's snapshot covers every stream and group, the dead letters, FalkorDB's memory and
graphs: it is the one process that reports the whole system; each agent reports its own group.
"""

from __future__ import annotations

import asyncio
import time

from fastapi import APIRouter, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from relay_graph.runtime.metrics import CONTENT_TYPE, exposition
from relay_graph.runtime.metrics import catalogue as m
from relay_graph.runtime.metrics.snapshot import refresh_loop
from relay_graph.usecases.context import Deps

from .settings import GatewaySettings
from .tracing import KNOWN_METHODS, route_template

router = APIRouter(tags=["health"])
UNMATCHED = "unmatched"
CHAT_OUTCOMES = ("replied", "timed_out", "not_waited")


@router.get("/metrics", include_in_schema=False)
def metrics() -> Response:
    # A plain `def`: FastAPI runs it in its threadpool, where the gauges' callbacks may take their
    # few milliseconds without holding the event loop.
    return Response(exposition(), media_type=CONTENT_TYPE)


def _method(scope: Scope) -> str:
    method = str(scope.get("method", "")).upper()
    return method if method in KNOWN_METHODS else "_OTHER"


def status_class(status: int) -> str:
    return f"{status // 100}xx" if 100 <= status < 600 else "other"


class MetricsMiddleware:
    """ASGI middleware: relay_http_requests_total and relay_http_request_duration_seconds."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status: int | None = None

        async def watched_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start" and status is None:
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, watched_send)
        except Exception:
            status = status or 500  # the error middleware outside answers 500
            raise
        finally:
            labels = {"route": route_template(scope) or UNMATCHED, "method": _method(scope),
                      "status_class": status_class(status or 500)}
            m.HTTP_REQUESTS.add(1, labels)
            m.HTTP_DURATION.record(time.perf_counter() - started, labels)


async def _graph_count(deps: Deps) -> int:
    memory = await deps.open()
    return len(await memory.client.all_graphs())


def start_snapshot(deps: Deps, settings: GatewaySettings, stop: asyncio.Event) -> asyncio.Task:
    """The refresh of the whole system's snapshot, until `stop` (run by the app's lifespan)."""
    m.zero(m.CHAT_TURNS, [{"outcome": o} for o in CHAT_OUTCOMES])

    async def graphs() -> int:
        return await _graph_count(deps)

    return asyncio.create_task(refresh_loop(deps.redis, stop, every_s=settings.metrics_every_s, count_graphs=graphs))
