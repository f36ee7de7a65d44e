"""The real gateway process: `python -m services.gateway`, ready, one request, SIGTERM, exit 0."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from relay_graph.runtime.embedded import free_port

pytestmark = [pytest.mark.processes, pytest.mark.creates_tenant]  # its tenant is made over HTTP

REPO = Path(__file__).resolve().parents[2]


def wait_ready(base: str, proc: subprocess.Popen, deadline_s: float = 60) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"gateway exited early with {proc.returncode}"
        try:
            if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError("gateway never became ready")


def test_gateway_process_serves_and_stops_cleanly(falkordb_server, tenant, tmp_path):
    port = free_port()
    env = {
        **os.environ,
        "RELAY_FALKORDB_HOST": falkordb_server.host,
        "RELAY_FALKORDB_PORT": str(falkordb_server.port),
        "RELAY_PORT": str(port),
        "RELAY_HOST": "127.0.0.1",
        "RELAY_ADMIN_KEY": "process-test-admin-key",
        "RELAY_LOG_LEVEL": "warning",
        "RELAY_READY_AGENTS": "[]",  # the gateway alone: ready once FalkorDB and the streams answer
    }
    log = (tmp_path / "gateway.log").open("w+b")
    proc = subprocess.Popen([sys.executable, "-m", "services.gateway"], cwd=REPO, env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_ready(base, proc)
        r = httpx.post(f"{base}/v1/tenants", json={"tenant": tenant},
                       headers={"Authorization": "Bearer process-test-admin-key"}, timeout=10)
        assert r.status_code == 201, r.text
        key = r.json()["api_key"]
        r = httpx.get(f"{base}/v1/tenants/{tenant}/claims", params={"subject": "x", "predicate": "lives_in"},
                      headers={"Authorization": f"Bearer {key}"}, timeout=10)
        assert r.status_code == 200, r.text
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, (tmp_path / "gateway.log").read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()


def test_behind_a_trusted_tls_proxy_the_customer_cookie_is_secure(falkordb_server, tenant, tmp_path):
    # The "proxy" is this machine at 127.0.0.3 (any 127/8 address is loopback), the one
    # RELAY_TRUSTED_PROXIES names; the same request from 127.0.0.1, now untrusted, is plain http.
    port = free_port()
    env = {**os.environ, "RELAY_FALKORDB_HOST": falkordb_server.host, "RELAY_FALKORDB_PORT": str(falkordb_server.port),
           "RELAY_PORT": str(port), "RELAY_HOST": "127.0.0.1", "RELAY_ADMIN_KEY": "process-test-admin-key",
           "RELAY_LOG_LEVEL": "warning", "RELAY_READY_AGENTS": "[]", "RELAY_TRUSTED_PROXIES": '["127.0.0.3"]'}
    log = (tmp_path / "gateway.log").open("w+b")
    proc = subprocess.Popen([sys.executable, "-m", "services.gateway"], cwd=REPO, env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_ready(base, proc)
        r = httpx.post(f"{base}/v1/tenants", json={"tenant": tenant},
                       headers={"Authorization": "Bearer process-test-admin-key"}, timeout=10)
        assert r.status_code == 201, r.text
        r = httpx.put(f"{base}/v1/tenants/{tenant}/site", json={"open": True},
                      headers={"Authorization": f"Bearer {r.json()['api_key']}"}, timeout=10)
        assert r.status_code == 200, r.text

        def cookie_from(address: str) -> str:
            with httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=10) as c:
                r = c.post(f"{base}/v1/tenants/{tenant}/me/session", headers={"X-Forwarded-Proto": "https"})
                assert r.status_code == 201, r.text
                return r.headers["set-cookie"]

        assert "; Secure" in cookie_from("127.0.0.3")
        assert "Secure" not in cookie_from("127.0.0.1")  # a client cannot claim https for itself
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
