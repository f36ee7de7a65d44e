"""Sentence vectors for facts, written in batches after the facts themselves.

`embed_facts` takes what `write_fact` returned (or fact ids), reads the facts' predicates and
objects, embeds the claims nobody embedded before (in one embedder call) and links every fact to
its `FactText` in one statement. Why the text is the claim without its subject, and why the vector
is not on the Fact node: see queries/fact_embeddings.py.
"""

from __future__ import annotations

from typing import Iterable

from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embeddings import Embedder
from relay_graph.memory.episodes import wire_vector
from relay_graph.runtime.errors import RelayError
from relay_graph.memory.models import FactInput, FactWriteResult
from relay_graph.memory.queries import fact_embeddings as q
from relay_graph.memory.registry import clean_text, fixed_claims
from relay_graph.memory.registry import get as get_predicate

MAX_BATCH = 1_000


def claim_text(predicate: str, obj: str) -> str:
    """"lives_in" + "Pune" -> "lives in Pune"; a predicate with a fixed wording ("phone" -> "phone
    number") ignores the value (the graph builds the same text: queries.fact_embeddings)."""
    return fixed_claims().get(predicate) or f"{predicate.replace('_', ' ')} {obj}"


def input_claims(facts: Iterable[FactInput]) -> list[str]:
    """The claims a batch of inputs will be phrased as, to embed them ahead of writing (a pipeline
    embeds batch N+1 while batch N is written; `embed_facts` then finds the vectors in the
    embedder's cache). The object as its predicate checks it; an object that turns out to be an
    existing entity spelt differently is phrased with that spelling, and embedded then. Inputs
    that fail their checks are left out (writing them raises)."""
    out: dict[str, None] = {}
    for f in facts:
        try:
            p = get_predicate(f.predicate)
            out[claim_text(p.name, p.check(clean_text(f.object, "object")))] = None
        except RelayError:
            continue
    return list(out)


async def embed_facts(client: GraphClient, embedder: Embedder, tenant: str,
                      facts: Iterable[FactWriteResult | str]) -> int:
    """Gives every listed fact a vector (through its FactText); returns how many texts were
    embedded (0 when every claim was known already). Facts that have one keep it."""
    ids = sorted({f.fact_id if isinstance(f, FactWriteResult) else str(f) for f in facts})
    embedded = 0
    for i in range(0, len(ids), MAX_BATCH):
        embedded += await _embed_batch(client, embedder, tenant, ids[i : i + MAX_BATCH])
    return embedded


async def _embed_batch(client: GraphClient, embedder: Embedder, tenant: str, ids: list[str]) -> int:
    rows = await client.run(tenant, q.UNPHRASED, {"ids": ids, "fixed": fixed_claims()})
    if not rows:
        return 0
    new = sorted({r["text"] for r in rows if not r["known"]})
    vectors = await embedder.aembed(new) if new else []
    await client.run(tenant, q.WRITE, {
        "texts": [{"text": t, "vec": wire_vector(v)} for t, v in zip(new, vectors)],
        "links": [{"id": r["fact_id"], "text": r["text"]} for r in rows],
    })
    return len(new)
