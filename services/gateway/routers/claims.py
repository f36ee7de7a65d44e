"""Disagreements: the claims for one value, and settling a conflict."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from relay_graph.memory.inputs import Identifier, Name

from relay_graph.memory.registry import predicates_help
from relay_graph.usecases import facts

from ..deps import CallDep, IdentityDep, MemoryDep, ReaderDep, TenantDep
from ..errors import Forbidden, responses
from ..idempotency import IdempotencyDep
from ..schemas import Answer, ClaimsView, PredicateName, SettleBody, SettleResult

router = APIRouter(prefix="/v1/tenants/{t}", tags=["claims"])


@router.get("/claims", response_model=Answer[ClaimsView], responses=responses(401, 403, 422, 429, 503),
            summary="Every agent's claim for a subject's predicate, best first")
async def claims(
    tenant: TenantDep,
    memory: MemoryDep,
    agent: ReaderDep,
    subject: Annotated[Name, Query(description="the subject's id, or a name: `matched` says what a name was read "
                                               "as, `ambiguous` lists the candidates when it names two or more")],
    predicate: Annotated[PredicateName, Query(description=predicates_help())],
) -> ClaimsView:
    return await memory.claims(tenant, subject, predicate, reader=agent)


@router.post("/conflicts/{id}/settle", response_model=Answer[SettleResult],
             responses=responses(401, 403, 404, 409, 413, 422, 429, 503),
             summary="Settle a conflict (tenant key): the right claim wins, the agents' trust moves")
async def settle(
    body: SettleBody,
    who: IdentityDep,
    call: CallDep,
    conflict_id: Annotated[Identifier, Path(alias="id")],
    idem: IdempotencyDep,
    response: Response,
) -> SettleResult:
    # A person settles, with the tenant's key: an agent's key could otherwise settle its own
    # disputes and raise its own trust.
    if not who.tenant_key:
        raise Forbidden("a conflict is settled by a person, with the tenant's key; an agent key cannot settle")

    async def work() -> SettleResult:
        return await facts.settle(call, conflict_id, body.fact_id, body.by)

    return await idem.run_once(who.tenant, f"settle:{conflict_id}", body, response, work)
