"""Every service is gone within 5 s of SIGTERM whatever its connections are doing: FalkorDB killed
(connections refused) or frozen (SIGSTOP: calls that never get an answer) before the signal,
with a turn in flight. Compose gives 15 s before SIGKILL; a process past 5 s is a defect."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from relay_graph.runtime.embedded import free_port
from relay_graph.runtime.streams import Publisher, TurnReceived, connect

from .processes import REPO, Desk

pytestmark = pytest.mark.processes

STOP_WITHIN_S = 5.0


def _gateway(server, tmp_path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "RELAY_FALKORDB_HOST": server.host, "RELAY_FALKORDB_PORT": str(server.port),
           "RELAY_PORT": str(port), "RELAY_HOST": "127.0.0.1", "RELAY_LOG_LEVEL": "warning",
           "RELAY_READY_AGENTS": "[]"}
    log = (tmp_path / "gateway.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "services.gateway"], cwd=REPO, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    log.close()
    return proc, f"http://127.0.0.1:{port}"


async def _gateway_ready(proc: subprocess.Popen, base: str) -> None:
    deadline = time.monotonic() + 60
    async with httpx.AsyncClient() as client:
        while time.monotonic() < deadline:
            assert proc.poll() is None, "gateway exited early"
            try:
                if (await client.get(f"{base}/readyz", timeout=1)).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
    raise AssertionError("gateway never became ready")


@pytest.mark.parametrize("how", ["killed", "frozen"])
async def test_every_service_stops_within_5s_of_sigterm_after_falkordb_died(own_server, graph_settings, tmp_path,
                                                                             how, tenant):
    desk = Desk(own_server.host, own_server.port, graph_settings.model_dir, tmp_path)
    desk.start("intake", 1)
    desk.start("resolver", 1)
    desk.start("netops", 1)
    gateway, base = _gateway(own_server, tmp_path)
    redis = connect(host=own_server.host, port=own_server.port)
    try:
        await desk.ready(redis)
        await _gateway_ready(gateway, base)
        # a turn in flight for a tenant with no graph: intake is somewhere in its handler
        await Publisher(redis).publish(TurnReceived(tenant=tenant, episode_id="e1", seq=1, session="s", customer="c"))
        await asyncio.sleep(0.3)
    finally:
        await redis.aclose()
    server = own_server.process
    server.send_signal(signal.SIGKILL if how == "killed" else signal.SIGSTOP)
    await asyncio.sleep(2.0)  # long enough for every connection to be in trouble
    procs = {f"{p.service}-{p.replica}": p.popen for p in desk.procs} | {"gateway": gateway}
    started = time.monotonic()
    for p in procs.values():
        p.send_signal(signal.SIGTERM)
    took, codes = {}, {}
    try:
        for name, p in procs.items():
            try:
                codes[name] = await asyncio.to_thread(p.wait, STOP_WITHIN_S + 5)
            except subprocess.TimeoutExpired:
                codes[name] = None
            took[name] = time.monotonic() - started
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
    slow = {n: round(t, 1) for n, t in took.items() if t > STOP_WITHIN_S or codes[n] != 0}
    assert not slow, f"{how}: {slow} codes {codes}\n{desk.logs()}\n{(tmp_path / 'gateway.log').read_text()[-3000:]}"
