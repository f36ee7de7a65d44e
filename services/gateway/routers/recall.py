"""Recall: the episodes and facts that answer a question."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from relay_graph.memory.inputs import Identifier, Name, text_type
from relay_graph.memory.recall import MAX_QUESTION

from ..deps import MemoryDep, ReaderDep, TenantDep
from ..errors import responses
from ..schemas import Answer, RecallResult

router = APIRouter(prefix="/v1/tenants/{t}", tags=["recall"])


@router.get("/recall", response_model=Answer[RecallResult], responses=responses(401, 403, 422, 429, 503),
            summary="What the graph remembers about a question")
async def recall(
    tenant: TenantDep,
    memory: MemoryDep,
    agent: ReaderDep,
    q: Annotated[text_type(MAX_QUESTION), Query(description="the question")],  # type: ignore[valid-type]
    k: Annotated[int, Query(ge=1, le=100)] = 10,
    subject: Annotated[Name | None, Query(
        description="only this customer's memory: their id, or a name (`matched` says what it was read as; a "
                    "name of two or more customers answers shape `ambiguous` with the candidates)")] = None,
    session: Annotated[Identifier | None, Query()] = None,
) -> RecallResult:
    return await memory.recall(tenant, q, k=k, subject=subject, session=session, reader=agent)
