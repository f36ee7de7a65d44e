"""Recall's graph signals on small hand-made conversations (a real FalkorDB, the real model): a
time said relative to its session's date, a question that asks when, and a speaker's own words
about what a question names, a join of two entities through a fact. Each shows the evidence turn rising to the top with its signal and
not without it."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from relay_graph.memory import entity_graph
from relay_graph.memory import recall as recall_mod
from relay_graph.memory.recall import fusion, tuning
from relay_graph.memory.models import EpisodeInput, FactInput, RecallShape

C, M = "Caroline", "Melanie"
# Monday 8 May 2023 and a later session: every turn carries its session's time.
SESSIONS = {
    "S1": (datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc), [
        (C, "Hey Mel! How have you been?"),
        (M, "Busy! Last Saturday I ran a charity race for mental health."),
        (C, "That's amazing, races are such a good cause."),
        (M, "I love running, it clears my head every single morning."),
        (C, "My dog Biscuit keeps chewing my shoes, I need a trainer."),
        (M, "Our dog learned to sit in a week, treats work wonders."),
    ]),
    "S2": (datetime(2023, 6, 20, 18, 5, tzinfo=timezone.utc), [
        (C, "Running a race sounds hard, I could never do a race."),
        (M, "You could! Races are for everyone, even slow runners."),
        (C, "Biscuit finally stopped chewing things after the trainer came."),
        (M, "Our dog stopped barking at night after the trainer came."),
        (M, "I ran a race for charity and it felt great to run a race for a cause."),
    ]),
}


def turns() -> list[EpisodeInput]:
    return [EpisodeInput(id=f"{s}:{i}", session=s, speaker=sp, text=text, at=at)
            for s, (at, lines) in SESSIONS.items() for i, (sp, text) in enumerate(lines, start=1)]


@pytest.fixture
async def chat(memory, tenant):
    await memory.write_episodes(tenant, turns())
    return tenant


async def ranked(memory, tenant, question, k=5) -> list[str]:
    return [i.episode_id for i in (await memory.recall(tenant, question, k=k)).items]


async def test_a_time_said_relative_to_its_session_is_found_at_the_date_it_means(memory, chat, monkeypatch):
    # "last Saturday" said on Monday 8 May 2023 is 6 May: no turn was said that day
    question = "What happened on 6 May 2023?"
    r = await memory.recall(chat, question, k=3)
    assert r.items[0].episode_id == "S1:2"
    assert r.items[0].path[0].startswith("q -> time '6 May 2023'")
    monkeypatch.setitem(recall_mod.WEIGHTS, "time", 0.0)
    assert (await ranked(memory, chat, question, 3))[:1] != ["S1:2"]


async def test_a_question_that_asks_when_finds_the_speakers_turn_that_dates_it(memory, chat, monkeypatch):
    question = "When did Melanie run a race?"
    r = await memory.recall(chat, question, k=3)
    assert r.items[0].episode_id == "S1:2"
    monkeypatch.setitem(recall_mod.WEIGHTS, "dated", 0.0)
    assert (await ranked(memory, chat, question, 3))[:1] != ["S1:2"]  # her other race talk is nearer in meaning


async def test_a_speakers_own_words_about_what_the_question_names_come_first(memory, chat, monkeypatch):
    # Both speakers talk about dogs and trainers; only Caroline's turns are about her dog
    question = "What did Caroline's dog stop doing after the trainer came?"
    r = await memory.recall(chat, question, k=3)
    assert r.items[0].episode_id == "S2:3"
    assert r.items[0].path[:2] == ["q -> speaker 'Caroline'", "speaker <-SPOKEN_BY- episode"]
    assert r.shape is RecallShape.PATH
    monkeypatch.setitem(recall_mod.WEIGHTS, "speakers", 0.0)
    assert (await ranked(memory, chat, question, 3))[:1] != ["S2:3"]


async def test_what_another_speaker_said_is_not_in_memory_for_the_named_one(memory, chat):
    # the race was Melanie's: asked of Caroline, the graph does not connect her to it
    r = await memory.recall(chat, "What did Caroline feel after the charity race for mental health she ran?", k=10)
    assert r.shape is RecallShape.NOT_IN_GRAPH
    assert "S1:2" in [i.episode_id for i in r.items]  # what there is, is still shown
    r = await memory.recall(chat, "What did Melanie feel after the charity race for mental health she ran?", k=10)
    assert r.shape is RecallShape.PATH


async def test_two_hops_through_a_fact_find_the_turn_that_names_the_other_entity(memory, tenant, monkeypatch):
    # the fact first, so the turns' words link to both entities; the evidence names only the customer
    await memory.write_fact(tenant, FactInput(subject="Alice Rao", predicate="lives_in", object="Pune", agent="intake"))
    at = datetime(2023, 7, 1, 12, 0, tzinfo=timezone.utc)
    await memory.write_episodes(tenant, [
        EpisodeInput(id=f"S:{i}", session="S", speaker=sp, text=text, at=at) for i, (sp, text) in enumerate([
            ("agent", "Alice Rao called: her line drops every evening."),
            ("agent", "Pune had heavy rain today, the roads are flooded."),
            ("agent", "Lines drop in the evening for many customers when the network is busy."),
            ("agent", "A customer asked about upgrading the plan."),
        ], start=1)])
    question = "Whose line drops every evening in Pune?"
    r = await memory.recall(tenant, question, k=3)
    assert r.items[0].episode_id == "S:1"
    assert r.items[0].path[:3] == ["q -> entity 'Pune'", "entity <-ABOUT- fact -ABOUT-> entity 'Alice Rao'",
                                   "entity <-MENTIONS- episode"]
    assert r.shape is RecallShape.PATH
    monkeypatch.setitem(recall_mod.WEIGHTS, "joined", 0.0)
    assert (await ranked(memory, tenant, question, 3))[:1] != ["S:1"]


async def test_an_entity_of_the_named_ones_community_lifts_the_turn_that_names_it(memory, graph_client, tenant,
                                                                                 monkeypatch):
    # Alice and Bob live in Pune, Dan and Eve in Mumbai: two communities of the entity graph. The
    # question names Alice; what Bob (two hops away: Alice -> Pune <- Bob) reported is the answer,
    # and Eve's turn says nearly the same words
    for who, city in (("Alice Rao", "Pune"), ("Bob Shah", "Pune"), ("Dan Roy", "Mumbai"), ("Eve Das", "Mumbai")):
        await memory.write_fact(tenant, FactInput(subject=who, predicate="lives_in", object=city, agent="intake"))
    at = datetime(2023, 7, 1, 12, 0, tzinfo=timezone.utc)
    await memory.write_episodes(tenant, [
        EpisodeInput(id=f"S:{i}", session="S", speaker="agent", text=text, at=at) for i, text in enumerate([
            "Bob Shah reported that his router light went red overnight.",
            "Eve Das saw the fibre box near her home blinking red all night.",
            "A customer asked about upgrading the plan.",
            "The weather was fine for the technicians today.",
        ], start=1)])
    question = "Was a light blinking red near Alice Rao's home?"
    assert tuning.WEIGHTS["community"] == 0.0  # off unless a deployment turns it on
    before = await ranked(memory, tenant, question, 3)
    monkeypatch.setitem(recall_mod.WEIGHTS, "community", tuning.COMMUNITY_WEIGHT)
    assert before[0] != "S:1"  # no communities yet: Eve's turn is nearer in meaning

    receipt = await entity_graph.detect_communities(graph_client, tenant)
    assert receipt.communities == 2
    r = await memory.recall(tenant, question, k=3)
    assert r.items[0].episode_id == "S:1", [i.episode_id for i in r.items]
    assert r.items[0].path[:3] == [
        "q -> entity 'Alice Rao'", "entity -IN_COMMUNITY-> community <-IN_COMMUNITY- entity 'Bob Shah'",
        "entity <-MENTIONS- episode"]
    assert "S:2" in [i.episode_id for i in r.items]  # Eve's turn is still found by meaning, below it
    monkeypatch.setitem(recall_mod.WEIGHTS, "community", 0.0)
    assert await ranked(memory, tenant, question, 3) == before


def test_another_voice_needs_the_named_speaker_to_have_said_nothing_near():
    # pure logic: Melanie's turn is nearer to a question about Caroline by more than the margin
    def cand(eid, sim):
        return fusion.Candidate(eid, 1.0 - sim)

    by_id = {"m": {"speaker": "Melanie"}, "c": {"speaker": "Caroline"}}
    far = tuning.VOICE_CEILING - 0.2
    near = tuning.VOICE_CEILING + 0.05
    margin = tuning.VOICE_MARGIN + 0.05
    assert fusion.another_voice([cand("m", far + margin), cand("c", far)], by_id, ["caroline"])
    # Caroline said something near it too: the question is hers, however much nearer Melanie's is
    assert not fusion.another_voice([cand("m", near + margin), cand("c", near)], by_id, ["caroline"])
    # within the margin, or two speakers named: no other voice
    assert not fusion.another_voice([cand("m", far + 0.01), cand("c", far)], by_id, ["caroline"])
    assert not fusion.another_voice([cand("m", far + margin), cand("c", far)], by_id, ["caroline", "melanie"])


# ------------------------------------------------------------------ facts the turns state (POST /episodes' rules)

PETS = {
    "P1": (datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc), [
        (C, "My dog Biscuit keeps chewing my shoes, I need a trainer."),
        (M, "Last Saturday we adopted a puppy named Luna!"),
        (C, "Congrats! Puppies are a lot of work."),
        (M, "Our old dog fetched sticks at the park all afternoon."),
    ]),
    "P2": (datetime(2023, 6, 20, 18, 5, tzinfo=timezone.utc), [
        (M, "Biscuit was so sweet when I came over, he brought me the ball for an hour."),
        (C, "Thanks for coming over, it was fun."),
        (M, "A dog at the park fetched a frisbee for ages, so cute."),
        (M, "Luna can sit on command now, treats work wonders."),
        (C, "My friend's dog learned to sit and roll over in a week."),
        (M, "Caroline told me she runs 5 km before work now."),
        (M, "How far do I jog? Five miles before work every morning now."),
    ]),
}


@pytest.fixture
async def pets(memory, tenant):
    await memory.write_episodes(tenant, [
        EpisodeInput(id=f"{s}:{i}", session=s, speaker=sp, text=text, at=at)
        for s, (at, lines) in PETS.items() for i, (sp, text) in enumerate(lines, start=1)], extract=True)
    return tenant


async def test_a_turn_states_a_dated_fact_about_its_speaker_with_its_source(memory, pets):
    # "Last Saturday" said on Monday 8 May 2023: Luna is Melanie's since 6 May, and the turn says so
    (luna,) = await memory.facts(pets, "Melanie", "has_pet")
    assert (luna.object, luna.valid_from) == ("Luna", datetime(2023, 5, 6, tzinfo=timezone.utc))
    r = await memory.recall(pets, "When did Melanie adopt her puppy Luna?", k=3)
    assert r.items[0].episode_id == "P1:2"
    assert luna.fact_id in [f.fact_id for f in r.facts]


async def test_a_speakers_own_entity_lifts_the_turn_that_names_it(memory, pets, monkeypatch):
    # Luna is an entity because Melanie said she adopted her, so a misspelt "Lunna" still finds
    # her (entities are matched fuzzily, words are not); Caroline's turn about a dog learning in a
    # week is nearer in meaning and shares more of the question's words, and the turn that says
    # Melanie adopted Luna names her too (but is not joined to her a second time through Melanie)
    question = "What did Lunna learn to do in a week?"
    r = await memory.recall(pets, question, k=5)
    found = [i.episode_id for i in r.items]
    assert found[0] == "P2:4", found
    assert r.items[0].path[0] == "q -> entity 'Luna'"
    monkeypatch.setitem(recall_mod.WEIGHTS, "entities", 0.0)
    found = await ranked(memory, pets, question, 5)
    assert found.index("P2:5") < found.index("P2:4"), found


async def test_two_hops_through_a_turn_fact_find_what_was_said_about_the_pets_owner(memory, pets, monkeypatch):
    # Biscuit <-has_pet- Caroline (her first turn says so) -> Melanie's turn naming Caroline, which
    # names no dog; Melanie's own jogging turn is nearer in meaning (Caroline's first turn, which
    # names Biscuit, is found by the entity itself)
    question = "How far does Biscuit's owner jog?"
    r = await memory.recall(pets, question, k=5)
    found = [i.episode_id for i in r.items]
    assert found.index("P2:6") < found.index("P2:7"), found
    assert r.items[found.index("P2:6")].path[:3] == [
        "q -> entity 'Biscuit'", "entity <-ABOUT- fact -ABOUT-> entity 'Caroline'", "entity <-MENTIONS- episode"]
    monkeypatch.setitem(recall_mod.WEIGHTS, "joined", 0.0)
    found = await ranked(memory, pets, question, 5)
    assert "P2:6" not in found or found.index("P2:7") < found.index("P2:6"), found


async def test_a_replayed_batch_files_its_turn_facts_once(memory, pets):
    await memory.write_episodes(pets, [EpisodeInput(id="P1:1", session="P1", speaker=C, text=PETS["P1"][1][0][1],
                                                    at=PETS["P1"][0])], extract=True)
    (biscuit,) = await memory.facts(pets, "Caroline", "has_pet")
    assert (biscuit.object, biscuit.corroborations) == ("Biscuit", 1)


async def test_a_speaker_and_a_time_together_find_what_that_speaker_said_then(memory, tenant, monkeypatch):
    # Melanie talks baking in May, Caroline in June; what Melanie did in June says no "bake"
    # (the fusion puts it first here with or without the signal; the score says the signal found it)
    may, june = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc), datetime(2023, 6, 20, 18, 5, tzinfo=timezone.utc)
    lines = [("B1", may, M, "I bake a cake every week, baking is my favourite thing."),
             ("B1", may, M, "I baked a lemon cake for the school fair, it was my best bake yet."),
             ("B1", may, M, "Baking bread in the oven on Sundays is a family thing for us."),
             ("B1", may, M, "I baked muffins and cookies for the bake sale."),
             ("B1", may, C, "Yum, I love lemon."),
             ("B2", june, C, "I bake every day now, cakes and pies and cookies."),
             ("B2", june, C, "I baked a chocolate cake for my mom's birthday."),
             ("B2", june, C, "My oven broke while I was baking bread, so annoying."),
             ("B2", june, C, "I baked cookies in the oven with my niece."),
             ("B2", june, M, "We made pizza dough in the oven with the kids."),
             ("B2", june, M, "Work has been busy lately.")]
    await memory.write_episodes(tenant, [EpisodeInput(id=f"{s}:{i}", session=s, speaker=sp, text=text, at=at)
                                         for i, (s, at, sp, text) in enumerate(lines, start=1)])
    question = "What did Melanie bake in June 2023?"
    r = await memory.recall(tenant, question, k=3)
    assert r.items[0].episode_id == "B2:10", [i.episode_id for i in r.items]
    monkeypatch.setitem(recall_mod.WEIGHTS, "spoken_then", 0.0)
    without = {i.episode_id: i.score for i in (await memory.recall(tenant, question, k=3)).items}
    # the signal ranks it first among Melanie's June turns: 1 / (RRF_K + 1) more
    assert r.items[0].score - without["B2:10"] == pytest.approx(1 / (tuning.RRF_K + 1), abs=1e-5)
