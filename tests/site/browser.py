"""Headless Chromium for the page tests: Debian's `chromium` driven by Playwright (its own browser
download cannot reach its CDN here). The test set-up installs the package with apt when it runs as
root (CI's fresh machine); anywhere else without it the tests are skipped, saying so."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlparse

import pytest

CHROMIUM = Path("/usr/bin/chromium")
DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}


def chromium() -> str:
    if not CHROMIUM.exists() and shutil.which("apt-get") and os.geteuid() == 0:
        subprocess.run(["apt-get", "update"], check=False, capture_output=True)
        subprocess.run(["apt-get", "install", "-y", "chromium"], check=False, capture_output=True)
    if not CHROMIUM.exists():
        pytest.skip(f"SKIPPED the browser tests: no {CHROMIUM} (install Debian's `chromium`: "
                    "apt-get update && apt-get install -y chromium)")
    return str(CHROMIUM)


def offline(context, outside: list[str]) -> None:
    """Every request that is not to this machine is aborted (and noted): the page must not need one."""
    def route(r):
        host = urlparse(r.request.url).hostname
        if host in LOCAL_HOSTS:
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()
    context.route("**/*", route)
