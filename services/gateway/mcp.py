"""The tool catalogue as an MCP server over streamable HTTP, at `/mcp` (and at
`/v1/tenants/{t}/mcp`, which also checks the key belongs to `t`).

Every HTTP request is authenticated before the MCP layer sees a byte: no key or a wrong one gets
401 (`WWW-Authenticate: Bearer`), the admin key or another tenant's key on the tenant path 403,
all as `{"error": {"code", "message"}}`. The tenant is the one the key authenticates, never
anything in the MCP traffic. The MCP session is bound to the key that opened it (the session
manager refuses a session id presented with another key), and each tool call reads the tenant from
its own request's key.

The calling agent is the key's: an agent key's agent (`POST /v1/tenants/{t}/agents`), or `api` for
the tenant key, as on every other route; facts it writes have that agent as asserted_by, and trust
is learnt for it. `mcp:<clientInfo.name>` from the client's initialize (or `mcp:<X-Relay-Agent>` when
that header is sent) is only the facts' sub-label: a client names itself, so its name never decides
whose trust ranks its claims. Its writes are announced on the streams like the API's.

Sessions are capped per tenant (`mcp_sessions_per_tenant`, idle ones closed after 30 min), so
one tenant cannot fill the process's whole table (10,000) and lock the others out: the tenant
at its cap is refused a new session (503, as the MCP layer answers a full table).

The session manager needs a task group for the lifetime of the app: `running()` is entered by the
gateway's lifespan. Until then (an app called without its lifespan) /mcp answers 503."""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, AsyncIterator

import redis.exceptions
from fastapi import FastAPI
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.authentication import AuthCredentials
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from relay_graph.runtime.errors import RelayError, Unavailable
from relay_graph.tools import Call, mcp_agent_name
from relay_graph.usecases.context import Deps
from relay_graph.tools.mcp_server import build_server, client_name

from .auth import DEFAULT_AGENT
from .deps import refused_key
from .errors import Forbidden, NotReady, RateLimited, Unauthorized

PATHS = ("/mcp", "/v1/tenants/{t}/mcp")
SCOPE_KEY = "relay.mcp_caller"
AGENT_HEADER = "x-relay-agent"


@dataclass(frozen=True)
class McpCaller:
    tenant: str
    key_id: str
    agent: str
    agent_hint: str | None


def _bearer(request: Request) -> str | None:
    value = request.headers.get("authorization")
    if not value:
        return None
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


def _tenant_of(requestor: Any) -> str | None:
    client_id = requestor.get("client_id") if isinstance(requestor, dict) else None
    return client_id.removeprefix("tenant:") if isinstance(client_id, str) and client_id.startswith("tenant:") else None


class TenantSessionManager(StreamableHTTPSessionManager):
    """The MCP session manager with a cap per tenant next to the SDK's cap per process."""

    def __init__(self, *args: Any, per_tenant: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.per_tenant = per_tenant

    def open_sessions(self, tenant: str) -> int:
        return sum(1 for owner in self._session_owners.values() if _tenant_of(owner) == tenant)

    def _admit_session(self, requestor: Any) -> Any:
        tenant = _tenant_of(requestor)
        if tenant is not None and self.open_sessions(tenant) >= self.per_tenant:
            return None  # answered like a full table: 503, "Too many open sessions"
        return super()._admit_session(requestor)


class McpEndpoint:
    """An ASGI app: authentication in front of the MCP session manager."""

    def __init__(self, deps: Deps) -> None:
        self.deps, self.http = deps, deps.http
        self.server = build_server(self._context_for)
        self.manager = TenantSessionManager(app=self.server, per_tenant=self.http.settings.mcp_sessions_per_tenant)
        self._running = False

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.manager.run():
            self._running = True
            try:
                yield
            finally:
                self._running = False

    async def _authenticate(self, request: Request) -> McpCaller:
        try:
            caller = await self.http.auth.identify(_bearer(request))
        except Unauthorized as exc:
            refused_key(self.http, request, exc)
            raise
        if caller.admin:
            raise Forbidden("the admin key only creates tenants; use the tenant's own key")
        path_tenant = request.path_params.get("t")
        if path_tenant is not None and caller.tenant != path_tenant:
            raise Forbidden("this key belongs to another tenant")
        await self.http.admit(caller)
        return McpCaller(tenant=caller.tenant or "", key_id=caller.key_id, agent=caller.agent or DEFAULT_AGENT,
                         agent_hint=request.headers.get(AGENT_HEADER))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            if not self._running:
                raise NotReady("the MCP endpoint is starting; retry shortly")
            caller = await self._authenticate(request)
        except RelayError as exc:
            await self._refuse(exc)(scope, receive, send)
            return
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
            await self._refuse(Unavailable("the graph store is not answering; retry shortly"))(scope, receive, send)
            return
        # The session manager binds a session to the principal that opened it: one key, one principal.
        token = AccessToken(token=caller.key_id, client_id=f"tenant:{caller.tenant}", scopes=[],
                            subject=caller.key_id)
        scope = {**scope, "user": AuthenticatedUser(token), "auth": AuthCredentials([]), SCOPE_KEY: caller}
        await self.manager.handle_request(scope, receive, send)

    @staticmethod
    def _refuse(exc: RelayError) -> JSONResponse:
        headers: dict[str, str] = {}
        if isinstance(exc, Unauthorized):
            headers["WWW-Authenticate"] = "Bearer"
        if isinstance(exc, RateLimited):
            headers["Retry-After"] = str(exc.retry_after)
        return JSONResponse({"error": {"code": exc.code, "message": exc.message}}, status_code=exc.status,
                            headers=headers or None)

    async def _context_for(self, ctx: ServerRequestContext[Any, Any]) -> Call:
        request = ctx.request
        caller = request.scope.get(SCOPE_KEY) if isinstance(request, Request) else None
        if not isinstance(caller, McpCaller):  # every request passed __call__; this is a guard, not a path
            raise Unauthorized("send your key as `Authorization: Bearer <key>`")
        await self.deps.open()
        return self.deps.call(caller.tenant, caller.agent, label=mcp_agent_name(client_name(ctx), caller.agent_hint))


def mount(app: FastAPI, endpoint: McpEndpoint) -> None:
    """Serve the endpoint at PATHS (every method: POST messages, GET the event stream, DELETE the session)."""
    for path in PATHS:
        routed = _Routed(endpoint)
        routed.route = Route(path, endpoint=routed)
        app.router.routes.append(routed.route)
    app.state.mcp = endpoint


class _Routed:
    """The endpoint behind one of its paths, named in the scope as FastAPI's own routes name
    themselves (`scope["route"]`): metrics and traces count /mcp under its template, not as a
    request no route matched."""

    route: Route

    def __init__(self, endpoint: McpEndpoint) -> None:
        self.endpoint = endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope["route"] = self.route
        await self.endpoint(scope, receive, send)
