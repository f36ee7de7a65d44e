"""`relay up` keeps its FalkorDB server running: a kill -9 of it, with the real services writing
through the gateway, and a server that cannot start again (the give-up rule)."""

from __future__ import annotations

import json
import os
import re
import signal
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest
import redis
from rich.console import Console

from relay_cli.up import STATE_NAME, EmbeddedRelay, StopFlag
from relay_graph.runtime.embedded import free_port, port_in_use
from tests.relay_cli.test_embedded_flow import _opts, _start
from tests.relay_cli.test_up_cli import Up
from tests.support import wait_until

pytestmark = pytest.mark.processes

REPO = Path(__file__).resolve().parents[2]

# The agents' stream timings small enough that an entry left pending by the outage is taken again
# within the test (tests/services/processes.py uses the same).
FAST_STREAMS = {
    "RELAY_STREAMS__MIN_IDLE_MS": "2000",
    "RELAY_STREAMS__HEARTBEAT_MS": "500",
    "RELAY_STREAMS__RECLAIM_INTERVAL_MS": "500",
    "RELAY_STREAMS__BLOCK_MS": "500",
    "RELAY_HEARTBEAT_EVERY_S": "0.5",
    "RELAY_HEARTBEAT_TTL_S": "3",
    # the test writes and reads as fast as the gateway answers
    "RELAY_RATE_LIMIT_PER_SECOND": "10000",
    "RELAY_RATE_LIMIT_BURST": "10000",
}

NAMES = ("Asha", "Bela", "Chitra", "Dev", "Esha")
TURNS = len(NAMES)  # chat turns sent just before the kill


def _falkordb_pid(data: Path) -> int:
    state = json.loads((data / STATE_NAME).read_text())
    [pid] = [p["pid"] for p in state["processes"] if p["service"] == "falkordb"]
    return pid


def _pending(*, port: int, password: str) -> dict[tuple[str, str], int]:
    """Entries pending per (stream, group) on every stream of Relay."""
    out = {}
    with redis.Redis(port=port, password=password, decode_responses=True) as client:
        for stream in client.scan_iter(match="relay:stream:*", _type="stream"):
            for group in client.xinfo_groups(stream):
                out[(stream, group["name"])] = group["pending"]
    return out


def _readyz(base: str) -> int | None:
    try:  # its checks have 2s to answer: a server that is down makes it take that long
        return httpx.get(f"{base}/readyz", timeout=10).status_code
    except httpx.HTTPError:
        return None


class Writer:
    """Writes one fact after another through the gateway (each a new subject) on its own thread,
    and keeps the subjects whose write was acknowledged (201), split by phase."""

    def __init__(self, base: str, tenant: str, key: str):
        self.url = f"{base}/v1/tenants/{tenant}/facts"
        self.headers = {"Authorization": f"Bearer {key}"}
        self.phase = "before"
        self.acked: dict[str, list[str]] = {"before": [], "across": [], "after": []}
        self.refused = 0
        self.errors: list[str] = []
        self.stop = threading.Event()
        self.n = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def write_one(self, http: httpx.Client) -> bool:
        self.n += 1
        subject = f"heal customer {self.n:05d}"
        try:
            r = http.post(self.url, json={"subject": subject, "predicate": "lives_in", "object": "pune"},
                          headers=self.headers)
        except httpx.HTTPError:
            self.refused += 1
            return False
        if r.status_code == 201:
            self.acked[self.phase].append(subject)
            return True
        if r.status_code == 429:  # the tenant's rate limit: slow down
            time.sleep(float(r.headers.get("retry-after", 1)))
            return False
        self.errors.append(f"{r.status_code} {r.text}")
        if r.status_code != 503:  # unavailable while the server is down; nothing else (asserted)
            self.stop.set()
        self.refused += 1
        return False

    def _run(self) -> None:
        with httpx.Client(timeout=30) as http:
            while not self.stop.is_set():
                if not self.write_one(http):
                    time.sleep(0.05)

    @property
    def all_acked(self) -> list[str]:
        return [s for subjects in self.acked.values() for s in subjects]


