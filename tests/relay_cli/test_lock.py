"""One `relay up` per data folder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from relay_cli import lock as locks


def test_second_acquire_is_refused_naming_the_holder(tmp_path):
    first = locks.acquire(tmp_path, {"port": 8123})
    before = first.path.read_bytes()
    with pytest.raises(locks.AlreadyRunning) as refused:
        locks.acquire(tmp_path, {"port": 9999})
    message = str(refused.value)
    assert f"pid {os.getpid()}" in message
    assert "http://127.0.0.1:8123" in message
    assert first.path.read_bytes() == before, "a refused run must not touch the holder's info"
    first.release()


def test_holder_reports_the_running_instance_and_none_after_release(tmp_path):
    assert locks.holder(tmp_path) is None
    lock = locks.acquire(tmp_path, {"port": 8123, "falkordb_port": 6390})
    info = locks.holder(tmp_path)
    assert info["pid"] == os.getpid() and info["port"] == 8123 and info["falkordb_port"] == 6390
    lock.release()
    assert locks.holder(tmp_path) is None
    locks.acquire(tmp_path).release()  # free again


def test_the_lock_dies_with_its_holder(tmp_path):
    """However `relay up` ends (here: SIGKILL), the kernel frees the lock: no stale lock files."""
    code = textwrap.dedent(f"""
        import sys, time
        from relay_cli import lock
        lock.acquire({str(tmp_path)!r}, {{"port": 1}})
        print("locked", flush=True)
        time.sleep(600)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        assert locks.holder(tmp_path)["pid"] == proc.pid
        with pytest.raises(locks.AlreadyRunning):
            locks.acquire(tmp_path)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert locks.holder(tmp_path) is None
    locks.acquire(tmp_path).release()


def test_relay_up_refuses_while_another_holds_the_lock_and_touches_nothing(tmp_path):
    held = locks.acquire(tmp_path, {"port": 8123})
    before = sorted(p.name for p in tmp_path.iterdir())
    lock_bytes = held.path.read_bytes()
    try:
        res = subprocess.run(
            [sys.executable, "-m", "relay_cli.main", "up", "--no-demo", "--data-dir", str(tmp_path)],
            capture_output=True, text=True, timeout=120,
            env={k: v for k, v in os.environ.items() if k != "RELAY_ADMIN_KEY"},
        )
    finally:
        after = sorted(p.name for p in tmp_path.iterdir())
        lock_bytes_after = held.path.read_bytes()
        held.release()
    assert res.returncode != 0
    assert "already running" in res.stdout
    assert f"pid {os.getpid()}" in res.stdout and "8123" in res.stdout
    assert after == before, "no admin key, logs or database created by a refused run"
    assert lock_bytes_after == lock_bytes, "the holder's pid and port are left as they were"
