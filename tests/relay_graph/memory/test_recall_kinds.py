"""Recall knows what kind of question it answers: one that names nothing on file and no time and
shares no word with any turn is answered by meaning (a neighbour only breaks near-ties); one that
names a speaker or a time, or whose words find turns, keeps the full fusion. Against a real
FalkorDB and the real model."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from relay_graph.memory.models import EpisodeInput
from relay_graph.memory.recall import question as qn
from relay_graph.memory.recall import tuning
from relay_graph.memory.time_expressions import windows

A, B = "Maya", "Jonas"
SESSIONS = {
    "D1": (datetime(2024, 1, 8, 18, 0, tzinfo=timezone.utc), [
        (A, "Hey! How was your week?"),
        (B, "Pretty good, busy at work but nothing special."),
        (A, "We finally adopted a golden retriever puppy from the shelter last week."),
        (B, "That sounds lovely, I'm happy for you."),
        (A, "I went for a long walk in the park this morning."),
    ]),
    "D2": (datetime(2024, 1, 15, 18, 0, tzinfo=timezone.utc), [
        (B, "My new family photo album finally arrived, every member of the family is in it."),
        (A, "Have you been to the new farmers market on Main Street?"),
        (B, "There's a new museum exhibit about ancient Egypt."),
        (A, "The new bakery downtown has amazing croissants."),
        (B, "Let's catch up again soon, take care!"),
    ]),
}
REMARK = "How is the furry companion adjusting?"  # depends on D1:3, shares no word with any turn
EARLIER = "D1:3"


@pytest.fixture
async def cues(memory, tenant):
    items = [EpisodeInput(id=f"{s}:{i}", session=s, speaker=who, text=text, at=at)
             for s, (at, lines) in SESSIONS.items() for i, (who, text) in enumerate(lines, start=1)]
    await memory.write_episodes(tenant, items, extract=True)
    return tenant


def test_a_question_naming_nothing_is_one_of_meaning():
    may = windows("what happened in May 2023?", None)
    assert qn.kind_of([], [], [], words_found=False) is qn.Kind.MEANING
    assert qn.kind_of([], [], [], words_found=True) is qn.Kind.NAMED
    assert qn.kind_of([], ["maya"], [], words_found=False) is qn.Kind.NAMED
    assert qn.kind_of([object()], [], [], words_found=False) is qn.Kind.NAMED
    assert may and qn.kind_of([], [], may, words_found=False) is qn.Kind.NAMED
    assert qn.weights(qn.Kind.MEANING) is tuning.MEANING_WEIGHTS
    assert qn.weights(qn.Kind.NAMED) is tuning.WEIGHTS


async def test_a_remark_that_shares_no_words_finds_the_turn_it_depends_on(memory, cues, monkeypatch):
    found = [i.episode_id for i in (await memory.recall(cues, REMARK, k=3)).items]
    assert found[0] == EARLIER
    # fused as a named question is, the turns beside it (neighbours of the best hit, and a little
    # near in meaning themselves) push it down
    monkeypatch.setattr(tuning, "MEANING_WEIGHTS", tuning.WEIGHTS)
    crowded = [i.episode_id for i in (await memory.recall(cues, REMARK, k=3)).items]
    assert crowded[0] != EARLIER


async def test_a_question_naming_a_speaker_keeps_the_full_fusion(memory, cues, monkeypatch):
    question = "What did Maya adopt from the shelter?"
    before = (await memory.recall(cues, question, k=5)).model_dump()
    monkeypatch.setattr(tuning, "MEANING_WEIGHTS", {k: 0.0 for k in tuning.WEIGHTS})
    assert (await memory.recall(cues, question, k=5)).model_dump() == before
    assert before["items"][0]["episode_id"] == EARLIER
