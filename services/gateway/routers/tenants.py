"""Tenants (admin key), their agents' keys (tenant key) and their limits (set by the admin key)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path
from fastapi.responses import Response

from relay_graph.desk.customers import regional_desks as desks
from relay_graph.usecases import world
from relay_graph.runtime.errors import AlreadyExists
from relay_graph.runtime.tenancy import validate_tenant

from ..auth import AGENT_ID_PATTERN
from ..deps import AdminDep, AdminOfTenantDep, DepsDep, IdentityDep, KeysDep, MemoryDep, HttpDep
from ..errors import Forbidden, responses
from ..schemas import Answer, AgentBody, AgentCreated, AgentList, LimitsBody, LimitsView, TenantBody, TenantCreated, TenantLimits

router = APIRouter(prefix="/v1/tenants", tags=["tenants"])
ADMIN = "admin"  # who seeds a new tenant's world


@router.post("", status_code=201, response_model=Answer[TenantCreated], responses=responses(401, 403, 409, 413, 422, 429, 503),
             summary="Create a tenant with its region's world, and its API key (admin key)",
             description="Creates the tenant, its key (shown once) and, unless `world` is false, its region's "
             "world: the catalogue (plans priced per country, FAQs, playbooks, served cities and areas) and the "
             "access network over them, as `POST /v1/tenants/{t}/world` would seed it (the answer's `world`). "
             "`world: false` makes an empty tenant. With `operator`, the tenant is that operator's desk for `region`: "
             "a customer whose address another of its desks serves is moved there by the desk (409 `desk_taken` "
             "when the operator has a desk for that region already).")
async def create_tenant(body: TenantBody, _: AdminDep, keys: KeysDep, deps: DepsDep, memory: MemoryDep) -> TenantCreated:
    """The tenant with its region's world (catalogue, prices, network) from the first message, unless
    the caller asks for an empty one; seeding is idempotent, so a later `POST /world` of the same
    region writes nothing new."""
    tenant = validate_tenant(body.tenant)
    if body.operator and (held := await desks.region_desk(memory.client, body.operator, body.region)):
        raise AlreadyExists(f"operator {body.operator!r} has a {body.region} desk already ({held!r})",
                            code="desk_taken")
    api_key = await keys.create(tenant)
    async with deps.work(tenant, ADMIN) as call:
        summary = await world.seed_world(call, body.region) if body.world else None
        if body.operator:
            await world.open_desk(call, body.operator, body.region)
    return TenantCreated(tenant=tenant, api_key=api_key, world=summary)


@router.post("/{t}/agents", status_code=201, response_model=Answer[AgentCreated],
             responses=responses(401, 403, 409, 413, 422, 429, 503),
             summary="Give an agent of the tenant its own key (tenant key); it writes and reads as that agent")
async def create_agent(body: AgentBody, who: IdentityDep, keys: KeysDep) -> AgentCreated:
    if not who.tenant_key:
        raise Forbidden("only the tenant's own key issues agent keys; an agent key cannot")
    api_key = await keys.create_agent(who.tenant, body.agent)
    return AgentCreated(tenant=who.tenant, agent=body.agent, api_key=api_key)


@router.delete("/{t}/agents/{agent}", status_code=204, responses=responses(401, 403, 404, 422, 429, 503),
               summary="Revoke an agent's key (tenant key); issue it again for a new key, the agent and its "
                       "trust stay")
async def delete_agent(who: IdentityDep, keys: KeysDep,
                       agent: Annotated[str, Path(pattern=AGENT_ID_PATTERN, examples=["planner"])]) -> Response:
    if not who.tenant_key:
        raise Forbidden("only the tenant's own key revokes agent keys; an agent key cannot")
    await keys.delete_agent(who.tenant, agent)
    return Response(status_code=204)


@router.get("/{t}/agents", response_model=Answer[AgentList], responses=responses(401, 403, 429, 503),
            summary="The tenant's agents that have a key")
async def list_agents(who: IdentityDep, keys: KeysDep) -> AgentList:
    return AgentList(agents=await keys.agents(who.tenant))


async def _limits_view(http, tenant: str) -> TenantLimits:
    limits = await http.limits.get(tenant)
    return TenantLimits(tenant=tenant, limits=LimitsView(**limits.as_json()),
                        overrides=await http.limits.overrides(tenant))


@router.get("/{t}/limits", response_model=Answer[TenantLimits], responses=responses(401, 403, 429, 503),
            summary="The limits the tenant runs with: its rate, burst and batch size")
async def get_limits(who: IdentityDep, http: HttpDep) -> TenantLimits:
    return await _limits_view(http, who.tenant)


@router.put("/{t}/limits", response_model=Answer[TenantLimits], responses=responses(401, 403, 404, 413, 422, 429, 503),
            summary="Set the tenant's own limits (admin key); a field left out or null takes the default")
async def put_limits(body: LimitsBody, tenant: AdminOfTenantDep, http: HttpDep) -> TenantLimits:
    await http.limits.set(tenant, body.model_dump())
    return await _limits_view(http, tenant)
