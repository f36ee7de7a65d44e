"""`relay backup DEST` and `relay restore SRC`: the whole data folder (every tenant's graph, the
streams, the tenant keys, the admin key) as one consistent copy.

Backup works with Relay up: it asks the running FalkorDB for a point-in-time snapshot (BGSAVE, a
forked child writing `dump.rdb`, so writers are not stopped) and copies that file once it is
complete. The AOF directory is not copied: the server may rewrite it (and delete its old files)
in the middle of a copy. With no Relay running on the folder, a FalkorDB is started on it for the
snapshot alone (under the folder's lock, so no `relay up` starts meanwhile).

Restore never writes under a running server: it takes the target folder's lock and refuses if a
Relay holds it (stop that Relay first). It refuses a target that already holds data unless told
to replace it. The snapshot is loaded by a FalkorDB started on the target with the AOF off, which
then turns the AOF on (the server writes its base file from what it loaded) and stops cleanly, so
the next `relay up` finds a normal AOF directory.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import redis

from relay_cli import admin_key
from relay_cli import lock as locks
from relay_graph.runtime.embedded import EmbeddedFalkorDB, compact_aof, free_port
from relay_graph.runtime.times import utcnow

DB_DIR = "falkordb"  # where `relay up` keeps FalkorDB's files inside the data folder
DUMP = "dump.rdb"
MANIFEST = "relay-backup.json"
# Never part of a backup: who runs now, what runs now, and logs of past runs.
SKIP = {locks.LOCK_NAME, "relay.state.json", "logs", DB_DIR}


class BackupError(RuntimeError):
    pass


def _password(data_dir: Path) -> str | None:
    """FalkorDB's password for this data folder: RELAY_FALKORDB_PASSWORD, else the one `relay up`
    keeps there (a backup carries that file, so a restored folder keeps its password)."""
    return os.environ.get("RELAY_FALKORDB_PASSWORD") or admin_key.kept(data_dir, admin_key.PASSWORD_FILE)


@dataclass
class BackupReceipt:
    dest: str
    graphs: list[str]
    keys: int
    bytes: int
    server_was_running: bool


def backup(data_dir: Path, dest: Path, *, host: str = "127.0.0.1", timeout: float = 600.0) -> BackupReceipt:
    data_dir, dest = Path(data_dir).resolve(), Path(dest).resolve()
    if dest.exists() and any(dest.iterdir()):
        raise BackupError(f"{dest} is not empty; back up into a new folder")
    if dest == data_dir or data_dir in dest.parents:
        raise BackupError("the backup cannot go inside the data folder it copies")
    password = _password(data_dir)
    info = locks.holder(data_dir)
    if info is not None:
        port = info.get("falkordb_port")
        if not port:
            raise BackupError(f"a Relay is starting on {data_dir}; try again once it is up")
        return _backup_from(data_dir, dest, host, int(port), timeout, running=True, password=password)
    if not (data_dir / DB_DIR).is_dir():
        raise BackupError(f"{data_dir} has no database ({DB_DIR}/); nothing to back up")
    with locks.acquire(data_dir, {"purpose": "relay backup"}):
        server = EmbeddedFalkorDB(data_dir / DB_DIR, free_port(), host=host, password=password).start(timeout=timeout)
        try:
            return _backup_from(data_dir, dest, host, server.port, timeout, running=False, password=password)
        finally:
            server.stop()


def _backup_from(data_dir: Path, dest: Path, host: str, port: int, timeout: float, *, running: bool,
                 password: str | None) -> BackupReceipt:
    client = redis.Redis(host=host, port=port, password=password, socket_timeout=30)
    try:
        graphs = sorted(g.decode() for g in client.execute_command("GRAPH.LIST"))
        keys = client.dbsize()
        dump = Path(client.config_get("dir")["dir"]) / client.config_get("dbfilename")["dbfilename"]
        _bgsave(client, timeout)
    except redis.exceptions.ConnectionError as exc:
        raise BackupError(f"FalkorDB on port {port} does not answer ({exc}); is Relay still starting?") from None
    finally:
        client.close()
    dest.mkdir(parents=True, exist_ok=True)
    (dest / DB_DIR).mkdir()
    # BGSAVE renames its finished temp file over dump.rdb, so this copy is one whole snapshot.
    shutil.copy2(dump, dest / DB_DIR / DUMP)
    for item in data_dir.iterdir():
        if item.name not in SKIP and item.is_file():
            shutil.copy2(item, dest / item.name)
    receipt = BackupReceipt(dest=str(dest), graphs=graphs, keys=keys, bytes=(dest / DB_DIR / DUMP).stat().st_size,
                            server_was_running=running)
    (dest / MANIFEST).write_text(json.dumps(
        {**receipt.__dict__, "source": str(data_dir), "taken_at": utcnow().isoformat()}, indent=2))
    return receipt


def _bgsave(client: redis.Redis, timeout: float) -> None:
    before = client.info("persistence")["rdb_saves"]
    deadline = time.monotonic() + timeout
    while True:
        try:
            client.bgsave()
            break
        except redis.exceptions.ResponseError:  # an AOF rewrite or another save is running: wait for it
            if time.monotonic() > deadline:
                raise BackupError("FalkorDB stayed busy with another save") from None
            time.sleep(0.1)
    while time.monotonic() < deadline:
        info = client.info("persistence")
        if not info["rdb_bgsave_in_progress"]:
            if info["rdb_saves"] > before and info["rdb_last_bgsave_status"] == "ok":
                return
            raise BackupError("FalkorDB could not write its snapshot (see its log)")
        time.sleep(0.05)
    raise BackupError(f"FalkorDB's snapshot did not finish within {timeout}s")


def restore(src: Path, data_dir: Path, *, replace: bool = False, host: str = "127.0.0.1",
            timeout: float = 600.0) -> BackupReceipt:
    src, data_dir = Path(src).resolve(), Path(data_dir).resolve()
    if not (src / DB_DIR / DUMP).is_file() or not (src / MANIFEST).is_file():
        raise BackupError(f"{src} is not a Relay backup (no {MANIFEST} and {DB_DIR}/{DUMP})")
    try:
        held = locks.acquire(data_dir, {"purpose": "relay restore"})
    except locks.AlreadyRunning as exc:
        raise BackupError(f"{exc} A backup is never restored under a running Relay.") from None
    with held:
        db = data_dir / DB_DIR
        if db.exists() and any(db.iterdir()):
            if not replace:
                raise BackupError(f"{data_dir} already holds a database; pass --replace to overwrite it")
            shutil.rmtree(db)
        db.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / DB_DIR / DUMP, db / DUMP)
        for item in src.iterdir():
            if item.is_file() and item.name != MANIFEST:
                shutil.copy2(item, data_dir / item.name)
        password = _password(data_dir)
        server = _LoadingServer(db, free_port(), host=host, password=password).start(timeout=timeout)
        try:
            client = redis.Redis(host=host, port=server.port, password=password, socket_timeout=30)
            try:
                graphs = sorted(g.decode() for g in client.execute_command("GRAPH.LIST"))
                keys = client.dbsize()
                client.config_set("appendonly", "yes")  # writes the AOF base from the loaded data
                if not compact_aof(host, server.port, timeout, password=password):
                    raise BackupError("FalkorDB could not write its log from the restored snapshot")
            finally:
                client.close()
        finally:
            server.stop()
        (db / DUMP).unlink(missing_ok=True)  # the AOF is the database from here on
    return BackupReceipt(dest=str(data_dir), graphs=graphs, keys=keys, bytes=(src / DB_DIR / DUMP).stat().st_size,
                         server_was_running=False)


class _LoadingServer(EmbeddedFalkorDB):
    """The embedded server with the AOF off, so it loads dump.rdb (with the AOF on it would start
    from the empty AOF instead)."""

    def command(self) -> list[str]:
        args = super().command()
        args[args.index("--appendonly") + 1] = "no"
        return args
