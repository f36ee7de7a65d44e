"""An operator's work on one tenant (admin key): snapshots, reset, delete, forgetting a customer,
and the graph's figures. The work itself is relay_graph.usecases.operations; reset and delete need the
tenant id again in the body (`confirm`). They work through the operations connection
(OperationsMemoryDep: the FalkorDB user allowed GRAPH.COPY and DEL of a graph)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path
from fastapi.responses import Response
from pydantic import BaseModel, Field, StrictBool

from relay_graph.usecases import operations as ops
from relay_graph.runtime.errors import TenantNotFound
from relay_graph.runtime.tenancy import validate_tenant

from ..deps import AdminDep, HttpDep, MemoryDep, OperationsMemoryDep
from ..errors import responses
from ..schemas import Answer, Strict

router = APIRouter(prefix="/v1/admin/tenants/{tenant}", tags=["admin"])
process_router = APIRouter(prefix="/v1/admin", tags=["admin"])
TenantPath = Annotated[str, Path(max_length=63, description="the tenant to work on", examples=["acme"])]
ERRORS = responses(401, 403, 404, 409, 422, 429)


SnapshotName = Annotated[str, Path(max_length=63, pattern=ops.SNAPSHOT_NAME_RE.pattern)]


class SnapshotBody(Strict):
    name: str = Field(max_length=63, description="^[a-z0-9][a-z0-9-]{0,62}$", examples=["before-demo"],
                      json_schema_extra={"pattern": ops.SNAPSHOT_NAME_RE.pattern})


class ConfirmBody(Strict):
    confirm: str = Field(max_length=63, description="the tenant id again: nothing happens without it")


class DeleteBody(ConfirmBody):
    keep_snapshots: StrictBool = Field(default=False, description="true: the tenant's snapshots stay (the one "
                                       "way its data outlives it; they come back only by an explicit restore, "
                                       "after the tenant is created again)")


class CustomerBody(Strict):
    customer: str = Field(min_length=1, max_length=200, examples=["Asha Verma"])


class RecentQuery(BaseModel):
    query: str  # the named statement (queries/)
    tenant: str
    ok: bool
    rows: int
    ms: float
    at_ms: int


class RecentQueries(BaseModel):
    queries: list[RecentQuery] = Field(description="the gateway process's last queries, newest last")


class Snapshots(BaseModel):
    snapshots: list[ops.Snapshot]


class ResetDone(BaseModel):
    tenant: str
    snapshot: ops.Snapshot | None = Field(description="taken before the reset; restore it to undo")


class DeleteDone(BaseModel):
    tenant: str
    removed_keys: list[str] = Field(description="keys removed, and `key#field` for the tenant's entries in shared "
                                    "hashes and sets (its key, agents' keys, limits, site flag, marks)")
    api_key_revoked: bool = Field(description="false: there was no such tenant (what was left of one is removed)")
    kept: list[str] = Field(description="what was kept on request (`snapshots` with keep_snapshots)")


@router.get("/snapshots", response_model=Answer[Snapshots], responses=ERRORS, summary="List a tenant's snapshots")
async def list_snapshots(tenant: TenantPath, _: AdminDep, memory: OperationsMemoryDep) -> Snapshots:
    return Snapshots(snapshots=await ops.list_snapshots(memory.client, validate_tenant(tenant)))


@router.post("/snapshots", status_code=201, response_model=Answer[ops.Snapshot], responses=ERRORS,
             summary="Snapshot the tenant's graph (GRAPH.COPY)")
async def create_snapshot(tenant: TenantPath, body: SnapshotBody, _: AdminDep, memory: OperationsMemoryDep) -> ops.Snapshot:
    return await ops.create_snapshot(memory.client, validate_tenant(tenant), body.name)


@router.post("/snapshots/{name}/restore", response_model=Answer[ops.Snapshot], responses=ERRORS,
             summary="Replace the tenant's graph by a copy of the snapshot")
async def restore_snapshot(tenant: TenantPath, name: SnapshotName, _: AdminDep, memory: OperationsMemoryDep) -> ops.Snapshot:
    return await ops.restore_snapshot(memory.client, validate_tenant(tenant), name)


@router.delete("/snapshots/{name}", status_code=204, responses=ERRORS, summary="Delete a snapshot")
async def delete_snapshot(tenant: TenantPath, name: SnapshotName, _: AdminDep, memory: OperationsMemoryDep) -> Response:
    await ops.delete_snapshot(memory.client, validate_tenant(tenant), name)
    return Response(status_code=204)


@router.post("/reset", response_model=Answer[ResetDone], responses=ERRORS,
             summary="Empty the tenant's graph, after a snapshot (confirm: the tenant id)")
async def reset(tenant: TenantPath, body: ConfirmBody, _: AdminDep, memory: OperationsMemoryDep) -> ResetDone:
    tenant = validate_tenant(tenant)
    snap = await ops.reset_tenant(memory.client, tenant, body.confirm)
    return ResetDone(tenant=tenant, snapshot=snap)


@router.post("/delete", response_model=Answer[DeleteDone], responses=ERRORS,
             summary="Delete the tenant and everything kept for it (confirm: the tenant id)",
             description="Removes the tenant's key and its agents' keys, customer sessions, site flag, limits, "
             "Idempotency-Key claims, graph (and FalkorDB's telemetry of it), lab truth, query log, simulator "
             "control, outbox mark, Judge timer and, unless `keep_snapshots`, its snapshots. Notifications "
             "for it still on the streams are dropped by the agents. A tenant created again under the name "
             "starts clean. Takes about RELAY_TENANT_CHECK_S (a second): the removal runs again once every "
             "process has heard. A name with nothing kept under it (never created, or deleted already) is 404 "
             "`tenant_not_found`; one whose delete was cut short has the rest removed.")
async def delete(tenant: TenantPath, body: DeleteBody, _: AdminDep, memory: OperationsMemoryDep, http: HttpDep) -> DeleteDone:
    tenant = validate_tenant(tenant)
    done = await ops.delete_tenant(memory.client, tenant, body.confirm, keep_snapshots=body.keep_snapshots)
    http.forget_tenant(tenant)
    if not done.registered and not done.removed:  # a misspelt name must not look deleted
        raise TenantNotFound(f"no tenant {tenant!r}: nothing is kept under that name")
    return DeleteDone(tenant=tenant, removed_keys=done.removed, api_key_revoked=done.registered, kept=done.kept)


@router.post("/forget", response_model=Answer[ops.ForgetReceipt], responses=ERRORS,
             summary="Forget one customer: every episode, fact, ticket and edge about them")
async def forget(tenant: TenantPath, body: CustomerBody, _: AdminDep, memory: OperationsMemoryDep) -> ops.ForgetReceipt:
    return await ops.forget_customer(memory.client, validate_tenant(tenant), body.customer)


@router.get("/stats", response_model=Answer[ops.GraphStats], responses=ERRORS,
            summary="Counts by label and type, GRAPH.MEMORY USAGE and GRAPH.SLOWLOG")
async def stats(tenant: TenantPath, _: AdminDep, memory: OperationsMemoryDep) -> ops.GraphStats:
    return await ops.graph_stats(memory.client, validate_tenant(tenant))


@process_router.get("/queries", response_model=Answer[RecentQueries], responses=responses(401, 403, 429),
                    summary="The last queries this gateway process ran, with their times (admin key)")
async def recent_queries(_: AdminDep, memory: MemoryDep) -> RecentQueries:
    return RecentQueries(queries=list(memory.client.recent))
