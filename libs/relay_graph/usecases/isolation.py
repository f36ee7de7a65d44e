"""The console's isolation check writes a secret word into one tenant, as a customer's note and a
fact, so that the console can look for it in every other tenant (recall, Cypher, the live feed)."""

from __future__ import annotations

import uuid

from relay_graph.memory.models import EpisodeInput, FactInput, FactWriteResult
from relay_graph.runtime.times import utcnow
from relay_graph.usecases import episodes, facts
from relay_graph.usecases.context import Call

CANARY = "Isolation Canary"


async def plant_word(call: Call, word: str) -> FactWriteResult:
    """The word in the call's tenant: a note by the canary customer and their `has_issue` fact
    (announced when the call is flushed, so the live feed shows it)."""
    session = f"isolation-{uuid.uuid4().hex[:8]}"
    await episodes.write_episodes(call, [EpisodeInput(
        session=session, speaker=CANARY, customer=CANARY, at=utcnow(), agent=call.agent,
        kind="InternalNote", text=f"The secret word is {word}.")])
    return await facts.write_fact(call, FactInput(subject=CANARY, predicate="has_issue", object=word,
                                                  agent=call.agent), embed=True)
