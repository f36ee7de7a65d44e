"""Writing episodes: turns of any conversation, embedded for recall, and the facts they state
about their speakers filed beside them (memory/turn_facts.py: rules, each dated and DERIVED from
its turn). They are written down by the key's agent (`api` for the tenant key), whatever an
episode's `agent` says. Reading them back in order (a session's transcript) is
memory/transcripts.py."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from relay_graph.memory import transcripts
from relay_graph.memory.inputs import Identifier
from relay_graph.memory.transcripts import CURSOR_PATTERN, MAX_PAGE, EpisodeList
from relay_graph.runtime.times import utcnow
from relay_graph.usecases import episodes

from ..deps import CallDep, IdentityDep, MemoryDep, TenantDep
from ..errors import responses
from ..idempotency import IdempotencyDep
from ..schemas import Answer, EpisodesBody, EpisodesResult

router = APIRouter(prefix="/v1/tenants/{t}", tags=["episodes"])


@router.post("/episodes", status_code=201, response_model=Answer[EpisodesResult],
             responses=responses(401, 403, 413, 422, 429, 503), summary="Write conversation turns")
async def write_episodes(body: EpisodesBody, who: IdentityDep, call: CallDep,
                         idem: IdempotencyDep, response: Response) -> EpisodesResult:
    async def work() -> EpisodesResult:
        now = utcnow()
        items = [ep.to_episode(who.agent, now) for ep in body.episodes]
        ids = await episodes.write_episodes(call, items, extract=True)
        response.status_code = 201
        return EpisodesResult(episode_ids=ids)

    return await idem.run_once(who.tenant, "episodes", body, response, work)


@router.get("/episodes", response_model=Answer[EpisodeList], responses=responses(401, 403, 422, 429, 503),
            summary="A session's turns in order of arrival (or those of every session under a prefix)",
            description="`session`: one session's turns; `session_prefix`: those of every session whose id "
                        "starts with it (both: the session's, if its id starts with the prefix; neither: "
                        "every session's), by session id and then in order of arrival.")
async def list_episodes(
    tenant: TenantDep,
    memory: MemoryDep,
    session: Annotated[Identifier | None, Query(description="one session's turns")] = None,
    session_prefix: Annotated[Identifier | None, Query(
        description="the turns of every session whose id starts with this, by session id")] = None,
    after: Annotated[str | None, Query(pattern=CURSOR_PATTERN, description="the previous page's `next`")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
) -> EpisodeList:
    return await transcripts.list_episodes(memory.client, tenant, session=session, session_prefix=session_prefix,
                                           after=after, limit=limit)
