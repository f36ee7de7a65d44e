"""`relay up`'s whole flow with a real FalkorDB and stand-in services (any table works the same).
The test with the real services is test_up_cli.py."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import pytest
import redis
from rich.console import Console

from relay_cli.services import ServiceSpec
from relay_cli.up import STATE_NAME, EmbeddedRelay, StopFlag, UpOptions, run_demo
from relay_graph.runtime.embedded import free_port, port_in_use
from tests.support import wait_until

pytestmark = pytest.mark.processes

REPO = Path(__file__).resolve().parents[2]
STAND_IN = "tests.relay_cli.stand_in"
TABLE = (
    ServiceSpec("agent", STAND_IN, replicas=2),
    ServiceSpec("gateway", STAND_IN, scalable=False, serves_http=True, needs_admin_key=True),
)


def _opts(data_dir: Path, services=TABLE, **env) -> UpOptions:
    base = {k: v for k, v in os.environ.items() if k != "RELAY_ADMIN_KEY"}
    base.update(PYTHONPATH=str(REPO), STAND_IN_RECORD=str(data_dir / "record.txt"), **env)
    return UpOptions(
        data_dir=data_dir,
        port=free_port(),
        falkordb_port=free_port(),
        model_dir=REPO / ".relay" / "model",
        replicas={s.name: s.replicas for s in services},
        admin_key_env=None,
        demo=False,
        ready_timeout_s=60,
        services=services,
        base_env=base,
    )


def _start(relay: EmbeddedRelay) -> tuple[threading.Thread, dict]:
    result: dict = {}
    thread = threading.Thread(target=lambda: result.setdefault("rc", relay.run()), daemon=True)
    thread.start()
    return thread, result


def _state(data_dir: Path) -> dict:
    try:
        return json.loads((data_dir / STATE_NAME).read_text())
    except (OSError, ValueError):
        return {}


def _pids(state: dict, service: str) -> list[int]:
    return [p["pid"] for p in state.get("processes", []) if p["service"] == service]


def test_up_runs_supervises_and_stops_in_order(tmp_path):
    console = Console(record=True, width=200)
    stop = StopFlag(console)
    opts = _opts(tmp_path)
    relay = EmbeddedRelay(opts, console, stop)
    thread, result = _start(relay)
    wait_until(lambda: "Ctrl-C stops everything" in console.export_text(clear=False), timeout=60,
               what="relay up ready")

    state = _state(tmp_path)
    assert state["port"] == opts.port and len(_pids(state, "agent")) == 2 and _pids(state, "falkordb")
    assert port_in_use("127.0.0.1", opts.falkordb_port)
    out = console.export_text(clear=False)
    assert f"http://127.0.0.1:{opts.port}" in out and "agent-1.log" in out
    key = (tmp_path / "admin.key").read_text().strip()
    assert out.count(key) == 1, "the new admin key is printed exactly once"
    password = (tmp_path / "falkordb.password").read_text().strip()
    assert password not in out and "FalkorDB password: kept in" in out

    # A service that dies is restarted (after its 1s backoff) under a new pid.
    victim = _pids(state, "agent")[0]
    os.kill(victim, signal.SIGKILL)
    wait_until(lambda: victim not in _pids(_state(tmp_path), "agent") and len(_pids(_state(tmp_path), "agent")) == 2,
               timeout=60, what="the killed agent replaced")
    assert "exited with code -9; restarting in 1s" in console.export_text(clear=False)

    stop.event.set()
    thread.join(60)
    assert result["rc"] == 0
    terms = [ln.split()[0] for ln in (tmp_path / "record.txt").read_text().splitlines() if ln.endswith("TERM")]
    assert terms[0] == "gateway-?", "reverse table order: the gateway stops first"
    assert not port_in_use("127.0.0.1", opts.falkordb_port), "FalkorDB is stopped"
    assert not (tmp_path / STATE_NAME).exists()
    assert (tmp_path / "falkordb" / "appendonlydir").is_dir(), "AOF on, in the data folder"


def test_a_password_from_the_environment_is_used_and_not_written(tmp_path):
    import redis

    console = Console(record=True, width=200)
    stop = StopFlag(console)
    opts = _opts(tmp_path)
    opts.falkordb_password_env = "from-the-env"
    relay = EmbeddedRelay(opts, console, stop)
    thread, result = _start(relay)
    try:
        wait_until(lambda: "Ctrl-C stops everything" in console.export_text(clear=False), timeout=60,
                   what="relay up ready")
        assert "FalkorDB password: from RELAY_FALKORDB_PASSWORD" in console.export_text(clear=False)
        assert not (tmp_path / "falkordb.password").exists()
        # `default`'s, for a service the ACL does not know (the stand-in agent); the gateway signs in as its user
        by_user = {c.env["RELAY_FALKORDB_USER"]: c.env["RELAY_FALKORDB_PASSWORD"] for c in relay.supervisor.children}
        assert by_user[""] == "from-the-env" and by_user["relay-gateway"] not in ("", "from-the-env")
        assert redis.Redis(port=opts.falkordb_port, username="relay-gateway", password=by_user["relay-gateway"]).ping()
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis(port=opts.falkordb_port, password="wrong").ping()
        assert redis.Redis(port=opts.falkordb_port, password="from-the-env").ping()
    finally:
        stop.event.set()
        thread.join(60)
    assert result["rc"] == 0 and not port_in_use("127.0.0.1", opts.falkordb_port)


def test_a_service_that_cannot_start_fails_fast_and_stops_everything(tmp_path):
    console = Console(record=True, width=200)
    table = TABLE + (ServiceSpec("broken", STAND_IN),)
    opts = _opts(tmp_path, services=table)
    # Only the broken one exits at once: give it its own mode through the env of its replica.
    relay = EmbeddedRelay(opts, console, StopFlag(console))
    original = relay.children

    def children():
        out = original()
        for c in out:
            if c.spec.name == "broken":
                c.env["STAND_IN_MODE"] = "exit"
        return out

    relay.children = children
    assert relay.run() == 1
    out = console.export_text()
    assert "relay up failed" in out and "broken-1 exited with code 3" in out
    assert "failing on purpose" in out, "the tail of its log is shown"
    assert not port_in_use("127.0.0.1", opts.falkordb_port)
    assert not port_in_use("127.0.0.1", opts.port)


def test_a_gateway_that_never_gets_ready_times_out_with_the_logs_that_explain_it(tmp_path):
    console = Console(record=True, width=200)
    opts = _opts(tmp_path, STAND_IN_READY="0")
    opts.ready_timeout_s = 2
    assert EmbeddedRelay(opts, console, StopFlag(console)).run() == 1
    out = console.export_text()
    assert "the gateway was not ready after 2s" in out
    assert '503 {"missing": ["agent"]}' in out
    assert "gateway-1.log" in out and "agent-1.log" in out, "the gateway's log and the missing service's"
    assert not port_in_use("127.0.0.1", opts.falkordb_port)


def test_a_busy_gateway_port_is_refused_before_anything_starts(tmp_path):
    import socket

    console = Console(record=True, width=200)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        opts = _opts(tmp_path)
        opts.port = s.getsockname()[1]
        assert EmbeddedRelay(opts, console, StopFlag(console)).run() == 1
    assert f"port {opts.port} is already in use" in console.export_text()
    assert not (tmp_path / "falkordb").exists()


def test_run_demo_is_a_no_op_without_the_demo_module():
    assert run_demo("http://127.0.0.1:1", "k", Console(), module="services.simulator.no_such_demo") is None
    assert run_demo("http://127.0.0.1:1", "k", Console(), module="no_such_package.demo") is None


def test_run_demo_plays_the_demo_module_in_a_thread():
    from tests.relay_cli import demo_stand_in

    console = Console(record=True)
    thread = run_demo("http://127.0.0.1:1", "k", console, module="tests.relay_cli.demo_stand_in")
    thread.join(30)
    assert demo_stand_in.CALLS == [("http://127.0.0.1:1", "k")]
    assert "demo finished" in console.export_text()


@pytest.mark.cluster
def test_up_with_shards_runs_a_cluster_and_a_killed_node_comes_back_as_the_promoted_primarys_replica(tmp_path):
    from relay_graph.runtime.cluster import free_ports, nodes, slot_ranges

    console = Console(record=True, width=200)
    stop = StopFlag(console)
    opts = _opts(tmp_path)
    opts.falkordb_port = free_ports(6)[0]  # six nodes on consecutive ports, bus ports 10000 higher
    opts.shards, opts.falkordb_replicas = 3, 1
    relay = EmbeddedRelay(opts, console, stop)
    thread, result = _start(relay)
    wait_until(lambda: "Ctrl-C stops everything" in console.export_text(clear=False), timeout=120,
               what="relay up ready")

    state = _state(tmp_path)
    ports = [opts.falkordb_port + k for k in range(6)]
    assert state["falkordb_cluster"] == ",".join(f"127.0.0.1:{p}" for p in ports)
    assert len(_pids(state, "falkordb")) == 6
    layout = nodes(("127.0.0.1", ports[0]), password=(tmp_path / "falkordb.password").read_text().strip())
    assert sorted(n["primary"] for n in layout) == [False] * 3 + [True] * 3
    for k in range(6):
        assert (tmp_path / "falkordb-cluster" / f"node-{k}" / "nodes.conf").is_file()
        assert (tmp_path / "logs" / f"falkordb-{k}.log").is_file()
    # every service is handed the cluster
    assert {c.env.get("RELAY_FALKORDB_CLUSTER") for c in relay.supervisor.children} == {state["falkordb_cluster"]}

    password = (tmp_path / "falkordb.password").read_text().strip()
    killed = _pids(state, "falkordb")[1]
    os.kill(killed, signal.SIGKILL)  # the second primary
    wait_until(lambda: "falkordb node 1" in console.export_text(clear=False), timeout=60,
               what="the status naming falkordb node 1")
    assert thread.is_alive(), "one node's death does not stop Relay"
    # its replica is promoted; then `relay up` starts the node again, and it rejoins as the replica of
    # the promoted primary, its copy in sync
    wait_until(lambda: "started again" in console.export_text(clear=False), timeout=90,
               what="falkordb node 1 started again")
    assert killed not in _pids(_state(tmp_path), "falkordb") and len(_pids(_state(tmp_path), "falkordb")) == 6

    seen: dict = {}

    def rejoined():
        layout = {n["port"]: n for n in nodes(("127.0.0.1", ports[0]), password=password)}
        back, promoted = layout[ports[1]], [n for n in layout.values() if "%d-%d" % slot_ranges(3)[1] in n["slots"]]
        with redis.Redis(port=ports[1], password=password, decode_responses=True) as node:
            link = node.info("replication")
        seen.update(layout=layout, link=link)
        return (not back["primary"] and not back["failed"] and promoted and promoted[0]["port"] == ports[4]
                and back["of"] == promoted[0]["id"] and link.get("master_link_status") == "up")

    try:
        wait_until(rejoined, timeout=60, what="node 1 a replica of the promoted primary")
    except AssertionError:
        raise AssertionError(f"node 1 did not rejoin as the promoted primary's replica: {seen}") from None

    stop.event.set()
    thread.join(60)
    assert result["rc"] == 0
    assert not any(port_in_use("127.0.0.1", p) for p in ports), "every node is stopped"
