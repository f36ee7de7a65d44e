"""Writing episodes: turns of any conversation, embedded for recall, and the facts they state
about their speakers filed beside them (memory/turn_facts.py: rules, each dated and DERIVED from
its turn). They are written down by the key's agent (`api` for the tenant key), whatever an
episode's `agent` says."""

from __future__ import annotations

from fastapi import APIRouter, Response

from relay_graph.runtime.times import utcnow

from ..deps import IdentityDep, MemoryDep
from ..errors import responses
from ..idempotency import IdempotencyDep
from ..schemas import Answer, EpisodesBody, EpisodesResult

router = APIRouter(prefix="/v1/tenants/{t}", tags=["episodes"])


@router.post("/episodes", status_code=201, response_model=Answer[EpisodesResult],
             responses=responses(401, 403, 413, 422, 429, 503), summary="Write conversation turns")
async def write_episodes(body: EpisodesBody, who: IdentityDep, memory: MemoryDep,
                         idem: IdempotencyDep, response: Response) -> EpisodesResult:
    async def work() -> EpisodesResult:
        now = utcnow()
        items = [ep.to_episode(who.agent, now) for ep in body.episodes]
        ids = await memory.write_episodes(who.tenant, items, extract=True)
        response.status_code = 201
        return EpisodesResult(episode_ids=ids)

    return await idem.run_once(who.tenant, "episodes", body, response, work)
