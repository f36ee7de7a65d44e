"""What a request handler can ask for, as Annotated aliases. Everything comes from the process
context (relay_graph.usecases.context.Deps) the gateway's bootstrap put on `app.state.deps`, with
its HTTP-only part (`Http`, at `deps.http`), so tests hand in their own parts. A route that runs a
use case asks for its `Call` (CallDep: the key's tenant and agent, the memory, the process's
outbox to announce through)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Annotated, Any, AsyncIterator, Awaitable, Callable, Coroutine

from fastapi import Depends, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from relay_graph.memory.facade import Memory
from relay_graph.usecases.context import Call, Deps

from .auth import DEFAULT_AGENT, Authenticator, Caller, TenantKeys
from .errors import Forbidden, NotReady, Unauthorized
from .feed import Feed
from .limits import Limits, LimitStore, RateLimiter
from .readiness import ReadinessCheck
from .settings import GatewaySettings


@dataclass
class Http:
    """The gateway's own part of its process context (`Deps.http`): what only its HTTP side uses."""

    settings: GatewaySettings
    keys: Callable[[], Awaitable[TenantKeys]]  # the tenant registry, on the memory's pool (opened on need)
    auth: Authenticator
    limiter: RateLimiter
    limits: LimitStore
    feed: Feed  # the stream tail, the chat waiters, the live sockets, FastStream's router
    address_limiter: RateLimiter | None = None  # requests without a valid key, per client address
    readiness: list[ReadinessCheck] = field(default_factory=list)
    # New customer sessions per client address (the customer site's first visit)
    site_limiter: RateLimiter = field(default_factory=lambda: RateLimiter(0.5, 20, name="site_sessions"))
    judge_limiter: RateLimiter = field(default_factory=lambda: RateLimiter(1 / 30, 3, name="judge_runs"))  # Judge mode's tenants
    # work a request started that outlives it (Judge mode's planted fault): stopped with the process,
    # or with its tenant
    background: set[asyncio.Task] = field(default_factory=set)
    _tenant_work: dict[asyncio.Task, str] = field(default_factory=dict)
    # The memory of the admin routes, on the operations connection (bootstrap._Operations); None: the memory
    operations: Callable[[], Awaitable[Memory]] | None = None

    def spawn(self, work: Coroutine[Any, Any, Any], *, name: str, tenant: str | None = None) -> asyncio.Task:
        task = asyncio.create_task(work, name=name)
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        if tenant is not None:
            self._tenant_work[task] = tenant
            task.add_done_callback(lambda t: self._tenant_work.pop(t, None))
        return task

    def forget_tenant(self, tenant: str) -> None:
        """After the tenant was deleted (usecases/operations.delete_tenant): the work this process
        started for it stops, its cached limits and its rate bucket go (a tenant created again under
        the name starts with the defaults and a full bucket)."""
        for task, owner in list(self._tenant_work.items()):
            if owner == tenant:
                task.cancel()
        self.limits.forget(tenant)
        self.limiter.forget(f"tenant:{tenant}")

    async def stop_background(self) -> None:
        """Cancels what `spawn` started and waits for it (before the clients it uses close)."""
        tasks = list(self.background)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def admit(self, caller: Caller) -> Limits:
        """Takes the caller's token from its tenant's bucket, at that tenant's rate; its limits."""
        limits = await self.limits.get(caller.tenant) if caller.tenant is not None else self.limits.defaults
        if caller.tenant is None:
            self.limiter.hit(caller.bucket, rate=limits.rate_per_second, burst=limits.burst, who="the admin key")
        else:
            self.limiter.hit(caller.bucket, rate=limits.rate_per_second, burst=limits.burst,
                             who=f"tenant {caller.tenant!r} (all its keys)",
                             advice=", or send many facts in one request (POST /v1/tenants/{t}/facts/batch)")
        return limits


@dataclass(frozen=True)
class Identity:
    """Who a tenant route's caller is: its tenant, the agent it writes and reads as (an agent
    key's agent, or `api` for the tenant key), whether it holds the tenant key, and its limits."""

    tenant: str
    agent: str
    tenant_key: bool
    limits: Limits

    def label(self, named: str | None) -> str | None:
        """What a free-text `agent` of a request becomes: a sub-label under the caller's agent
        (None when it names the caller itself or nothing)."""
        return None if named is None or named == self.agent else named


# Dependencies are `async def` even when they do not await: FastAPI runs a plain `def` dependency
# in its thread pool, a thread hop on every request for nothing.
async def get_deps(request: Request) -> Deps:
    deps = getattr(request.app.state, "deps", None)
    if deps is None:
        raise NotReady("the gateway is starting; retry shortly")
    return deps


DepsDep = Annotated[Deps, Depends(get_deps)]


async def get_http(deps: DepsDep) -> Http:
    return deps.http


HttpDep = Annotated[Http, Depends(get_http)]

