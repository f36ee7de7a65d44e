"""The gateway's composition root: builds the services a request needs and the FastAPI app.

`create_app(settings)` is what runs in production (it opens the pool and closes it when the app's
lifespan ends); tests pass their own `memory` (and whatever else they want to replace) and call
the app directly, without running the lifespan: everything is on `app.state` from the start."""

from __future__ import annotations

import asyncio
import logging
from contextlib import asynccontextmanager
from typing import AsyncIterator, Sequence

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline

from relay_graph.runtime import tenancy
from relay_graph.memory.facade import Memory

from . import errors, judge_tenants, outbox
from . import mcp as mcp_http
from . import schemas, site_pages
from .auth import Authenticator, TenantKeys
from .backend import Backend
from .bus import Bus
from .deps import Services
from .limits import AddressLimiter, BodyLimitMiddleware, Limits, LimitStore, RateLimiter
from .readiness import ReadinessCheck, falkordb_check, full_readiness
from .routers import (
    admin,
    asyncapi,
    cases,
    chat,
    claims,
    console,
    console_bench,
    console_isolation,
    console_page,
    customers,
    episodes,
    facts,
    health,
    lab,
    judge,
    live,
    me,
    network,
    recall,
    tenants,
    tickets,
    tools,
    world,
)
from .settings import GatewaySettings
from .tracing import TracingMiddleware

log = logging.getLogger("relay.gateway")

DESCRIPTION = """Shared, time-aware graph memory for teams of AI agents.

Send `Authorization: Bearer <key>`: the admin key creates tenants and sets their limits, a tenant's
key works on that tenant's paths only and writes as `api`, an agent key (`POST /v1/tenants/{t}/agents`)
writes as its agent; a request's `agent` is only a sub-label under the key's agent. Times are ISO 8601
with an offset. Errors are `{"error": {"code", "message"}}`.

Live feed: `WS /v1/tenants/{t}/live` (the tenant's key in the `Authorization` header or `?token=`)
sends one JSON object per change in that tenant: `{"kind": "ticket"|"reply"|"fact"|"outage"|"handoff",
"id", "at", "version", "actor", ...}` (tickets and facts add `change`; replies `session`, `reply_to`,
`ticket_id`; outages `change`, `node_id`; an event after dropped ones carries `missed`). A bad key
closes the socket with code 4401, another tenant's key with 4403. The notifications behind it are
described at `/asyncapi.json`.

The provider's world: creating a tenant stays fast and seeds nothing; `POST /v1/tenants/{t}/world`
seeds a region's catalogue and access network (once: again it writes nothing new, another seed is
refused with 409) and connects
customers to a home box from their address (`POST /v1/tenants/{t}/customers/{c}/line` for one more).
The fault lab (`/lab/faults`, `/lab/scoreboard`) breaks lines where the desk agents cannot see why
and grades what they diagnose and fix."""

ROUTERS = (health.router, tenants.router, facts.router, claims.router, episodes.router, recall.router,
           chat.router, customers.router, tickets.router, network.router, world.router, lab.router, live.router,
           asyncapi.router, tools.router, cases.router, me.router, judge.router, admin.router, admin.process_router,
           console.router, console_bench.router, console_isolation.router, console_page.router)


async def _registry_redis(backend: Backend):
    return (await backend.keys()).redis


