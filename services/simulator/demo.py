"""The demo story: one customer's fortnight with the desk, played through the real agents, with
every step checked through the public API.

    python -m services.simulator.demo [--url http://127.0.0.1:8000] [--admin-key KEY]
    relay demo                                  (what `make up` plays once Relay is ready)

1. A new customer reports a fault (a red LOS light): intake files what she said, opens a ticket,
   hands it to the resolver, and asks for the one thing it needs that is not on file.
2. She answers in the same conversation.
3. The resolver picks the ticket up, measures the line and, for a red light, books a technician.
4. The technician fixes it; the line is measured again; she confirms (`POST /tickets/{id}/confirm`).
5. She moves city (a new conversation): the new city is current, the old one superseded.
6. A week on, a new conversation about her Wi-Fi (the fault lab crowds her Wi-Fi channel first): the
   desk remembers her router, number and city and asks for none of them; a new ticket goes to the
   resolver.
7. The resolver fixes it remotely and re-measures before calling it fixed.
8. She confirms in the chat; the ticket closes.

After every step the story reads the graph's state back through the API (ticket stage, owner,
handoffs and timeline; facts current and superseded) and checks it. The transcript shows each
agent's steps (the ticket's timeline, by agent) and the "how I know" lines of every reply. Exit
code 0 when every check passed, 1 otherwise.

Each run plays in a tenant of its own (`story-<time>-<random>`), so it runs on a fresh `make up`
and again on every later start; the tenant and its key are printed at the end for exploring."""

from __future__ import annotations

import argparse
import asyncio
import re
import secrets
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone

import httpx
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .client import ApiError, ChatReply, DeskClient, create_tenant
from .player import asked_for

CUSTOMER = "Asha Verma"
FIRST_CITY, NEW_CITY = "Pune", "Mumbai"
LINE_FAULT = "damaged_fibre"  # what the lab breaks before her first message: no light at her box, a red LOS
WIFI_FAULT = "wifi_interference"  # what the lab breaks before her Wi-Fi complaint (step 6)
PHONE, ROUTER = "+91 98220 12345", "TP-Link Archer C6"
WAIT_S = 30.0  # the chat endpoint's longest wait
STAGE_TIMEOUT_S = 90.0  # how long a step may take the agents (a guard, not a speed claim)

SAYS = {
    "fault": f"Hi, I'm {CUSTOMER} and I live in {FIRST_CITY}. Since this morning the LOS light on my fibre box is "
             "red and nothing loads.",
    "details": f"Sure, you can reach me on {PHONE}. My router is a {ROUTER}.",
    "move": f"Quick update: we have just moved to {NEW_CITY}, the new flat is lovely.",
    "wifi": f"Hi, it's {CUSTOMER} again. Since the move the wifi keeps dropping in the bedroom.",
    "works": "Yes, it works now, thanks!",
}


class StoryAborted(Exception):
    """A step cannot go on (its ticket never appeared, the API refused ...)."""


@dataclass
class Checks:
    console: Console
    passed: int = 0
    failed: list[str] = field(default_factory=list)

    def __call__(self, ok: bool, what: str, detail: str = "") -> bool:
        if ok:
            self.passed += 1
            self.console.print(f"  [green]✓[/] {escape(what)}")
        else:
            self.failed.append(what)
            self.console.print(f"  [red bold]✗ {escape(what)}[/]" + (f"  [red]{escape(detail)}[/]" if detail else ""))
        return ok


def _hhmmss(at: str) -> str:
    """A timeline time as the transcript shows it: UTC, to the millisecond."""
    try:
        t = datetime.fromisoformat(at).astimezone(timezone.utc)
    except ValueError:
        return at
    return t.strftime("%H:%M:%S.") + f"{t.microsecond // 1000:03d}"


