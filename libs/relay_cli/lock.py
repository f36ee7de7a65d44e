"""One `relay up` per data folder: an exclusive, non-blocking flock on <data_dir>/relay.lock.

The kernel drops the lock when its holder dies, however it dies, so a crashed run never leaves a
stale lock behind. The holder writes who it is (pid, port) into the file so a refused second run
can say which instance holds it; a refused run only opens the file, it never writes to it.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

LOCK_NAME = "relay.lock"


class AlreadyRunning(RuntimeError):
    def __init__(self, lock_path: Path, info: dict):
        self.lock_path = lock_path
        self.info = info
        pid = info.get("pid", "unknown")
        port = info.get("port", "unknown")
        super().__init__(
            f"Relay is already running with this data folder ({lock_path.parent}): pid {pid}, "
            f"gateway http://127.0.0.1:{port}. Stop it first (Ctrl-C in its terminal, or kill -TERM {pid}), "
            f"or pass another --data-dir."
        )


@dataclass
class InstanceLock:
    path: Path
    fd: int

    def write_info(self, info: dict) -> None:
        data = json.dumps(info, sort_keys=True).encode()
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, data, 0)
        os.fsync(self.fd)

    def release(self) -> None:
        if self.fd < 0:
            return
        try:
            os.ftruncate(self.fd, 0)  # the info describes a run that is over
        finally:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> "InstanceLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def lock_path(data_dir: Path) -> Path:
    return Path(data_dir) / LOCK_NAME


def read_info(path: Path) -> dict:
    try:
        raw = Path(path).read_text()
        return json.loads(raw) if raw.strip() else {}
    except (OSError, ValueError):
        return {}


def acquire(data_dir: Path, info: dict | None = None) -> InstanceLock:
    """Take the lock or raise AlreadyRunning naming the holder. `info` (pid and port are added if
    missing) is written into the lock file once it is ours."""
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    path = lock_path(data_dir)
    # O_CREAT without O_TRUNC: opening must not disturb the holder's info.
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise AlreadyRunning(path, read_info(path)) from None
    lock = InstanceLock(path, fd)
    details = {"pid": os.getpid(), "started_at": datetime.now().astimezone().isoformat(timespec="seconds")}
    details.update(info or {})
    lock.write_info(details)
    return lock


def holder(data_dir: Path) -> dict | None:
    """The running instance's info if one holds the lock, else None. Probes with a shared lock,
    which conflicts only with a holder's exclusive one."""
    path = lock_path(data_dir)
    if not path.exists():
        return None
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return read_info(path) or {"pid": None}
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
