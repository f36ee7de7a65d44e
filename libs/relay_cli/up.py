"""`relay up`: the embedded Relay, run exactly as docker compose would run it, on one machine.

The flow, step by step (each a plain function or method below):
  lock the data folder -> admin key, FalkorDB password and the services' FalkorDB users ->
  embedding model -> FalkorDB (AOF on, the password, the users; with --shards N --replicas R a cluster of N primaries with R replicas each, formed
  here, every node its own folder and log) -> every service of the table as its own process -> wait for the gateway's /readyz
  -> show who is who -> run_demo (hook) -> supervise until Ctrl-C/SIGTERM (a service or the one
  FalkorDB server that exits is started again, falkordb_keeper.py; cluster nodes: watch_cluster)
  -> stop services in reverse order -> stop FalkorDB.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import json
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from relay_graph.runtime import acl
from relay_graph.runtime.cluster import EmbeddedCluster, replaced
from relay_graph.runtime.embedded import free_port, port_in_use
from relay_graph.runtime.model_files import ensure_model

from relay_cli import admin_key as admin_keys
from relay_cli.demo_site import open_demo_site
from relay_cli.falkordb_keeper import FalkorDBGaveUp, FalkorDBKeeper
from relay_cli import lock as locks
from relay_cli.services import SERVICES, ServiceSpec, service_env
from relay_cli.supervisor import Child, ServiceFailed, SupervisedFalkorDB, Supervisor, tail

STATE_NAME = "relay.state.json"
DEMO_MODULE = "services.simulator.demo"
# A cluster node that exits is started again once its replica has taken its slots (it then rejoins
# as that replica's replica), or after this long if none does (a shard without a replica: only the
# node itself can serve it again). A restart while the replica's election is under way would make
# two claimants of the slots; after it there is one outcome.
NODE_RESTART_WAIT_S = 30.0
NODE_RESTARTS = 5  # restarts of one node before it is left down (it keeps dying: its log says why)


class StartupFailed(RuntimeError):
    pass


@dataclass
class UpOptions:
    data_dir: Path
    port: int
    falkordb_port: int
    model_dir: Path
    replicas: dict[str, int]
    admin_key_env: str | None
    falkordb_password_env: str | None = None
    demo: bool = True
    # FalkorDB as a cluster of `shards` primaries with `falkordb_replicas` replicas each, on ports
    # from falkordb_port up; 0 shards: the one server.
    shards: int = 0
    falkordb_replicas: int = 1
    ready_timeout_s: float = 180.0
    # The one server that exits is started again; more exits than this within the window stop Relay.
    falkordb_max_restarts: int = 5
    falkordb_restart_window_s: float = 60.0
    python: str = sys.executable
    services: tuple[ServiceSpec, ...] = SERVICES
    base_env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    # Each service signs in to FalkorDB as its own ACL user (relay_graph.runtime.acl); False: all
    # of them as `default`, with the one password (as before the users).
    acl: bool = True


class StopFlag:
    """Set by SIGINT/SIGTERM; everything long-running polls it."""

    def __init__(self, console: Console):
        self.console = console
        self.event = threading.Event()
        self.signum: int | None = None

    def install(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._handle)

    def _handle(self, signum, _frame) -> None:
        if self.event.is_set():
            self.console.print("[yellow]already stopping; each service gets up to 10s to finish[/]")
            return
        self.signum = signum
        self.event.set()

    def __bool__(self) -> bool:
        return self.event.is_set()


def run_demo(base_url: str, admin_key: str, console: Console, module: str = DEMO_MODULE) -> threading.Thread | None:
    """Hook: play the demo story through the real agents once Relay is ready.

    A no-op unless the module `services.simulator.demo` exists. That module must expose
    `run(base_url: str, admin_key: str) -> None` (a plain or an async function); it talks to
    Relay only through the gateway's HTTP API. It runs in a thread so that supervision and
    Ctrl-C keep working while it plays; its failure is reported but does not stop Relay.
    """
    try:
        if importlib.util.find_spec(module) is None:
            return None
    except ImportError:  # its parent package is missing
        return None
    demo = importlib.import_module(module)

    def play() -> None:
        try:
            result = demo.run(base_url=base_url, admin_key=admin_key)
            if inspect.iscoroutine(result):
                result = asyncio.run(result)
            if isinstance(result, int) and result != 0:
                console.print(f"[red]demo story failed[/] (exit {result}); Relay keeps running")
            else:
                console.print("[green]demo finished[/]")
        except Exception as exc:  # noqa: BLE001 - the demo is a guest; Relay keeps running
            console.print(f"[red]demo failed:[/] {escape(f'{type(exc).__name__}: {exc}')}")

    console.print("playing the demo story ...")
    thread = threading.Thread(target=play, name="relay-demo", daemon=True)
    thread.start()
    return thread


class EmbeddedRelay:
    def __init__(self, opts: UpOptions, console: Console, stop: StopFlag):
        self.opts = opts
        self.console = console
        self.stop = stop
        self.logs = opts.data_dir / "logs"
        self.key: admin_keys.AdminKey | None = None
        self.password: admin_keys.AdminKey | None = None
        self.users: dict[str, str] = {}  # FalkorDB user -> password (acl.USERS), empty without the ACL
        self.falkordb: SupervisedFalkorDB | None = None
        self.keeper: FalkorDBKeeper | None = None  # the one server's restarts (not a cluster's nodes)
        self.cluster: EmbeddedCluster | None = None
        self.nodes: list[SupervisedFalkorDB] = []  # every FalkorDB process: the server, or the cluster's nodes
        self.gone: dict[int, float] = {}  # cluster nodes down (their shard fails over): since when
        self.node_restarts: dict[int, int] = {}
        self._next_failover_check = 0.0
        self.supervisor: Supervisor | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.opts.port}"

    def say(self, message: str) -> None:
        """Plain text (paths and log lines are never read as markup)."""
        self.console.print(message, markup=False, highlight=False, soft_wrap=True)

    # -- steps ---------------------------------------------------------------------------------

    def check_ports(self) -> None:
        if port_in_use("127.0.0.1", self.opts.port):
            raise StartupFailed(f"port {self.opts.port} is already in use; set RELAY_PORT or pass --port")

    def prepare(self) -> None:
        self.logs.mkdir(parents=True, exist_ok=True)
        try:
            self.key = admin_keys.resolve(self.opts.data_dir, self.opts.admin_key_env)
            self.password = admin_keys.resolve(self.opts.data_dir, self.opts.falkordb_password_env,
                                               admin_keys.PASSWORD_FILE)
            if self.opts.acl:
                self.users = admin_keys.user_passwords(self.opts.data_dir, acl.USERS)
        except (OSError, RuntimeError) as exc:
            raise StartupFailed(str(exc)) from None
        if self.key.created:
            self.console.print(
                f"admin key created: [bold]{self.key.value}[/]\n"
                f"  (shown this once; kept in {escape(str(self.key.path))}, mode 0600)"
            )
        try:
            ensure_model(self.opts.model_dir)  # quick when `make model` already did it
        except (OSError, RuntimeError) as exc:
            raise StartupFailed(f"the embedding model is not ready: {exc}") from None

    def start_falkordb(self) -> None:
        if self.opts.shards:
            return self.start_cluster()
        self.falkordb = SupervisedFalkorDB(
            self.opts.data_dir / "falkordb",
            self.opts.falkordb_port,
            log_file=self.logs / "falkordb.log",
            password=self.password.value,
            users=self.acl_config(),
        )
        with self.console.status(f"starting FalkorDB on 127.0.0.1:{self.opts.falkordb_port} ..."):
            try:
                self.falkordb.start()
            except RuntimeError as exc:
                raise StartupFailed(str(exc)) from None
        self.nodes = [self.falkordb]
        self.keeper = FalkorDBKeeper(self.falkordb, say=self.say, max_restarts=self.opts.falkordb_max_restarts,
                                     window_s=self.opts.falkordb_restart_window_s, on_change=self.write_state)

    def start_cluster(self) -> None:
        """Each node its own data folder (data/falkordb-cluster/node-k) and log (logs/falkordb-k.log);
        formed on the first start, rejoined from its nodes.conf on the next."""
        self.cluster = EmbeddedCluster(self.opts.data_dir / "falkordb-cluster", self.opts.falkordb_port,
                                       shards=self.opts.shards, replicas=self.opts.falkordb_replicas,
                                       log_dir=self.logs, password=self.password.value, node_class=SupervisedFalkorDB,
                                       users=self.acl_config())
        last = self.cluster.nodes[-1].port
        with self.console.status(f"starting a FalkorDB cluster of {self.opts.shards} shards x "
                                 f"{1 + self.opts.falkordb_replicas} on 127.0.0.1:{self.opts.falkordb_port}-{last} ..."):
            try:
                self.cluster.start()
            except RuntimeError as exc:
                raise StartupFailed(str(exc)) from None
        self.nodes = list(self.cluster.nodes)
        self.falkordb = self.nodes[0]

    def acl_config(self) -> str:
        """The services' users as redis.conf lines, part of the configuration every FalkorDB process
        this Relay starts (or starts again) reads on its stdin: a restarted server has them at once."""
        return acl.config_lines(self.users)

    def children(self) -> list[Child]:
        out = []
        for spec in self.opts.services:
            n = self.opts.replicas.get(spec.name, spec.replicas)
            if n == 0 or not spec.exists():
                continue
            for replica in range(1, n + 1):
                env = service_env(
                    spec,
                    replica,
                    base=self.opts.base_env,
                    falkordb_port=self.opts.falkordb_port,
                    falkordb_password=self.password.value,
                    falkordb_users=self.users,
                    falkordb_cluster=self.cluster.seeds if self.cluster else "",
                    admin_key=self.key.value,
                    gateway_port=self.opts.port,
                    model_dir=self.opts.model_dir,
                    metrics_port=0 if spec.serves_http else free_port(),  # the gateway's: its own /metrics
                )
                out.append(Child(spec, replica, self.logs / f"{spec.name}-{replica}.log", env))
        return out

    def start_services(self) -> None:
        children = self.children()
        if not any(c.spec.serves_http for c in children):
            raise StartupFailed("the gateway (services/gateway/__main__.py) is not there; nothing would answer HTTP")
        self.supervisor = Supervisor(children, python=self.opts.python, say=self.say)
        self.supervisor.on_change = self.write_state
        self.supervisor.start_all()
        missing = [s.name for s in self.opts.services if not s.exists()]
        if missing:
            self.console.print(f"[dim]not built yet, skipped: {', '.join(missing)}[/]")

    def wait_ready(self) -> bool:
        """True once /readyz answers 200; False if a stop was requested first."""
        deadline = time.monotonic() + self.opts.ready_timeout_s
        started = time.monotonic()
        last = "no answer yet"
        next_line = started + 10.0  # without a terminal (no spinner) a status line every 10s
        with httpx.Client(timeout=2.0) as http, self.console.status("") as status:
            while not self.stop:
                self.watch_falkordb()
                self.supervisor.check_startup()
                try:
                    r = http.get(f"{self.url}/readyz")
                    if r.status_code == 200:
                        return True
                    last = f"{r.status_code} {r.text[:300]}"
                except httpx.HTTPError as exc:
                    last = f"no answer ({type(exc).__name__})"
                if time.monotonic() > deadline:
                    raise StartupFailed(self._not_ready_message(last))
                line = f"waiting for {self.url}/readyz ({int(time.monotonic() - started)}s): {last[:100]}"
                status.update(escape(line))
                if not self.console.is_terminal and time.monotonic() >= next_line:
                    self.say(line)
                    next_line += 10.0
                time.sleep(0.5)
        return False

    def _not_ready_message(self, last: str) -> str:
        # Show the gateway's log, and that of any service the readiness answer names as missing.
        named = [c for c in self.supervisor.children if c.spec.serves_http or c.spec.name in last]
        parts = [f"the gateway was not ready after {self.opts.ready_timeout_s:g}s; last /readyz: {last}"]
        for child in named:
            parts.append(f"--- last lines of {child.log_path}:\n{tail(child.log_path)}")
        return "\n".join(parts)

    def show(self) -> None:
        table = Table(title="Relay is up", title_justify="left")
        for col in ("service", "replica", "pid", "log"):
            table.add_column(col)
        for k, node in enumerate(self.nodes):
            table.add_row("falkordb", str(k) if self.cluster else "-", str(node.process.pid),
                          escape(str(node.log_file or self.logs / "falkordb.log")))
        for c in self.supervisor.children:
            table.add_row(c.spec.name, str(c.replica), str(c.pid), escape(str(c.log_path)))
        self.console.print(table)
        self.console.print(f"gateway:   [bold]{self.url}[/]  (API docs: {self.url}/docs)")
        self.console.print(f"admin key: {self.describe_key()}")
        password = ("from RELAY_FALKORDB_PASSWORD" if self.password.source == "env"
                    else f"kept in {escape(str(self.password.path))}")
        self.console.print(f"FalkorDB password: {password}")
        if self.users:
            folder = self.opts.data_dir / admin_keys.USERS_DIR
            self.console.print(f"FalkorDB users: one per service, passwords in {escape(str(folder))}")
        self.console.print(f"data:      {escape(str(self.opts.data_dir))}")
        self.console.print("Ctrl-C stops everything.")

    def open_site(self) -> None:
        """The public demo tenant behind the customer site at `/`; a failure is reported, Relay keeps running."""
        try:
            self.say(open_demo_site(self.url, self.key.value, self.opts.data_dir))
        except httpx.HTTPError as exc:
            self.console.print("[red]the demo site's tenant could not be set up:[/]", end=" ")
            self.say(f"{type(exc).__name__}: {exc}")

    def describe_key(self) -> str:
        if self.key.source == "env":
            return "from RELAY_ADMIN_KEY"
        if self.key.created:
            return f"kept in {escape(str(self.key.path))} (new, printed above)"
        return f"kept in {escape(str(self.key.path))}"

    def supervise(self) -> None:
        while not self.stop:
            self.watch_falkordb()
            self.supervisor.check(hold=self.keeper is not None and not self.keeper.up)
            time.sleep(0.25)

    def watch_falkordb(self) -> None:
        if self.cluster:
            self.watch_cluster()
            return
        try:
            self.keeper.check()
        except FalkorDBGaveUp as exc:
            raise StartupFailed(str(exc)) from None

    def watch_cluster(self) -> None:
        """A cluster node that exits is not fatal: its shard fails over to a replica, and the node is
        started again (NODE_RESTART_WAIT_S) to rejoin as a replica of the promoted primary."""
        now = time.monotonic()
        for k, node in enumerate(self.nodes):
            if k not in self.gone and node.process is not None and node.process.poll() is not None:
                self.gone[k] = now
                self.say(f"falkordb node {k} (port {node.port}) exited with code {node.process.returncode}; "
                         f"its shard fails over to a replica. Log: {node.log_file}")
        if len(self.gone) == len(self.nodes):
            raise StartupFailed("every FalkorDB cluster node exited; stopping everything")
        if not self.gone or now < self._next_failover_check:
            return
        self._next_failover_check = now + 1.0
        for k, since in sorted(self.gone.items()):
            if self.node_restarts.get(k, 0) >= NODE_RESTARTS:
                continue
            node = self.nodes[k]
            if not replaced(self.cluster.addresses, (node.host, node.port), password=self.cluster.password) \
                    and now - since < NODE_RESTART_WAIT_S:
                continue
            self.node_restarts[k] = self.node_restarts.get(k, 0) + 1
            try:
                node.start()
            except RuntimeError as exc:
                self.say(f"falkordb node {k} could not be started again: {exc}")
                if self.node_restarts[k] >= NODE_RESTARTS:
                    self.say(f"falkordb node {k} is left down after {NODE_RESTARTS} tries")
                continue
            del self.gone[k]
            self.write_state()  # first: whoever reads the message finds the new pid in the state
            self.say(f"falkordb node {k} (port {node.port}) started again (pid {node.process.pid}); it rejoins the "
                     "cluster as a replica of the primary that took its slots")

    def shutdown(self) -> None:
        if self.supervisor is not None:
            self.supervisor.stop_all()
        if self.cluster is not None:
            self.say("falkordb cluster: writing each node's log as a snapshot ...")
            self.cluster.stop()
            self.say("stopped the falkordb cluster")
        elif self.falkordb is not None and self.falkordb.process is not None and self.falkordb.process.poll() is None:
            self.say("falkordb: writing the log as a snapshot, so the next start loads fast ...")
            self.falkordb.stop()  # then SIGTERM: the AOF is flushed before it exits
            self.say("stopped falkordb")
        (self.opts.data_dir / STATE_NAME).unlink(missing_ok=True)

    def _metrics_url(self, child: Child) -> str | None:
        if child.spec.serves_http:
            return f"{self.url}/metrics"
        port = child.env.get("RELAY_METRICS_PORT", "0")
        return f"http://127.0.0.1:{port}/metrics" if port not in ("", "0") else None

    def write_state(self) -> None:
        state = {
            "pid": os.getpid(),
            "url": self.url,
            "port": self.opts.port,
            "falkordb_port": self.opts.falkordb_port,
            "admin_key_file": str(self.key.path) if self.key and self.key.path else None,
            "falkordb_cluster": self.cluster.seeds if self.cluster else None,
            "processes": [
                {"service": "falkordb", "replica": k if self.cluster else None, "pid": node.process.pid,
                 "log": str(node.log_file or self.logs / "falkordb.log")}
                for k, node in enumerate(self.nodes) if node.process is not None
            ]
            + [
                {"service": c.spec.name, "replica": c.replica, "pid": c.pid, "log": str(c.log_path),
                 "metrics": self._metrics_url(c)}
                for c in self.supervisor.children
            ],
        }
        path = self.opts.data_dir / STATE_NAME
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=2))
        tmp.replace(path)

    # -- the whole run -------------------------------------------------------------------------

    def run(self) -> int:
        try:
            self.check_ports()
            self.prepare()
            if self.stop:
                return 0
            self.start_falkordb()
            if self.stop:
                return 0
            self.start_services()
            if not self.wait_ready():
                return 0
            self.show()
            self.open_site()
            if self.opts.demo:
                run_demo(self.url, self.key.value, self.console)
            self.supervise()
            self.console.print("stopping Relay ...")
            return 0
        except (StartupFailed, ServiceFailed) as exc:
            self.console.print("[red bold]relay up failed:[/]", end=" ")
            self.console.print(str(exc), markup=False, highlight=False, soft_wrap=True)
            return 1
        finally:
            self.shutdown()


def up(opts: UpOptions, console: Console) -> int:
    """Run an embedded Relay until stopped. Returns the process exit code."""
    try:
        lock = locks.acquire(
            opts.data_dir,
            {"port": opts.port, "falkordb_port": opts.falkordb_port, "data_dir": str(opts.data_dir)},
        )
    except locks.AlreadyRunning as exc:
        console.print("[red bold]relay up refused:[/]", end=" ")
        console.print(str(exc), markup=False, highlight=False, soft_wrap=True)
        return 1
    stop = StopFlag(console)
    stop.install()
    with lock:
        return EmbeddedRelay(opts, console, stop).run()
