"""Writing, retiring and reading facts."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from relay_graph import registry
from relay_graph.inputs import Name
from relay_graph.models import Clock
from relay_graph.streams import FactChanged

from ..deps import BusDep, MemoryDep, ReaderDep, TenantDep, respond
from ..errors import responses
from ..schemas import ApiTime, FactBody, FactsResult, FactWriteResult, RetireBody, RetiredResult

router = APIRouter(prefix="/v1/tenants/{t}", tags=["facts"])

ERRORS = responses(401, 403, 413, 422, 429, 503)
Subject = Annotated[Name, Query(examples=["alice rao"])]
OptPredicate = Annotated[str | None, Query(min_length=1, max_length=64, examples=["lives_in"])]


@router.post("/facts", status_code=201, response_model=FactWriteResult, responses=ERRORS,
             summary="Assert a fact: created, corroborated, superseded or conflict")
async def write_fact(body: FactBody, tenant: TenantDep, memory: MemoryDep, bus: BusDep) -> JSONResponse:
    registry.get(body.predicate)  # an unknown predicate is refused before anything is written
    result = await memory.write_fact(tenant, body.to_input())
    # For the live feed (facts are not versioned: version 0, the change says what happened).
    await bus.publish_quietly(FactChanged, tenant=tenant, id=result.fact_id, version=0,
                              change=result.outcome.value, actor=body.agent)
    return respond(result, 201)


@router.post("/facts/retire", response_model=RetiredResult, responses=ERRORS,
             summary="End a fact (or one value of a multi-valued one)")
async def retire_fact(body: RetireBody, tenant: TenantDep, memory: MemoryDep, bus: BusDep) -> JSONResponse:
    registry.get(body.predicate)
    retired = await memory.retire_fact(tenant, body.to_input())
    for fact_id in retired:
        await bus.publish_quietly(FactChanged, tenant=tenant, id=fact_id, version=0, change="retired",
                                  actor=body.agent)
    return respond(RetiredResult(retired=retired))


@router.get("/facts", response_model=FactsResult, responses=ERRORS,
            summary="Facts about a subject: current now, or as of a time on either clock")
async def read_facts(
    tenant: TenantDep,
    memory: MemoryDep,
    agent: ReaderDep,
    subject: Subject,
    predicate: OptPredicate = None,
    as_of: Annotated[ApiTime | None, Query(description="ISO 8601 with offset; default: what is current now")] = None,
    clock: Annotated[Clock, Query(description="world: true in the world then; belief: on file then")] = Clock.WORLD,
) -> JSONResponse:
    if predicate is not None:
        registry.get(predicate)
    facts = await memory.facts(tenant, subject, predicate, as_of=as_of, clock=clock, reader=agent)
    return respond(FactsResult(facts=facts))


@router.get("/facts/history", response_model=FactsResult, responses=ERRORS,
            summary="Every version of a subject's facts, current and ended")
async def fact_history(tenant: TenantDep, memory: MemoryDep, subject: Subject,
                       predicate: OptPredicate = None) -> JSONResponse:
    if predicate is not None:
        registry.get(predicate)
    return respond(FactsResult(facts=await memory.history(tenant, subject, predicate)))
