"""Tracing in the gateway: one SERVER span per HTTP request, and the process's tracer provider.

The span is named `<METHOD> <route template>` (`POST /v1/tenants/{t}/chat`), never after the raw
path, which carries tenant ids, ticket ids and customers' names; until routing has happened (and
for a request no route matches) it is just `<METHOD>`. A W3C `traceparent` the client sends becomes
its parent, so a caller's trace continues through the gateway, and everything the request does
(the chat route's `publish relay:stream:turns`, hence intake's and the resolver's handlers) hangs
under it.

Why a pure ASGI middleware and not BaseHTTPMiddleware: the latter runs the rest of the app in a
task of its own and relays the response through a memory stream, which changes how exceptions,
cancellation and context variables travel and gets in the way of streamed responses (the MCP
event stream); this one calls the app directly and only watches `send` for the status. WebSockets (the
live feed) and the lifespan pass through untouched: a socket lives for hours, a span per socket
would be one long span that says nothing.

FastAPI (0.165) has request spans of its own, on whenever a global provider is set; create_app
turns them off (`telemetry={"tracing": False}`) so there is one SERVER span per request, this one:
FastAPI's records the raw path and query (tenants, ticket ids, customers' names) and a span per
live socket.

Attributes (OpenTelemetry HTTP semantic conventions): `http.request.method`, `http.route`,
`http.response.status_code`, and `relay.tenant`: the path's tenant, recorded only when it is a
valid tenant id and the key was not refused (401/403), so a client cannot put arbitrary text into
the attributes. The span's status is ERROR for 5xx answers and for exceptions, unset otherwise.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import propagate, trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from relay_graph.runtime.agents.tracing import setup_tracing
from relay_graph.runtime.errors import InvalidTenant
from relay_graph.runtime.tenancy import validate_tenant

from .settings import GatewaySettings

TRACER_NAME = "relay.gateway"
SERVICE = "gateway"

# Any other method is reported as "_OTHER" (semantic conventions): the method is client text.
KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"})
TENANT_PARAM = "t"  # the tenant's path parameter in every /v1/tenants/{t}/... route
REFUSED = frozenset({401, 403})


def setup_gateway_tracing(settings: GatewaySettings) -> TracerProvider | None:
    """The gateway process's provider, exactly as the agents set theirs up (service name
    OTEL_SERVICE_NAME or "relay-gateway"; OTLP/HTTP export when OTEL_EXPORTER_OTLP_ENDPOINT is set
    and the exporter is installed). None: nothing is exported; trace context still propagates.
    Shut the provider down on exit so the queued spans are flushed."""
    return setup_tracing(settings, SERVICE)


def route_template(scope: Scope) -> str | None:
    """The template of the route that handled the request (set by the router in the scope),
    e.g. `/v1/tenants/{t}/chat`; None before routing or when nothing matched."""
    route = scope.get("route")
    template = getattr(route, "path_format", None) or getattr(route, "path", None)
    return template if isinstance(template, str) and template else None


def _method(scope: Scope) -> str:
    method = str(scope.get("method", "")).upper()
    return method if method in KNOWN_METHODS else "_OTHER"


def _carrier(scope: Scope) -> dict[str, str]:
    carrier: dict[str, str] = {}
    for name, value in scope.get("headers") or ():
        key = name.decode("latin-1").lower()
        # Only the propagation headers are read; keep the first, as a proxy's duplicate is not ours.
        if key in ("traceparent", "tracestate", "baggage") and key not in carrier:
            carrier[key] = value.decode("latin-1")
    return carrier


def _tenant(scope: Scope, status: int | None) -> str | None:
    if status in REFUSED:
        return None
    value = (scope.get("path_params") or {}).get(TENANT_PARAM)
    template = route_template(scope)
    if value is None or template is None or "{" + TENANT_PARAM + "}" not in template:
        return None
    try:
        return validate_tenant(value)
    except InvalidTenant:
        return None


def _span_name(method: str) -> str:
    return "HTTP" if method == "_OTHER" else method


def _name_after_route(span: Span, scope: Scope, method: str) -> None:
    template = route_template(scope)
    if template is not None:
        span.update_name(f"{_span_name(method)} {template}")
        span.set_attribute("http.route", template)


class TracingMiddleware:
    """ASGI middleware: a SERVER span around each HTTP request (see the module doc)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        # A proxy tracer: follows whatever provider is set globally, now or later.
        self.tracer = trace.get_tracer(TRACER_NAME)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = _method(scope)
        attributes: dict[str, Any] = {"http.request.method": method}
        if method == "_OTHER":
            attributes["http.request.method_original"] = str(scope.get("method", ""))[:32]
        status: int | None = None
        with self.tracer.start_as_current_span(
            _span_name(method),
            context=propagate.extract(_carrier(scope)),
            kind=SpanKind.SERVER,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:

            async def traced_send(message: Message) -> None:
                nonlocal status
                if message["type"] == "http.response.start" and status is None:
                    status = int(message["status"])
                    # Routing is done by the time the answer starts: name the span while it is
                    # still open, so a sampler or processor looking at it sees the final name.
                    _name_after_route(span, scope, method)
                await send(message)

            try:
                await self.app(scope, receive, traced_send)
            except Exception as exc:  # the error middleware outside answers 500
                if status is None:
                    status = 500
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
                raise
            finally:
                _name_after_route(span, scope, method)
                if status is not None:
                    span.set_attribute("http.response.status_code", status)
                    if status >= 500:
                        span.set_status(Status(StatusCode.ERROR))
                tenant = _tenant(scope, status)
                if tenant is not None:
                    span.set_attribute("relay.tenant", tenant)
