"""GET /metrics of the real processes (`python -m services.gateway|intake|resolver|netops|simulator`)
on the session's FalkorDB, after a customer's chat turn went through the agents:

- the gateway's (on its own port, no key): the chat route's request count went up by the turn,
  the chat turn's latency histogram counted it, every agent group's stream series are there, and
  FalkorDB's memory and graphs; no tenant's name anywhere;
- an agent's (on RELAY_METRICS_PORT): its group's handled entries, its stream's pending and lag;
- every series infra/grafana/relay.json queries is one these processes export;
- all of it parses with prometheus_client's parser.

It prints an excerpt of each /metrics after the chat (run with -s to see it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

from relay_graph.runtime.embedded import free_port
from relay_graph.runtime.streams import STREAM_NETWORK, STREAM_TICKETS, STREAM_TURNS
from tests.markers import needs
from tests.metrics_text import excerpt, names, parse, series, value
from tests.support import stop_process

from .processes import REPO, Desk

pytestmark = [pytest.mark.falkordb, pytest.mark.processes]

ADMIN = "metrics-test-admin-key"
CHAT = "/v1/tenants/{t}/chat"
GROUPS = {"intake": STREAM_TURNS, "resolver": STREAM_TICKETS, "netops": STREAM_NETWORK}
FAST_METRICS = {"RELAY_METRICS_EVERY_S": "0.3"}
DASHBOARD = REPO / "infra" / "grafana" / "relay.json"


class Stack:
    def __init__(self, falkordb_server, graph_settings, log_dir: Path):
        self.falkordb = falkordb_server
        self.log_dir = log_dir
        self.desk = Desk(falkordb_server.host, falkordb_server.port, graph_settings.model_dir, log_dir)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.metrics_ports: dict[str, int] = {}
        self.gateway: subprocess.Popen | None = None
        self.simulator: subprocess.Popen | None = None

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
        env.update(RELAY_FALKORDB_HOST=self.falkordb.host, RELAY_FALKORDB_PORT=str(self.falkordb.port),
                   RELAY_MODEL_DIR=str(self.desk.model_dir), PYTHONUNBUFFERED="1", **FAST_METRICS, **extra)
        return env

    def start(self) -> None:
        for service in GROUPS:
            self.metrics_ports[service] = free_port()
            self.desk.start(service, extra={"RELAY_METRICS_PORT": str(self.metrics_ports[service]), **FAST_METRICS})
        with (self.log_dir / "gateway.log").open("wb") as log:
            self.gateway = subprocess.Popen(
                [sys.executable, "-m", "services.gateway"], cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                env=self.env(RELAY_PORT=str(self.port), RELAY_ADMIN_KEY=ADMIN, RELAY_LOG_LEVEL="warning"))
        self.wait_for(lambda: httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200, "the stack ready")

    def wait_for(self, check, what: str, timeout: float = 180.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for p in [self.gateway, self.simulator, *(p.popen for p in self.desk.procs)]:
                assert p is None or p.poll() is None, f"a process exited early:\n{self.logs()}"
            try:
                if found := check():
                    return found
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"never: {what}\n{self.logs()}")

    def metrics(self, service: str = "gateway") -> str:
        url = f"{self.url}/metrics" if service == "gateway" else f"http://127.0.0.1:{self.metrics_ports[service]}/metrics"
        r = httpx.get(url, timeout=10)  # no key: /metrics needs none
        assert r.status_code == 200, r.text
        return r.text

    def scrape_until(self, service: str, ready, what: str, timeout: float = 60.0) -> str:
        """The first /metrics of `service` whose samples satisfy `ready`."""
        def check() -> str | None:
            text = self.metrics(service)
            return text if ready(parse(text)) else None
        return self.wait_for(check, what, timeout)

    def start_simulator(self) -> None:
        self.metrics_ports["simulator"] = free_port()
        with (self.log_dir / "simulator.log").open("wb") as log:
            self.simulator = subprocess.Popen(
                [sys.executable, "-m", "services.simulator", "--speed", "8", "--customers", "1"], cwd=REPO,
                stdout=log, stderr=subprocess.STDOUT,
                env=self.env(RELAY_GATEWAY_URL=self.url, RELAY_ADMIN_KEY=ADMIN, RELAY_HEARTBEAT="false",
                             RELAY_TENANT="msim-" + uuid.uuid4().hex[:8],
                             RELAY_METRICS_PORT=str(self.metrics_ports["simulator"])))

    def stop(self) -> dict[str, int]:
        codes = {}
        for name, proc in (("simulator", self.simulator), ("gateway", self.gateway)):
            if proc is not None and proc.poll() is None:
                stop_process(proc)
                codes[name] = proc.returncode
        codes.update(self.desk.stop())
        return codes

    def logs(self) -> str:
        tails = []
        for name in ("gateway", "simulator"):
            path = self.log_dir / f"{name}.log"
            if path.exists():
                tails.append(f"===== {name} =====\n" + path.read_text(errors="replace")[-3000:])
        return self.desk.logs() + "\n" + "\n".join(tails)


def chat_route_count(text: str) -> float:
    return value(parse(text), "relay_http_requests_total", route=CHAT, method="POST", status_class="2xx") or 0


@pytest.fixture(scope="module")
@needs("processes")
def stack(falkordb_server, graph_settings, tmp_path_factory):
    s = Stack(falkordb_server, graph_settings, tmp_path_factory.mktemp("metrics-stack"))
    try:
        s.start()
        r = httpx.post(f"{s.url}/v1/tenants", json={"tenant": "metrics-" + uuid.uuid4().hex[:8]},
                       headers={"Authorization": f"Bearer {ADMIN}"}, timeout=30)
        assert r.status_code == 201, r.text
        s.tenant, s.key = r.json()["tenant"], r.json()["api_key"]
        s.before = s.metrics()
        s.chat = httpx.post(f"{s.url}/v1/tenants/{s.tenant}/chat", params={"wait": 25},
                            json={"text": "Hello, my internet has been slow since this morning", "name": "Meera Nair"},
                            headers={"Authorization": f"Bearer {s.key}"}, timeout=60)
        s.recall = httpx.get(f"{s.url}/v1/tenants/{s.tenant}/recall", params={"q": "slow internet"},
                             headers={"Authorization": f"Bearer {s.key}"}, timeout=30)
        yield s
    finally:
        codes = s.stop()
    assert set(codes.values()) <= {0}, f"unclean stop {codes}\n{s.logs()}"


def test_the_gateway_counts_the_chat_turn_and_reads_every_group(stack):
    assert stack.chat.status_code == 200, stack.chat.text  # the desk replied within the wait
    # The snapshot is read every 0.3 s here: wait for a reading taken after the chat.
    text = stack.scrape_until("gateway", lambda samples: (value(
        samples, "relay_stream_length_messages", stream=STREAM_TURNS) or 0) >= 1, "the turns stream read")
    samples = parse(text)
    print("\n----- gateway /metrics after a chat turn (excerpt) -----")
    print(excerpt(text, 'relay_http_requests_total{method="POST",route="/v1/tenants/{t}/chat"',
                  "relay_chat_", "relay_stream_", "relay_falkordb_", "relay_tenants", "relay_outbox_",
                  "relay_recall_", "relay_rate_limit_", "relay_metrics_"))
    assert chat_route_count(text) == chat_route_count(stack.before) + 1
    assert value(samples, "relay_chat_turn_duration_seconds_count") >= 1
    assert 0 < value(samples, "relay_chat_turn_duration_seconds_sum") < 25
    assert value(samples, "relay_chat_turns_total", outcome="replied") >= 1
    assert stack.recall.status_code == 200, stack.recall.text
    assert value(samples, "relay_recall_duration_seconds_count", outcome="ok") >= 1
    for group, stream in GROUPS.items():
        for series in ("relay_stream_pending_messages", "relay_stream_lag_messages", "relay_stream_consumers"):
            assert value(samples, series, stream=stream, group=group) is not None, (series, group)
        assert value(samples, "relay_stream_consumers", stream=stream, group=group) >= 1
    assert value(samples, "relay_stream_length_messages", stream=STREAM_TURNS) >= 1
    assert value(samples, "relay_stream_dead_letter_messages", stream=STREAM_TURNS) is not None
    assert value(samples, "relay_falkordb_used_memory_bytes") > 1_000_000
    assert value(samples, "relay_falkordb_graphs") >= 1
    assert value(samples, "relay_tenants") >= 1
    assert value(samples, "relay_metrics_snapshot_age_seconds") < 60
    assert stack.tenant not in text and "Meera" not in text


def test_an_agent_counts_what_it_handled(stack):
    assert stack.chat.status_code == 200, stack.chat.text
    stream = GROUPS["intake"]
    text = stack.scrape_until("intake", lambda samples: (value(
        samples, "relay_stream_handled_messages_total", stream=stream, group="intake") or 0) >= 1,
        "intake's handled turn")
    samples = parse(text)
    print("\n----- intake /metrics after a chat turn (excerpt) -----")
    print(excerpt(text, "relay_stream_", "relay_outbox_", "relay_recall_", "relay_metrics_", "process_resident"))
    assert value(samples, "relay_stream_failed_deliveries_total", stream=stream, group="intake") == 0
    # Present from the start (at 0 until a reclaim; the test's 1 s min_idle_ms may see one on a busy machine).
    assert value(samples, "relay_stream_reclaimed_messages_total", stream=stream, group="intake") is not None
    assert value(samples, "relay_stream_dead_lettered_messages_total", stream=stream, group="intake") == 0
    assert value(samples, "relay_stream_handler_duration_seconds_count", stream=stream, group="intake") >= 1
    assert value(samples, "relay_stream_pending_messages", stream=stream, group="intake") is not None
    assert value(samples, "relay_stream_lag_messages", stream=stream, group="intake") is not None
    # Its own group only: the whole system's view is the gateway's.
    assert {s.labels.get("group") for s in samples if s.labels.get("group")} == {"intake"}
    assert "relay_falkordb_used_memory_bytes" not in names(samples)


def dashboard_series() -> set[str]:
    doc = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in doc["panels"] for t in p.get("targets", [])]
    return set().union(*(series(e) for e in exprs))


def test_every_series_the_dashboard_queries_is_exported(stack):
    assert stack.chat.status_code == 200, stack.chat.text
    stack.start_simulator()
    simulated = stack.scrape_until("simulator", lambda samples: (value(
        samples, "relay_simulator_chat_duration_seconds_count") or 0) >= 1,
        "the simulator's first chat turn", timeout=240)
    exported = names(parse(simulated))
    for service in ("gateway", *GROUPS):
        exported |= names(parse(stack.metrics(service)))
    wanted = dashboard_series()
    assert len(wanted) >= 20
    assert not wanted - exported, f"the dashboard queries series no process exports: {sorted(wanted - exported)}"
