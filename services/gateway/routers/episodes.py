"""Writing episodes: turns of any conversation, embedded for recall."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from ..deps import MemoryDep, TenantDep, respond
from ..errors import responses
from ..idempotency import IdempotencyDep
from ..schemas import EpisodesBody, EpisodesResult

router = APIRouter(prefix="/v1/tenants/{t}", tags=["episodes"])


@router.post("/episodes", status_code=201, response_model=EpisodesResult,
             responses=responses(401, 403, 413, 422, 429, 503), summary="Write conversation turns")
async def write_episodes(body: EpisodesBody, tenant: TenantDep, memory: MemoryDep,
                         idem: IdempotencyDep) -> JSONResponse:
    async def work() -> JSONResponse:
        ids = await memory.write_episodes(tenant, list(body.episodes))
        return respond(EpisodesResult(episode_ids=ids), 201)

    return await idem.run_once(tenant, "episodes", body, work)
