"""The supervisor with real child processes (tests/relay_cli/stand_in stands in for a service)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from relay_cli.services import ServiceSpec
from relay_cli.supervisor import Child, ServiceFailed, Supervisor, spawn, stop_processes
from tests.support import wait_until

pytestmark = pytest.mark.processes

REPO = Path(__file__).resolve().parents[2]
STAND_IN = "tests.relay_cli.stand_in"


def _child(tmp_path: Path, name: str, replica: int = 1, mode: str = "serve", record: Path | None = None) -> Child:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "STAND_IN_MODE": mode,
        "OTEL_SERVICE_NAME": f"relay-{name}",
        "RELAY_REPLICA": str(replica),
    }
    env.pop("RELAY_PORT", None)
    if record:
        env["STAND_IN_RECORD"] = str(record)
    return Child(ServiceSpec(name, STAND_IN), replica, tmp_path / f"{name}-{replica}.log", env)


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_a_dead_replica_is_restarted_with_growing_backoff_then_given_up(tmp_path):
    said: list[str] = []
    child = _child(tmp_path, "agent", mode="exit")
    sup = Supervisor([child], python=sys.executable, say=said.append, max_restarts=2, window_s=300)
    sup.start_all()
    child.process.wait(30)
    t0 = 1000.0
    sup.check(now=t0)  # first death: back in 1s
    assert child.restart_at == t0 + 1
    first_pid = child.pid
    sup.check(now=t0 + 0.5)
    assert child.pid == first_pid, "not before its backoff"
    sup.check(now=t0 + 1)
    assert child.pid != first_pid and child.restart_at is None
    child.process.wait(30)
    sup.check(now=t0 + 2)  # second death: back in 2s
    assert child.restart_at == t0 + 4
    sup.check(now=t0 + 4)
    child.process.wait(30)
    with pytest.raises(ServiceFailed) as failed:
        sup.check(now=t0 + 5)  # third death within the window: give up
    assert "agent-1" in str(failed.value) and "giving up" in str(failed.value)
    assert "failing on purpose" in str(failed.value), "the log tail says why"
    assert any("exited with code 3" in s and "restarting in 1s" in s for s in said)


def test_deaths_outside_the_window_are_forgotten(tmp_path):
    child = _child(tmp_path, "agent", mode="exit")
    sup = Supervisor([child], python=sys.executable, say=lambda _: None, max_restarts=1, window_s=10)
    sup.start_all()
    for t in (0.0, 100.0, 200.0):  # one death per 100s: never two within 10s
        child.process.wait(30)
        sup.check(now=t)
        assert child.restart_at == t + 1
        sup.check(now=t + 1)


def test_startup_check_names_the_dead_service_with_its_log(tmp_path):
    ok, bad = _child(tmp_path, "agent"), _child(tmp_path, "broken", mode="exit")
    sup = Supervisor([ok, bad], python=sys.executable, say=lambda _: None)
    sup.start_all()
    try:
        bad.process.wait(30)
        with pytest.raises(ServiceFailed) as failed:
            sup.check_startup()
        assert "broken-1 exited with code 3" in str(failed.value)
        assert "failing on purpose" in str(failed.value)
    finally:
        sup.stop_all()


def test_stop_all_goes_in_reverse_table_order(tmp_path):
    record = tmp_path / "record.txt"
    children = [
        _child(tmp_path, "first", 1, record=record),
        _child(tmp_path, "first", 2, record=record),
        _child(tmp_path, "second", 1, record=record),
        _child(tmp_path, "third", 1, record=record),
    ]
    sup = Supervisor(children, python=sys.executable, say=lambda _: None)
    sup.start_all()
    wait_until(lambda: len([ln for ln in _lines(record) if ln.endswith("START")]) == 4, what="four starts recorded")
    sup.stop_all()
    terms = [ln.split()[0] for ln in _lines(record) if ln.endswith("TERM")]
    assert terms[:2] == ["third-1", "second-1"]
    assert sorted(terms[2:]) == ["first-1", "first-2"]
    assert all(c.process.returncode == 0 for c in children)


def test_a_process_ignoring_sigterm_is_killed(tmp_path):
    said: list[str] = []
    stubborn = _child(tmp_path, "stubborn", mode="stubborn")
    sup = Supervisor([stubborn], python=sys.executable, say=said.append, stop_timeout_s=0.5)
    sup.start_all()
    wait_until(lambda: "stubborn-1 starting" in stubborn.log_path.read_text(), what="stubborn-1 started")
    sup.stop_all()
    assert stubborn.process.returncode == -signal.SIGKILL
    assert any("killed" in s for s in said)


def test_stop_processes_leaves_nothing_running(tmp_path):
    procs = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]) for _ in range(2)]
    stop_processes(procs, timeout=10)
    assert all(p.poll() is not None for p in procs)


def test_children_do_not_outlive_a_killed_relay_up(tmp_path):
    """PR_SET_PDEATHSIG: if `relay up` is SIGKILLed, its children get SIGTERM from the kernel."""
    record = tmp_path / "record.txt"
    parent_code = textwrap.dedent(f"""
        import os, sys, time
        from pathlib import Path
        from relay_cli.supervisor import spawn
        env = {{**os.environ, "PYTHONPATH": {str(REPO)!r}, "STAND_IN_RECORD": {str(record)!r},
               "OTEL_SERVICE_NAME": "relay-orphan", "RELAY_REPLICA": "1"}}
        env.pop("RELAY_PORT", None)
        p = spawn([sys.executable, "-m", {STAND_IN!r}], log_path=Path({str(tmp_path / 'orphan.log')!r}), env=env)
        print(p.pid, flush=True)
        time.sleep(600)
    """)
    parent = subprocess.Popen([sys.executable, "-c", parent_code], stdout=subprocess.PIPE, text=True)
    child_pid = int(parent.stdout.readline())
    wait_until(lambda: "orphan-1 START" in _lines(record), what="orphan-1 started")
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    wait_until(lambda: "orphan-1 TERM" in _lines(record), what="orphan-1 terminated")
    wait_until(lambda: not _pid_alive(child_pid), what="the orphan's child gone")


def test_spawned_children_run_in_their_own_session(tmp_path):
    """So a terminal's Ctrl-C reaches only `relay up`, which stops them in order."""
    p = spawn([sys.executable, "-c", "import time; time.sleep(600)"], log_path=tmp_path / "x.log")
    try:
        assert os.getsid(p.pid) == p.pid != os.getsid(0)
    finally:
        stop_processes([p], timeout=10)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by init) counts as gone.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_a_replica_dying_while_falkordb_is_down_waits_for_it_and_is_not_counted(tmp_path):
    said: list[str] = []
    child = _child(tmp_path, "agent", mode="exit")
    sup = Supervisor([child], python=sys.executable, say=said.append, max_restarts=1, window_s=300)
    sup.start_all()
    try:
        for t in (0.0, 10.0):  # dies twice, each time while FalkorDB is down (one try allowed)
            child.process.wait(30)
            first_pid = child.pid
            sup.check(now=t, hold=True)
            sup.check(now=t + 5, hold=True)
            assert child.pid == first_pid, "not started while FalkorDB is down"
            sup.check(now=t + 6)  # FalkorDB is back: started at once
            assert child.pid != first_pid and child.restart_at is None
        assert len(child.deaths) == 0
        assert any("exited with code 3 while FalkorDB is down; restarting it once FalkorDB is back" in s for s in said)
        child.process.wait(30)
        sup.check(now=20.0)  # a death of its own counts again
        assert len(child.deaths) == 1 and child.restart_at == 21.0
    finally:
        sup.stop_all()
