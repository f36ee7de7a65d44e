"""The conversation table (bench.desk_talk.TABLE) through the real processes with no LLM key: a
FalkorDB, intake, resolver, netops and the gateway started as `relay up` starts them, one tenant
per region with its world (`POST /world`), every turn a `POST /chat?wait=20`. Each turn's reply
must carry the answer kinds intake recorded for it (`reply.answers`), none of the ones it must
not (the same question again), and leave what it promises in the graph: a ticket of the
customer's, a fact on file, a promise on the ticket (through the HTTP API)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import httpx
import pytest

from bench import desk_talk
from bench.desk import HTTP_LIMITS, start_stack, wait_ready

pytestmark = [pytest.mark.falkordb, pytest.mark.processes, pytest.mark.model]

ROWS = [(ci, ti) for ci, c in enumerate(desk_talk.TABLE) for ti in range(len(c.turns))]


@pytest.fixture(scope="module")
async def played(graph_settings):
    with tempfile.TemporaryDirectory(prefix="relay-talk-test-") as tmp:
        stack = start_stack(Path(tmp), 1, graph_settings.model_dir)
        try:
            await wait_ready(stack)
            async with httpx.AsyncClient(base_url=stack.url, timeout=desk_talk.WAIT_S + 20, limits=HTTP_LIMITS) as http:
                tenants = await desk_talk.make_tenants(http, stack.admin_key, "test")
                rows = await desk_talk.play(http, tenants)
                moves = await desk_talk.play(http, tenants, desk_talk.MOVES)
        finally:
            stack.stop()
    return {(p.conversation, p.index): p for p in rows}, moves


def test_the_table_has_at_least_80_turns_of_every_kind_the_issue_names():
    assert desk_talk.turn_count() >= 80
    groups = {t.group for c in desk_talk.TABLE for t in c.turns}
    assert {"guardrail", "plans", "tip", "update", "welcome_back", "promise", "mixed_language",
            "multi_intent", "ask_once", "reading"} <= groups
    assert {c.region for c in desk_talk.TABLE} == set(desk_talk.REGIONS)


@pytest.mark.parametrize("row", ROWS, ids=[f"{desk_talk.TABLE[c].name.split()[0]}-{t}" for c, t in ROWS])
def test_each_turn_gets_the_right_kind_of_answer(played, row):
    p = played[0][row]
    assert p.ok, f"{p.text!r} -> {p.answers}: {p.problems}\n{p.reply}"


def test_a_move_to_another_regions_city_moves_the_case(played):
    moves = played[1]
    assert all(p.ok for p in moves), [(p.text, p.answers, p.problems) for p in moves if not p.ok]
