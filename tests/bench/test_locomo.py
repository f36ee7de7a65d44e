"""bench.locomo's reading and scoring (pure logic, on a hand-made file in LoCoMo's shape)."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from bench import locomo


def write(tmp_path):
    data = {
        "speaker_a": "Ann", "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "Hi Bo!\nHow are you?"},
                      {"speaker": "Bo", "dia_id": "D1:2", "text": "Great, I ran a race last Saturday."}],
        "session_2_date_time": "10:05 am on 1 June, 2023",
        "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "Back from the lake."}],
        "session_3_date_time": "9:00 am on 2 June, 2023",  # a date without turns, as the data has
        "qa": [{"question": "When did Bo run a race?", "answer": "6 May 2023", "evidence": ["D1:2"], "category": 2},
               {"question": "What did Ann paint?", "evidence": ["D2:1"], "category": 5},
               {"question": "Unscorable", "answer": "x", "evidence": [], "category": 4}],
    }
    path = tmp_path / "99.json"
    path.write_text(json.dumps(data))
    return path


def test_a_conversation_reads_as_turns_with_their_session_dates(tmp_path):
    c = locomo.load_conversation(write(tmp_path))
    assert [t.id for t in c.turns] == ["99/D1:1", "99/D1:2", "99/D2:1"]
    assert c.turns[0].text == "Hi Bo!\nHow are you?"  # as it is, line break kept
    assert c.turns[0].at == datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    assert c.turns[2].session == "99/session_2" and c.turns[2].at == datetime(2023, 6, 1, 10, 5, tzinfo=timezone.utc)
    assert [(q.category, q.evidence) for q in c.questions] == [(2, ("99/D1:2",)), (5, ("99/D2:1",))]
    assert locomo.baseline_text(c.turns[1]) == "[1:56 pm on 8 May, 2023] Bo: Great, I ran a race last Saturday."


def test_twelve_oclock_is_noon_and_midnight():
    assert locomo.session_time("12:30 pm on 3 March, 2023").hour == 12
    assert locomo.session_time("12:30 am on 3 March, 2023").hour == 0


def test_any_hit_counts_a_question_once_any_evidence_is_in_the_first_k():
    rows = [{"category": 4, "evidence": ("a", "b"), "found": ["x", "b", "y"]},
            {"category": 4, "evidence": ("c",), "found": ["x", "y", "z"]},
            {"category": 5, "evidence": ("d",), "found": ["d"]}]
    s = locomo.score(rows)
    assert s["single-hop"]["@1"] == 0.0 and s["single-hop"]["@5"] == 0.5
    assert s["answerable"]["n"] == 2  # adversarial questions are scored apart
    assert s["adversarial"]["@1"] == 1.0


def test_abstention_counts_not_in_graph_on_both_sides():
    rows = [{"category": 5, "shape": "not_in_graph"}, {"category": 5, "shape": "path"},
            {"category": 1, "shape": "not_in_graph"}, {"category": 2, "shape": "path"}, {"category": 4, "shape": "memory"}]
    a = locomo.abstention(rows)
    assert (a["adversarial_not_in_graph"], a["adversarial"]) == (1, 2)
    assert (a["answerable_not_in_graph"], a["answerable"]) == (1, 3)


def test_the_halves_are_by_conversation():
    assert set(locomo.DEV).isdisjoint(locomo.TEST)
    assert [locomo.half(n) for n in ("26", "42")] == ["dev", "test"]
