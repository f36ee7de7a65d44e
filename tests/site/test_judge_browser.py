"""Judge mode in a real headless Chromium against the real stack (FalkorDB, the gateway and the desk
agents as processes), every request that leaves this machine aborted:

- one click plays the whole story through the real agents; each caption shows only once the event
  it captions has happened (its ticket closed, the move on file), checked through her own API the
  moment the caption appears;
- Pause (Space) holds the story, Next (→) ends a caption's hold but never skips an event, Exit (Esc)
  stops it; the end card sums up what was shown with a link back to the demo;
- a reload after Judge mode returns to the demo site.
The gateway's pace (RELAY_JUDGE_HOLD_S) is set long here, so every step moves on by Next: the story
runs at the agents' speed and a step cannot pass by its timer while the test looks at it.
Screenshots: .relay/screens/judge-*.png (`make screens`: docs/screens)."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.services.simulator.test_stack import Stack
from tests.markers import needs

from .browser import DESKTOP, chromium, offline
from .test_site_browser import shoot

pytestmark = [pytest.mark.falkordb, pytest.mark.processes]
HOLD_S = "120"  # longer than any step: only Next moves the story on
STEP_MS = 180_000  # a guard for the agents on a busy machine, not a speed claim


class SlowJudgeStack(Stack):
    def env(self, **extra: str) -> dict[str, str]:
        return super().env(RELAY_JUDGE_HOLD_S=HOLD_S, **extra)


@pytest.fixture(scope="module")
@needs("processes")
def stack(falkordb_server, graph_settings, tmp_path_factory):
    s = SlowJudgeStack(falkordb_server, graph_settings, tmp_path_factory.mktemp("judge-stack"))
    try:
        s.start()
        yield s
    finally:
        s.stop()


@pytest.fixture(scope="module")
def demo(stack):
    tenant, key = stack.tenant()
    auth = {"Authorization": f"Bearer {key}"}
    assert httpx.put(f"{stack.url}/v1/tenants/{tenant}/site", json={"open": True}, headers=auth).status_code == 200
    return tenant


@pytest.fixture(scope="module")
@needs("browser")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser):
    outside: list[str] = []
    ctx = browser.new_context(viewport=DESKTOP)
    offline(ctx, outside)
    page = ctx.new_page()
    page.set_default_timeout(STEP_MS)
    yield page
    ctx.close()
    assert outside == [], f"the page asked for something outside this machine: {outside}"


def start(page, stack, demo: str) -> str:
    LOGS["stack"] = stack
    page.goto(f"{stack.url}/t/{demo}/")
    page.get_by_role("button", name="▶ Judge mode").click()
    page.wait_for_url(re.compile(r"/t/judge-[0-9a-f]+/"))
    return re.search(r"/t/(judge-[0-9a-f]+)/", page.url).group(1)


LOGS = {}  # the stack, for a step that never came


def caption(page, n: int):
    judge = page.locator(f"[data-testid=judge][data-step='{n}'][data-phase=holding]")
    try:
        judge.wait_for()
    except Exception:
        tenant = re.search(r"/t/(judge-[0-9a-f]+)/", page.url).group(1)
        raise AssertionError(f"step {n} never came: {page.get_by_test_id('caption').inner_text()!r}; "
                             f"tickets {[mine(page, tenant, 'tickets/' + t['id']) for t in mine(page, tenant, 'tickets')['tickets']]}"
                             f"\n{LOGS['stack'].logs() if 'stack' in LOGS else ''}") from None
    text = page.get_by_test_id("caption").inner_text()
    assert text.startswith(f"{n}/8"), text
    return text


def mine(page, tenant: str, what: str):
    return page.evaluate(f"fetch('/v1/tenants/{tenant}/me/{what}').then(r => r.json())")


def test_judge_mode_shows_each_caption_after_its_event_with_pause_next_and_a_way_back(stack, demo, page):
    tenant = start(page, stack, demo)
    # 1: her report, and the ticket it opened, before the caption says so
    caption(page, 1)
    page.get_by_test_id("caption").click()  # the keys are the page's, not the chat box's
    shoot(page, "judge-desktop")
    tickets = mine(page, tenant, "tickets")["tickets"]
    assert len(tickets) == 1, tickets
    first = tickets[0]["id"]
    page.keyboard.press("ArrowRight")
    caption(page, 2)
    routers = [f for f in mine(page, tenant, "facts")["facts"] if f["predicate"] == "has_router" and f["state"] == "current"]
    assert routers, "the router is on file when step 2 says so"
    # Pause holds the story: Next while paused does not start the next step
    page.keyboard.press(" ")
    page.locator("[data-testid=judge][data-paused=yes]").wait_for()
    page.keyboard.press("ArrowRight")
    page.wait_for_timeout(1500)
    assert page.get_by_test_id("judge").get_attribute("data-step") == "2"
    assert page.get_by_test_id("judge").get_attribute("data-phase") == "holding"
    assert page.get_by_role("button", name="Resume").is_visible()
    shoot(page, "judge-paused-desktop")
    page.keyboard.press(" ")  # resume: the step Next asked for goes on
    # 3: the desk measured no light at her box (the LOS fault the lab planted) and booked a technician
    caption(page, 3)
    t = mine(page, tenant, f"tickets/{first}")
    events = [e["event"] for e in t["timeline"]]
    assert "technician_dispatched" in events, events
    assert any(e["event"] == "ont_status" and "state=los" in (e["detail"] or "") for e in t["timeline"]), events
    page.keyboard.press("ArrowRight")
    caption(page, 4)
    assert next(x for x in mine(page, tenant, "tickets")["tickets"] if x["id"] == first)["stage"] == "closed"
    page.get_by_role("button", name="Next").click()
    caption(page, 5)  # the move is on file when the caption says so, not after
    lives = [f["object"] for f in mine(page, tenant, "facts")["facts"] if f["predicate"] == "lives_in" and f["state"] == "current"]
    assert any(re.search("mumbai", x, re.I) for x in lives), lives
    for n in (6, 7, 8):
        page.keyboard.press("ArrowRight")
        caption(page, n)
    stages = [x["stage"] for x in mine(page, tenant, "tickets")["tickets"]]
    assert stages == ["closed", "closed"], stages
    page.keyboard.press("ArrowRight")
    page.locator("[data-testid=judge][data-done=yes]").wait_for()
    assert page.get_by_test_id("summary").locator("li").count() == 8
    evidence = page.get_by_test_id("captions").locator("li")
    assert [evidence.nth(i).inner_text().split(" ", 1)[0] for i in range(8)] == [f"{i}/8" for i in range(1, 9)]
    shoot(page, "judge-end-desktop")
    back = page.get_by_test_id("back-to-demo")
    assert back.get_attribute("href") == f"/t/{demo}/"
    page.reload()  # after Judge mode a reload returns to the demo
    page.wait_for_url(re.compile(rf"/t/{demo}/"))
    page.get_by_role("button", name="▶ Judge mode").wait_for()


def test_exit_stops_the_story_and_says_where_the_visitor_is(stack, demo, page):
    tenant = start(page, stack, demo)
    page.get_by_test_id("judge").wait_for()
    page.keyboard.press("Escape")
    stopped = page.locator("[data-testid=judge][data-done=exited]")
    stopped.wait_for()
    assert tenant in stopped.inner_text() and stopped.get_by_role("link", name="Back to the demo").is_visible()
    page.reload()
    page.wait_for_url(re.compile(rf"/t/{demo}/"))
