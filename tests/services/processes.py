"""Running the desk agents as real processes (`python -m services.<name>`) against the test
session's FalkorDB, with delivery timeouts small enough for a test."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from relay_graph.runtime import acl
from relay_graph.runtime.heartbeat import heartbeat_key

REPO = Path(__file__).resolve().parents[2]

FAST_ENV = {
    "RELAY_STREAMS__MIN_IDLE_MS": "1000",
    "RELAY_STREAMS__HEARTBEAT_MS": "200",
    "RELAY_STREAMS__RECLAIM_INTERVAL_MS": "200",
    "RELAY_STREAMS__BLOCK_MS": "500",
    "RELAY_STREAMS__ORDER_POLL_MS": "10",
    "RELAY_STREAMS__MAX_DELIVERIES": "3",
    "RELAY_STREAMS__BACKOFF_INITIAL_MS": "20",
    "RELAY_STREAMS__BACKOFF_MAX_MS": "200",
    "RELAY_HEARTBEAT_EVERY_S": "0.3",
    "RELAY_HEARTBEAT_TTL_S": "2",
    "RELAY_LOG_LEVEL": "INFO",
    "PYTHONUNBUFFERED": "1",
}

_STARTED = re.compile(r"started as consumer (\S+)")


@dataclass
class Proc:
    service: str
    replica: int
    popen: subprocess.Popen
    log_path: Path
    consumer: str | None = None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    @property
    def pid(self) -> int:
        return self.popen.pid


@dataclass
class Desk:
    """A set of agent processes. `start` spawns, `ready` waits until each beats, `stop` ends them
    with SIGTERM and checks they exit 0 (a clean, graceful stop)."""

    falkordb_host: str
    falkordb_port: int
    model_dir: Path
    log_dir: Path
    procs: list[Proc] = field(default_factory=list)
    cluster: str = ""  # RELAY_FALKORDB_CLUSTER: the seeds of a cluster, or one server
    users: dict[str, str] = field(default_factory=dict)  # FalkorDB user -> password; none: `default`

    def env(self, service: str, replica: int, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
        env.update(FAST_ENV)
        env.update({
            "RELAY_FALKORDB_HOST": self.falkordb_host,
            "RELAY_FALKORDB_PORT": str(self.falkordb_port),
            "RELAY_FALKORDB_CLUSTER": self.cluster,
            "RELAY_MODEL_DIR": str(self.model_dir),
            "RELAY_REPLICA": str(replica),
            "OTEL_SERVICE_NAME": f"relay-{service}",
        })
        if self.users:  # each service as its own user (relay_graph.runtime.acl), as `relay up` runs it
            user = acl.user_for(service)
            env.update({"RELAY_FALKORDB_USER": user, "RELAY_FALKORDB_PASSWORD": self.users[user]})
        env.update(extra or {})
        return env

    def start(self, service: str, count: int = 1, extra: dict[str, str] | None = None) -> list[Proc]:
        out = []
        for i in range(count):
            replica = len([p for p in self.procs if p.service == service])
            log_path = self.log_dir / f"{service}-{replica}.log"
            handle = log_path.open("wb")
            popen = subprocess.Popen([sys.executable, "-m", f"services.{service}"], cwd=REPO,
                                     env=self.env(service, replica, extra), stdout=handle, stderr=subprocess.STDOUT)
            handle.close()
            proc = Proc(service, replica, popen, log_path)
            self.procs.append(proc)
            out.append(proc)
        return out

    async def ready(self, redis, procs: list[Proc] | None = None, timeout: float = 90.0) -> None:
        """Each process logged its consumer name and its heartbeat key exists (it beats only once
        its consumer groups exist, so what is published from now on reaches it)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        for proc in procs or self.procs:
            while True:
                if proc.popen.poll() is not None:
                    raise AssertionError(f"{proc.service}-{proc.replica} exited with {proc.popen.returncode}:\n"
                                         f"{proc.log()[-4000:]}")
                if proc.consumer is None:
                    m = _STARTED.search(proc.log())
                    proc.consumer = m.group(1) if m else None
                if proc.consumer and await redis.exists(heartbeat_key(proc.service, proc.consumer)):
                    break
                if loop.time() > deadline:
                    raise AssertionError(f"{proc.service}-{proc.replica} not ready:\n{proc.log()[-4000:]}")
                await asyncio.sleep(0.05)

    def by_consumer(self, consumer: str) -> Proc:
        return next(p for p in self.procs if p.consumer == consumer)

    def kill(self, proc: Proc) -> None:
        proc.popen.send_signal(signal.SIGKILL)
        proc.popen.wait(timeout=10)

    def stop(self, timeout: float = 30.0) -> dict[str, int]:
        """SIGTERM every live process; returns exit codes by "service-replica"."""
        live = [p for p in self.procs if p.popen.poll() is None]
        for p in live:
            p.popen.send_signal(signal.SIGTERM)
        codes = {}
        for p in live:
            try:
                codes[f"{p.service}-{p.replica}"] = p.popen.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.popen.kill()
                codes[f"{p.service}-{p.replica}"] = p.popen.wait()
        return codes

    def logs(self) -> str:
        return "\n".join(f"===== {p.service}-{p.replica} =====\n{p.log()[-3000:]}" for p in self.procs)
