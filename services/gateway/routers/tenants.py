"""Creating tenants (admin key)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from relay_graph.tenancy import validate_tenant

from ..deps import AdminDep, KeysDep, respond
from ..errors import responses
from ..schemas import TenantBody, TenantCreated

router = APIRouter(prefix="/v1/tenants", tags=["tenants"])


@router.post("", status_code=201, response_model=TenantCreated, responses=responses(401, 403, 409, 413, 422, 429),
             summary="Create a tenant and its API key (admin key)")
async def create_tenant(body: TenantBody, _: AdminDep, keys: KeysDep) -> JSONResponse:
    tenant = validate_tenant(body.tenant)
    api_key = await keys.create(tenant)
    return respond(TenantCreated(tenant=tenant, api_key=api_key), 201)
