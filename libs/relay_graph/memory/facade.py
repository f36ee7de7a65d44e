"""The memory facade one process holds: a graph client and an embedder, and the operations of
the write and read paths. Each operation lives in its aggregate's module (facts, episodes,
recall); this class only wires them to the shared connection pool and model."""

from __future__ import annotations

import asyncio
import time

from datetime import datetime

from relay_graph.memory import episodes, fact_embeddings, facts, predicates, recall, turn_facts
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embeddings import Embedder
from relay_graph.runtime.errors import RelayError
from relay_graph.runtime.metrics import catalogue as metrics
from relay_graph.memory.models import (
    ClaimsView,
    FactsAnswer,
    Clock,
    EpisodeInput,
    FactInput,
    FactView,
    FactWriteResult,
    RecallResult,
    RetireInput,
    SettleResult,
)


class Memory:
    def __init__(self, client: GraphClient, embedder: Embedder | None = None):
        self.client = client
        self.embedder = embedder

    async def write_fact(self, tenant: str, fact: FactInput, *, embed: bool = False) -> FactWriteResult:
        result = await facts.write_fact(self.client, tenant, fact)
        if embed:
            await fact_embeddings.embed_facts(self.client, self._embedder(), tenant, [result])
        return result

    async def write_facts(self, tenant: str, items: list[FactInput], *, embed: bool = False) -> list[FactWriteResult]:
        """Many facts in few statements (`facts.write_facts`); with `embed`, every written fact
        also gets its claim's vector (`fact_embeddings.embed_facts`: one embedder call for the
        claims nobody embedded before, one read and one write)."""
        results = await facts.write_facts(self.client, tenant, items)
        if embed and results:
            await fact_embeddings.embed_facts(self.client, self._embedder(), tenant, results)
        return results

    async def write_facts_each(self, tenant: str, items: list[FactInput], *, embed: bool = False
                               ) -> list[FactWriteResult | RelayError]:
        """`facts.write_facts_each` (atomic per fact, an error in the slot of a fact that failed);
        with `embed`, every written fact gets its claim's vector as in `write_facts`."""
        results = await facts.write_facts_each(self.client, tenant, items)
        written = [r for r in results if isinstance(r, FactWriteResult)]
        if embed and written:
            await fact_embeddings.embed_facts(self.client, self._embedder(), tenant, written)
        return results

    async def retire_fact(self, tenant: str, retire: RetireInput) -> list[str]:
        return await facts.retire_fact(self.client, tenant, retire)

    async def facts(
        self,
        tenant: str,
        subject: str,
        predicate: str | None = None,
        *,
        as_of: datetime | None = None,
        clock: Clock = Clock.WORLD,
        reader: str | None = None,
    ) -> list[FactView]:
        return await facts.read_facts(self.client, tenant, subject, predicate, as_of=as_of, clock=clock, reader=reader)

    async def facts_about(
        self,
        tenant: str,
        subject: str,
        predicate: str | None = None,
        *,
        as_of: datetime | None = None,
        clock: Clock = Clock.WORLD,
        reader: str | None = None,
    ) -> FactsAnswer:
        return await facts.facts_about(self.client, tenant, subject, predicate, as_of=as_of, clock=clock,
                                       reader=reader)

    async def history(self, tenant: str, subject: str, predicate: str | None = None) -> list[FactView]:
        return await facts.history(self.client, tenant, subject, predicate)

    async def history_about(self, tenant: str, subject: str, predicate: str | None = None) -> FactsAnswer:
        return await facts.history_about(self.client, tenant, subject, predicate)

    async def claims(self, tenant: str, subject: str, predicate: str, *, reader: str | None = None) -> ClaimsView:
        return await facts.claims(self.client, tenant, subject, predicate, reader=reader)

    async def settle(self, tenant: str, conflict_id: str, fact_id: str, by: str) -> SettleResult:
        return await facts.settle(self.client, tenant, conflict_id, fact_id, by)

    async def define_predicate(self, tenant: str, name: str, definition: predicates.PredicateDefinition, *,
                               agent: str) -> tuple[predicates.PredicateView, bool]:
        """A predicate of the tenant's own (`predicates.define`): its view, and whether it is new."""
        return await predicates.define(self.client, tenant, name, definition, agent=agent)

    async def retire_predicate(self, tenant: str, name: str) -> bool:
        return await predicates.retire(self.client, tenant, name)

    async def predicates(self, tenant: str) -> predicates.PredicateList:
        return await predicates.list_predicates(self.client, tenant)

    async def write_episodes(self, tenant: str, items: list[EpisodeInput], *, embed: bool = True,
                             extract: bool = False) -> list[str]:
        """`episodes.write_episodes`; with `extract`, then the facts the turns state about their
        speakers (`turn_facts.file_facts`: rules, dated, each with its source turn)."""
        ids = await episodes.write_episodes(self.client, self._embedder(), tenant, items, embed=embed)
        if extract:
            await turn_facts.file_facts(self.client, self._embedder(), tenant, items, ids)
        return ids

    async def embed_missing(self, tenant: str, episode_ids: list[str]) -> int:
        return await episodes.embed_missing(self.client, self._embedder(), tenant, episode_ids)

    async def recall(
        self, tenant: str, q: str, *, k: int = 10, subject: str | None = None, session: str | None = None,
        reader: str | None = None,
    ) -> RecallResult:
        started, outcome = time.perf_counter(), "error"
        try:
            result = await recall.recall(self.client, self._embedder(), tenant, q, k=k, subject=subject,
                                         session=session, reader=reader)
            outcome = "ok"
            return result
        finally:
            metrics.RECALL_DURATION.record(time.perf_counter() - started, {"outcome": outcome})

    async def embed_text(self, text: str) -> list[float]:
        """The vector the model gives `text`, as every write and recall embeds (off the loop)."""
        return await asyncio.to_thread(self._embedder().embed_one, text)

    def _embedder(self) -> Embedder:
        if self.embedder is None:
            self.embedder = Embedder(self.client.settings.model_dir, batch_size=self.client.settings.embed_batch_size,
                                     cache_size=self.client.settings.embed_cache_size,
                                     threads=self.client.settings.embed_threads)
        return self.embedder
