"""The simulator and the demo story against the real stack: a real FalkorDB and the real processes
(`python -m services.gateway|intake|resolver|netops`), talked to only through the gateway's HTTP
API, as `make up` runs them.

- the demo story passes (exit 0), and passes again on the same stack (a second start);
- a bounded simulator run (`--once`) plays its storylines and exits 0, and the desk ends up
  knowing where each simulated customer lives now;
- the long-running simulator beats a heartbeat, and stops cleanly on SIGTERM;
- a fault planted on a customer's line through the API is seen by the resolver's line test."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest
import redis

from relay_graph.desk.tickets import store as tickets_module
from relay_graph.runtime.embedded import free_port
from services.simulator import demo
from services.simulator.client import DeskClient
from services.simulator.faults import NetworkFaults
from services.simulator.storylines import EventKind, cast, plan_storylines

from ..processes import REPO, Desk
from tests.markers import needs
from tests import sample_network

pytestmark = [pytest.mark.falkordb, pytest.mark.processes]

ADMIN = "simulator-test-admin-key"


class Stack:
    def __init__(self, falkordb_server, graph_settings, log_dir: Path):
        self.falkordb = falkordb_server
        self.log_dir = log_dir
        self.desk = Desk(falkordb_server.host, falkordb_server.port, graph_settings.model_dir, log_dir)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.gateway: subprocess.Popen | None = None

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
        env.update(RELAY_FALKORDB_HOST=self.falkordb.host, RELAY_FALKORDB_PORT=str(self.falkordb.port),
                   PYTHONUNBUFFERED="1", **extra)
        return env

    def start(self) -> None:
        for service in ("intake", "resolver", "netops"):
            self.desk.start(service)
        log = (self.log_dir / "gateway.log").open("wb")
        self.gateway = subprocess.Popen(
            [sys.executable, "-m", "services.gateway"], cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
            env=self.env(RELAY_PORT=str(self.port), RELAY_ADMIN_KEY=ADMIN, RELAY_LOG_LEVEL="warning",
                         RELAY_MODEL_DIR=str(self.desk.model_dir)))
        log.close()
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:  # /readyz: FalkorDB, the streams and every agent group answer
            for p in [self.gateway, *(p.popen for p in self.desk.procs)]:
                assert p.poll() is None, f"a process exited early:\n{self.logs()}"
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise AssertionError(f"the stack was not ready:\n{self.logs()}")

    def stop(self) -> dict[str, int]:
        codes = {}
        if self.gateway is not None and self.gateway.poll() is None:
            self.gateway.send_signal(signal.SIGTERM)
            try:
                codes["gateway"] = self.gateway.wait(30)
            except subprocess.TimeoutExpired:
                self.gateway.kill()
                codes["gateway"] = self.gateway.wait()
        codes.update(self.desk.stop())
        return codes

    def logs(self) -> str:
        gw = self.log_dir / "gateway.log"
        tail = gw.read_text(errors="replace")[-3000:] if gw.exists() else ""
        return self.desk.logs() + "\n===== gateway =====\n" + tail

    def tenant(self) -> tuple[str, str]:
        name = "sim-" + uuid.uuid4().hex[:10]
        r = httpx.post(f"{self.url}/v1/tenants", json={"tenant": name}, headers={"Authorization": f"Bearer {ADMIN}"},
                       timeout=30)
        assert r.status_code == 201, r.text
        return name, r.json()["api_key"]

    def get(self, tenant: str, key: str, path: str, **params) -> dict:
        r = httpx.get(f"{self.url}/v1/tenants/{tenant}{path}", params=params,
                      headers={"Authorization": f"Bearer {key}"}, timeout=30)
        assert r.status_code == 200, r.text
        return r.json()

    def simulator(self, *args: str, **env: str) -> subprocess.Popen:
        log = (self.log_dir / f"simulator-{uuid.uuid4().hex[:6]}.log").open("wb")
        proc = subprocess.Popen(
            [sys.executable, "-m", "services.simulator", *args], cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
            env=self.env(RELAY_GATEWAY_URL=self.url, RELAY_ADMIN_KEY=ADMIN, RELAY_HEARTBEAT_EVERY_S="0.3",
                         RELAY_HEARTBEAT_TTL_S="2", **env))
        proc.log_path = Path(log.name)  # type: ignore[attr-defined]
        log.close()
        return proc


@pytest.fixture(scope="module")
@needs("processes")
def stack(falkordb_server, graph_settings, tmp_path_factory):
    s = Stack(falkordb_server, graph_settings, tmp_path_factory.mktemp("sim-stack"))
    try:
        s.start()
        yield s
    finally:
        codes = s.stop()
    assert set(codes.values()) <= {0}, f"unclean stop {codes}\n{s.logs()}"


def test_the_demo_story_passes_and_passes_again(stack, capsys):
    first = demo.run(stack.url, ADMIN)
    out = capsys.readouterr().out
    assert first == 0, out + stack.logs()
    assert "all" in out and "checks passed" in out and "how I know" in out
    again = demo.run(stack.url, ADMIN)  # a second start: its own tenant, the same story
    out = capsys.readouterr().out
    assert again == 0, out + stack.logs()


def test_relay_demo_finds_the_running_relay_and_its_admin_key(stack, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "admin.key").write_text(ADMIN + "\n")  # as `relay up` keeps it
    (data / "relay.state.json").write_text(json.dumps({"url": stack.url}))
    env = {k: v for k, v in os.environ.items() if k not in ("RELAY_ADMIN_KEY", "RELAY_PORT")}
    done = subprocess.run([sys.executable, "-m", "relay_cli.main", "demo", "--data-dir", str(data)], cwd=REPO,
                          env={**env, "COLUMNS": "200"}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "checks passed" in done.stdout
    refused = subprocess.run([sys.executable, "-m", "relay_cli.main", "demo", "--data-dir", str(tmp_path / "none")],
                             cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "no admin key" in refused.stdout


def test_the_demo_story_fails_loudly_when_the_desk_cannot_be_reached(capsys):
    assert demo.run(f"http://127.0.0.1:{free_port()}", ADMIN) == 1
    assert "failed" in capsys.readouterr().out


async def test_a_bounded_run_plays_its_storylines_and_the_desk_remembers_where_they_live(stack, tmp_path,
                                                                                          graph_client):
    tenant = "sim-" + uuid.uuid4().hex[:10]
    keys = tmp_path / "keys.json"
    seed, customers, days = 5, 4, 2
    proc = stack.simulator("--once", "--speed", "8", "--seed", str(seed), "--customers", str(customers),
                           "--days", str(days), RELAY_TENANT=tenant, RELAY_KEY_FILE=str(keys))
    try:
        code = proc.wait(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    log = proc.log_path.read_text(errors="replace")
    assert code == 0, log
    assert "round 0 done" in log and " 0 errors" in log, log
    assert oct(keys.stat().st_mode & 0o777) == "0o600"
    key = json.loads(keys.read_text())[tenant]

    events = plan_storylines(seed, customers, days)
    said = [e for e in events if e.kind is EventKind.SAY]
    assert said
    tickets = stack.get(tenant, key, "/tickets")["tickets"]
    reported: dict[str, set[str]] = {}
    for e in said:
        if e.problem:
            reported.setdefault(e.customer, set()).add(e.problem)
    assert reported, "the storylines report problems"
    for name, problems in reported.items():  # each reported problem became a ticket about what they said
        theirs = {t["issue"] for t in tickets if t["customer"] == name}
        assert theirs and theirs <= problems, f"{name}: reported {problems}, tickets about {theirs}"
    assert {t["customer"] for t in tickets} <= set(reported)
    for p in cast(seed, customers):
        now = [e.profile.city for e in events if e.customer == p.id][-1]
        facts = stack.get(tenant, key, "/facts", subject=p.id, predicate="lives_in")["facts"]
        assert [f["object"] for f in facts] == [now], f"{p.name}: {facts}\n{log}"
    # no ticket of the run reached `fixed` without a passing reading taken after the last action
    assert await tickets_module.unproven_fixes(graph_client, tenant) == {}


def test_the_running_simulator_beats_and_stops_cleanly_on_sigterm(stack):
    tenant, key = stack.tenant()
    proc = stack.simulator("--speed", "8", "--seed", "21", "--customers", "3", "--days", "30",
                           RELAY_TENANT=tenant, RELAY_TENANT_KEY=key)
    r = redis.Redis(host=stack.falkordb.host, port=stack.falkordb.port)
    first = cast(21, 3)

    def beating() -> int:
        return sum(1 for _ in r.scan_iter(match="relay:heartbeat:simulator:*"))

    try:
        deadline = time.monotonic() + 120
        while True:  # it beats and it has talked to the desk
            assert proc.poll() is None, proc.log_path.read_text(errors="replace")
            known = [stack.get(tenant, key, "/facts", subject=p.name)["facts"] for p in first]
            if beating() and any(known):
                break
            assert time.monotonic() < deadline, proc.log_path.read_text(errors="replace")
            time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0, proc.log_path.read_text(errors="replace")
        assert beating() == 0, "its heartbeat key goes with it"
    finally:
        if proc.poll() is None:
            proc.kill()
        r.close()


async def test_a_fault_planted_on_a_line_is_what_the_resolver_measures(stack, graph_client):
    tenant, key = stack.tenant()
    # the network is seeded the way a provider's inventory would be (not through the simulator)
    await sample_network.build_sample_network(graph_client, tenant, city="pune", customers=["Asha Verma", "Ravi Nair"])
    async with httpx.AsyncClient(base_url=stack.url, timeout=45) as http:
        desk = DeskClient(http, tenant, key)
        faults = NetworkFaults(desk)
        fault = await faults.inject("box_dead", "Asha Verma")
        assert fault.via == "network" and fault.node_id == "pune-ont-1"
        line = await desk.line("Asha Verma")
        assert line[0]["node_id"] == "pune-ont-1" and line[0]["status"] != "up"

        reply = await desk.chat("Asha Verma", "Hi, I'm Asha Verma. We have no internet at all since this morning.",
                                wait=30)
        assert reply.ticket_id, reply
        deadline = asyncio.get_running_loop().time() + 90
        while True:
            t = await desk.ticket(reply.ticket_id)
            if t["stage"] == "technician_dispatched":
                break
            assert asyncio.get_running_loop().time() < deadline, t
            await asyncio.sleep(0.2)
        resolver = " ".join(e["detail"] or "" for e in t["timeline"] if e["agent"] == "resolver")
        assert "pune-ont-1" in resolver or "home box" in resolver, t["timeline"]

        await faults.repair(fault)
        assert (await desk.line("Asha Verma"))[0]["status"] == "up"
        assert all(h["status"] == "up" for h in await desk.line("Ravi Nair"))
    assert await tickets_module.unproven_fixes(graph_client, tenant) == {}
