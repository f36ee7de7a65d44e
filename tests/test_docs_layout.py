"""The Layout section of docs/architecture.md and the tree say the same: every path it lists exists,
and every top-level folder, every package of libs/relay_graph, libs/ and services/ is listed (a
package added or removed without the page saying so fails here)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "architecture.md"


def listed(page: str) -> set[str]:
    section = page.split("## Layout", 1)[1]
    block = section.split("```", 2)[1]
    return {m.group(1) for line in block.splitlines() if (m := re.match(r"^(\S+)\s", line + " "))}


def packages(folder: Path) -> set[str]:
    return {f"{p.relative_to(REPO)}/" for p in folder.iterdir() if (p / "__init__.py").exists()}


def required() -> set[str]:
    """The tracked top-level folders (libs/ and services/ stand for their packages), and the packages."""
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    top = {f"{f.split('/')[0]}/" for f in files if "/" in f and not f.startswith(".")} - {"libs/", "services/"}
    return top | packages(REPO / "libs") | packages(REPO / "libs" / "relay_graph") | packages(REPO / "services")


def test_every_listed_path_exists():
    missing = sorted(p for p in listed(PAGE.read_text()) if not (REPO / p).exists())
    assert not missing, f"docs/architecture.md's Layout lists what is not there: {missing}"


def test_every_package_and_top_folder_is_listed():
    entries = listed(PAGE.read_text())
    unlisted = sorted(required() - entries)
    assert not unlisted, f"docs/architecture.md's Layout does not say what these are: {unlisted}"


def test_the_check_reads_the_section():
    entries = listed("## Layout\n\n```\nlibs/relay_graph/memory/  the engine\n                          more\nweb/  x\n```\n")
    assert entries == {"libs/relay_graph/memory/", "web/"}
    assert "libs/relay_graph/memory/" in required() and "services/gateway/" in required()
