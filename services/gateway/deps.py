"""What a request handler can ask for, as Annotated aliases. Everything comes from the `Services`
the composition root put on `app.state`, so tests hand in their own."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Path, Query, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from relay_graph.memory import Memory
from relay_graph.models import AGENT_PATTERN

from .auth import Authenticator, Caller, TenantKeys
from .backend import Backend
from .bus import Bus
from .errors import NotReady, Unauthorized
from .limits import RateLimiter
from .readiness import ReadinessCheck
from .schemas import to_json
from .settings import GatewaySettings


@dataclass
class Services:
    settings: GatewaySettings
    backend: Backend
    auth: Authenticator
    limiter: RateLimiter
    address_limiter: RateLimiter | None = None  # requests without a valid key, per client address
    readiness: list[ReadinessCheck] = field(default_factory=list)
    bus: Bus | None = None  # the notification streams (publisher, stream tail, live sockets)


# Dependencies are `async def` even when they do not await: FastAPI runs a plain `def` dependency
# in its thread pool, a thread hop on every request for nothing.
async def get_services(request: Request) -> Services:
    services = getattr(request.app.state, "services", None)
    if services is None:
        raise NotReady("the gateway is starting; retry shortly")
    return services


ServicesDep = Annotated[Services, Depends(get_services)]

bearer = HTTPBearer(auto_error=False, description="a tenant's API key (the admin key for POST /v1/tenants)")
BearerDep = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


def _token(credentials: HTTPAuthorizationCredentials | None) -> str | None:
    return credentials.credentials if credentials else None


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def refused_key(services: Services, request: Request, exc: Exception) -> None:
    """A request without a valid key costs its address a token: past the bucket, 429."""
    if services.address_limiter is not None and isinstance(exc, Unauthorized):
        services.address_limiter.hit(client_address(request))


async def admin_caller(services: ServicesDep, credentials: BearerDep, request: Request) -> Caller:
    try:
        caller = await services.auth.admin(_token(credentials))
    except Unauthorized as exc:
        refused_key(services, request, exc)
        raise
    services.limiter.hit(caller.key_id)
    return caller


async def tenant_of_key(
    services: ServicesDep,
    credentials: BearerDep,
    t: Annotated[str, Path(description="the tenant; must be the one the key belongs to", examples=["acme"])],
    request: Request,
) -> str:
    try:
        caller = await services.auth.tenant(_token(credentials), t)
    except Unauthorized as exc:
        refused_key(services, request, exc)
        raise
    services.limiter.hit(caller.key_id)
    # The graph is chosen from the tenant the key authenticates, not from the path text.
    return caller.tenant  # type: ignore[return-value]


async def get_memory(services: ServicesDep) -> Memory:
    return await services.backend.memory()


async def get_keys(services: ServicesDep) -> TenantKeys:
    return await services.backend.keys()


async def get_bus(services: ServicesDep) -> Bus:
    if services.bus is None:
        raise NotReady("the notification streams are not configured in this process")
    return services.bus


async def reader(
    agent: Annotated[str | None, Query(pattern=AGENT_PATTERN,
                                       description="the agent reading (recorded as CONSULTED); default `api`")] = None,
) -> str:
    return agent or "api"


AdminDep = Annotated[Caller, Depends(admin_caller)]
TenantDep = Annotated[str, Depends(tenant_of_key)]
MemoryDep = Annotated[Memory, Depends(get_memory)]
KeysDep = Annotated[TenantKeys, Depends(get_keys)]
BusDep = Annotated[Bus, Depends(get_bus)]
ReaderDep = Annotated[str, Depends(reader)]


def respond(body: object, status_code: int = 200) -> JSONResponse:
    """A JSON answer with times as ISO 8601 with a numeric offset (see schemas.to_json)."""
    return JSONResponse(to_json(body), status_code=status_code)
