"""Start, watch, restart and stop the service processes of an embedded Relay.

Every child runs in its own session, so a Ctrl-C in the terminal reaches only `relay up`, which
then stops the children in order; and every child is told by the kernel (PR_SET_PDEATHSIG) to
terminate if `relay up` itself dies, so no orphan keeps a port or the database busy.

Policy when a service dies while Relay runs: it is restarted after a backoff (1s, 2s, 4s ... at
most 30s), like compose's `restart: unless-stopped`; a replica that dies `max_restarts` times
within `window_s` is considered broken and Relay stops everything with its log tail, instead of
looping forever (`Deaths` counts them; falkordb_keeper.py applies the same rule to FalkorDB).
During start-up nothing is restarted: a service that cannot start is a bug or a misconfiguration
that a retry will not fix, so `relay up` fails fast and shows why.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import time
from collections import deque
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Callable

import redis

from relay_graph.runtime.embedded import EmbeddedFalkorDB, port_in_use, wait_for_ping

from relay_cli.services import ServiceSpec

_PR_SET_PDEATHSIG = 1

# Resolved once here: the child runs _child_setup between fork and exec, where loading a library
# could deadlock on a lock another thread of ours held at fork time.
try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # not Linux: children may outlive a killed parent
    _prctl = None


def _child_setup() -> None:
    """Runs in the child between fork and exec: die with the parent."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))


def spawn(cmd: list[str], *, log_path: Path, env: dict[str, str] | None = None, stdin: str = "") -> subprocess.Popen:
    """`stdin`: text the process reads on its standard input (then end of file)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        stamp = datetime.now().astimezone().isoformat(timespec="seconds")
        log.write(f"\n--- relay up: starting {' '.join(cmd)} at {stamp}\n".encode())
        log.flush()
        process = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            preexec_fn=_child_setup,
        )
    if stdin:
        process.stdin.write(stdin.encode())
        process.stdin.close()
    return process


def tail(path: Path, lines: int = 25) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 64 * 1024))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return f"(no log at {path})"
    return "\n".join(text.splitlines()[-lines:])


def stop_processes(processes: list[subprocess.Popen], timeout: float) -> list[subprocess.Popen]:
    """SIGTERM all, wait up to `timeout` together, SIGKILL the rest. Returns the killed ones."""
    running = [p for p in processes if p.poll() is None]
    for p in running:
        try:
            p.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    for p in running:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    killed = [p for p in running if p.poll() is None]
    for p in killed:
        p.kill()
        p.wait()
    return killed


class SupervisedFalkorDB(EmbeddedFalkorDB):
    """EmbeddedFalkorDB started in its own session and tied to our lifetime (see module doc)."""

    @property
    def log_path(self) -> Path:
        return self.log_file or (self.data_dir / "falkordb.log")

    def launch(self) -> None:
        """Spawns the server (the same command, folder and configuration every time) without
        waiting for it; RuntimeError if something else holds its port."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if port_in_use(self.host, self.port):
            raise RuntimeError(
                f"FalkorDB port {self.port} is already in use (another Relay, or another Redis?). "
                f"Set RELAY_FALKORDB_PORT to a free port."
            )
        self.process = spawn(self.command(), log_path=self.log_path, stdin=self.config())

    def answers(self) -> bool:
        """One PING: True once the server has loaded its data and takes commands."""
        client = redis.Redis(host=self.host, port=self.port, password=self.password, socket_timeout=1,
                             socket_connect_timeout=1)
        try:
            return bool(client.ping())
        except redis.exceptions.RedisError:
            return False
        finally:
            client.close()

    def start(self, timeout: float = 30.0) -> "SupervisedFalkorDB":
        self.launch()
        try:
            wait_for_ping(self.host, self.port, timeout, self.process, password=self.password)
        except RuntimeError as exc:
            self.stop()
            raise RuntimeError(f"{exc}\n--- last lines of {self.log_path}:\n{tail(self.log_path)}") from None
        return self


