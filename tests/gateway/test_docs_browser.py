"""/docs (Swagger UI) and /redoc render in a real browser with the network off: every script and
style comes from the gateway itself. Debian's chromium, driven by Playwright, against the real
gateway process; every request that is not to this machine is aborted (and counted: none may be
made)."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from tests.markers import needs

CHROMIUM = Path(os.environ.get("RELAY_CHROMIUM", "/usr/bin/chromium"))
SCREENSHOTS = Path(os.environ.get("RELAY_TEST_SCREENSHOTS", Path(__file__).resolve().parents[2] / ".relay" / "screens"))

if not CHROMIUM.exists():
    pytest.skip(f"{CHROMIUM} is not installed: `make test` installs it as root (apt-get install -y chromium); "
                "elsewhere run `sudo apt-get install chromium` to run the browser tests", allow_module_level=True)


@pytest.fixture(scope="module")
@needs("browser")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


def operations(gateway) -> int:
    doc = httpx.get(f"{gateway.url}/openapi.json", timeout=10).json()
    return sum(len(ops) for ops in doc["paths"].values())


def offline_page(browser, blocked: list[tuple[str, str]]):
    page = browser.new_page(viewport={"width": 1280, "height": 1400})

    def route(r):
        host = urlsplit(r.request.url).hostname
        if host in ("127.0.0.1", "localhost", "::1"):
            r.continue_()
        else:
            blocked.append((r.request.resource_type, r.request.url))
            r.abort()

    page.route("**/*", route)
    return page


def test_swagger_ui_renders_the_operations_offline(running_gateway, browser):
    blocked: list[tuple[str, str]] = []
    page = offline_page(browser, blocked)
    page.goto(f"{running_gateway.url}/docs", wait_until="networkidle")
    page.wait_for_selector(".opblock", timeout=30_000)
    summaries = page.locator(".opblock-summary-path").all_inner_texts()
    assert any("/v1/tenants/{t}/facts" in s for s in summaries), summaries
    assert any("/v1/tenants/{t}/episodes" in s for s in summaries), summaries
    assert page.locator(".opblock").count() == operations(running_gateway)
    assert "Relay" in page.locator(".info .title").inner_text()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "docs.png"))
    assert blocked == []
    page.close()


def test_redoc_renders_offline(running_gateway, browser):
    blocked: list[tuple[str, str]] = []
    page = offline_page(browser, blocked)
    page.goto(f"{running_gateway.url}/redoc", wait_until="networkidle")
    page.wait_for_selector("[data-section-id^='operation/']", timeout=30_000)
    assert page.locator("[data-section-id^='operation/']").count() == operations(running_gateway)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "redoc.png"))
    # ReDoc's bundle links its own "API docs by Redocly" logo from its CDN; nothing else leaves
    assert [u for kind, u in blocked if not (kind == "image" and u.startswith("https://cdn.redoc.ly/"))] == []
    page.close()
