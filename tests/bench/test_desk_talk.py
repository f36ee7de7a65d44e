"""bench.desk_talk's figures from played turns (the playing itself is tests/services/test_desk_talk.py)."""

from __future__ import annotations

import json

from rich.console import Console

from bench import desk_talk
from bench.desk_talk import Played


def played(ok: bool, ms: float, group: str = "plans") -> Played:
    return Played(0, 0, "india", "Asha", "Which plans?", group, ["plans"], ["plans"] if ok else ["clarify"], "x", ms,
                  None, [] if ok else ["missing ['plans']"])


def test_quality_is_the_share_of_turns_with_the_right_kinds_and_latency_its_percentiles(tmp_path):
    rows = [played(True, float(ms)) for ms in range(1, 20)] + [played(False, 100.0, "tip")]
    s = desk_talk.summary(rows)
    assert (s["turns"], s["right_kind"], s["quality"]) == (20, 19, 0.95)
    assert s["by_group"] == {"plans": {"right": 19, "n": 19}, "tip": {"right": 0, "n": 1}}
    assert s["chat_ms"] == {"p50": 11.0, "p95": 19.0, "max": 100.0}
    assert [w["problems"] for w in s["wrong"]] == [["missing ['plans']"]]
    data = {"summary": s, "moves": desk_talk.summary([]), "last_round": {"n": 400, "p50_ms": 55.9, "p95_ms": 98.2,
            "started_at": "2026-11-30"}, "machine": {"load_avg_before": [1, 1, 1], "load_avg_after": [2, 2, 2]}}
    console = Console(record=True, width=200)
    desk_talk.print_tables(console, data)
    out = console.export_text()
    assert "19/20 turns with the right kind (95.0 %)" in out and "p95 19.0 ms" in out and "p95 98.2 ms" in out
    path = tmp_path / "desk.json"
    path.write_text(json.dumps({"started_at": "t", "chat_latency": {"p50_ms": 1, "p95_ms": 2, "n": 3}}))
    assert desk_talk.last_round(path) == {"started_at": "t", "p50_ms": 1, "p95_ms": 2, "n": 3}
    assert desk_talk.last_round(tmp_path / "none.json") is None
