"""The staff console's own reads (/v1/console/...), with a tenant's key (its own tenant) or the
admin key (any tenant that exists): who the key is, the tenant's graph, its open conflicts, the
knowledge flowing between its agents, its database figures and query log with plans, and a live socket that takes its key in the first
message (a browser cannot set a socket's headers, and the key must never be in a URL)."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request, WebSocket
from pydantic import BaseModel, Field

from relay_graph.usecases import console
from relay_graph.usecases import operations as ops
from relay_graph.runtime.errors import NotFound, RelayError
from relay_graph.memory.inputs import Identifier
from relay_graph.runtime.tenancy import validate_tenant
from relay_graph.usecases.context import Deps

from ..auth import Caller
from ..deps import BearerDep, Http, HttpDep, MemoryDep, _identified, _token
from ..errors import Forbidden, responses
from ..schemas import Answer
from .admin import RecentQuery
from .live import CLOSE_FORBIDDEN, CLOSE_TRY_AGAIN, _close_code, _refuse, pump

router = APIRouter(prefix="/v1/console", tags=["console"])
ERRORS = responses(401, 403, 404, 422, 429, 503)
FIRST_MESSAGE_S = 10.0  # how long a console socket waits for its key


async def allowed(http: Http, token: str | None, tenant: str) -> Caller:
    """The caller, when it may see `tenant` in the console: its own tenant's key, or the admin key
    for a tenant that exists."""
    caller = await http.auth.identify(token)
    if caller.admin:
        validate_tenant(tenant)
        if not await (await http.keys()).exists(tenant):
            raise NotFound(f"no tenant {tenant!r}")
    elif caller.tenant != tenant:
        raise Forbidden("this key belongs to another tenant")
    await http.admit(caller)
    return caller


async def console_tenant(http: HttpDep, credentials: BearerDep, request: Request,
                         t: Annotated[str, Path(max_length=63, description="the tenant to look at")]) -> str:
    await _identified(http, request, allowed(http, _token(credentials), t))
    return t


ConsoleTenant = Annotated[str, Depends(console_tenant)]


class Whoami(BaseModel):
    admin: bool
    tenant: str | None = Field(description="the tenant the key belongs to (null for the admin key)")
    agent: str | None
    tenants: list[str] = Field(description="the tenants this key may open in the console")


class ConsoleQueries(BaseModel):
    queries: list[RecentQuery] = Field(description="the gateway process's last queries on this tenant, newest last")


class Database(BaseModel):
    stats: ops.GraphStats
    indexes: list[console.IndexInfo]


@router.get("/whoami", response_model=Answer[Whoami], responses=responses(401, 429, 503),
            summary="Who a key is, and which tenants it may open in the console")
async def whoami(http: HttpDep, credentials: BearerDep, request: Request) -> Whoami:
    caller = await _identified(http, request, http.auth.identify(_token(credentials)))
    await http.admit(caller)
    if caller.admin:
        tenants = sorted(await (await http.keys()).tenants())
        return Whoami(admin=True, tenant=None, agent=None, tenants=tenants)
    return Whoami(admin=False, tenant=caller.tenant, agent=caller.agent, tenants=[caller.tenant])


@router.get("/tenants/{t}/graph", response_model=Answer[console.ConsoleGraph], responses=ERRORS,
            summary="The tenant's graph: every node and edge (up to `limit`), by band, with both clocks")
async def graph(tenant: ConsoleTenant, memory: MemoryDep,
                limit: Annotated[int, Query(ge=1, le=console.MAX_LIMIT)] = 5_000) -> console.ConsoleGraph:
    return await console.graph(memory.client, tenant, limit)


@router.get("/tenants/{t}/conflicts", response_model=Answer[console.OpenConflicts], responses=ERRORS,
            summary="The tenant's open conflicts, newest first")
async def conflicts(tenant: ConsoleTenant, memory: MemoryDep,
                    limit: Annotated[int, Query(ge=1, le=500)] = 50) -> console.OpenConflicts:
    return await console.open_conflicts(memory.client, tenant, limit)


@router.get("/tenants/{t}/knowledge", response_model=Answer[console.KnowledgeFlows], responses=ERRORS,
            summary="Knowledge flows between agents: whose facts which agent consulted, how often")
async def knowledge(tenant: ConsoleTenant, memory: MemoryDep) -> console.KnowledgeFlows:
    return await console.knowledge_flows(memory.client, tenant)


@router.get("/tenants/{t}/database", response_model=Answer[Database], responses=ERRORS,
            summary="Counts by label and type, memory use, the slow log and the indexes")
async def database(tenant: ConsoleTenant, memory: MemoryDep) -> Database:
    stats = await ops.graph_stats(memory.client, tenant)
    return Database(stats=stats, indexes=(await console.indexes(memory.client, tenant)).indexes)


@router.get("/tenants/{t}/queries", response_model=Answer[ConsoleQueries], responses=ERRORS,
            summary="The last queries the gateway ran on this tenant, with their times and rows")
async def queries(tenant: ConsoleTenant, memory: MemoryDep) -> ConsoleQueries:
    return ConsoleQueries(queries=[q for q in memory.client.recent if q["tenant"] == tenant])


@router.get("/tenants/{t}/queries/{name}/plan", response_model=Answer[console.QueryPlan], responses=ERRORS,
            summary="GRAPH.EXPLAIN of a named statement on the tenant's graph")
async def query_plan(tenant: ConsoleTenant, memory: MemoryDep, name: Annotated[Identifier, Path()]) -> console.QueryPlan:
    return await console.plan(memory.client, tenant, name)


@router.websocket("/tenants/{t}/live")
async def live(websocket: WebSocket, t: str) -> None:
    """The tenant's live events, as /v1/tenants/{t}/live sends them; the first message from the
    client is `{"token": "<key>"}` (close 4401 without a good one, 4403 for another tenant's)."""
    deps: Deps | None = getattr(websocket.app.state, "deps", None)
    if deps is None or deps.http is None:
        await _refuse(websocket, CLOSE_TRY_AGAIN, "the gateway is starting; retry shortly")
        return
    http = deps.http
    await websocket.accept()
    try:
        first = await asyncio.wait_for(websocket.receive_text(), FIRST_MESSAGE_S)
        token = json.loads(first).get("token") if first.startswith("{") else None
        await allowed(http, token if isinstance(token, str) else None, t)
        await http.feed.tail.start()
    except RelayError as exc:
        code = CLOSE_FORBIDDEN if isinstance(exc, NotFound) else _close_code(exc)
        await websocket.close(code, exc.message.encode()[:123].decode(errors="ignore"))
        return
    except Exception:  # no first message in time, not JSON, or the client left
        await websocket.close(4401, "send {\"token\": \"<key>\"} first")
        return
    # "ready" goes out once subscribed: an event after it reaches the page.
    await pump(websocket, http.feed, t, on_subscribed=lambda: websocket.send_text(json.dumps({"kind": "ready", "tenant": t})))
