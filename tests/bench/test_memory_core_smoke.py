"""The memory-core benchmark runs end to end at tiny sizes and reports every figure.
Speed is not asserted here (that is what the benchmark is for), only that it measured everything."""

from __future__ import annotations

import json

from rich.console import Console

from bench import memory_core

TINY = memory_core.Sizes(raw_merges=50, plain_facts=20, embedded_facts=40, fact_batch=16, fact_writers=2,
                         episodes=24, episode_batch=8, recall_facts=(70, 140), recall_episodes=16,
                         recall_calls=10)


async def test_quick_run_reports_every_figure(tmp_path, embedder):
    out = tmp_path / "memory_core.json"
    console = Console(record=True, width=140)
    data = await memory_core.run(TINY, quick=True, out=out, embedder=embedder, console=console)

    assert json.loads(out.read_text()) == json.loads(json.dumps(data))
    assert len(data["machine"]["load_avg_before"]) == 3
    fig = data["figures"]
    for key in ("embedder_texts_per_s", "raw_merge_per_s", "fact_writes_plain_per_s", "fact_writes_embedded_per_s",
                "episode_writes_per_s"):
        assert isinstance(fig[key], (int, float)) and fig[key] > 0, key
    assert fig["fact_writes_embedded_claims_embedded"] > 0
    assert set(fig["recall"]) == {"70", "140"}
    for size, lat in fig["recall"].items():
        assert lat["facts"] == int(size) and lat["episodes"] == 16 and lat["calls"] == 10
        assert 0 < lat["p50_ms"] <= lat["p95_ms"] <= lat["max_ms"]
        assert sum(lat["shapes"].values()) == 10
    assert set(data["targets"]) == {"fact_writes_embedded", "fact_writes_plain", "recall_p95"}
    assert data["targets"]["recall_p95"]["pass"] is None  # 140 facts is not the 100k the target is about
    for key in ("fact_writes_embedded", "fact_writes_plain"):  # write_fact's figures; the targets are write_facts'
        assert data["targets"][key]["pass"] is None and data["targets"][key]["judged_by"] == "bench.fact_writes"
        assert isinstance(data["targets"][key]["this_path_would_pass"], bool)
    text = console.export_text()
    assert "with embeddings" in text and "recall at 140 facts" in text
    assert text.count("judged") == 2  # the write rows point to bench.fact_writes (the table wraps the words)
    assert "MISS" not in text.split("recall at")[0]  # no write verdict from the one-call path


def test_command_line_sizes():
    args = memory_core.parse(["--quick", "--recall-facts", "500,1000"])
    assert args.quick and args.recall_facts == "500,1000"


def test_fact_stream_is_contiguous():
    a = memory_core.fact_range(0, 10) + memory_core.fact_range(10, 23)
    assert a == memory_core.fact_range(0, 23)
    assert len({(f.subject, f.predicate) for f in a}) == 23
