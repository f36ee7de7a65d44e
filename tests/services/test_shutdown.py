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
from pathlib import Path

import httpx
import pytest

from relay_graph.runtime.embedded import free_port
from relay_graph.runtime.agents.settings import AgentSettings
from relay_graph.runtime.streams import STREAM_TURNS, Publisher, TurnReceived, connect, stream_groups
from services.gateway.settings import GatewaySettings
from tests.support import eventually

from .processes import FAST_ENV, REPO, Desk

pytestmark = pytest.mark.processes

STOP_WITHIN_S = 5.0
# The periods of the loops in which the desk's processes (FAST_ENV) and the gateway use FalkorDB.
LOOP_PERIODS_S = (int(FAST_ENV["RELAY_STREAMS__BLOCK_MS"]) / 1000, float(FAST_ENV["RELAY_HEARTBEAT_EVERY_S"]),
                  AgentSettings.model_fields["outbox_every_s"].default,
                  GatewaySettings.model_fields["outbox_every_s"].default)


def _state(pid: int) -> str:
    """A process's state letter from /proc (T: stopped by a signal)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


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
        # a turn in flight for a tenant with no graph: intake has read it and is somewhere in its handler
        await Publisher(redis).publish(TurnReceived(tenant=tenant, episode_id="e1", seq=1, session="s", customer="c"))

        async def intake_read_it() -> bool:
            return any(g.group == "intake" and g.lag == 0 for g in await stream_groups(redis, STREAM_TURNS))

        await eventually(intake_read_it, what="intake reading the turn")
    finally:
        await redis.aclose()
    server = own_server.process
    server.send_signal(signal.SIGKILL if how == "killed" else signal.SIGSTOP)
    if how == "killed":
        await asyncio.to_thread(server.wait, 30)
    else:
        await eventually(lambda: _state(server.pid) == "T", what="FalkorDB stopped (SIGSTOP)")
    # The server is gone, or answers nothing (and a frozen one makes nobody say so). Each service's
    # loops that touch it (the streams' reads, the heartbeat, the outbox relay) run again within
    # their period, so after two of the longest every connection is in trouble: inside other
    # processes there is no event to wait on, nor a clock to move.
    await asyncio.sleep(2 * max(LOOP_PERIODS_S))
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
