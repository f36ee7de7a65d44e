"""What a turn's words say (the process's extractor), read with the tenant catalogue's cities, plans
and routers (`ExtractionContext`), kept per tenant for CONTEXT_TTL_S. Reads only."""

from __future__ import annotations

import time
from collections import OrderedDict

from relay_graph.desk import catalogue
from relay_graph.desk.extraction import Extraction, ExtractionContext
from relay_graph.runtime.stages import stage
from relay_graph.usecases.context import Deps

CONTEXT_TTL_S = 30.0  # a region seeded meanwhile is known to the extractor this much later at most
_CONTEXT_TENANTS = 256


def extraction_contexts(deps: Deps) -> "OrderedDict[str, tuple[float, ExtractionContext]]":
    """The extraction contexts read lately, by tenant, kept with the process's graph client."""
    return deps.client.kept("intake.extraction_contexts", OrderedDict)


async def extraction_context(deps: Deps, tenant: str) -> ExtractionContext:
    """The tenant catalogue's cities, plans and routers for the extractor, read at most once per
    CONTEXT_TTL_S per tenant (empty when the tenant has no catalogue: the extractor's own lists)."""
    cache = extraction_contexts(deps)
    now = time.monotonic()
    hit = cache.get(tenant)
    if hit is not None and now - hit[0] < CONTEXT_TTL_S:
        return hit[1]
    ctx = await catalogue.extraction_context(deps.client, tenant)
    cache[tenant] = (now, ctx)
    cache.move_to_end(tenant)
    while len(cache) > _CONTEXT_TENANTS:
        cache.popitem(last=False)
    return ctx


async def extract(deps: Deps, tenant: str, text: str) -> Extraction:
    with stage("intake.extract"):
        return await deps.extractor.extract(text, await extraction_context(deps, tenant))