class Story:
    def __init__(self, http: httpx.AsyncClient, admin_key: str, console: Console, *, tenant: str | None = None):
        self.http, self.admin_key, self.console = http, admin_key, console
        stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
        self.tenant = tenant or f"story-{stamp}-{secrets.token_hex(2)}"
        self.check = Checks(console)
        self.desk: DeskClient | None = None
        self.key: str | None = None
        self.shown: dict[str, int] = {}  # ticket -> timeline entries already printed
        self.customer_id: str | None = None  # hers, from the answer to her first turn

    @property
    def id(self) -> str:
        if self.customer_id is None:
            raise StoryAborted("the desk gave no customer id for her first turn")
        return self.customer_id

    # ------------------------------------------------------------ printing

    def step(self, n: int, title: str) -> None:
        self.console.print()
        self.console.rule(f"[bold]{n}. {escape(title)}[/]", align="left")

    def customer_says(self, text: str, session: str | None) -> None:
        where = f"session {session}" if session else "new session"
        self.console.print(f"[bold cyan]{escape(CUSTOMER)}[/] [dim]({escape(where)})[/]: {escape(text)}")

    def desk_says(self, reply: ChatReply) -> None:
        if not reply.answered:
            self.console.print("[yellow]desk: (no reply within the wait)[/]")
            return
        self.console.print(f"[bold magenta]desk[/]: {escape(reply.text)}")
        if reply.how_i_know:
            self.console.print("  [dim]how I know:[/]")
            for line in reply.how_i_know:
                self.console.print(f"  [dim]  · {escape(line)}[/]")

    def timeline(self, ticket: dict) -> None:
        """The ticket's timeline entries not shown yet: each agent's steps, in order."""
        entries = ticket.get("timeline", [])
        start = self.shown.get(ticket["id"], 0)
        if start >= len(entries):
            return
        table = Table(title=f"ticket {ticket['id']}: {ticket['issue']} — stage {ticket['stage']}, owner "
                            f"{ticket['owner'] or '-'}", title_justify="left", show_edge=False, pad_edge=False)
        for col in ("at (UTC)", "agent", "step", "detail"):
            table.add_column(col, overflow="fold")
        for e in entries[start:]:
            table.add_row(_hhmmss(e["at"]), e["agent"], e["event"], escape(e.get("detail") or ""))
        self.console.print(table)
        self.shown[ticket["id"]] = len(entries)

    # ------------------------------------------------------------ talking to the desk

    async def say(self, key: str, session: str | None = None) -> ChatReply:
        text = SAYS[key]
        self.customer_says(text, session)
        try:
            # her first turn names nobody: the desk makes her a customer and gives back her id
            reply = await self.desk.chat(self.customer_id, text, session=session, wait=WAIT_S,
                                         name=None if self.customer_id else CUSTOMER)
        except ApiError as exc:
            raise StoryAborted(f"the chat refused the turn: {exc}") from None
        self.customer_id = self.customer_id or reply.customer
        self.desk_says(reply)
        self.check(reply.answered, "the desk replied within the wait")
        return reply

    async def ticket(self, ticket_id: str) -> dict:
        return await self.desk.ticket(ticket_id)

    async def until_stage(self, ticket_id: str, stages: tuple[str, ...]) -> dict:
        """Re-read the ticket until it reaches one of `stages` (or a guard timeout)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STAGE_TIMEOUT_S
        while True:
            t = await self.ticket(ticket_id)
            if t["stage"] in stages:
                return t
            if loop.time() > deadline:
                self.timeline(t)
                raise StoryAborted(f"ticket {ticket_id} stayed at {t['stage']!r}; expected {' or '.join(stages)}")
            await asyncio.sleep(0.2)

    async def current(self, predicate: str) -> list[str]:
        return [f["object"] for f in await self.desk.facts(self.id, predicate) if f["state"] == "current"]

    def no_question_about(self, reply: ChatReply, on_file: list[str]) -> None:
        asked = [p for p in asked_for(reply.text) if p in on_file]
        self.check(not asked, "the reply asks for nothing already on file", f"it asks for {asked}")

    def ticket_checks(self, t: dict, *, issue: str, stage: str, owner: str | None) -> None:
        c = self.check
        c(t["issue"] == issue, f"ticket {t['id']} is about {issue}", f"issue {t['issue']!r}")
        c(t["stage"] == stage, f"ticket stage is {stage}", f"stage {t['stage']!r}")
        if owner is not None:
            c(t["owner"] == owner, f"ticket owner is the {owner}", f"owner {t['owner']!r}")
        hand = [(h["from"], h["to"]) for h in t["handoffs"]]
        c(("intake", "resolver") in hand, "the ticket was handed off from intake to the resolver", f"handoffs {hand}")

    # ------------------------------------------------------------ the story

    async def setup(self) -> None:
        try:
            key = await create_tenant(self.http, self.admin_key, self.tenant)
        except ApiError as exc:
            raise StoryAborted(f"cannot create the story's tenant {self.tenant!r}: {exc}") from None
        self.desk = DeskClient(self.http, self.tenant, key)
        self.key = key
        self.console.print(f"Relay's desk at [bold]{escape(str(self.http.base_url))}[/], tenant [bold]{self.tenant}[/] "
                           f"(created for this story), customer [bold]{CUSTOMER}[/] (an id from her first turn)")

    async def play(self) -> None:
        c = self.check
        await self.setup()

        self.step(1, "A new customer reports a fault")
        r = await self.say("fault")
        if not r.ticket_id:
            c(False, "the reply names the ticket it opened")
            raise StoryAborted("no ticket was opened for the fault")
        first, s1 = r.ticket_id, r.session
        c("phone" in asked_for(r.text), "intake asks for the one thing it needs that is not on file (a phone number)",
          f"it asks for {asked_for(r.text)}")
        t = await self.ticket(first)
        self.timeline(t)
        self.ticket_checks(t, issue="no_signal_light", stage=t["stage"], owner=None)
        by_intake = [e["event"] for e in t["timeline"] if e["agent"] == "intake"]
        c({"opened", "handed_off"} <= set(by_intake), "intake opened the ticket and handed it off (timeline)",
          f"intake's steps {by_intake}")
        c(await self.current("lives_in") == [FIRST_CITY], f"on file: she lives in {FIRST_CITY}")
        c(await self.current("name") == [CUSTOMER], f"on file: her name is {CUSTOMER}")

        self.step(2, "She answers in the same conversation")
        r = await self.say("details", session=s1)
        c(r.session == s1, "the same session continues")
        phones = await self.current("phone")
        c(len(phones) == 1 and re.sub(r"\D", "", phones[0]) == re.sub(r"\D", "", PHONE), "on file: her phone number",
          f"phone facts {phones}")
        c(await self.current("has_router") == [ROUTER], f"on file: her router, a {ROUTER}")
        self.no_question_about(r, ["phone", "has_router", "lives_in", "name"])

        self.step(3, "The resolver picks it up, measures the line and sends a technician")
        t = await self.until_stage(first, ("technician_dispatched",))
        self.timeline(t)
        self.ticket_checks(t, issue="no_signal_light", stage="technician_dispatched", owner="resolver")
        steps = [e["event"] for e in t["timeline"] if e["agent"] == "resolver"]
        c("picked_up" in steps, "the resolver picked the ticket up (timeline)", f"resolver's steps {steps}")
        c("line_test" in steps, "the resolver measured the line before deciding", f"resolver's steps {steps}")
        c(len(t["visits"]) == 1, "one technician visit is booked", f"visits {t['visits']}")
        visit = t["visits"][0] if t["visits"] else {"technician": "?", "at": "?", "visit_id": "?"}

        self.step(4, "The technician fixes it, the line is measured again, she confirms")
        self.console.print(f"[bold]{escape(visit['technician'])}[/] visits ({escape(visit['visit_id'])}, booked for "
                           f"{escape(str(visit['at']))}) and re-splices the fibre at the box.")
        line = await self.desk.line(self.id)
        c(bool(line), "she is on a line (placed from her first message)", "no line on file")
        self.console.print("line test: " + " > ".join(f"{h['node_id']} {h['status']}" for h in line))
        down = [h["node_id"] for h in line if h["status"] != "up" or h.get("link_up") is False]
        c(not down, "the re-measured line shows nothing down", f"down: {down}")
        await self.desk.confirm(first, fixed=True)
        self.console.print(f"[bold cyan]{escape(CUSTOMER)}[/] confirms the fix: POST /tickets/{first}/confirm "
                           "{\"fixed\": true}")
        t = await self.ticket(first)
        self.timeline(t)
        c(t["stage"] == "closed" and t["closed_at"] is not None, "the ticket is closed", f"stage {t['stage']!r}")
        last = t["timeline"][-1] if t["timeline"] else {}
        c(last.get("event") == "confirmed_fixed" and last.get("agent") == "customer",
          "the timeline ends with her confirmation", f"last entry {last}")

        self.step(5, "She moves city (a new conversation)")
        r = await self.say("move")
        c(r.session != s1, "a new session")
        self.no_question_about(r, ["phone", "has_router", "lives_in", "name"])
        c(await self.current("lives_in") == [NEW_CITY], f"on file now: she lives in {NEW_CITY}")
        history = await self.desk.history(self.id, "lives_in")
        old = [f for f in history if f["object"] == FIRST_CITY]
        c(len(old) == 1 and old[0]["state"] == "superseded" and old[0]["valid_to"] is not None
          and old[0]["expired_at"] is not None,
          f"history: {FIRST_CITY} is superseded (closed on both clocks), not deleted",
          f"{FIRST_CITY} facts {old}")
        self.facts_table(history, f"lives_in history of {CUSTOMER}")

        self.step(6, "A new session remembers without asking again")
        # her line is real (placed from her first message): the lab crowds her Wi-Fi channel, so
        # there is something for the resolver to measure, fix and measure again
        await self.desk.lab_fault(self.id, WIFI_FAULT)
        r = await self.say("wifi")
        c(r.session not in (s1,), "a new session")
        self.no_question_about(r, ["phone", "has_router", "lives_in", "name"])
        if not r.ticket_id or r.ticket_id == first:
            c(False, "a new ticket was opened for the Wi-Fi", f"ticket {r.ticket_id}")
            raise StoryAborted("no new ticket for the Wi-Fi problem")
        second, s3 = r.ticket_id, r.session
        t = await self.ticket(second)
        self.timeline(t)
        self.ticket_checks(t, issue="wifi_drops", stage=t["stage"], owner=None)

        self.step(7, "The resolver fixes it remotely and measures again")
        t = await self.until_stage(second, ("fixed",))
        self.timeline(t)
        self.ticket_checks(t, issue="wifi_drops", stage="fixed", owner="resolver")
        steps = [e["event"] for e in t["timeline"] if e["agent"] == "resolver"]
        fix_at = steps.index("fixing") if "fixing" in steps else len(steps)
        c("line_test" in steps[:fix_at] and "line_test" in steps[fix_at:],
          "the line was measured before the fix and again after it", f"resolver's steps {steps}")
        c(steps.count("fix_step") >= 1 and "fix_verified" in steps, "the fix steps ran and the fix was verified",
          f"resolver's steps {steps}")
        c(bool(t["fixed_by"]), "the ticket records the procedure that fixed it", f"fixed_by {t['fixed_by']}")

        self.step(8, "She confirms in the chat")
        r = await self.say("works", session=s3)
        t = await self.ticket(second)
        self.timeline(t)
        c(t["stage"] == "closed", "the ticket is closed on her word", f"stage {t['stage']!r}")

        self.step(9, "What the desk knows about her now")
        self.facts_table(await self.desk.facts(self.id), f"current facts about {CUSTOMER}")
        tickets = await self.desk.tickets(customer=self.id)
        c(sorted(x["id"] for x in tickets) == sorted([first, second]) and all(x["stage"] == "closed" for x in tickets),
          "both of her tickets are closed", f"tickets {[(x['id'], x['stage']) for x in tickets]}")

    def facts_table(self, facts: list[dict], title: str) -> None:
        table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
        for col in ("predicate", "object", "state", "valid from", "valid to", "by"):
            table.add_column(col, overflow="fold")
        for f in sorted(facts, key=lambda f: (f["predicate"], f["recorded_at"])):
            table.add_row(f["predicate"], escape(f["object"]), f["state"], (f["valid_from"] or "")[:19],
                          (f["valid_to"] or "")[:19], f["asserted_by"])
        self.console.print(table)


async def play(base_url: str, admin_key: str, console: Console | None = None, *, tenant: str | None = None) -> int:
    """Play the story against the Relay at `base_url`; 0 when every check passed."""
    console = console or Console(highlight=False)
    async with httpx.AsyncClient(base_url=base_url.rstrip("/"), timeout=WAIT_S + 15.0) as http:
        story = Story(http, admin_key, console, tenant=tenant)
        aborted = None
        try:
            await story.play()
        except StoryAborted as exc:
            aborted = str(exc)
        except (ApiError, httpx.HTTPError) as exc:
            aborted = f"{type(exc).__name__}: {exc}"
        console.print()
        checks = story.check
        if aborted:
            console.print(f"[red bold]the story stopped: {escape(aborted)}[/]")
        if checks.failed or aborted:
            console.print(f"[red bold]demo story: {checks.passed} checks passed, {len(checks.failed)} failed[/]")
            for what in checks.failed:
                console.print(f"  [red]✗ {escape(what)}[/]")
            return 1
        console.print(f"[green bold]demo story: all {checks.passed} checks passed[/]")
        if story.desk is not None:
            console.print(f"explore it: tenant [bold]{story.tenant}[/], key [bold]{escape(story.key)}[/] "
                          f"(e.g. GET {base_url.rstrip('/')}/v1/tenants/{story.tenant}/tickets)")
        return 0


def run(base_url: str, admin_key: str) -> int:
    """The hook `relay up` calls once Relay is ready (libs/relay_cli/up.py: run_demo)."""
    return asyncio.run(play(base_url, admin_key))


def main(argv: list[str] | None = None) -> int:
    from .settings import SimulatorSettings

    settings = SimulatorSettings()
    p = argparse.ArgumentParser(prog="python -m services.simulator.demo", description="Play Relay's demo story.")
    p.add_argument("--url", default=settings.gateway_url, help="the gateway (RELAY_GATEWAY_URL)")
    p.add_argument("--admin-key", default=settings.admin_key.get_secret_value() if settings.admin_key else None,
                   help="the admin key (RELAY_ADMIN_KEY)")
    args = p.parse_args(argv)
    if not args.admin_key:
        print("demo: the admin key is needed to create the story's tenant: --admin-key or RELAY_ADMIN_KEY "
              "(`relay demo` finds the one `relay up` keeps)", file=sys.stderr)
        return 2
    return run(args.url, args.admin_key)


if __name__ == "__main__":
    sys.exit(main())
