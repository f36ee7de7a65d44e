"""docker-compose.yml run for real, as an ops user would: build, up, chat, scale, kill, restart, down.

A Docker engine is needed: the one DOCKER_HOST names, or a dockerd this test starts and stops
(tests/infra/docker_engine.py). Where none can be had the tests are skipped with the reason, never
passed. Images the engine lacks are built by infra/standins/build.sh (`make images`): the Docker Hub
ones as local stand-ins, then relay:local. The tests run in file order on one stack, each one a step
of the ops user's path; the figures (build, up to healthy, chat reply, image sizes) are printed at
the end of the pytest run.
"""

from __future__ import annotations

import json
import re
import secrets
import subprocess
import time
from pathlib import Path

import httpx
import pytest
import yaml

from relay_graph.runtime.embedded import free_port
from relay_graph.runtime.streams.keys import STREAM_TICKETS, STREAM_TURNS
from relay_graph.runtime import acl

from tests.infra import docker_engine
from tests.infra.conftest import FIGURES
from tests.support import wait_until

pytestmark = [pytest.mark.docker]

REPO = Path(__file__).resolve().parents[2]
PROJECT = "relay-live"
OVERRIDE = REPO / "tests" / "infra" / "compose.live.yml"
COMPOSE = yaml.safe_load((REPO / "docker-compose.yml").read_text())
AGENTS = ("intake", "resolver", "netops")
DEFAULT_SERVICES = ("falkordb", *AGENTS, "gateway")
RELAY_IMAGE = COMPOSE["services"]["gateway"]["image"]
FALKORDB_IMAGE = COMPOSE["services"]["falkordb"]["image"]
OTEL_IMAGE = COMPOSE["services"]["otel-collector"]["image"]
BASE_IMAGE = re.search(r"^FROM\s+(\S+)", (REPO / "infra" / "Dockerfile").read_text(), re.M).group(1)
# The observability add-ons run their own images (the official collector image has no shell or client
# to probe it with): no healthcheck of ours there.
UNPROBED = {"otel-collector", "prometheus"}


def figure(line: str) -> None:
    FIGURES.append(line)
    print(line)