bearer = HTTPBearer(auto_error=False, description="a tenant's API key (the admin key for POST /v1/tenants)")
BearerDep = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


def _token(credentials: HTTPAuthorizationCredentials | None) -> str | None:
    return credentials.credentials if credentials else None


PathTenant = Annotated[str, Path(description="the tenant; must be the one the key belongs to", examples=["acme"])]


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def refused_key(http: Http, request: Request, exc: Exception) -> None:
    """A request without a valid key costs its client address a token: past that bucket, 429
    instead of an endless stream of 401s."""
    if http.address_limiter is not None and isinstance(exc, Unauthorized):
        http.address_limiter.hit(client_address(request))


async def _identified(http: Http, request: Request, who: Awaitable[Caller]) -> Caller:
    """The caller `who` authenticates, after `refused_key` when it is nobody."""
    try:
        return await who
    except Unauthorized as exc:
        refused_key(http, request, exc)
        raise


def _request_line(request: Request) -> str:
    return f"{request.method} {request.url.path}"


async def admin_caller(http: HttpDep, credentials: BearerDep, request: Request) -> Caller:
    caller = await _identified(http, request, http.auth.admin(_token(credentials), _request_line(request)))
    await http.admit(caller)
    return caller


async def admin_of_tenant(http: HttpDep, credentials: BearerDep, t: PathTenant, request: Request) -> str:
    """The admin key, acting on the settings of tenant `t` (which must exist)."""
    caller = await _identified(http, request, http.auth.admin_for_tenant(_token(credentials), t, _request_line(request)))
    await http.admit(caller)
    return t


async def identity_of_key(http: HttpDep, credentials: BearerDep, t: PathTenant, request: Request) -> Identity:
    caller = await _identified(http, request, http.auth.tenant(_token(credentials), t))
    limits = await http.admit(caller)
    # The graph is chosen from the tenant the key authenticates, not from the path text; so is the agent.
    assert caller.tenant is not None and caller.agent is not None
    return Identity(tenant=caller.tenant, agent=caller.agent, tenant_key=caller.agent == DEFAULT_AGENT,
                    limits=limits)


async def tenant_of_key(identity: Annotated[Identity, Depends(identity_of_key)]) -> str:
    return identity.tenant


async def tenant_of_tenant_key(identity: Annotated[Identity, Depends(identity_of_key)], request: Request) -> str:
    """The tenant, for what only its own key does (the tenant's settings: its site, its world): an
    agent key writes memory as its agent, it does not run the tenant."""
    if not identity.tenant_key:
        raise Forbidden(f"{request.method} {request.url.path.removeprefix(f'/v1/tenants/{identity.tenant}')} "
                        "needs the tenant's own key (the one POST /v1/tenants returned); an agent key cannot",
                        code="tenant_key_required")
    return identity.tenant


async def get_memory(deps: DepsDep) -> Memory:
    return await deps.open()


async def get_operations_memory(deps: DepsDep) -> Memory:
    """The memory the admin routes work through: signed in as the FalkorDB user allowed
    GRAPH.COPY, DEL of a graph, GRAPH.MEMORY and the like (RELAY_FALKORDB_OPS_USER)."""
    operations = getattr(deps.http, "operations", None)
    return await (operations() if operations is not None else deps.open())


async def get_keys(http: HttpDep) -> TenantKeys:
    return await http.keys()


async def get_feed(http: HttpDep) -> Feed:
    return http.feed


async def reader(identity: Annotated[Identity, Depends(identity_of_key)]) -> str:
    """The reader recorded as CONSULTED: the key's agent (`api` for the tenant key)."""
    return identity.agent


AdminDep = Annotated[Caller, Depends(admin_caller)]
AdminOfTenantDep = Annotated[str, Depends(admin_of_tenant)]
IdentityDep = Annotated[Identity, Depends(identity_of_key)]
TenantDep = Annotated[str, Depends(tenant_of_key)]
TenantKeyDep = Annotated[str, Depends(tenant_of_tenant_key)]  # the tenant key only (403 for an agent key)
MemoryDep = Annotated[Memory, Depends(get_memory)]
OperationsMemoryDep = Annotated[Memory, Depends(get_operations_memory)]
KeysDep = Annotated[TenantKeys, Depends(get_keys)]
FeedDep = Annotated[Feed, Depends(get_feed)]
ReaderDep = Annotated[str, Depends(reader)]


async def get_call(who: IdentityDep, deps: DepsDep, memory: MemoryDep) -> AsyncIterator[Call]:
    """The use cases' per-call context for this request (the key's tenant and agent), flushed when
    the route returns and before its answer is sent: what the use cases owe goes through the
    process's outbox, as an agent's does, and a failure to keep it answers 503 (the client retries
    an idempotent write). A route that failed still announces what was written before the failure.
    (`memory`: opened first.)"""
    async with deps.work(who.tenant, who.agent) as call:
        yield call


CallDep = Annotated[Call, Depends(get_call, scope="function")]

