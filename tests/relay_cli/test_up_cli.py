"""`python -m relay_cli.main up` for real: FalkorDB, the real services, the lock, Ctrl-C, restart."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

from relay_cli import lock as locks
from relay_graph.runtime.embedded import free_port, port_in_use

pytestmark = pytest.mark.processes

REPO = Path(__file__).resolve().parents[2]


class Up:
    """One `relay up` process, its output in a file (a pipe could fill up and block it)."""

    def __init__(self, data_dir: Path, port: int, falkordb_port: int, name: str, extra_env: dict | None = None):
        self.port = port
        self.out_path = data_dir.parent / f"{name}.out"
        env = {k: v for k, v in os.environ.items() if k not in ("RELAY_ADMIN_KEY", "RELAY_FALKORDB_PASSWORD")}
        env.update(
            RELAY_FALKORDB_PORT=str(falkordb_port),
            RELAY_MODEL_DIR=str(REPO / ".relay" / "model"),
            COLUMNS="200",
        )
        env.update(extra_env or {})
        self.env = env
        self.args = ["up", "--no-demo", "--port", str(port), "--data-dir", str(data_dir)]
        with open(self.out_path, "wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "relay_cli.main", *self.args],
                cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
            )

    @property
    def output(self) -> str:
        return self.out_path.read_text(errors="replace")

    def wait_for_output(self, text: str, timeout: float = 180.0) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.output:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"relay up never said {text!r}:\n{self.output}")
            time.sleep(0.3)

    def wait_ready(self, timeout: float = 240.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"relay up exited with {self.proc.returncode} before ready:\n{self.output}")
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        pytest.fail(f"/readyz not 200 within {timeout}s:\n{self.output}")

    def interrupt(self, timeout: float = 120.0) -> int:
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()  # its children get SIGTERM from the kernel (PR_SET_PDEATHSIG)
            self.proc.wait()


def _relay(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "relay_cli.main", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


def test_up_lock_ctrl_c_and_restart_keeps_the_data(tmp_path):
    assert (REPO / "services" / "gateway" / "__main__.py").exists(), "the gateway is needed for this test"
    data = tmp_path / "data"
    port, fport = free_port(), free_port()
    tenant = "t-" + uuid.uuid4().hex[:10]
    first = Up(data, port, fport, "first")
    restarted = None
    try:
        first.wait_ready()
        key = (data / "admin.key").read_text().strip()
        assert first.output.count(key) == 1, "the generated admin key is printed once"
        # FalkorDB wants the generated password; every service got it, or /readyz (which needs each
        # agent's heartbeat and consumer group) would not have answered 200.
        password = (data / "falkordb.password").read_text().strip()
        assert (data / "falkordb.password").stat().st_mode & 0o777 == 0o600
        assert password not in first.output
        with socket.create_connection(("127.0.0.1", fport), timeout=5) as raw:
            raw.sendall(b"PING\r\n")
            assert raw.recv(200).startswith(b"-NOAUTH"), "the embedded server refuses a client without it"
        # `relay admin` on the same data folder finds the password there.
        stats = _relay("admin", "snapshots", "demo", env=dict(first.env, RELAY_DATA_DIR=str(data)))
        assert stats.returncode == 0 and stats.stdout.strip() == "[]", stats.stderr
        assert (data / "logs" / "gateway-1.log").exists()

        # The public demo tenant: the site at / serves it, a visitor gets a customer session.
        first.wait_for_output("the customer site at")
        assert "new tenant 'demo'" in first.output, first.output
        assert (data / "demo-tenant.key").stat().st_mode & 0o777 == 0o600
        base = f"http://127.0.0.1:{port}"
        page = httpx.get(f"{base}/", timeout=30)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html"), page.text
        visit = httpx.post(f"{base}/v1/tenants/demo/me/session", timeout=30)
        assert visit.status_code == 201, visit.text
        assert httpx.get(f"{base}/v1/tenants/demo/me/plans", params={"country": "IN"}, cookies=visit.cookies,
                         timeout=30).json()["plans"], "the demo tenant's world is seeded"

        status = _relay("status", "--data-dir", str(data), env=first.env)
        assert status.returncode == 0 and f"pid {first.proc.pid}" in status.stdout
        # Every process's GET /metrics, as `relay status` lists them: the gateway's on its own port,
        # each agent's on the port `relay up` gave it.
        state = json.loads((data / "relay.state.json").read_text())
        urls = {p["service"]: p["metrics"] for p in state["processes"] if p.get("metrics")}
        assert set(urls) == {"gateway", "intake", "resolver", "netops"}, state
        assert "metrics" in status.stdout and status.stdout.count("/metrics") == len(urls), status.stdout
        for service, url in urls.items():
            scraped = httpx.get(url, timeout=10)
            assert scraped.status_code == 200 and "relay_" in scraped.text, (service, scraped.text[:500])

        refused = _relay("up", "--no-demo", "--port", str(free_port()), "--data-dir", str(data), env=first.env)
        assert refused.returncode != 0
        assert "already running" in refused.stdout
        assert f"pid {first.proc.pid}" in refused.stdout and str(port) in refused.stdout

        auth = {"Authorization": f"Bearer {key}"}
        created = httpx.post(f"http://127.0.0.1:{port}/v1/tenants", json={"tenant": tenant}, headers=auth, timeout=30)
        assert created.status_code == 201, created.text

        assert first.interrupt() == 0, first.output
        assert "stopped falkordb" in first.output
        assert not port_in_use("127.0.0.1", fport), "FalkorDB is stopped"
        assert not port_in_use("127.0.0.1", port), "the gateway is stopped"
        assert locks.holder(data) is None, "the lock is released"
        assert _relay("status", "--data-dir", str(data), env=first.env).returncode == 3

        restarted = Up(data, port, fport, "restarted")
        restarted.wait_ready()
        assert key not in restarted.output, "an existing admin key is not printed again"
        restarted.wait_for_output("the customer site at")
        assert "created on an earlier start" in restarted.output, restarted.output
        again = httpx.post(f"http://127.0.0.1:{port}/v1/tenants", json={"tenant": tenant}, headers=auth, timeout=30)
        assert again.status_code == 409, f"the tenant survived the restart (AOF): {again.text}"
        assert restarted.interrupt() == 0, restarted.output
    finally:
        for up in (first, restarted):
            if up is not None:
                up.kill()
