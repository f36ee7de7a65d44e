"""Moving a customer's case to another regional desk (another tenant), with its whole history.

Authorisation: the caller must hold BOTH tenants' keys. The source tenant's key is the bearer (as on
every tenant path); the target tenant's key travels in the body and is verified with the tenant
registry (TenantKeys.tenant_for: hashed, constant-time compare). A missing, wrong or other tenant's
target key gets 403 and nothing is read or written in the target. This is safer than the admin-key
alternative: the admin key only creates tenants (docs/contract.md) and must not become a key that reads
and writes every tenant's graph; a holder of one desk's key alone cannot push data into, or pull it
out to, a desk it does not control."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Response
from pydantic import BaseModel, ConfigDict, Field

from relay_graph.usecases import customers
from relay_graph.memory.models import AGENT_PATTERN
from relay_graph.runtime.tenancy import TENANT_RE

from ..deps import CallDep, KeysDep, TenantDep
from ..errors import Forbidden, responses
from ..schemas import Answer

router = APIRouter(prefix="/v1/tenants/{t}", tags=["desk"])


class CaseMoveBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    customer: str = Field(min_length=1, max_length=200, examples=["asha verma"])
    to_tenant: str = Field(pattern=TENANT_RE.pattern, examples=["acme-europe"])
    to_tenant_key: str = Field(min_length=1, max_length=256, description="the target tenant's API key")
    by: str = Field(default="api", pattern=AGENT_PATTERN, description="who moves the case")


class CaseMoveResult(BaseModel):
    customer: str
    from_region: str
    to_region: str
    move_id: str
    at: datetime
    facts: int
    episodes: int
    tickets: int
    tickets_marked: int


@router.post("/cases/move", status_code=201, response_model=Answer[CaseMoveResult],
             responses={200: {"model": CaseMoveResult, "description": "moved before: nothing new was copied"},
                        **responses(401, 403, 404, 409, 413, 422, 429, 503)},
             summary="Move a customer's case, with its history, to another regional desk",
             description="Copies the customer's facts (both clocks, states, supersedes chain, conflicts), "
             "sessions and episodes (with their vectors) and tickets (stage, timeline, handoffs) into the "
             "target tenant, and marks the move in this tenant (a CaseMove and a `moved_desk` event on each "
             "open ticket); nothing is deleted. Needs this tenant's key as bearer AND the target tenant's key "
             "in `to_tenant_key` (403 `target_forbidden` otherwise). 201 when something was copied, 200 on a "
             "repeat (counts 0). 404 `unknown_customer`; 422 `not_a_regional_desk`, `same_desk`; 409 "
             "`case_diverged` when the target holds different facts about the customer.")
async def move_case(body: CaseMoveBody, tenant: TenantDep, call: CallDep, keys: KeysDep,
                    response: Response) -> CaseMoveResult:
    owner = await keys.tenant_for(body.to_tenant_key)
    if owner is None or owner != body.to_tenant:
        raise Forbidden("moving a case needs the target tenant's key in `to_tenant_key`", code="target_forbidden")
    moved = await customers.move_case(call, owner, body.customer, by=body.by)
    response.status_code = 201 if moved.copied else 200
    return CaseMoveResult(**moved.model_dump())
