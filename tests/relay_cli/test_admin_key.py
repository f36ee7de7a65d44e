"""The embedded admin key: from the environment, or generated once and kept 0600."""

from __future__ import annotations

import os
import stat

from relay_cli.admin_key import KEY_FILE, PASSWORD_FILE, USERS_DIR, kept, resolve, user_passwords


def test_env_wins_and_nothing_is_written(tmp_path):
    key = resolve(tmp_path, "from-env")
    assert (key.value, key.source, key.path) == ("from-env", "env", None)
    assert not (tmp_path / KEY_FILE).exists()


def test_generated_once_kept_private_and_reused(tmp_path):
    first = resolve(tmp_path, None)
    assert first.created and len(first.value) >= 40
    path = tmp_path / KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = resolve(tmp_path, "")  # an empty variable counts as unset
    assert (again.value, again.source, again.created) == (first.value, "file", False)


def test_a_widened_key_file_is_made_private_again(tmp_path):
    first = resolve(tmp_path, None)
    os.chmod(tmp_path / KEY_FILE, 0o644)
    assert resolve(tmp_path, None).value == first.value
    assert stat.S_IMODE((tmp_path / KEY_FILE).stat().st_mode) == 0o600


def test_the_falkordb_password_is_kept_beside_the_admin_key(tmp_path):
    assert kept(tmp_path, PASSWORD_FILE) is None
    key, password = resolve(tmp_path, None), resolve(tmp_path, None, PASSWORD_FILE)
    assert password.created and password.value != key.value
    assert stat.S_IMODE((tmp_path / PASSWORD_FILE).stat().st_mode) == 0o600
    assert kept(tmp_path, PASSWORD_FILE) == password.value == resolve(tmp_path, None, PASSWORD_FILE).value
    assert resolve(tmp_path, "set", PASSWORD_FILE).value == "set"


def test_each_falkordb_user_has_a_private_password_kept_for_the_next_start(tmp_path):
    first = user_passwords(tmp_path, ["relay-intake", "relay-gateway"])
    assert len(set(first.values())) == 2
    for user, value in first.items():
        path = tmp_path / USERS_DIR / f"{user}.password"
        assert path.read_text().strip() == value and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / USERS_DIR).stat().st_mode) & 0o077 == 0
    assert user_passwords(tmp_path, ["relay-intake", "relay-gateway"]) == first
    (tmp_path / USERS_DIR / "relay-intake.password").unlink()  # rotating: a new one at the next start
    again = user_passwords(tmp_path, ["relay-intake", "relay-gateway"])
    assert again["relay-gateway"] == first["relay-gateway"] and again["relay-intake"] != first["relay-intake"]
