"""The secrets of an embedded Relay: the admin key (RELAY_ADMIN_KEY if set, else one generated on
the first run and kept in <data_dir>/admin.key, mode 0600, so every later run, and the user, find the
same one), FalkorDB's password (RELAY_FALKORDB_PASSWORD, else <data_dir>/falkordb.password, the
same way: the `default` user's, which `relay up` keeps for itself), and the passwords of the
services' own FalkorDB users (relay_graph.runtime.acl), one file each in <data_dir>/falkordb-users/."""

from __future__ import annotations

import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

KEY_FILE = "admin.key"
PASSWORD_FILE = "falkordb.password"
USERS_DIR = "falkordb-users"


@dataclass(frozen=True)
class AdminKey:
    value: str
    source: str  # "env" | "created" | "file"
    path: Path | None

    @property
    def created(self) -> bool:
        return self.source == "created"


def resolve(data_dir: Path, env_value: str | None, name: str = KEY_FILE) -> AdminKey:
    """`env_value` if set, else the secret kept in <data_dir>/`name`, made there on first use."""
    if env_value:
        return AdminKey(env_value, "env", None)
    path = Path(data_dir) / name
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            os.chmod(path, 0o600)  # someone widened it; a secret is for its owner only
        value = path.read_text().strip()
        if not value:
            raise RuntimeError(f"{path} is empty; delete it to have a new one generated")
        return AdminKey(value, "file", path)
    value = secrets.token_urlsafe(32)
    with os.fdopen(fd, "w") as f:
        f.write(value + "\n")
    return AdminKey(value, "created", path)


def kept(data_dir: Path, name: str) -> str | None:
    """The secret a `relay up` keeps in <data_dir>/`name`, or None (read only, never made here)."""
    path = Path(data_dir) / name
    return (path.read_text().strip() or None) if path.is_file() else None


def user_passwords(data_dir: Path, users) -> dict[str, str]:
    """user -> password for each of `users`, kept in <data_dir>/falkordb-users/<user>.password (mode
    0600, made on first use). A file deleted is a password rotated at the next start."""
    folder = Path(data_dir) / USERS_DIR
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return {user: resolve(data_dir, None, f"{USERS_DIR}/{user}.password").value for user in users}
