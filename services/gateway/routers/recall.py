"""Recall: the episodes and facts that answer a question."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from relay_graph.inputs import Identifier, Name, Text

from ..deps import MemoryDep, ReaderDep, TenantDep, respond
from ..errors import responses
from ..schemas import RecallResult

router = APIRouter(prefix="/v1/tenants/{t}", tags=["recall"])


@router.get("/recall", response_model=RecallResult, responses=responses(401, 403, 422, 429, 503),
            summary="What the graph remembers about a question")
async def recall(
    tenant: TenantDep,
    memory: MemoryDep,
    agent: ReaderDep,
    q: Annotated[Text, Query(max_length=2000, description="the question")],
    k: Annotated[int, Query(ge=1, le=100)] = 10,
    subject: Annotated[Name | None, Query()] = None,
    session: Annotated[Identifier | None, Query()] = None,
) -> JSONResponse:
    return respond(await memory.recall(tenant, q, k=k, subject=subject, session=session, reader=agent))