class Deaths:
    """The give-up rule and the backoff: deaths within the last `window_s` seconds are counted;
    more than `max_restarts` of them is broken, otherwise the next start waits 1s, 2s, 4s ...
    (at most `max_backoff_s`)."""

    def __init__(self, max_restarts: int, window_s: float, max_backoff_s: float = 30.0):
        self.max_restarts, self.window_s, self.max_backoff_s = max_restarts, window_s, max_backoff_s
        self.times: deque[float] = deque()

    def add(self, now: float) -> float | None:
        """Counts a death at `now`: the seconds to wait before starting again, or None to give up."""
        while self.times and now - self.times[0] > self.window_s:
            self.times.popleft()
        self.times.append(now)
        if len(self.times) > self.max_restarts:
            return None
        return min(self.max_backoff_s, 2.0 ** (len(self.times) - 1))

    def __len__(self) -> int:
        return len(self.times)


class ServiceFailed(RuntimeError):
    def __init__(self, child: "Child", reason: str):
        self.child = child
        super().__init__(
            f"{child.name} {reason}.\n--- last lines of {child.log_path}:\n{tail(child.log_path)}"
        )


@dataclass
class Child:
    spec: ServiceSpec
    replica: int
    log_path: Path
    env: dict[str, str]
    process: subprocess.Popen | None = None
    restart_at: float | None = None
    deaths: Deaths | None = None  # the Supervisor's rule, given at its start

    @property
    def name(self) -> str:
        return f"{self.spec.name}-{self.replica}"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self, python: str) -> None:
        self.process = spawn(self.spec.command(python), log_path=self.log_path, env=self.env)
        self.restart_at = None


class Supervisor:
    def __init__(
        self,
        children: list[Child],
        *,
        python: str,
        say: Callable[[str], None],
        max_restarts: int = 5,
        window_s: float = 300.0,
        max_backoff_s: float = 30.0,
        stop_timeout_s: float = 10.0,
    ):
        self.children = children
        self.python = python
        self.say = say
        self.max_restarts = max_restarts
        self.window_s = window_s
        self.max_backoff_s = max_backoff_s
        self.stop_timeout_s = stop_timeout_s
        self.on_change: Callable[[], None] = lambda: None
        for child in children:
            child.deaths = Deaths(max_restarts, window_s, max_backoff_s)

    def start_all(self) -> None:
        for child in self.children:
            child.start(self.python)
        self.on_change()

    def check_startup(self) -> None:
        """Raise ServiceFailed for the first child that is no longer running."""
        for child in self.children:
            if not child.running():
                raise ServiceFailed(child, f"exited with code {child.process.returncode} while Relay was starting")

    def check(self, now: float | None = None, *, hold: bool = False) -> None:
        """One supervision round: notice deaths, schedule restarts, perform the due ones.
        Raises ServiceFailed when a replica has died too often to keep trying.

        `hold` (FalkorDB is down and being started again): a replica that dies now is not counted
        against it, and none is started until the hold ends: a service cannot start without
        FalkorDB, so restarting it meanwhile would only use up its tries."""
        now = time.monotonic() if now is None else now
        changed = False
        for child in self.children:
            if child.restart_at is not None:
                if not hold and now >= child.restart_at:
                    child.start(self.python)
                    self.say(f"restarted {child.name} (pid {child.pid})")
                    changed = True
                continue
            if child.process is None or child.process.poll() is None:
                continue
            code = child.process.returncode
            if hold:
                child.restart_at = now
                self.say(f"{child.name} (pid {child.pid}) exited with code {code} while FalkorDB is down; "
                         f"restarting it once FalkorDB is back (log: {child.log_path})")
                continue
            delay = child.deaths.add(now)
            if delay is None:
                raise ServiceFailed(
                    child,
                    f"exited with code {code} for the {len(child.deaths)}th time in "
                    f"{int(self.window_s)}s; giving up on it",
                )
            child.restart_at = now + delay
            self.say(
                f"{child.name} (pid {child.pid}) exited with code {code}; "
                f"restarting in {delay:g}s (log: {child.log_path})"
            )
        if changed:
            self.on_change()

    def stop_all(self) -> None:
        """Reverse table order; all replicas of one service together."""
        groups: dict[str, list[Child]] = {}
        for child in self.children:
            groups.setdefault(child.spec.name, []).append(child)
        for name in reversed(list(groups)):
            procs = [c.process for c in groups[name] if c.process is not None]
            if not any(p.poll() is None for p in procs):
                continue
            killed = stop_processes(procs, self.stop_timeout_s)
            if killed:
                self.say(f"{name}: {len(killed)} process(es) ignored SIGTERM for {self.stop_timeout_s:g}s; killed")
            else:
                self.say(f"stopped {name}")
            for c in groups[name]:
                c.restart_at = None
