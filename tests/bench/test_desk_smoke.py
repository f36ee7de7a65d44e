"""The desk benchmark runs end to end at quick sizes (its own FalkorDB and real processes) and
reports every figure. Speed is not asserted here (that is what the benchmark is for): only that it
measured everything it promises, and that the numbers hang together."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from bench import desk

pytestmark = [pytest.mark.falkordb, pytest.mark.processes, pytest.mark.model]

TINY = desk.Sizes(turns=6, warmup=1, tickets=4, replicas=(1, 2, 4), repeat=1)


async def test_quick_run_reports_every_figure(tmp_path):
    out = tmp_path / "desk.json"
    console = Console(record=True, width=160)
    data = await desk.run(TINY, quick=True, out=out, console=console)

    assert json.loads(out.read_text()) == json.loads(json.dumps(data))
    m = data["machine"]
    assert len(m["load_avg_before"]) == 3 and len(m["load_avg_after"]) == 3 and m["cpus"] >= 1
    assert data["llm"] is False

    lat = data["chat_latency"]
    assert lat["n"] == 6 and lat["warmup"] == 1 and lat["wait_s"] == desk.WAIT_S
    assert lat["answered"] + lat["not_answered_in_time"] == 6
    assert 0 < lat["p50_ms"] <= lat["p95_ms"] <= lat["p99_ms"] <= lat["max_ms"]
    assert sum(k["n"] for k in lat["by_kind"].values()) == 6
    assert isinstance(lat["pass"], bool) and lat["target_p95_ms"] == desk.TARGET_P95_MS
    gw = data["gateway_alone"]
    assert gw["n"] >= 1 and 0 < gw["p50_ms"] <= gw["p95_ms"] <= gw["max_ms"]
    assert data["targets"]["chat_p95_ms"] == {"target": "< 50", "value": lat["p95_ms"], "pass": lat["pass"]}
    # every answered turn's trace came back from the processes, stage by stage
    st = data["chat_stages"]
    assert st["traced"] == 6 and st["n"] == lat["answered"]
    path = ("store", "announce", "to_intake", "read_turn", "read", "write", "reply", "announce_reply", "to_gateway",
            "read_reply", "gateway_rest", "total")
    assert all(st["stages"][k]["n"] == st["n"] for k in path), st
    assert sum(st["stages"][k]["p50_ms"] for k in path if k != "total") <= st["stages"]["total"]["p95_ms"] * 1.5

    rounds = data["tickets_per_second"]
    assert set(rounds) == {"1", "2", "4"}
    for n, r in rounds.items():
        assert r["replicas"] == int(n) and r["tickets"] == 4
        assert r["complete"] and r["settled"] == 4, r  # every ticket reached a final stage
        assert sum(c for s, c in r["stages"].items() if s in desk.FINAL) == 4
        assert r["seconds"] > 0 and r["tickets_per_s"] > 0
        assert r["tickets_per_s_per_replica"] == round(r["tickets_per_s"] / int(n), 2)
        assert r["cores_busy"]["falkordb"] > 0 and r["cores_busy"]["resolvers"] > 0  # both worked the round
        assert [x["replicas"] for x in r["rounds"]] == [int(n)] and len(r["rounds"][0]["stages"]) >= 1

    text = console.export_text()
    assert "chat turn latency" in text and "tickets handled per second" in text and "FalkorDB kept" in text
    assert "stage by stage" in text and "intake: facts and ticket" in text
    assert ("PASS" in text) or ("MISS" in text)


def test_turn_script_mixes_problems_facts_and_small_talk():
    script = desk.turn_script(60, seed=3)
    assert {kind for _, kind, _ in script} == {"problem", "fact", "small_talk"}
    assert {c for c, _, _ in script[:len(desk.CUSTOMERS)]} == set(desk.CUSTOMERS)  # everyone speaks early
    assert desk.turn_script(60, seed=3) == script  # seeded: the same run twice


def test_percentiles_are_nearest_rank():
    values = [float(v) for v in range(1, 101)]
    assert [desk.percentile(values, p) for p in (50, 95, 99, 100)] == [50.0, 95.0, 99.0, 100.0]
    assert desk.percentile([7.0], 99) == 7.0


def test_rounds_go_back_and_forth_and_report_the_median():
    assert desk.round_order((1, 2, 4), 3) == [1, 2, 4, 4, 2, 1, 1, 2, 4]
    rounds = [{"tickets": 4, "settled": 4, "complete": True, "seconds": s, "tickets_per_s": round(4 / s, 2),
               "stages": {"fixed": 4}} for s in (1.0, 4.0, 2.0)]
    summary = desk.summarise_rounds(2, rounds)
    assert summary["tickets_per_s"] == 2.0 and summary["seconds"] == 2.0 and summary["rounds"] == rounds


@pytest.mark.parametrize("busy, cpus, said", [
    ({"falkordb": 0.95, "resolvers": 0.6}, 2, "the graph is the bottleneck"),
    ({"falkordb": 0.5, "resolvers": 1.3}, 2, "the machine's cores are the bottleneck"),
    ({"falkordb": 0.3, "resolvers": 0.4}, 8, "neither the graph nor the cores"),
    ({"falkordb": None, "resolvers": 0.4}, 2, "cores busy not measured"),
])
def test_the_bottleneck_is_named_from_the_largest_replica_count(busy, cpus, said):
    rounds = {"1": {"replicas": 1, "cores_busy": {"falkordb": 0.1, "resolvers": 0.1}},
              "4": {"replicas": 4, "cores_busy": busy}}
    assert said in desk.bottleneck(rounds, cpus)


def test_command_line():
    args = desk.parse(["--quick", "--replicas", "1,3"])
    assert args.quick and args.sizes.replicas == (1, 3) and args.sizes.turns == desk.QUICK.turns
    assert desk.parse([]).sizes.repeat == 2 and args.sizes.repeat == 1
    with pytest.raises(SystemExit):
        desk.parse(["--replicas", "0"])
