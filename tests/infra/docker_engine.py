"""A Docker engine for the live compose test: the one DOCKER_HOST names if it answers, else a dockerd
of our own (its own socket, data-root and exec-root, no iptables), stopped when the test ends.

Its data-root is kept between runs on one machine (/var/lib/relay-docker), so images and the build
cache are reused; a fresh machine builds everything. Without iptables there is no NAT: containers
reach each other on compose's bridge network and the host through published loopback ports, nothing
outside (builds that need the package registries use `--network host`).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

STATE = Path(os.environ.get("RELAY_DOCKER_STATE", "/var/lib/relay-docker"))
RUN = Path("/tmp/relay-docker")  # socket and exec-root: short paths (unix sockets have a length limit)


class EngineUnavailable(Exception):
    """No engine answers and none could be started; the message says why."""


@dataclass
class Engine:
    host: str  # a DOCKER_HOST value
    process: subprocess.Popen | None = None  # set when we started dockerd
    log: Path | None = None
    env: dict[str, str] = field(default_factory=dict)

    def stop(self, timeout: float = 30.0) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)  # dockerd stops its containers and containerd
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


def docker_env(host: str) -> dict[str, str]:
    env = dict(os.environ, DOCKER_HOST=host, COMPOSE_DOCKER_CLI_BUILD="0", DOCKER_BUILDKIT="0")
    # compose 1.29 and the 20.10 CLI agree on the API; a newer CLI earlier on PATH would not
    env["PATH"] = "/usr/bin:/usr/sbin:" + env.get("PATH", "")
    return env


def answers(host: str, timeout: float = 5.0) -> bool:
    try:
        done = subprocess.run(["docker", "version", "--format", "{{.Server.Version}}"], env=docker_env(host),
                              capture_output=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def start(timeout: float = 60.0) -> Engine:
    """The engine DOCKER_HOST names, or our own dockerd; EngineUnavailable says why there is none."""
    given = os.environ.get("DOCKER_HOST")
    if given and answers(given):
        return Engine(given, env=docker_env(given))
    for tool in ("dockerd", "docker", "docker-compose"):
        if not (shutil.which(tool) or Path("/usr/sbin", tool).exists() or Path("/usr/bin", tool).exists()):
            raise EngineUnavailable(f"{tool} is not installed (apt-get install docker.io docker-compose debootstrap)")
    if os.geteuid() != 0:
        raise EngineUnavailable("dockerd needs root here (uid %d)" % os.geteuid())
    sock = RUN / "docker.sock"
    host = f"unix://{sock}"
    if answers(host):  # ours, left by an earlier run that was killed
        return Engine(host, env=docker_env(host))
    for d in (STATE / "data", RUN / "exec"):
        d.mkdir(parents=True, exist_ok=True)
    log = RUN / "dockerd.log"
    dockerd = shutil.which("dockerd") or "/usr/sbin/dockerd"
    cmd = [dockerd, "--iptables=false", "--ip-masq=false", "--storage-driver=vfs",
           "--data-root", str(STATE / "data"), "--exec-root", str(RUN / "exec"),
           "--pidfile", str(RUN / "docker.pid"), "-H", host]
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise EngineUnavailable(f"dockerd exited with {proc.returncode}: {_tail(log)}")
        if answers(host):
            return Engine(host, proc, log, docker_env(host))
        time.sleep(0.5)
    Engine(host, proc, log).stop()
    raise EngineUnavailable(f"dockerd did not answer within {timeout:.0f}s: {_tail(log)}")


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