class Stack:
    """docker-compose (the CLI, as ops run it) on the test's project, engine and gateway port."""

    def __init__(self, engine: docker_engine.Engine):
        self.port = free_port()
        self.admin_key = secrets.token_hex(32)
        self.falkordb_password = secrets.token_hex(32)
        self.env = dict(engine.env, RELAY_ADMIN_KEY=self.admin_key, RELAY_FALKORDB_PASSWORD=self.falkordb_password,
                        **{acl.env_name(user): secrets.token_hex(32) for user in acl.USERS},
                        RELAY_PORT=str(self.port),
                        COMPOSE_PROJECT_NAME=PROJECT, GROQ_API_KEY="", OTEL_EXPORTER_OTLP_ENDPOINT="")
        self.url = f"http://127.0.0.1:{self.port}"
        self.profiles: list[str] = []

    def compose(self, *args: str, timeout: float = 300, check: bool = True, **env) -> subprocess.CompletedProcess:
        cmd = ["docker-compose", "-f", "docker-compose.yml", "-f", str(OVERRIDE)]
        for p in self.profiles:
            cmd += ["--profile", p]
        # errors: the gateway's stream entries are FastStream envelopes (binary), which redis-cli prints raw
        done = subprocess.run(cmd + list(args), cwd=REPO, env=dict(self.env, **env), capture_output=True,
                              text=True, errors="backslashreplace", timeout=timeout)
        if check and done.returncode != 0:
            raise AssertionError(f"docker-compose {' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}")
        return done

    def docker(self, *args: str, timeout: float = 120, check: bool = True) -> str:
        done = subprocess.run(["docker", *args], env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and done.returncode != 0:
            raise AssertionError(f"docker {' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}")
        return done.stdout

    def containers(self, service: str) -> list[str]:
        return self.compose("ps", "-q", service).stdout.split()

    def inspect(self, cid: str) -> dict:
        return json.loads(self.docker("inspect", cid))[0]

    def redis(self, *args: str) -> str:
        """redis-cli in the FalkorDB container: FalkorDB publishes no port."""
        return self.compose("exec", "-T", "falkordb", "redis-cli", "--raw", *args, timeout=30).stdout

    def wait_healthy(self, services, timeout: float = 300, counts: dict[str, int] | None = None) -> float:
        t0 = time.monotonic()
        want = {s: (counts or {}).get(s, 1) for s in services}
        status: dict[str, list[str]] = {}
        while time.monotonic() - t0 < timeout:
            status = {}
            for s in want:
                status[s] = [self.inspect(c)["State"].get("Health", {}).get("Status", "none")
                             for c in self.containers(s)]
            if all(len(v) == want[s] and set(v) == {"healthy"} for s, v in status.items()):
                return time.monotonic() - t0
            time.sleep(2)
        logs = self.compose("logs", "--tail", "30", check=False).stdout
        raise AssertionError(f"not healthy after {timeout:.0f}s: {status}\n{logs[-6000:]}")

    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def eventually(check, timeout: float, what: str, interval: float = 1.0):
    return wait_until(check, timeout=timeout, interval=interval, what=what)


@pytest.fixture(scope="module")
def engine():
    try:
        engine = docker_engine.start()
    except docker_engine.EngineUnavailable as exc:
        pytest.skip(f"no Docker engine for the live compose test: {exc}")
    yield engine
    engine.stop()


@pytest.fixture(scope="module")
def stack(engine):
    s = Stack(engine)
    s.compose("--profile", "sim", "--profile", "otel", "down", "--volumes", "--remove-orphans", check=False)
    t0 = time.monotonic()
    built = subprocess.run(["bash", "infra/standins/build.sh"], cwd=REPO, env=s.env, capture_output=True,
                           text=True, timeout=3600)
    assert built.returncode == 0, built.stderr[-4000:]
    figure(f"build: {time.monotonic() - t0:.0f}s (stand-ins made only where missing; the engine's cache is kept)")
    for line in built.stderr.splitlines():
        figure("  " + line)
    t0 = time.monotonic()
    s.compose("up", "-d", "--no-build")
    s.wait_healthy(DEFAULT_SERVICES)
    figure(f"up to healthy: {time.monotonic() - t0:.0f}s (`up -d` until every one of {', '.join(DEFAULT_SERVICES)} "
           "is healthy)")
    try:
        yield s
    finally:
        s.profiles = ["sim", "otel"]
        s.compose("down", "--volumes", "--remove-orphans", "--timeout", "30", check=False)


@pytest.fixture(scope="module")
def tenant(stack):
    name = "ops-" + secrets.token_hex(4)
    with stack.http() as c:
        r = c.post("/v1/tenants", json={"tenant": name}, headers=bearer(stack.admin_key))
    assert r.status_code == 201, r.text
    return name, r.json()["api_key"]


def ticket(stack, tenant, tid) -> dict:
    name, key = tenant
    with stack.http() as c:
        r = c.get(f"/v1/tenants/{name}/tickets/{tid}", headers=bearer(key))
    return r.json() if r.status_code == 200 else {}


def fixed(stack, tenant, tid) -> dict | None:
    t = ticket(stack, tenant, tid)
    return t if t.get("stage") == "fixed" else None


def chat(stack, tenant, customer: str, text: str, session: str, wait: float = 30) -> tuple[dict, float]:
    name, key = tenant
    t0 = time.monotonic()
    with stack.http() as c:
        r = c.post(f"/v1/tenants/{name}/chat", params={"wait": wait}, headers=bearer(key),
                   json={"customer": customer, "text": text, "session": session}, timeout=wait + 30)
    assert r.status_code == 200, r.text
    return r.json(), time.monotonic() - t0


def test_images_are_non_root_offline_and_sized(stack):
    for image in (BASE_IMAGE, RELAY_IMAGE, FALKORDB_IMAGE, OTEL_IMAGE):
        info = json.loads(stack.docker("image", "inspect", image))[0]
        layers = len(info["RootFS"]["Layers"])
        stand_in = (info["Config"].get("Labels") or {}).get("org.relay.stand-in") == "1"
        figure(f"image {image}: {info['Size'] / 1e6:.0f} MB, {layers} layers{' (local stand-in)' if stand_in else ''}")
    relay = json.loads(stack.docker("image", "inspect", RELAY_IMAGE))[0]["Config"]
    assert relay["User"] == "relay"
    # no key is baked in: the image's environment carries none, and neither does its history
    for var in relay["Env"]:
        name, _, value = var.partition("=")
        assert not (re.search(r"KEY|TOKEN|SECRET|PASSWORD", name) and value), var
    history = stack.docker("history", "--no-trunc", RELAY_IMAGE)
    assert stack.admin_key not in history and "GROQ_API_KEY=" not in history
    # the embedding model is in the image and loads with no network at all
    probe = ("from relay_graph.runtime.embeddings import Embedder; import os; "
             "v = Embedder(os.environ['RELAY_MODEL_DIR']).embed(['my router is frozen']); print(len(v[0]))")
    out = stack.docker("run", "--rm", "--network", "none", RELAY_IMAGE, "python", "-c", probe, timeout=180)
    assert out.strip().splitlines()[-1] == "384"
    # the running services: each container runs as the image's user, not root
    for service in (*AGENTS, "gateway"):
        (cid,) = stack.containers(service)
        assert stack.docker("exec", cid, "id", "-u").strip() != "0", service


def test_every_service_has_a_healthcheck_and_falkordb_runs_the_embedded_version(stack):
    config = yaml.safe_load(stack.compose("--profile", "sim", "--profile", "otel", "config").stdout)
    missing = [n for n, s in config["services"].items() if n not in UNPROBED and not s.get("healthcheck")]
    assert not missing
    from relay_graph.runtime.falkordb_module import MODULE_VERSION, VERSION

    assert FALKORDB_IMAGE.endswith(f":v{VERSION}")
    modules = stack.redis("MODULE", "LIST").split()
    assert "graph" in modules and str(MODULE_VERSION) in modules, modules
    refused = stack.compose("exec", "-T", "falkordb", "sh", "-c", "unset REDISCLI_AUTH; redis-cli ping", check=False)
    assert "NOAUTH" in refused.stdout + refused.stderr, "FalkorDB wants the password"


def on_a_line_with(stack, tenant, customer: str, session: str, fault: str) -> None:
    """The customer says where they live (the tenant's world places them on a line), then the fault
    lab plants a fault on it: the resolver has something real to measure and fix."""
    name, key = tenant
    body, _ = chat(stack, tenant, customer, f"Hi, I'm {customer} and I live in Pune.", session)
    assert "found your line" in body["reply"]["text"], body["reply"]["text"]
    with stack.http() as c:
        r = c.post(f"/v1/tenants/{name}/lab/faults", json={"customer": customer, "kind": fault}, headers=bearer(key))
    assert r.status_code == 201, r.text


def lab_steps(ticket: dict) -> list[str]:
    return [e["detail"].split(None, 1)[0].rstrip(":") for e in ticket["timeline"] if e["event"] == "fix_step"]


def test_a_customer_chats_through_the_published_port_and_the_ticket_is_fixed(stack, tenant):
    on_a_line_with(stack, tenant, "Alice Rao", "c-1", "router_frozen")
    body, took = chat(stack, tenant, "Alice Rao", "My router is frozen, nothing works.", "c-1")
    figure(f"chat reply through the gateway's published port: {took * 1000:.0f} ms (wait=30, second turn)")
    assert body["reply"]["text"]
    assert body["ticket"] and body["ticket"]["id"]
    done = eventually(lambda: fixed(stack, tenant, body["ticket"]["id"]), 90, "ticket fixed")
    assert lab_steps(done) == ["restart_ont"]
    _, took = chat(stack, tenant, "Bob Iyer", "my wifi keeps dropping", "c-2")
    figure(f"chat reply, second chat: {took * 1000:.0f} ms")


def test_the_gateway_serves_the_customer_site_from_the_image(stack):
    with stack.http() as c:
        page = c.get("/")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"], page.text[:300]
        scripts = re.findall(r'src="(/[^"]+\.js)"', page.text)
        assert scripts, page.text[:500]
        for src in scripts:
            asset = c.get(src)
            assert asset.status_code == 200 and "javascript" in asset.headers["content-type"], src


def consumers(stack, stream: str, group: str) -> dict[str, int]:
    """The group's consumers and their pending counts (XINFO CONSUMERS)."""
    out = stack.redis("XINFO", "CONSUMERS", stream, group).splitlines()
    found, i = {}, 0
    while i < len(out):
        if out[i] == "name":
            name = out[i + 1]
            pending = int(out[out.index("pending", i) + 1])
            found[name] = pending
            i += 2
        else:
            i += 1
    return found


def hostname(stack, cid: str) -> str:
    return stack.inspect(cid)["Config"]["Hostname"]


def test_scaled_to_three_resolvers_there_are_three_consumers(stack):
    stack.compose("up", "-d", "--no-build", "--scale", "resolver=3")
    stack.wait_healthy(("resolver",), counts={"resolver": 3})
    hosts = {hostname(stack, c) for c in stack.containers("resolver")}
    assert len(hosts) == 3

    def live():
        names = consumers(stack, STREAM_TICKETS, "resolver")
        return {h for h in hosts if any(n.startswith(f"resolver-{h}-") for n in names)} == hosts

    assert eventually(live, 30, "three resolver consumers in the group")


def test_a_resolver_killed_mid_ticket_leaves_the_ticket_finished(stack, tenant):
    on_a_line_with(stack, tenant, "Kim Das", "k-1", "wifi_interference")
    body, _ = chat(stack, tenant, "Kim Das", "my wifi keeps dropping", "k-1")
    tid = body["ticket"]["id"]
    eventually(lambda: any(e["event"] == "fix_step" for e in ticket(stack, tenant, tid).get("timeline", [])), 60,
               "first fix step")
    holders = [n for n, pending in consumers(stack, STREAM_TICKETS, "resolver").items() if pending]
    assert holders, "a resolver holds the ticket's notification while it fixes"
    by_host = {hostname(stack, c): c for c in stack.containers("resolver")}
    (victim,) = [cid for h, cid in by_host.items() if any(n.startswith(f"resolver-{h}-") for n in holders)]
    stack.docker("kill", victim)
    done = eventually(lambda: fixed(stack, tenant, tid), 120, "ticket finished after its resolver was killed")
    assert lab_steps(done) == ["change_wifi_channel"], "each step once, none lost, none repeated"


FACTS = 40


def write_facts(stack, tenant, prefix: str) -> list[tuple[str, str]]:
    name, key = tenant
    written, refused = [], 0
    with stack.http() as c:
        for i in range(FACTS):
            subject, city = f"{prefix} customer {i}", f"city {i % 7}"
            # A 503 (Retry-After) acknowledges nothing: a client asks again, as the contract says.
            deadline = time.monotonic() + 30
            while True:
                r = c.post(f"/v1/tenants/{name}/facts", headers=bearer(key),
                           json={"subject": subject, "predicate": "lives_in", "object": city, "agent": "intake"})
                if r.status_code != 503 or time.monotonic() > deadline:
                    break
                refused += 1
                time.sleep(float(r.headers.get("Retry-After", "1")))
            assert r.status_code == 201, r.text  # acknowledged
            written.append((subject, city))
    if refused:
        figure(f"facts ({prefix}): {refused} write(s) answered 503 and asked again")
    return written


def facts_present(stack, tenant, written) -> list[tuple[str, str]]:
    """The written facts that are not found (current) any more."""
    name, key = tenant
    lost = []
    with stack.http() as c:
        for subject, city in written:
            # A 503 says nothing of the fact (a connection the restart closed is being replaced):
            # ask again; only an answer counts.
            deadline = time.monotonic() + 15
            while True:
                r = c.get(f"/v1/tenants/{name}/facts", params={"subject": subject, "predicate": "lives_in"},
                          headers=bearer(key))
                if r.status_code != 503 or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            if r.status_code != 200 or city not in [f["object"] for f in r.json()["facts"]]:
                lost.append((subject, city, r.status_code, r.text[:200]))
    return lost


def test_falkordb_restarted_keeps_every_acknowledged_fact(stack, tenant):
    written = write_facts(stack, tenant, "restart")
    stack.compose("restart", "falkordb", timeout=120)
    stack.wait_healthy(("falkordb",))
    with stack.http() as c:
        eventually(lambda: c.get("/readyz").status_code == 200, 90, "gateway ready again")
    assert facts_present(stack, tenant, written) == []
    body, _ = chat(stack, tenant, "Alice Rao", "thanks, it works again", "c-1")
    assert body["reply"]["text"], "the services carry on after the database restarted"


def test_down_and_up_again_keeps_the_data(stack, tenant):
    written = write_facts(stack, tenant, "down")
    stack.compose("down", "--timeout", "30", timeout=180)
    assert stack.containers("gateway") == []
    t0 = time.monotonic()
    stack.compose("up", "-d", "--no-build")
    stack.wait_healthy(DEFAULT_SERVICES)
    figure(f"up to healthy again after down (volume kept): {time.monotonic() - t0:.0f}s")
    assert facts_present(stack, tenant, written) == []  # and the tenant's key still works


def test_the_sim_profile_starts_the_simulator(stack):
    stack.compose("--profile", "sim", "up", "-d", "--no-build")
    stack.wait_healthy(("simulator",))

    def demo_turns():
        return "demo" in stack.redis("XREVRANGE", STREAM_TURNS, "+", "-", "COUNT", "50")

    assert eventually(demo_turns, 120, "the simulator's customers chat in tenant demo")
    stack.compose("--profile", "sim", "rm", "--stop", "--force", "simulator")


def test_the_otel_profile_exports_a_trace_to_the_collector(stack, tenant):
    endpoint = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel-collector:4318"}
    # the collector and the gateway only: each container made costs a copy of the image on vfs
    stack.compose("--profile", "otel", "up", "-d", "--no-build", "otel-collector", "gateway", **endpoint)
    stack.env.update(endpoint)  # the gateway was recreated with it; later calls must not undo that
    stack.wait_healthy(("gateway",))
    chat(stack, tenant, "Olga Sen", "my router is frozen", "o-1")

    def exported():
        logs = stack.compose("--profile", "otel", "logs", "otel-collector").stdout
        return "service.name=relay-gateway" in logs and "TracesExporter" in logs

    assert eventually(exported, 60, "the gateway's spans at the collector")


def test_every_service_stops_gracefully_inside_its_grace_period(stack):
    stack.profiles = ["otel"]
    config = yaml.safe_load(stack.compose("config").stdout)["services"]
    # the services first, then what they send to: a gateway whose collector is gone first spends its
    # grace period retrying the last spans (14.6 s of 15 s in one run)
    for service in ("gateway", *AGENTS, "otel-collector", "falkordb"):
        grace = int(str(config[service].get("stop_grace_period", "10s")).rstrip("s"))
        for cid in stack.containers(service):
            t0 = time.monotonic()
            stack.docker("stop", "--time", str(grace), cid, timeout=grace + 30)
            took = time.monotonic() - t0
            code = stack.inspect(cid)["State"]["ExitCode"]
            figure(f"stop {service}: {took:.1f}s (grace {grace}s), exit {code}")
            assert code == 0 and took < grace, f"{service}: exit {code} after {took:.1f}s (137: killed at the grace period)"
