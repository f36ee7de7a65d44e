"""The tenants' isolation, shown (admin key): POST /v1/console/isolation writes a secret word into
one tenant (a turn that says it and a fact that holds it, announced on its live feed as any write
is) and then looks for it in every tenant three ways: recall (what the agents' tools read), a raw
read-only Cypher search of every node's text (GRAPH.RO_QUERY), and the tenant's live feed (did the
write's event reach a socket of that tenant). The tenant it was written to must find it all three
ways (the control); every other tenant must find it none."""

from __future__ import annotations

import asyncio
import contextlib

from fastapi import APIRouter
from pydantic import BaseModel, Field

from relay_graph.runtime.errors import NotFound
from relay_graph.usecases import console, isolation as canary
from relay_graph.runtime.tenancy import validate_tenant

from ..deps import AdminDep, DepsDep, FeedDep, KeysDep, MemoryDep
from ..errors import responses
from ..schemas import Answer, Strict

router = APIRouter(prefix="/v1/console", tags=["console"])
ACTOR = "console"
LIVE_WAIT_S = 5.0  # how long the control tenant's socket may take to see the write (a guard, not a figure)


class IsolationBody(Strict):
    tenant: str = Field(max_length=63, description="the tenant to write the word into", examples=["acme"])
    word: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9-]{3,39}$", description="the secret word", examples=["pomegranate"])


class TenantFinding(BaseModel):
    tenant: str
    wrote: bool = Field(description="true for the tenant the word was written to (the control)")
    recall_hits: int = Field(description="recall's episodes and facts that carry the word")
    cypher_hits: int = Field(description="nodes whose text carries the word (raw read-only Cypher)")
    live_events: int = Field(description="events of the write that reached this tenant's live feed")
    found: bool


class IsolationResult(BaseModel):
    word: str
    tenant: str
    fact_id: str
    findings: list[TenantFinding] = Field(description="the tenant written to first, then every other tenant")
    isolated: bool = Field(description="the control found it, and no other tenant did")


async def _drain(sub) -> list[dict]:
    got = []
    while sub.pending():
        got.append(await sub.get())
    return got


@router.post("/isolation", response_model=Answer[IsolationResult], responses=responses(401, 403, 404, 413, 422, 429, 503),
             summary="Write a secret word into one tenant and look for it in every tenant (admin key)")
async def isolation(body: IsolationBody, _: AdminDep, deps: DepsDep, memory: MemoryDep, keys: KeysDep, feed: FeedDep
                    ) -> IsolationResult:
    home = validate_tenant(body.tenant)
    tenants = sorted(await keys.tenants())
    if home not in tenants:
        raise NotFound(f"no tenant {home!r}")
    word = body.word.lower()
    others = [t for t in tenants if t != home]
    with contextlib.ExitStack() as stack:
        subs = {t: stack.enter_context(feed.hub.subscribe(t)) for t in tenants}
        await feed.tail.start()
        async with deps.work(home, ACTOR) as call:  # flushed here: the live feed is watched next
            fact = await canary.plant_word(call, word)
        # The control's socket sees the write; by then the tail has handed it to every socket it was for.
        seen: dict[str, int] = {t: 0 for t in tenants}
        deadline = asyncio.get_running_loop().time() + LIVE_WAIT_S
        while not seen[home] and asyncio.get_running_loop().time() < deadline:
            with contextlib.suppress(asyncio.TimeoutError):
                event = await asyncio.wait_for(subs[home].get(), 0.2)
                seen[home] += event.get("id") == fact.fact_id
        for t in others:
            seen[t] = sum(e.get("id") == fact.fact_id for e in await _drain(subs[t]))

    findings = []
    for t in [home, *others]:
        recall_hits = hits = 0
        if await memory.client.graph_exists(t):  # a tenant with no graph yet holds nothing to find
            answer = await memory.recall(t, f"secret word {word}", k=10)
            recall_hits = sum(word in i.text.lower() for i in answer.items) + sum(
                word in f.object.lower() for f in answer.facts)
            hits = await console.find_word(deps.call(t, ACTOR), word)
        findings.append(TenantFinding(tenant=t, wrote=t == home, recall_hits=recall_hits, cypher_hits=hits,
                                      live_events=seen[t], found=bool(recall_hits or hits or seen[t])))
    control = findings[0]
    isolated = bool(control.recall_hits and control.cypher_hits and control.live_events) and \
        not any(f.found for f in findings[1:])
    return IsolationResult(word=word, tenant=home, fact_id=fact.fact_id, findings=findings,
                                   isolated=isolated)
