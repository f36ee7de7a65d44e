"""A tenant's common ground (memory.recall.common_ground): its mean, read from the graph and kept,
and the `distinct` signal that asks a question of meaning without it, against a real FalkorDB and
the real model."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from bench import implicit_cues as ic
from relay_graph.memory.models import EpisodeInput
from relay_graph.memory.queries import recall as q
from relay_graph.memory.recall import common_ground, signals, tuning
from relay_graph.memory.recall.anchors import Anchor

T0 = datetime(2024, 1, 8, 18, 0, tzinfo=timezone.utc)


def test_the_mean_is_a_unit_vector_and_none_below_the_minimum(monkeypatch):
    monkeypatch.setattr(tuning, "COMMON_MIN", 3)
    assert common_ground.unit_mean([[1.0, 0.0]] * 2) is None
    got = common_ground.unit_mean([[2.0, 0.0], [0.0, 1.0], [0.0, 1.0]])  # each taken as a unit vector
    assert got is not None and np.allclose(got, np.array([1.0, 2.0]) / np.sqrt(5.0))
    assert common_ground.unit_mean([[1.0, 0.0], [-1.0, 0.0], [0.0, 0.0]]) is None  # they cancel out


def test_the_question_is_shifted_away_from_the_common_ground(monkeypatch):
    monkeypatch.setattr(tuning, "COMMON_SHIFT", 0.5)
    assert common_ground.without([0.6, 0.8], None) is None
    assert common_ground.without([0.6, 0.8], np.array([1.0, 0.0, 0.0])) is None  # another model's vector
    assert list(common_ground.without([0.6, 0.8], np.array([1.0, 0.0]))) == pytest.approx([0.1, 0.8])


def _turns(texts):
    return [EpisodeInput(id=f"t{i}", session="s1", speaker="sam", text=t, at=T0 + timedelta(minutes=i))
            for i, t in enumerate(texts)]


async def test_the_mean_of_the_first_turns_is_read_once_and_kept(memory, tenant, monkeypatch):
    texts = ic.load_data()["distractors"][:30]
    await memory.write_episodes(tenant, _turns(texts))
    sent = []
    run = memory.client.run

    async def counted(t, query, params=None):
        sent.append(query.name)
        return await run(t, query, params)

    monkeypatch.setattr(memory.client, "run", counted)
    got = await common_ground.read(memory.client, tenant)
    vectors = np.asarray(memory.embedder.embed(texts), dtype=np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    expected = vectors.mean(axis=0) / np.linalg.norm(vectors.mean(axis=0))
    assert got is not None and float(got @ expected) > 0.9999
    assert await common_ground.read(memory.client, tenant) is got  # kept
    assert sent == [q.COMMON_GROUND.name]
    monkeypatch.setattr(tuning, "COMMON_YOUNG_TTL_S", 0.0)  # 30 turns: fewer than the sample, read again
    await common_ground.read(memory.client, tenant)
    assert sent == [q.COMMON_GROUND.name] * 2
    # recalls that find it due together share one read
    both = await asyncio.gather(common_ground.read(memory.client, tenant), common_ground.read(memory.client, tenant))
    assert sent == [q.COMMON_GROUND.name] * 3 and both[0] is both[1]


async def test_a_read_under_way_when_the_tenant_is_forgotten_is_not_kept(memory, tenant):
    await memory.write_episodes(tenant, _turns(ic.load_data()["distractors"][:30]))
    kept = memory.client.kept("memory.recall.common_ground", dict)
    reading = asyncio.ensure_future(common_ground.read(memory.client, tenant))
    await asyncio.sleep(0)  # the read is under way
    memory.client.forget_tenant(tenant)  # deleted meanwhile
    assert await reading is not None  # its callers have it
    assert tenant not in kept
    assert await common_ground.read(memory.client, tenant) is not None and tenant in kept  # read anew


async def test_a_small_tenant_has_no_common_ground(memory, tenant):
    await memory.write_episodes(tenant, _turns(ic.load_data()["distractors"][: tuning.COMMON_MIN - 1]))
    assert await common_ground.read(memory.client, tenant) is None


def test_only_a_question_that_names_nothing_is_asked_without_it():
    dv = [0.2] * 384
    ask = signals.Ask(None, 10, 10, [], [], [], None, distinct=dv)
    parts, params = signals.parts_of(ask)
    assert "distinct" in parts and params["dv"] is dv
    named = signals.Ask(None, 10, 10, [], ["maya"], [], None, distinct=dv)
    assert "distinct" not in signals.parts_of(named)[0]
    # an entity whose name is a plain word names nothing; nor does it join to what else it is about
    wedding = Anchor("u1", "wedding", "Activity", "exact")
    plain = signals.Ask(None, 10, 10, [wedding], [], [], None, distinct=dv, plain=frozenset({"u1"}))
    parts = signals.parts_of(plain)[0]
    assert "distinct" in parts and "entities" in parts and "joined" not in parts
    pune = signals.Ask(None, 10, 10, [Anchor("u2", "Pune", "City", "exact")], [], [], None, distinct=dv)
    assert {"entities", "joined"} <= set(signals.parts_of(pune)[0]) and "distinct" not in signals.parts_of(pune)[0]


async def test_without_the_common_ground_the_turn_a_remark_depends_on_leads(memory, tenant, monkeypatch):
    # the bench's conversation 1 (small talk around its earlier turns): asked by meaning alone, the
    # migraine turn is third, under small talk; without the common ground it leads
    conv = ic.build(ic.load_data(), 8)[1]
    await memory.write_episodes(tenant, [EpisodeInput(id=t.id, session=t.session, speaker=t.speaker, text=t.text,
                                                      at=t.at) for t in conv.turns])
    cue = next(c for c in conv.cues if "neurologist" in c.q)
    found = [i.episode_id for i in (await memory.recall(tenant, cue.q, k=5)).items]
    assert found[0] == cue.evidence
    for weights in (tuning.MEANING_WEIGHTS, tuning.WORDS_WEIGHTS):
        monkeypatch.setitem(weights, "distinct", 0.0)
    alone = [i.episode_id for i in (await memory.recall(tenant, cue.q, k=5)).items]
    assert alone[0] != cue.evidence
