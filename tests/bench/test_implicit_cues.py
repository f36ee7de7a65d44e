"""bench.implicit_cues builds the same conversations from its data every time, each remark's
earlier turn among them and the remark itself not (it would be its own best match)."""

from __future__ import annotations

import re

from bench import implicit_cues as ic
from relay_graph.memory.episodes import STOPWORDS


def _words(text: str) -> set[str]:
    return {w[:5] for w in re.findall(r"[a-z]+", text.lower()) if w not in STOPWORDS and len(w) > 2}


def test_the_set_is_seeded_and_every_cue_points_at_a_turn_it_shares_no_word_with():
    data = ic.load_data()
    one, two = ic.build(data, 8), ic.build(data, 8)
    assert [(c.turns, c.cues) for c in one] == [(c.turns, c.cues) for c in two]
    assert sum(len(c.cues) for c in one) == len(data["pairs"])
    for c in one:
        texts = {t.id: t.text for t in c.turns}
        for cue in c.cues:
            assert cue.evidence in texts and cue.q not in texts.values()
            assert not _words(cue.q) & _words(texts[cue.evidence]) - {"new", "now", "yet"}, cue


def test_hit_at_k_counts_the_earlier_turn_among_the_first_k():
    rows = [{"evidence": "a", "found": ["x", "a"]}, {"evidence": "b", "found": ["b"]}]
    assert ic.score(rows) == {"n": 2, "@1": 0.5, "@5": 1.0, "@10": 1.0}