def create_app(
    settings: GatewaySettings | None = None,
    *,
    memory: Memory | None = None,
    keys: TenantKeys | None = None,
    limiter: RateLimiter | None = None,
    address_limiter: RateLimiter | None = None,
    readiness: Sequence[ReadinessCheck] | None = None,
    ready_agents: Sequence[str] | None = None,
) -> FastAPI:
    """The gateway app. `memory` given: the caller owns (and closes) its pool; otherwise the app
    opens one on first need and closes it when its lifespan ends. `readiness`: the checks /readyz
    runs; without it, `ready_agents` given: FalkorDB, the streams and those agents' groups with a
    live replica (what `python -m services.gateway` uses); neither: FalkorDB only. The stream
    client and tail (`services.bus`) are closed by the lifespan, or by the caller with
    `await app.state.services.bus.close()`. `limiter` given: its rate and burst are every tenant's
    default limits (the settings' otherwise)."""
    settings = settings or GatewaySettings()
    backend = Backend(settings, memory=memory, keys=keys)
    bus = Bus(settings, graph=backend.graph_client)
    if readiness is None:
        readiness = ([falkordb_check(backend)] if ready_agents is None
                     else full_readiness(backend, bus, ready_agents))
    admin_key = settings.admin_key.get_secret_value() if settings.admin_key else None
    services = Services(
        settings=settings,
        backend=backend,
        auth=Authenticator(backend.keys, admin_key),
        limiter=limiter or RateLimiter(settings.rate_limit_per_second, settings.rate_limit_burst),
        limits=LimitStore(Limits(rate_per_second=limiter.rate if limiter else settings.rate_limit_per_second,
                                 burst=limiter.burst if limiter else settings.rate_limit_burst,
                                 batch_max_facts=settings.batch_max_facts),
                          lambda: _registry_redis(backend)),
        address_limiter=address_limiter or AddressLimiter(settings.keyless_rate_per_second, settings.keyless_burst),
        readiness=list(readiness),
        bus=bus,
        site_limiter=RateLimiter(settings.site_sessions_per_second, settings.site_sessions_burst),
        judge_limiter=RateLimiter(settings.judge_runs_per_second, settings.judge_runs_burst),
    )
    mcp_endpoint = mcp_http.McpEndpoint(services)  # /mcp: its session manager runs with the lifespan

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if admin_key is None:
            log.warning("RELAY_ADMIN_KEY is not set: POST /v1/tenants is disabled")
        try:
            memory = await backend.memory()  # connect early when we can; until then requests get 503
            if moved := await tenancy.migrate_admin_keys(memory.client.redis):
                log.info("renamed the admin keys of before to their hash-tagged names: %s", ", ".join(moved))
        except Exception as exc:  # noqa: BLE001
            log.warning("starting without FalkorDB: %s", exc)
        try:
            await bus.tail.start()  # the live feed and chat waits see what happens from now on
        except Exception as exc:  # noqa: BLE001 - started again on first need
            log.warning("starting without the stream tail: %s", exc)
        stop_relay = asyncio.Event()
        relay = asyncio.create_task(outbox.relay_loop(bus, stop_relay, every_s=settings.outbox_every_s))
        sweep = asyncio.create_task(judge_tenants.sweep_loop(backend, stop_relay,
                                                             every_s=settings.judge_sweep_every_s))
        try:
            async with mcp_endpoint.running():
                yield
        finally:
            stop_relay.set()
            await asyncio.wait({relay, sweep}, timeout=2)
            await bus.close()
            await backend.close()

    live.redact_tokens_in_server_logs()
    # FastAPI's own request spans are off: TracingMiddleware is the one SERVER span per request
    # (no raw paths or queries, which carry tenants' and customers' names; no hours-long span per
    # live socket). Its metrics and logs stay as FastAPI has them (on only with such providers).
    # /docs (Swagger UI) and /redoc load their scripts and styles from the installed fastapi-offline
    # package (served under /static-offline-docs), never from a CDN: they work with no internet.
    app = FastAPIOffline(title="Relay", version="1", description=DESCRIPTION, lifespan=lifespan,
                         telemetry={"tracing": False})
    app.state.services = services
    errors.install(app)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(TracingMiddleware)  # added last: outermost, so a refused body is traced too
    for router in ROUTERS:
        app.include_router(router)
    app.include_router(bus.router)  # FastStream's FastAPI integration: its broker lives with the app's lifespan
    mcp_http.mount(app, mcp_endpoint)
    generate = app.openapi

    def openapi() -> dict:
        # What FastAPI cannot see from the routes: the 400 of a body that is not JSON, each tool's
        # own arguments, and which model of a route with two success statuses goes with which.
        if app.openapi_schema is None:
            app.openapi_schema = schemas.document_status_models(
                tools.document_tools(errors.document_invalid_json(generate())))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    site_pages.mount(app, settings.site_dir)  # last: every route above wins over a file name
    return app
