"""`relay backup` / `relay restore` as real processes on real FalkorDB servers: a backup taken with
the server up and writing, restored into a new data folder, gives back every graph exactly (node and
edge counts and every property), the streams and the admin key; restore refuses a folder a Relay
runs on and one that already holds data; a backup also works with no server running."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest
import redis

from relay_cli import lock as locks
from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port

pytestmark = pytest.mark.falkordb


def relay(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "relay_cli.main", *map(str, args)], env=dict(os.environ),
                          capture_output=True, text=True, timeout=180)


def fingerprint(client: redis.Redis) -> dict:
    """Per graph: node and edge counts and a hash of every node's labels and properties and every
    edge's type, ends and properties."""
    out = {}
    for name in sorted(g.decode() for g in client.execute_command("GRAPH.LIST")):
        nodes = client.execute_command("GRAPH.RO_QUERY", name,
                                       "MATCH (n) RETURN labels(n), properties(n) ORDER BY id(n)")[1]
        edges = client.execute_command("GRAPH.RO_QUERY", name, "MATCH (a)-[r]->(b) RETURN type(r), id(a), id(b), "
                                       "properties(r) ORDER BY id(r)")[1]
        out[name] = (len(nodes), len(edges), hashlib.sha256(repr((nodes, edges)).encode()).hexdigest())
    return out


def fill(client: redis.Redis, graph: str, n: int) -> None:
    client.execute_command(
        "GRAPH.QUERY", graph, f"CYPHER n={n} " "UNWIND range(1, $n) AS i CREATE (:Customer {i: i, name: 'c' + "
        "toString(i)})-[:HAS {since: i * 2.5}]->(:Plan {gbps: i % 3})")


def test_a_backup_taken_with_the_server_up_restores_every_graph_into_a_new_folder(tmp_path, monkeypatch):
    # As `relay up` runs it: the server has the password kept in the data folder, which backup and
    # restore read from there.
    monkeypatch.delenv("RELAY_FALKORDB_PASSWORD", raising=False)
    live, copy, target = tmp_path / "live", tmp_path / "backup", tmp_path / "restored"
    server = EmbeddedFalkorDB(live / "falkordb", free_port(), log_file=tmp_path / "live.log",
                              password="pw of the live folder").start()
    held = locks.acquire(live, {"port": 0, "falkordb_port": server.port})  # as `relay up` holds it
    try:
        (live / "admin.key").write_text("the-admin-key\n")
        (live / "falkordb.password").write_text("pw of the live folder\n")
        client = redis.Redis(host=server.host, port=server.port, password="pw of the live folder")
        for i, graph in enumerate(["tenant_a", "tenant_b", "tenant_b__snap__one"]):
            fill(client, graph, 50 * (i + 1))
        client.xadd("relay:stream:episodes", {"body": "hello"})
        expected = fingerprint(client)

        done = relay("backup", copy, "--data-dir", live)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "3 graphs" in done.stdout
        fill(client, "tenant_after_backup", 5)  # written after the backup: not in it

        refused = relay("restore", copy, "--data-dir", live, "--replace")
        assert refused.returncode == 1 and "never restored under a running Relay" in refused.stdout
        assert fingerprint(client)["tenant_a"] == expected["tenant_a"]  # the live folder is untouched
        client.close()
    finally:
        held.release()
        server.stop()

    restored = relay("restore", copy, "--data-dir", target)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert (target / "admin.key").read_text() == "the-admin-key\n"
    assert not (target / "falkordb" / "dump.rdb").exists()  # the restored folder runs on its AOF, as `relay up` does

    again = relay("restore", copy, "--data-dir", target)
    assert again.returncode == 1 and "--replace" in again.stdout

    assert (target / "falkordb.password").read_text() == "pw of the live folder\n"
    server = EmbeddedFalkorDB(target / "falkordb", free_port(), log_file=tmp_path / "target.log",
                              password="pw of the live folder").start()
    try:
        client = redis.Redis(host=server.host, port=server.port, password="pw of the live folder")
        assert fingerprint(client) == expected
        assert client.xlen("relay:stream:episodes") == 1
        client.close()
    finally:
        server.stop()


def test_a_backup_with_no_server_running_starts_one_for_the_snapshot(tmp_path):
    live, copy = tmp_path / "live", tmp_path / "backup"
    with EmbeddedFalkorDB(live / "falkordb", free_port(), log_file=tmp_path / "live.log") as server:
        client = redis.Redis(host=server.host, port=server.port)
        fill(client, "tenant_a", 20)
        expected = fingerprint(client)
        client.close()

    done = relay("backup", copy, "--data-dir", live)
    assert done.returncode == 0, done.stdout + done.stderr
    assert locks.holder(live) is None  # the lock it held for the snapshot is let go

    refused = relay("backup", copy, "--data-dir", live)
    assert refused.returncode == 1 and "not empty" in refused.stdout

    target = tmp_path / "restored"
    assert relay("restore", copy, "--data-dir", target).returncode == 0
    with EmbeddedFalkorDB(target / "falkordb", free_port(), log_file=tmp_path / "t.log") as server:
        client = redis.Redis(host=server.host, port=server.port)
        assert fingerprint(client) == expected
        fill(client, "tenant_later", 3)  # a change the restore below must undo
        client.close()

    replaced = relay("restore", copy, "--data-dir", target, "--replace")
    assert replaced.returncode == 0, replaced.stdout + replaced.stderr
    with EmbeddedFalkorDB(target / "falkordb", free_port(), log_file=tmp_path / "t.log") as server:
        client = redis.Redis(host=server.host, port=server.port)
        assert fingerprint(client) == expected
        client.close()


def test_restore_refuses_a_folder_that_is_not_a_backup(tmp_path):
    (tmp_path / "junk").mkdir()
    out = relay("restore", tmp_path / "junk", "--data-dir", tmp_path / "data")
    assert out.returncode == 1 and "not a Relay backup" in out.stdout
    assert not (tmp_path / "data" / "falkordb").exists()
