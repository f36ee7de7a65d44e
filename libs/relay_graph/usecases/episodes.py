"""Conversation turns and notes kept as episodes, the one way the REST route (POST /episodes) and the
`remember` tool write them: each customer exactly the key given (the episodes MERGE it), embedded
for recall, and with `extract` the facts the turns state about their speakers filed from them
(memory.turn_facts). Nothing is announced: an episode is found by recall and the transcripts."""

from __future__ import annotations

from relay_graph.memory.models import EpisodeInput
from relay_graph.usecases.context import Call


async def write_episodes(call: Call, items: list[EpisodeInput], *, extract: bool = False) -> list[str]:
    """The episodes' ids, in the order given."""
    return await call.memory.write_episodes(call.tenant, items, extract=extract)
