"""The facts that come with an answer: current facts ABOUT the named entities (with a subject:
only facts about the subject, so an agent serving one customer never reads another's), ranked by
how many named entities they touch, then by the distance of their claim's vector (FactText) to the
question; plus the current facts the returned episodes DERIVED.
"""

from __future__ import annotations

import asyncio
from typing import Any

from relay_graph.memory.facts import from_ms
from relay_graph.memory.models import FactState, FactView
from relay_graph.memory.queries import recall as q
from relay_graph.memory.recall import tuning
from relay_graph.memory.recall.anchors import Anchor, anchors_of
from relay_graph.runtime.db import GraphClient


def fact_view(row: dict[str, Any]) -> FactView:
    """A row of `fact` (queries.facts.FACT_FIELDS) and `subject` (its subject's name)."""
    m = row["fact"]
    return FactView(
        fact_id=m["fact_id"], subject=row["subject"], predicate=m["predicate"], object=m["object_name"],
        valid_from=from_ms(m["valid_from_ms"]), valid_to=from_ms(m.get("valid_to_ms")),
        recorded_at=from_ms(m["recorded_at_ms"]), expired_at=from_ms(m.get("expired_at_ms")),
        asserted_by=m["asserted_by"], state=FactState(m["state"]), corroborations=m.get("corroborations") or 1,
        conflict_id=m.get("conflict_id"),
    )


async def of_subject(client: GraphClient, tenant: str, v, subject: Anchor, anchors: list[Anchor],
                     limit: int) -> list[dict[str, Any]]:
    return await client.run(tenant, q.FACTS_OF_SUBJECT, {
        "subject": subject.uid, "uids": [a.uid for a in anchors], "v": v, "per_entity": tuning.PER_ENTITY_FACTS,
        "limit": limit})


async def of_entities(client: GraphClient, tenant: str, exact_t: asyncio.Task, anchors_t: asyncio.Task,
                      vector_f: asyncio.Future, limit: int) -> list[dict[str, Any]]:
    """The named entities' facts: their candidates (queries.recall.FACT_CANDIDATES) as soon as the
    entities named exactly are known, while the question is still being embedded (a misspelt name,
    found later, adds its own); ranked once the vector is there, beside round trip 2. Candidates
    are per entity, so reading them in two goes changes nothing. `vector_f` gets the vector once
    round trip 2 is on its way: that one decides when recall answers, so it is sent first."""
    async def candidates(uids: list[str]) -> list[str]:
        if not uids:
            return []
        rows = await client.run(tenant, q.FACT_CANDIDATES, {"uids": uids, "per_entity": tuning.PER_ENTITY_FACTS})
        return [r["id"] for r in rows]

    exact = [a.uid for a in anchors_of(await exact_t)]
    ids = await candidates(exact)
    uids = [a.uid for a in await anchors_t]
    ids += [i for i in await candidates([u for u in uids if u not in exact]) if i not in ids]
    if not ids:
        return []
    return await client.run(tenant, q.FACTS_OF_ENTITIES, {"fact_ids": ids, "uids": uids, "v": await vector_f,
                                                          "limit": limit})


async def derived(client: GraphClient, tenant: str, ids: list[str], subj: Anchor | None) -> list[dict[str, Any]]:
    """The current facts these episodes DERIVED (with a subject: only those ABOUT it)."""
    if not ids:
        return []
    return await client.run(tenant, q.FACTS_DERIVED, {"ids": ids, "subject": subj.uid if subj else None,
                                                      "limit": 2 * len(ids)})
