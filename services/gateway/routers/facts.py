"""Writing (one or a batch), retiring and reading facts. The writer is the key's agent (see
deps.Identity); a body's `agent` is a sub-label under it."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response
from pydantic import ValidationError

from relay_graph.memory.registry import predicates_help
from relay_graph.runtime.errors import RelayError
from relay_graph.memory.inputs import Name
from relay_graph.memory.models import Clock, FactInput
from relay_graph.usecases import facts

from relay_graph.usecases.context import Call

from ..deps import CallDep, Identity, IdentityDep, MemoryDep, ReaderDep, TenantDep
from ..errors import PayloadTooLarge, responses
from ..idempotency import IdempotencyDep
from ..schemas import (
    Answer,
    ApiTime,
    FactBody,
    FactsBatchBody,
    FactsBatchResult,
    FactsResult,
    FactWriteResult,
    ItemError,
    PredicateName,
    RetireBody,
    RetiredResult,
)

router = APIRouter(prefix="/v1/tenants/{t}", tags=["facts"])

ERRORS = responses(401, 403, 409, 413, 422, 429, 503)  # 409: a name two customers hold (`ambiguous`)
Subject = Annotated[Name, Query(examples=["c-1f0e4b2a9c3d5e6f", "alice rao"],
                                description="the subject's id (a customer's id). Writes address exactly this key; "
                                            "a read also takes a name, and says what it matched (`matched`) or "
                                            "that it is ambiguous (`ambiguous`)")]
OptPredicate = Annotated[PredicateName | None, Query(description=predicates_help())]


@router.post("/facts", status_code=201, response_model=Answer[FactWriteResult], responses=ERRORS,
             summary="Assert a fact: created, corroborated, superseded or conflict")
async def write_fact(body: FactBody, who: IdentityDep, call: CallDep, idem: IdempotencyDep,
                     response: Response) -> FactWriteResult:
    async def work() -> FactWriteResult:
        result = await facts.write_fact(call, body.to_input(who.agent, who.label(body.agent)), embed=True)
        response.status_code = 201
        return result

    return await idem.run_once(who.tenant, "facts", body, response, work)


def _item_error(exc: ValidationError | RelayError) -> ItemError:
    if isinstance(exc, RelayError):
        return ItemError(error={"code": exc.code, "message": exc.message})
    where = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ())) or 'fact'}: {e.get('msg', 'invalid')}"
                      for e in exc.errors()[:10])
    return ItemError(error={"code": "invalid_fact", "message": where})


@router.post("/facts/batch", response_model=Answer[FactsBatchResult], responses=ERRORS,
             summary="Assert many facts in one request: one result per fact, in order; a bad fact is "
                     "answered in its slot, the others are written")
async def write_facts_batch(body: FactsBatchBody, who: IdentityDep, call: CallDep, idem: IdempotencyDep,
                            response: Response) -> FactsBatchResult:
    if len(body.facts) > who.limits.batch_max_facts:
        raise PayloadTooLarge(f"{len(body.facts)} facts in one batch; this tenant's limit is "
                              f"{who.limits.batch_max_facts} (GET /v1/tenants/{{t}}/limits): send fewer per request",
                              code="batch_too_large")
    return await idem.run_once(who.tenant, "facts_batch", body, response, lambda: _write_batch(body, who, call))


async def _write_batch(body: FactsBatchBody, who: Identity, call: Call) -> FactsBatchResult:
    slots: list[FactWriteResult | ItemError | None] = [None] * len(body.facts)
    inputs: list[FactInput] = []
    where: list[int] = []
    for i, item in enumerate(body.facts):
        try:
            fact = FactBody.model_validate(item)
            inputs.append(fact.to_input(who.agent, who.label(fact.agent)))
        except ValidationError as exc:
            slots[i] = _item_error(exc)
            continue
        where.append(i)
    # The engine checks each fact before anything of it is written (facts.write_facts_each).
    results = await facts.write_facts_each(call, inputs, embed=True)
    for i, result in zip(where, results):
        slots[i] = _item_error(result) if isinstance(result, RelayError) else result
    written = [r for r in slots if isinstance(r, FactWriteResult)]
    return FactsBatchResult(results=slots, written=len(written),  # type: ignore[arg-type]
                            failed=len(slots) - len(written))


@router.post("/facts/retire", response_model=Answer[RetiredResult], responses=ERRORS,
             summary="End a fact (or one value of a multi-valued one)")
async def retire_fact(body: RetireBody, who: IdentityDep, call: CallDep) -> RetiredResult:
    retired = await facts.retire_fact(call, body.to_input(who.agent))
    return RetiredResult(retired=retired)


@router.get("/facts", response_model=Answer[FactsResult], responses=ERRORS,
            summary="Facts about a subject: current now, or as of a time on either clock",
            description="Without `predicate`, every predicate but those the turn rules file from "
                        "`POST /episodes` (comes_from, does, has_pet, knows, mentioned, visited): ask for "
                        "those by name (`predicate=has_pet`). Recall returns them with the turns.")
async def read_facts(
    tenant: TenantDep,
    memory: MemoryDep,
    agent: ReaderDep,
    subject: Subject,
    predicate: OptPredicate = None,
    as_of: Annotated[ApiTime | None, Query(description="ISO 8601 with offset; default: what is current now")] = None,
    clock: Annotated[Clock, Query(description="world: true in the world then; belief: on file then")] = Clock.WORLD,
) -> FactsResult:
    answer = await memory.facts_about(tenant, subject, predicate, as_of=as_of, clock=clock, reader=agent)
    return FactsResult(**answer.model_dump())


@router.get("/facts/history", response_model=Answer[FactsResult], responses=ERRORS,
            summary="Every version of a subject's facts, current and ended")
async def fact_history(tenant: TenantDep, memory: MemoryDep, subject: Subject,
                       predicate: OptPredicate = None) -> FactsResult:
    answer = await memory.history_about(tenant, subject, predicate)
    return FactsResult(**answer.model_dump())
