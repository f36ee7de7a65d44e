"""bench.implicit_cues builds the same conversations from its data every time, each remark's
earlier turn among them and the remark itself not (it would be its own best match)."""

from __future__ import annotations

import io
import re
from datetime import datetime, timezone

from rich.console import Console

from bench import implicit_cues as ic
from bench import locomo
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


def _locomo_like(name: str, sessions: int = 4) -> locomo.Conversation:
    turns = []
    for s in range(1, sessions + 1):
        at = datetime(2023, 5, s, 13, 0, tzinfo=timezone.utc)
        for i in range(1, 4):
            turns.append(locomo.Turn(f"{name}/D{s}:{i}", f"{name}/session_{s}", ("Ann", "Bo")[i % 2],
                                     f"turn {i} of session {s}", at, "date"))
    return locomo.Conversation(name, ("Ann", "Bo"), turns, [])


def test_the_haystack_puts_each_half_of_the_pairs_into_that_half_of_the_conversations():
    data = {"pairs": [{"earlier": f"earlier {i}.", "later": f"later {i}?", "trap": f"trap {i}."} for i in range(6)]}
    convs = [_locomo_like(locomo.DEV[0]), _locomo_like(locomo.TEST[0])]
    one, two = ic.implant(data, convs), ic.implant(data, convs)
    assert [(c.turns, c.cues) for c in one] == [(c.turns, c.cues) for c in two]  # seeded
    assert [c.half for c in one] == ["dev", "test"] and {c.set for c in one} == {ic.SETS[1]}
    for c, source in zip(one, convs):
        texts = {t.id: t for t in c.turns}
        assert len(c.cues) == 3 and len(c.turns) == len(source.turns) + 6  # three earlier turns, three traps
        # the conversation's own turns, in their order, among them
        assert [t.id for t in c.turns if t.id in {s.id for s in source.turns}] == [s.id for s in source.turns]
        for cue in c.cues:
            turn = texts[cue.evidence]
            assert turn.text.startswith("earlier") and turn.speaker in ("Ann", "Bo")
            assert turn.session not in (f"{source.name}/session_3", f"{source.name}/session_4")  # not the last two
            assert cue.q.replace("later", "earlier").rstrip("?") + "." == turn.text  # its own pair's remark
            assert cue.conversation == c.index and cue.q not in {t.text for t in c.turns}
    dev_earlier = {texts.text for texts in one[0].turns if texts.text.startswith("earlier")}
    test_earlier = {texts.text for texts in one[1].turns if texts.text.startswith("earlier")}
    assert not dev_earlier & test_earlier and len(dev_earlier | test_earlier) == 6


def test_without_locomo_data_the_haystack_is_skipped_and_said_so(tmp_path):
    out = io.StringIO()
    assert ic.haystack(False, tmp_path / "missing", Console(file=out, width=200)) == []
    assert "haystack set is skipped" in out.getvalue()
