"""The memory benchmark end to end at quick size: its own FalkorDB and the real processes, the
storyline played through the gateway, both systems asked every question, JSON and report written."""

from __future__ import annotations

import json
import re

import pytest
from rich.console import Console

from bench.memory.questions import questions
from bench.memory.report import render
from bench.memory.run import QUICK, rebuild_report, run
from bench.memory.storyline import plan

pytestmark = [pytest.mark.falkordb, pytest.mark.processes, pytest.mark.model]


async def test_quick_run_answers_every_question_and_writes_the_report(tmp_path):
    js, md = tmp_path / "memory.json", tmp_path / "memory.md"
    console = Console(record=True, width=160)
    data = await run(QUICK, quick=True, out_json=js, out_md=md, console=console)

    saved = json.loads(js.read_text())
    assert saved == json.loads(json.dumps(data))
    assert md.read_text() == render(saved)
    first = md.read_bytes()
    rebuild_report(js, md)
    assert md.read_bytes() == first

    expected = questions(plan(7, QUICK.customers), QUICK.per_type)
    assert [q["id"] for q in saved["questions"]] == [q.id for q in expected]
    assert [q["gold"] for q in saved["questions"]] == [q.gold for q in expected]  # gold fixed before the run
    story = plan(7, QUICK.customers)
    load = saved["load"]
    assert load["turns"] == story.turns and load["errors"] == 0, load["first_errors"]
    # every storyline customer got an id from their first turn, and their name finds exactly it
    ids = load["customer_ids"]
    assert sorted(ids) == sorted(story.customers) and len(set(ids.values())) == len(ids)
    assert all(re.fullmatch(r"c-[0-9a-f]{16}", cid) for cid in ids.values())
    assert load["ids"] == {"customers": len(ids), "found_by_name": len(ids), "wrong": []}
    # the storyline's tickets: none reached `fixed` without a passing reading after its last action
    assert load["tickets"]["total"] > 0 and load["tickets"]["unproven_fixes"] == {}, load["tickets"]
    for q in saved["questions"]:  # both systems were asked by id; a stranger has none
        assert q["customer_id"] == ids.get(q["customer"])
    assert any(q["customer_id"] is None for q in saved["questions"])
    for q in saved["questions"]:
        for system in ("relay", "vector"):
            assert isinstance(q[system]["correct"], bool) and isinstance(q[system]["gold_in_context"], bool)
    s = saved["summary"]
    assert s["overall"]["n"] == len(expected)
    assert s["overall"]["relay"]["correct"] > 0 and s["overall"]["vector"]["correct"] > 0
    assert "memory benchmark" in console.export_text()
