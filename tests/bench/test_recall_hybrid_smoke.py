"""The hybrid-recall benchmark runs end to end at tiny sizes and reports every figure; the
generator is seeded and its gold evidence is fixed before any system runs. Quality and speed are
not asserted here (that is what the benchmark is for)."""

from __future__ import annotations

import json

from rich.console import Console

from bench import recall_hybrid
from bench.conversations import TYPES, conversation

TINY = recall_hybrid.Sizes(conversations=2, sessions=4, turns_per_session=10, latency_episodes=120,
                           latency_calls=8)


async def test_quick_run_reports_every_figure(tmp_path, embedder):
    out = tmp_path / "recall_hybrid.json"
    console = Console(record=True, width=160)
    data = await recall_hybrid.run(TINY, quick=True, out=out, embedder=embedder, console=console, communities=True)

    assert json.loads(out.read_text()) == json.loads(json.dumps(data))
    for split in ("dev", "test"):
        for system in ("relay", "vector"):
            overall = data["accuracy"][split][system]["overall"]
            assert overall["n"] == data["set"]["questions"][split] > 0
            assert 0 <= overall["r@1"] <= overall["r@5"] <= overall["r@10"] <= 1
    lat = data["latency"]
    assert lat["episodes"] == 120 and lat["calls"] <= 8
    assert 0 < lat["p50_ms"] <= lat["p95_ms"] <= lat["max_ms"]
    assert data["targets"]["recall_p95"]["pass"] is None  # 120 episodes is not the 10,000 the target is about
    text = console.export_text()
    assert "Recall on the TEST split" in text and "Recall latency" in text
    c = data["community_signal"]
    assert set(c["communities"]) == {"conv-0", "conv-1", "crowd"}
    assert (c["off"]["weight"], c["on"]["weight"]) == (0.0, recall_hybrid.tuning.COMMUNITY_WEIGHT) != (0.0, 0.0)
    for side in ("off", "on"):
        assert c[side]["accuracy"]["test"]["n"] == data["set"]["questions"]["test"]
        assert 0 < c[side]["latency"]["p50_ms"] <= c[side]["latency"]["p95_ms"]
    if not any(c["communities"].values()):  # no community: the signal finds nothing and changes no answer
        assert c["off"]["accuracy"] == c["on"]["accuracy"]
    assert "Community signal off / on" in text


def test_the_set_is_seeded_and_its_evidence_is_in_the_conversation():
    a, b = conversation(3, sessions=6), conversation(3, sessions=6)
    assert [(t.id, t.text) for t in a.turns] == [(t.id, t.text) for t in b.turns]
    assert [(x.q, x.evidence) for x in a.questions] == [(x.q, x.evidence) for x in b.questions]
    ids = {t.id for t in a.turns}
    assert all(e in ids for x in a.questions for e in x.evidence)
    assert {x.type for x in a.questions} <= set(TYPES)
    assert len(set(a.speakers)) == 2 and {t.speaker for t in a.turns} == set(a.speakers)
    # all turns of a session share the session's time
    by_session = {}
    for t in a.turns:
        by_session.setdefault(t.session, set()).add(t.at)
    assert all(len(times) == 1 for times in by_session.values())


def test_scoring():
    rows = [{"type": "multi-hop", "evidence": ["a", "b"], "found": ["a", "x", "b"]},
            {"type": "single-hop", "evidence": ["c"], "found": ["x", "c"]}]
    s = recall_hybrid.score(rows)
    assert s["multi-hop"]["r@1"] == 0.5 and s["multi-hop"]["r@5"] == 1.0
    assert s["single-hop"]["r@1"] == 0.0 and s["single-hop"]["r@5"] == 1.0
    assert s["overall"] == {"n": 2, "r@1": 0.25, "r@5": 1.0, "r@10": 1.0, "all@10": 1.0}
