"""The gateway's FastAPI app, on the process context its bootstrap builds (bootstrap.py).

`create_app(settings)` is what runs in production (it opens the pool and closes it when the app's
lifespan ends); tests pass their own `memory` (and whatever else they want to replace) and call
the app directly, without running the lifespan: everything is on `app.state.deps` from the start."""

from __future__ import annotations

import asyncio
import logging
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline

from relay_graph.desk.catalogue import geo
from relay_graph.runtime import tenancy
from . import errors, judge_tenants, metrics, tenant_stores  # noqa: F401 (tenant_stores: what a delete removes)
from . import mcp as mcp_http
from . import schemas, site_pages
from .bootstrap import bootstrap
from .limits import BodyLimitMiddleware
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
    predicates,
    recall,
    tasks,
    tenants,
    tickets,
    tools,
    world,
)
from .settings import GatewaySettings
from .tracing import TracingMiddleware
from .url_encoding import Utf8Url

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
           console.router, console_bench.router, console_isolation.router, console_page.router, tasks.router,
           metrics.router, predicates.router)


def create_app(settings: GatewaySettings | None = None, **parts: Any) -> FastAPI:
    """The gateway app on the context `bootstrap(settings, **parts)` builds (`memory`, `redis`,
    `keys`, `limiter`, `address_limiter`, `readiness`, `ready_agents`: see there). `memory` given:
    the caller owns (and closes) its pool; otherwise the app opens one on first need and closes it
    when its lifespan ends. What the context opened (the stream client and tail, the pool) is closed
    by the lifespan, or by the caller with `await app.state.deps.aclose()`."""
    settings = settings or GatewaySettings()
    deps = bootstrap(settings, **parts)
    feed = deps.http.feed
    admin_key = settings.admin_key
    mcp_endpoint = mcp_http.McpEndpoint(deps)  # /mcp: its session manager runs with the lifespan

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if admin_key is None:
            log.warning("RELAY_ADMIN_KEY is not set: POST /v1/tenants is disabled")
        try:
            memory = await deps.open()  # connect early when we can; until then requests get 503
            if moved := await tenancy.migrate_admin_keys(memory.client.redis):
                log.info("renamed the admin keys of before to their hash-tagged names: %s", ", ".join(moved))
        except Exception as exc:  # noqa: BLE001
            log.warning("starting without FalkorDB: %s", exc)
        # The desk's gazetteer (places, time zones: the site's first visit reads it) takes seconds to
        # build: built now, in a thread, not inside the first request that needs it.
        warming = asyncio.create_task(asyncio.to_thread(geo.warm))
        try:
            await feed.tail.start()  # the live feed and chat waits see what happens from now on
        except Exception as exc:  # noqa: BLE001 - started again on first need
            log.warning("starting without the stream tail: %s", exc)
        stop_relay = asyncio.Event()
        relay = asyncio.create_task(deps.relay_loop(stop_relay, every_s=settings.outbox_every_s))
        sweep = asyncio.create_task(judge_tenants.sweep_loop(deps, stop_relay,
                                                             every_s=settings.judge_sweep_every_s))
        snapshot = metrics.start_snapshot(deps, settings, stop_relay)
        try:
            async with mcp_endpoint.running():
                yield
        finally:
            stop_relay.set()
            await asyncio.wait({relay, sweep, snapshot, warming}, timeout=2)
            await deps.aclose()

    live.redact_tokens_in_server_logs()
    # FastAPI's own request spans are off: TracingMiddleware is the one SERVER span per request
    # (no raw paths or queries, which carry tenants' and customers' names; no hours-long span per
    # live socket). Its metrics and logs stay as FastAPI has them (on only with such providers).
    # /docs (Swagger UI) and /redoc load their scripts and styles from the installed fastapi-offline
    # package (served under /static-offline-docs), never from a CDN: they work with no internet.
    app = FastAPIOffline(title="Relay", version="1", description=DESCRIPTION, lifespan=lifespan,
                         telemetry={"tracing": False})
    app.state.deps = deps
    errors.install(app)
    app.add_middleware(errors.Unhandled)  # first: the innermost, so every other middleware sees its 500
    app.add_middleware(Utf8Url)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(TracingMiddleware)  # added last: outermost, so a refused body is traced too
    app.add_middleware(metrics.MetricsMiddleware)  # and counted (GET /metrics: metrics.router)
    for router in ROUTERS:
        app.include_router(router)
    app.include_router(feed.router)  # FastStream's FastAPI integration: its broker lives with the app's lifespan
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
