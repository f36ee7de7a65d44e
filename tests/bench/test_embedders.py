"""bench.embedders: hit@k over ranked turns, the rule a candidate must pass to replace the model (it
wins at every k on both dev halves, no slower, no larger), and the installed model measured on the
implicit cues as the plain vector store (the real model; the candidate is an optional extra)."""

from __future__ import annotations

import numpy as np
import pytest

from bench import embedders as eb
from bench import implicit_cues

pytestmark = [pytest.mark.model]


def test_hits_count_any_evidence_among_the_first_k():
    rows = [(["a", "b", "c"], ("b",)), (["x"] * 10 + ["y"], ("y", "z")), (["q"], ("q",))]
    assert eb.hits(rows) == {"n": 3, "@1": round(1 / 3, 4), "@5": round(2 / 3, 4), "@10": round(2 / 3, 4)}


def _figures(dev: tuple[float, float, float], p95: float = 2.0, dims: int = 384) -> dict:
    at = {f"@{k}": v for k, v in zip(eb.CUTS, dev)}
    return {"locomo": {"dev": at}, "cues": {"dev": at}, "latency": {"one_p95_ms": p95}, "bytes_per_vector": dims * 4}


@pytest.mark.parametrize("candidate, adopt, said", [
    (_figures((0.3, 0.6, 0.7), p95=1.0, dims=256), True, None),
    (_figures((0.3, 0.5, 0.7), p95=1.0), False, "locomo dev @5: 0.500 against 0.500"),  # a tie is no win
    (_figures((0.3, 0.6, 0.7), p95=2.5), False, "one question p95 2.5 ms"),
    (_figures((0.3, 0.6, 0.7), dims=768), False, "3072 bytes a vector"),
])
def test_a_candidate_is_adopted_only_when_it_wins_everywhere(candidate, adopt, said):
    base = _figures((0.2, 0.5, 0.6))
    got, why = eb.verdict(candidate, base)
    assert got is adopt and (said is None and why == [] or any(said in w for w in why)), why


def test_ranked_puts_the_nearest_text_first():
    letters = eb.Model("letters", 26, lambda texts: np.asarray(
        [[t.count(chr(97 + i)) + 0.01 for i in range(26)] for t in texts], dtype=np.float32))
    [order] = eb.ranked(letters, ["zzz", "aab", "abbbbb"], ["z", "a", "b"], ["aaa"])
    assert order == ["a", "b", "z"]


def test_the_installed_model_on_the_implicit_cues(graph_settings):
    convs = implicit_cues.build(implicit_cues.load_data(), 4)
    got = eb.measure(eb.minilm(graph_settings.model_dir), [], convs)
    assert got["dims"] == 384 and got["bytes_per_vector"] == 1536 and got["locomo"] == {}
    for half in ("dev", "test"):
        r = got["cues"][half]
        assert r["n"] > 0 and 0 <= r["@1"] <= r["@5"] <= r["@10"] <= 1
    assert got["cues"]["dev"]["@10"] > 0.5  # the model reads these remarks: far better than chance
    assert got["latency"]["one_p50_ms"] > 0 and got["latency"]["batch_texts_per_s"] > 0
