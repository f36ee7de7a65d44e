"""The question's vector, embedded without the names of the speakers it names ("What did Caroline
paint?" -> "What did paint?"): the speaker signal carries who, and a name left in the vector makes
every "Hey Caroline!" look like an answer (MiniLM weighs names heavily).

The model starts before the speaker query answers, on the speakers this process last saw in the
tenant (`SpeakerKeys`, a list at most a few seconds old); the speaker query checks that guess and
a wrong one is embedded again, so staleness costs time, never a different answer.
"""

from __future__ import annotations

import asyncio
import time

from relay_graph.memory.episodes import VectorParam, wire_vector
from relay_graph.memory.queries import recall as q
from relay_graph.memory.recall.concurrency import task
from relay_graph.memory.recall.question import text_without_speakers
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embeddings import Embedder


class SpeakerKeys:
    """Per graph client (kept with it), each tenant's speaker keys as last read: a guess at which of a
    question's n-grams are speakers, so its vector (embedded without their names) can start before
    the speaker query answers. The guess is only a head start: recall checks it against that query
    every time and embeds again when they differ, so a stale list (a speaker added since the last
    read, which is at most TTL_S old, a few seconds) never changes an answer; it costs one more
    embedding. Each speaker query's answer corrects the list for the n-grams it asked about."""

    TTL_S = 5.0
    MAX = 20_000  # keys read per tenant; a bigger tenant's guess covers the first MAX

    def _tenants(self, client: GraphClient) -> dict[str, tuple[frozenset[str], float]]:
        return client.kept("memory.recall.speaker_keys", dict)

    def guess(self, client: GraphClient, tenant: str) -> frozenset[str] | None:
        """The tenant's speaker keys as last known (None before the first read)."""
        entry = self._tenants(client).get(tenant)
        return entry[0] if entry is not None else None

    def stale(self, client: GraphClient, tenant: str) -> bool:
        entry = self._tenants(client).get(tenant)
        return entry is None or time.monotonic() - entry[1] > self.TTL_S

    async def read(self, client: GraphClient, tenant: str) -> None:
        rows = await client.run(tenant, q.SPEAKER_KEYS, {"limit": self.MAX})
        self._tenants(client)[tenant] = (frozenset(r["key"] for r in rows), time.monotonic())

    def learn(self, client: GraphClient, tenant: str, grams: list[str], found: set[str]) -> None:
        """What a speaker query said about these n-grams (the speakers among them), kept."""
        tenants = self._tenants(client)
        keys, at = tenants.get(tenant, (frozenset(), 0.0))  # learnt alone: still due for a read
        tenants[tenant] = ((keys - set(grams)) | found, at)


SPEAKER_KEYS = SpeakerKeys()


def start(client: GraphClient, embedder: Embedder, tenant: str, question: str, grams: list[str],
          speakers_t: asyncio.Task) -> asyncio.Task:
    """The question's vector, without the names of the speakers it names. On a guess at the
    speakers the model starts now, before any query is sent (a task would start it only at the
    caller's next await, after the first round trip's queries are built); the task embeds again if
    the speaker query disagrees with the guess."""
    guess = SPEAKER_KEYS.guess(client, tenant) if grams else frozenset()
    if guess is None:  # nothing read yet for this tenant: wait for the speaker query
        return task(_on_speakers(client, embedder, tenant, question, grams, speakers_t, frozenset(), None))
    guessed = guess.intersection(grams)
    first = embedder.submit([text_without_speakers(question, guessed)], _wired)
    return task(_on_speakers(client, embedder, tenant, question, grams, speakers_t, guessed, first))


async def _on_speakers(client: GraphClient, embedder: Embedder, tenant: str, question: str, grams: list[str],
                       speakers_t: asyncio.Task, guessed: frozenset[str],
                       first: asyncio.Future | None) -> VectorParam:
    try:
        found = {s["key"] for s in await speakers_t}
    except BaseException:
        if first is not None:
            first.cancel()
        raise
    if first is not None and found == guessed:
        return await first
    SPEAKER_KEYS.learn(client, tenant, grams, found)
    if first is not None:
        first.cancel()  # the wrong text's thread finishes on its own
    return await embedder.submit([text_without_speakers(question, found)], _wired)


def _wired(vectors: list[list[float]]) -> VectorParam:
    # in the model's thread: the vector's Cypher text (a quarter of a millisecond) is made before
    # the event loop hears the vector is there
    return wire_vector(vectors[0])
