"""Recall knows what kind of question it answers: one that names nothing on file and no time is
answered by meaning (a neighbour only breaks near-ties, unless it is beside a turn that all but
asked the question), unless it holds a word the embedder cannot read that few turns hold (then its
words lead as well); one that names a speaker, an entity or a time keeps the full fusion. Against a
real FalkorDB and the real model."""

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
    assert qn.kind_of([], [], []) is qn.Kind.MEANING
    assert qn.kind_of([], [], [], specific_word=True) is qn.Kind.WORDS
    assert qn.kind_of([], ["maya"], []) is qn.Kind.NAMED
    assert qn.kind_of([object()], [], []) is qn.Kind.NAMED
    assert may and qn.kind_of([], [], may) is qn.Kind.NAMED
    assert qn.weights(qn.Kind.MEANING) is tuning.MEANING_WEIGHTS
    assert qn.weights(qn.Kind.NAMED) is tuning.WEIGHTS
    assert qn.weights(qn.Kind.WORDS) is tuning.WORDS_WEIGHTS
    # a specific word is searched as in a named question; meaning otherwise fused as in one of meaning
    assert tuning.WORDS_WEIGHTS["words"] == tuning.WEIGHTS["words"] > 0 == tuning.MEANING_WEIGHTS["words"]
    assert tuning.WORDS_WEIGHTS["distinct"] == tuning.MEANING_WEIGHTS["distinct"] > 0 == tuning.WEIGHTS["distinct"]


def test_a_turn_only_asks_when_its_last_sentence_is_a_question():
    assert qn.asks_only("Did the milk in your fridge go bad again?  ")
    assert not qn.asks_only("Do you carry an umbrella everywhere now? It rains all the time.")
    assert not qn.asks_only("We lost power for three days.")


def test_an_entity_is_a_plain_word_when_it_is_one_lower_case_word_the_model_reads(memory):
    knows = memory.embedder.knows_word
    assert qn.plain_word("wedding", knows, "have you two picked a wedding date?")
    assert not qn.plain_word("wedding", knows, "How was the Wedding?")  # capitalised after the first word
    assert not qn.plain_word("Pune", knows, "any outage in pune?")  # filed as a name
    assert not qn.plain_word("quillfeather", knows, "any news about quillfeather?")  # spelt in pieces
    assert not qn.plain_word("golden retriever", knows, "how is the golden retriever?")
    assert not qn.plain_word("wedding", None, "a wedding")  # no vocabulary to ask


def test_words_meaning_cannot_see_are_those_the_model_spells_in_pieces_and_names(memory):
    knows = memory.embedder.knows_word
    assert knows("pottery") and knows("cravings") and knows("finished")  # whole, or with an ending off
    assert not knows("quillfeather") and not knows("e1042")
    ft = qn.fulltext_query("any news about quillfeather?")
    assert qn.unknown_terms(ft, knows) == ["quillfeather"]
    # a name the model knows as a word is still a name: which Anthony is not in its vectors
    assert qn.unknown_terms(qn.fulltext_query("Who is Anthony?"), knows, "Who is Anthony?") == ["anthony"]
    assert qn.unknown_terms(qn.fulltext_query("Anthony who?"), knows, "Anthony who?") == []
    assert qn.unknown_terms("pottery | piece", None) == ["pottery", "piece"]  # no vocabulary: every term


def test_a_word_is_specific_when_some_turns_hold_it_but_few(monkeypatch):
    monkeypatch.setattr(tuning, "SPECIFIC_SHARE", 0.05)
    monkeypatch.setattr(tuning, "SPECIFIC_MIN_TURNS", 3)
    assert qn.specific({"quillfeather": 1.0}, 18)
    assert not qn.specific({"quillfeather": 0.0}, 18)  # found nowhere: no clue
    assert not qn.specific({"acmenet": 4.0}, 18)  # in more than 3 of 18 turns
    assert qn.specific({"acmenet": 40.0}, 1_000) and not qn.specific({"acmenet": 60.0}, 1_000)
    assert not qn.specific({"acmenet": float(tuning.DF_SCAN)}, 100_000)  # counted no further: too many


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


TRAPPED = "How is the new furry family member settling in?"  # shares "new family member" with D2:1 only


async def test_words_the_model_knows_do_not_crowd_the_turn_a_remark_depends_on(memory, cues, monkeypatch):
    found = [i.episode_id for i in (await memory.recall(cues, TRAPPED, k=3)).items]
    assert found[0] == EARLIER
    monkeypatch.setattr(tuning, "MEANING_WEIGHTS", tuning.WEIGHTS)  # its words and their neighbours lead
    crowded = [i.episode_id for i in (await memory.recall(cues, TRAPPED, k=3)).items]
    assert crowded[0] == "D2:1"