def test_a_killed_falkordb_is_started_again_and_every_acknowledged_write_survives(tmp_path):
    data = tmp_path / "data"
    port, fport = free_port(), free_port()
    up = Up(data, port, fport, "heal", extra_env=FAST_STREAMS)
    base = f"http://127.0.0.1:{port}"
    try:
        up.wait_ready()
        admin = {"Authorization": f"Bearer {(data / 'admin.key').read_text().strip()}"}
        tenant = "heal-" + uuid.uuid4().hex[:8]
        r = httpx.post(f"{base}/v1/tenants", json={"tenant": tenant, "world": False}, headers=admin, timeout=60)
        assert r.status_code == 201, r.text
        key = r.json()["api_key"]
        auth = {"Authorization": f"Bearer {key}"}

        writer = Writer(base, tenant, key)
        writer.thread.start()
        wait_until(lambda: len(writer.acked["before"]) >= 30 or writer.stop.is_set(), timeout=120,
                   what="30 facts acknowledged")
        assert not writer.errors, writer.errors
        # turns on the agents' streams as the server dies: each is answered once it is back
        turns = []
        for i in range(TURNS):
            r = httpx.post(f"{base}/v1/tenants/{tenant}/chat", headers=auth, timeout=30,
                           json={"name": f"Heal {NAMES[i]}", "text": "Hi, what plans do you have?"})
            assert r.status_code == 202, r.text
            turns.append(r.json()["episode_id"])
        victim = _falkordb_pid(data)
        writer.phase = "across"
        os.kill(victim, signal.SIGKILL)
        killed_at = time.monotonic()

        wait_until(lambda: _readyz(base) == 503, timeout=30, interval=0.05, what="/readyz 503 after the kill")
        wait_until(lambda: _readyz(base) == 200, timeout=120, interval=0.1, what="/readyz 200 again")
        ready_after = time.monotonic() - killed_at
        writer.phase = "after"
        wait_until(lambda: len(writer.acked["after"]) >= 30 or writer.stop.is_set(), timeout=120,
                   what="30 facts acknowledged after")
        writer.stop.set()
        writer.thread.join(60)
        assert all(e.startswith("503 ") for e in writer.errors), writer.errors

        assert _falkordb_pid(data) != victim, "the state file names the new server"
        out = up.output
        assert "falkordb: exited with code -9; starting it again in 1s on the same data folder" in out, out
        back = re.search(r"falkordb: back after ([0-9.]+)s", out)
        assert back, out

        # every acknowledged write, before, across and after the kill, is there
        found = []
        with httpx.Client(timeout=30) as http:
            for subject in writer.all_acked:
                r = http.get(f"{base}/v1/tenants/{tenant}/facts", params={"subject": subject}, headers=auth)
                assert r.status_code == 200, r.text
                if any(f["predicate"] == "lives_in" and f["object"] == "pune" for f in r.json()["facts"]):
                    found.append(subject)
        assert found == writer.all_acked, sorted(set(writer.all_acked) - set(found))

        # the agents' consumer groups came back with the server: the turns sent as it died are
        # answered, nothing stays pending, and a new turn gets its reply
        def replies() -> int:
            r = httpx.get(f"{base}/v1/admin/tenants/{tenant}/stats", headers=admin, timeout=30)
            assert r.status_code == 200, r.text
            return r.json()["nodes"].get("AgentReply", 0)

        wait_until(lambda: replies() >= TURNS, timeout=60, interval=0.5,
                   what="every turn sent before the kill answered")
        password = (data / "falkordb.password").read_text().strip()
        pending = _pending(port=fport, password=password)
        assert set(pending) >= {("relay:stream:turns", "intake"), ("relay:stream:tickets", "resolver"),
                                ("relay:stream:network", "netops")}, pending
        wait_until(lambda: not any(_pending(port=fport, password=password).values()), timeout=60, interval=0.5,
                   what="no entry pending in any group")
        r = httpx.post(f"{base}/v1/tenants/{tenant}/chat", params={"wait": 30},
                       json={"name": "Meera Heal", "text": "Hi, what plans do you have?"}, headers=auth, timeout=60)
        assert r.status_code == 200, r.text
        reply = r.json()["reply"]["text"]
        assert reply and replies() == TURNS + 1, "one reply per turn"

        print(f"\nFalkorDB kill -9 under relay up: writes acked before {len(writer.acked['before'])}, "
              f"across it {len(writer.acked['across'])} (refused {writer.refused}), "
              f"after {len(writer.acked['after'])}; found after {len(found)} of {len(writer.all_acked)}; "
              f"FalkorDB answering again {back.group(1)}s and /readyz 200 {ready_after:.1f}s after the kill; "
              f"chat reply after: {reply[:60]!r}")
        assert up.interrupt() == 0, up.output
    finally:
        up.kill()


