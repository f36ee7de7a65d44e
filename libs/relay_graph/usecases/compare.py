"""The same question asked of Relay and of a plain vector store, live, on one tenant: the
console's Benchmarks page puts the two answers and their evidence side by side.

Relay answers with recall about the customer (its facts, current first, and the episodes on its
path). The vector store is the memory benchmark's baseline run on the tenant's own turns: the
customer's episodes, embedded by the same model, ranked by cosine similarity to the question, the
top 10 kept and dated, newest first (bench/memory/contexts.py does the same over the benchmark's
conversations). Neither side has a reader here: each side's answer is what it puts first (Relay:
its first fact, else its best episode; the vector store: its nearest turn), so the page shows what
a reader would be handed, not a model's words."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, Field

from relay_graph.desk.network.store import customer_identity
from relay_graph.usecases.queries import console as q
from relay_graph.usecases.context import Call

TOP_K = 10


class Evidence(BaseModel):
    kind: Literal["fact", "episode"]
    text: str
    at: datetime | None = Field(description="a fact's valid_from, an episode's time")
    score: float | None = Field(description="an episode's similarity (vector store) or recall score")
    state: str | None = Field(default=None, description="a fact's state: current, superseded, retired, claim")


class Side(BaseModel):
    system: Literal["relay", "vector store"]
    answer: str | None = Field(description="what this side puts first (null: it has nothing)")
    evidence: list[Evidence]
    ms: float = Field(description="how long it took, on this machine, now")


class Comparison(BaseModel):
    question: str
    customer: str
    relay: Side
    vector: Side


def _ms_dt(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


async def compare(call: Call, question: str, customer: str) -> Comparison:
    memory, tenant = call.memory, call.tenant
    started = time.perf_counter()
    found = await memory.recall(tenant, question, k=TOP_K, subject=customer)
    facts = sorted(found.facts, key=lambda f: f.state.value != "current")
    relay_evidence = [Evidence(kind="fact", text=f"{f.subject} · {f.predicate} = {f.object}", at=f.valid_from,
                               score=None, state=f.state.value) for f in facts] + [
        Evidence(kind="episode", text=f"{i.speaker}: {i.text}", at=i.at, score=round(i.score, 4)) for i in found.items]
    relay = Side(system="relay", answer=(f"{facts[0].predicate} = {facts[0].object}" if facts else
                                         found.items[0].text if found.items else None),
                 evidence=relay_evidence, ms=round((time.perf_counter() - started) * 1000, 1))

    started = time.perf_counter()
    _, _, uid = customer_identity(customer)
    rows = await memory.client.run(tenant, q.CUSTOMER_TURNS_NEAREST,
                                   {"uid": uid, "v": await memory.embed_text(question), "k": TOP_K})
    nearest = rows[0] if rows else None
    turns = sorted(rows, key=lambda r: r["at_ms"] or 0, reverse=True)  # dated, newest first
    vector = Side(system="vector store",
                  answer=f"{nearest['speaker']}: {nearest['text']}" if nearest else None,
                  evidence=[Evidence(kind="episode", text=f"{r['speaker']}: {r['text']}", at=_ms_dt(r["at_ms"]),
                                     score=round(1 - float(r["d"]), 4)) for r in turns],
                  ms=round((time.perf_counter() - started) * 1000, 1))
    return Comparison(question=question, customer=customer, relay=relay, vector=vector)
