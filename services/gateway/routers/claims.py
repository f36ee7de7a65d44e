"""Disagreements: the claims for one value, and settling a conflict."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse

from relay_graph.inputs import Identifier, Name

from relay_graph import registry
from relay_graph.streams import FactChanged

from ..deps import BusDep, MemoryDep, ReaderDep, TenantDep, respond
from ..errors import responses
from ..schemas import ClaimsView, SettleBody, SettleResult

router = APIRouter(prefix="/v1/tenants/{t}", tags=["claims"])


@router.get("/claims", response_model=ClaimsView, responses=responses(401, 403, 422, 429, 503),
            summary="Every agent's claim for a subject's predicate, best first")
async def claims(
    tenant: TenantDep,
    memory: MemoryDep,
    agent: ReaderDep,
    subject: Annotated[Name, Query()],
    predicate: Annotated[str, Query(min_length=1, max_length=64)],
) -> JSONResponse:
    registry.get(predicate)
    return respond(await memory.claims(tenant, subject, predicate, reader=agent))


@router.post("/conflicts/{id}/settle", response_model=SettleResult,
             responses=responses(401, 403, 404, 409, 413, 422, 429, 503),
             summary="Settle a conflict: the right claim wins, the agents' trust moves")
async def settle(
    body: SettleBody,
    tenant: TenantDep,
    memory: MemoryDep,
    bus: BusDep,
    conflict_id: Annotated[Identifier, Path(alias="id")],
) -> JSONResponse:
    result = await memory.settle(tenant, conflict_id, body.fact_id, body.by)
    await bus.publish_quietly(FactChanged, tenant=tenant, id=result.winner, version=0, change="settled",
                              actor=body.by)
    return respond(result)