def test_a_falkordb_that_cannot_start_again_stops_everything_and_says_why(tmp_path):
    console = Console(record=True, width=200)
    opts = _opts(tmp_path)
    opts.falkordb_max_restarts, opts.falkordb_restart_window_s = 2, 60.0
    relay = EmbeddedRelay(opts, console, StopFlag(console))
    thread, result = _start(relay)
    try:
        wait_until(lambda: "Ctrl-C stops everything" in console.export_text(clear=False), timeout=60,
                   what="relay up ready")
        # A manifest the server cannot read: every start after the kill fails the same way.
        manifest = next((tmp_path / "falkordb" / "appendonlydir").glob("*.manifest"))
        manifest.write_text("not a manifest\n")
        os.kill(relay.falkordb.process.pid, signal.SIGKILL)
        wait_until(lambda: "falkordb: exited with code -9" in console.export_text(clear=False), timeout=30,
                   what="the kill noticed")
        # a service dying while FalkorDB is down waits for it, and does not use up its own tries
        agent = relay.supervisor.children[0]
        os.kill(agent.pid, signal.SIGKILL)
        thread.join(60)
    finally:
        relay.stop.event.set()
        thread.join(60)
    assert result["rc"] == 1
    out = console.export_text()
    assert "falkordb: exited with code -9; starting it again in 1s" in out
    assert "falkordb: exited with code 1 while starting again; starting it again in 2s" in out
    assert ("relay up failed: FalkorDB exited with code 1 while starting again. It stopped 3 times within 60s, "
            "so it is not started again: stopping everything.") in out
    assert "Invalid AOF manifest file format" in out, "the tail of its log says why"
    assert f"agent-1 (pid {agent.pid}) exited with code -9 while FalkorDB is down; restarting it once" in out
    assert "restarted agent-1" not in out
    assert not port_in_use("127.0.0.1", opts.port), "the services are stopped"
    assert not port_in_use("127.0.0.1", opts.falkordb_port)
    assert not (tmp_path / STATE_NAME).exists()


def test_a_port_taken_while_falkordb_is_down_counts_as_a_failed_start(tmp_path):
    import socket

    from relay_cli.falkordb_keeper import FalkorDBGaveUp, FalkorDBKeeper
    from relay_cli.supervisor import SupervisedFalkorDB

    said: list[str] = []
    server = SupervisedFalkorDB(tmp_path / "falkordb", free_port(), log_file=tmp_path / "falkordb.log",
                                password="pw").start()
    keeper = FalkorDBKeeper(server, say=said.append, max_restarts=1, window_s=60)
    try:
        server.process.kill()
        server.process.wait(30)
        keeper.check(now=0.0)
        assert not keeper.up and keeper.restart_at == 1.0
        with socket.socket() as squatter:
            squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            squatter.bind(("127.0.0.1", server.port))
            squatter.listen()
            with pytest.raises(FalkorDBGaveUp) as gave_up:
                keeper.check(now=1.0)
        assert (f"FalkorDB could not be started again: FalkorDB port {server.port} is already in use"
                in str(gave_up.value))
        assert "It stopped 2 times within 60s, so it is not started again: stopping everything" in str(gave_up.value)
        assert said == [f"falkordb: exited with code -9; starting it again in 1s on the same data folder "
                        f"(/readyz answers 503 meanwhile; log: {tmp_path / 'falkordb.log'})"]
    finally:
        server.stop()
