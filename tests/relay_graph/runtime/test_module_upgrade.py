"""A data folder written by FalkorDB 4.16.3 (the engine `relay up` ran before) opens on 4.22.1 with
its graph and indexes."""

from __future__ import annotations

import pytest
import redis

from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port

pytestmark = [pytest.mark.falkordb]


def test_a_4_16_data_folder_opens_on_4_22(tmp_path):
    data = tmp_path / "data"
    old = EmbeddedFalkorDB(data, free_port(), log_file=tmp_path / "f.log", module="4.16.3").start()
    try:
        c = redis.Redis(host=old.host, port=old.port)
        c.execute_command("GRAPH.QUERY", "relay:t", "CREATE INDEX FOR (n:Note) ON (n.n)")
        c.execute_command("GRAPH.QUERY", "relay:t", "UNWIND range(1, 300) AS i CREATE (:Note {n: i})-[:NEXT]->(:Tail)")
        c.close()
    finally:
        old.stop()
    new = EmbeddedFalkorDB(data, free_port(), log_file=tmp_path / "f.log", module="4.22.1").start()
    try:
        c = redis.Redis(host=new.host, port=new.port, decode_responses=True)
        assert {m["name"]: m["ver"] for m in c.module_list()}["graph"] == 42201
        res = c.execute_command("GRAPH.RO_QUERY", "relay:t", "MATCH (n:Note)-[:NEXT]->() RETURN count(n)")
        assert res[1][0][0] == 300
        plan = c.execute_command("GRAPH.EXPLAIN", "relay:t", "MATCH (n:Note {n: 7}) RETURN n")
        assert any("Index Scan" in line for line in plan), plan
        c.close()
    finally:
        new.stop()
