"""The embedded FalkorDB: a clean stop leaves its log as a snapshot (a restart loads it instead of
replaying every graph write), and what was written is there after the restart; with a password it
refuses any client without it, and the password is not on its command line."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import redis

from relay_graph.runtime.embedded import AOF_REWRITE_ARGS, EmbeddedFalkorDB, free_port, wait_for_ping

pytestmark = [pytest.mark.falkordb]


def aof_files(data_dir):
    manifest = (data_dir / "appendonlydir").glob("*.manifest")
    lines = next(manifest).read_text().split("\n")
    fields = [dict(zip(line.split()[::2], line.split()[1::2])) for line in lines if line.strip()]
    return {f["file"]: f["type"] for f in fields}  # file -> type: b (base) or i (incremental)


def test_a_clean_stop_rewrites_the_log_and_a_restart_keeps_the_graph(tmp_path):
    data = tmp_path / "falkordb"
    server = EmbeddedFalkorDB(data, free_port(), log_file=tmp_path / "f.log").start()
    try:
        assert all(arg in server.command() for arg in AOF_REWRITE_ARGS)
        client = redis.Redis(host=server.host, port=server.port)
        for i in range(200):
            client.execute_command("GRAPH.QUERY", "g", f"CREATE (:Note {{n: {i}}})")
        before = aof_files(data)
        incr = [f for f, kind in before.items() if kind == "i"]
        assert incr and (data / "appendonlydir" / incr[0]).stat().st_size > 0  # the writes are logged
        client.close()
    finally:
        server.stop()

    after = aof_files(data)
    (base,) = [f for f, kind in after.items() if kind == "b"]
    assert base.endswith(".rdb") and base not in before  # a new snapshot
    assert all((data / "appendonlydir" / f).stat().st_size == 0 for f, kind in after.items() if kind == "i")

    server = EmbeddedFalkorDB(data, free_port(), log_file=tmp_path / "f.log").start()
    try:
        client = redis.Redis(host=server.host, port=server.port)
        count = client.execute_command("GRAPH.RO_QUERY", "g", "MATCH (n:Note) RETURN count(n)")[1][0][0]
        assert count == 200
        client.close()
    finally:
        server.stop()


def test_a_password_is_required_and_kept_off_the_command_line(tmp_path):
    password = 'se"cr\\et w0rd'  # quotes, a backslash and a space survive redis.conf's quoting
    server = EmbeddedFalkorDB(tmp_path / "falkordb", free_port(), log_file=tmp_path / "f.log",
                              password=password).start()
    try:
        with socket.create_connection((server.host, server.port), timeout=5) as raw:
            raw.sendall(b"PING\r\n")
            assert raw.recv(200).startswith(b"-NOAUTH"), "a client that does not sign in is refused"
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis(host=server.host, port=server.port).ping()
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis(host=server.host, port=server.port, password="wrong").ping()
        with pytest.raises(RuntimeError, match="refused the password.*RELAY_FALKORDB_PASSWORD"):
            wait_for_ping(server.host, server.port, 5, password="wrong")
        client = redis.Redis(host=server.host, port=server.port, password=password)
        assert client.execute_command("GRAPH.QUERY", "g", "RETURN 1")[1] == [[1]]
        client.close()
        cmdline = (Path("/proc") / str(server.process.pid) / "cmdline").read_bytes().decode()
        assert "cr\\et" not in cmdline and "requirepass" not in cmdline
        before = aof_files(tmp_path / "falkordb")
    finally:
        server.stop()
    (base,) = [f for f, kind in aof_files(tmp_path / "falkordb").items() if kind == "b"]
    assert base not in before, "the clean stop signed in to rewrite the log"
