"""Playing planned storylines against a running Relay, as customers would.

Events are released when the simulated clock reaches them; each customer has one worker that
plays their events in order (a customer does one thing at a time), customers play in parallel.
Within an event the customer reacts to what the desk says, like a person would:

- asked for something they know (their number, their router, ...), they answer in the same
  conversation, once;
- checking on a problem after the hidden repair: a ticket waiting for their word gets it ("yes, it
  works now", or, when the hidden repair did not hold, "still not working"); a ticket waiting on a
  technician gets the technician's visit, confirmed through `POST /tickets/{id}/confirm`; a ticket
  still being worked gets "any update?" and another look later.

Those reactions are drawn from the event's own seed, so a replay with the same seed says the same
words wherever it has the same reason to. Nothing here reads the graph: what the player knows of
the desk is what the API answered."""

from __future__ import annotations

import asyncio
import logging
import random
import re
import time
from dataclasses import dataclass, field, replace

import httpx

from . import phrasings as say
from .client import ApiError, ChatReply, DeskClient
from .clock import SimClock
from .faults import FaultInjector, InjectedFault
from .storylines import EventKind, ScheduledEvent

log = logging.getLogger("services.simulator.player")

MAX_CHECKS = 3  # looks at one problem before the customer gives up asking
RECHECK_AFTER_H = 8.0
OPEN_STAGES = ("reported", "checking_line", "fixing", "reopened")
CONTROL_STEP_S = 0.25  # the longest a sleeping release goes without looking at the clock again

# What a question in the desk's reply asks for, by the words it uses.
_ASKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("phone", re.compile(r"\b(?:phone|number|reach you)\b", re.I)),
    ("has_router", re.compile(r"\brouter\b", re.I)),
    ("lives_in", re.compile(r"\b(?:city|where you live|address)\b", re.I)),
    ("on_plan", re.compile(r"\bplan\b", re.I)),
    ("name", re.compile(r"\byour name\b", re.I)),
)
_QUESTION = re.compile(r"[^.!?]*\?")


def asked_for(reply: str | None) -> list[str]:
    """The details a reply asks the customer for (predicates), read from its questions only."""
    out: list[str] = []
    for q in _QUESTION.findall(reply or ""):
        for predicate, rx in _ASKS:
            if rx.search(q) and predicate not in out:
                out.append(predicate)
    return out


def describe(event: ScheduledEvent) -> str:
    """What a customer is doing, in a line: `say: <their words>`, `fault: <kind>`, ..."""
    if event.kind is EventKind.SAY:
        return f"say: {event.utterance.text}"[:300]
    if event.kind is EventKind.FAULT:
        return f"fault: {getattr(event.fault, 'value', event.fault)} (planted)"
    if event.kind is EventKind.CHECK:
        return f"check on {event.problem or 'their problem'}"
    return event.kind.value


@dataclass
class Stats:
    events: int = 0
    turns: int = 0
    answered: int = 0
    unanswered: int = 0
    tickets: set[str] = field(default_factory=set)
    confirmations: int = 0
    faults_on_network: int = 0
    faults_in_words: int = 0
    repairs: int = 0
    errors: int = 0
    max_late_s: float = 0.0

    def summary(self) -> str:
        return (f"{self.events} events, {self.turns} turns ({self.answered} answered, {self.unanswered} not in time), "
                f"{len(self.tickets)} tickets, {self.confirmations} confirmations, faults {self.faults_on_network} on "
                f"the network / {self.faults_in_words} in words, {self.errors} errors, at most "
                f"{self.max_late_s:.1f}s behind schedule")


@dataclass
class _Customer:
    sessions: dict[str, str] = field(default_factory=dict)  # story -> session
    tickets: dict[str, str] = field(default_factory=dict)  # story -> ticket id
    faults: dict[str, InjectedFault] = field(default_factory=dict)  # story -> fault planted
    checks: dict[str, int] = field(default_factory=dict)  # story -> looks so far
    queue: asyncio.Queue = field(default_factory=asyncio.Queue)
    worker: asyncio.Task | None = None


class Player:
    def __init__(self, desk: DeskClient, injector: FaultInjector, clock: SimClock, *,
                 stop: asyncio.Event | None = None, wait_s: float = 20.0):
        self.desk, self.injector, self.clock = desk, injector, clock
        self.stop = stop or asyncio.Event()
        self.wait_s = wait_s
        self.stats = Stats()
        self.customers: dict[str, _Customer] = {}
        self._later: set[asyncio.Task] = set()
        self._pending = 0  # events enqueued and not yet played
        self.doing: dict[str, tuple[str, float]] = {}  # customer -> (what they are doing, since: epoch s)

    # ------------------------------------------------------------ scheduling

    async def play(self, events: list[ScheduledEvent]) -> Stats:
        """Release each event at its simulated time; return once all (and the follow-ups they
        caused) are played, or as soon as `stop` is set (whatever is in flight is cancelled)."""
        try:
            for event in events:
                if not await self._sleep_until(event.at_h):
                    break
                self._enqueue(event)
            while not self.stop.is_set() and (self._later or self._pending):
                await self._pause(0.2)
        finally:
            await self._close()
            await self._repair_leftovers()
        return self.stats

    async def _pause(self, seconds: float) -> bool:
        """Sleep, unless stopped first. False when stopped."""
        try:
            await asyncio.wait_for(self.stop.wait(), timeout=seconds)
            return False
        except asyncio.TimeoutError:
            return True

    async def _sleep_until(self, at_h: float) -> bool:
        # In short steps, so a new speed or a stop from the console counts within a step.
        while (wait := self.clock.seconds_until(at_h)) > 0:
            if not await self._pause(min(wait, CONTROL_STEP_S)):
                return False
        self.stats.max_late_s = max(self.stats.max_late_s, (self.clock.hours() - at_h) / self.clock.speed)
        return not self.stop.is_set()

    def _enqueue(self, event: ScheduledEvent) -> None:
        c = self.customers.setdefault(event.customer, _Customer())
        if c.worker is None:
            c.worker = asyncio.create_task(self._work(event.customer, c), name=f"customer {event.customer}")
        self._pending += 1
        c.queue.put_nowait(event)

    def _later_at(self, event: ScheduledEvent) -> None:
        """A follow-up the customer decided on while playing: released at its own simulated hour."""
        async def release() -> None:
            if await self._sleep_until(event.at_h):
                self._enqueue(event)

        task = asyncio.create_task(release())
        self._later.add(task)
        task.add_done_callback(self._later.discard)

    async def _work(self, name: str, c: _Customer) -> None:
        while True:
            event = await c.queue.get()
            self.doing[name] = (describe(event), time.time())
            try:
                await self.handle(event, c)
            except asyncio.CancelledError:
                raise
            except ApiError as exc:
                self.stats.errors += 1
                log.warning("%s (%s %s): %s", name, event.kind.value, event.story_id, exc)
            except Exception as exc:  # noqa: BLE001 - one customer's trouble must not end the run
                self.stats.errors += 1
                log.warning("%s (%s %s): %s: %s", name, event.kind.value, event.story_id, type(exc).__name__, exc)
            finally:
                self._pending -= 1
                self.doing.pop(name, None)

    async def _close(self) -> None:
        tasks = [*self._later, *(c.worker for c in self.customers.values() if c.worker)]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _repair_leftovers(self, timeout_s: float = 5.0) -> None:
        """A stopped run leaves no node down: repair what it planted (best effort, bounded, so a
        SIGTERM still ends the process in time)."""
        left = [f for c in self.customers.values() for f in c.faults.values() if f.via != "words"]
        if not left:
            return
        try:
            async with asyncio.timeout(timeout_s):
                for fault in left:
                    await self.injector.repair(fault)
        except (TimeoutError, ApiError, httpx.HTTPError, OSError) as exc:
            log.warning("could not repair every fault left planted: %s", exc)
        for c in self.customers.values():
            c.faults.clear()

    # ------------------------------------------------------------ one event

    async def handle(self, event: ScheduledEvent, c: _Customer) -> None:
        self.stats.events += 1
        if event.kind is EventKind.SAY:
            await self._say(event, c, event.utterance.text)
        elif event.kind is EventKind.FAULT:
            fault = await self.injector.inject(event.fault, event.customer)
            c.faults[event.story_id] = fault
            if fault.via == "network":
                self.stats.faults_on_network += 1
            else:
                self.stats.faults_in_words += 1
        elif event.kind is EventKind.REPAIR:
            fault = c.faults.pop(event.story_id, None)
            if fault is not None:
                await self.injector.repair(fault)
                self.stats.repairs += 1
        elif event.kind is EventKind.CHECK:
            await self._check(event, c)

    async def _say(self, event: ScheduledEvent, c: _Customer, text: str, *, react: bool = True) -> ChatReply:
        reply = await self.desk.chat(event.customer, text, session=c.sessions.get(event.story_id), wait=self.wait_s)
        c.sessions[event.story_id] = reply.session
        log.debug("%s: %s\n    desk: %s", event.customer, text, reply.text if reply.answered else "(no reply in time)")
        self.stats.turns += 1
        if reply.answered:
            self.stats.answered += 1
        else:
            self.stats.unanswered += 1
        if reply.ticket_id:
            self.stats.tickets.add(reply.ticket_id)
            if event.problem and event.story_id not in c.tickets:
                c.tickets[event.story_id] = reply.ticket_id
        if react and reply.answered:
            rng = random.Random(f"{event.seed}|answers|{text}")
            known = {"phone": event.profile.phone, "has_router": event.profile.router, "lives_in": event.profile.city,
                     "on_plan": event.profile.plan, "name": event.profile.name}
            for predicate in asked_for(reply.text):
                answer = say.ANSWERS[predicate](rng, known[predicate])
                await self._say(event, c, answer.text, react=False)
        return reply

    async def _ticket_for(self, event: ScheduledEvent, c: _Customer) -> dict | None:
        tid = c.tickets.get(event.story_id)
        if tid is None and event.problem:
            # the reply did not come in time: find the ticket the way the customer's app would
            mine = [t for t in await self.desk.tickets(customer=event.customer) if t.get("issue") == event.problem]
            if mine:
                tid = c.tickets[event.story_id] = mine[0]["id"]  # newest first
        return await self.desk.ticket(tid) if tid else None

    async def _check(self, event: ScheduledEvent, c: _Customer) -> None:
        looks = c.checks[event.story_id] = c.checks.get(event.story_id, 0) + 1
        ticket = await self._ticket_for(event, c)
        if ticket is None:
            return  # the desk never opened one; nothing to look at
        stage = ticket["stage"]
        rng = random.Random(f"{event.seed}|check|{looks}")
        again = looks < MAX_CHECKS
        if stage == "fixed":
            words = say.works_now(rng) if event.fix_holds else say.still_broken(rng)
            await self._say(event, c, words.text, react=False)
            self.stats.confirmations += 1
            again = again and not event.fix_holds
        elif stage == "technician_dispatched":
            # the technician came; the customer gives their word on the visit
            await self.desk.confirm(ticket["id"], fixed=event.fix_holds)
            log.debug("%s: the technician came; confirms ticket %s fixed=%s", event.customer, ticket["id"],
                      event.fix_holds)
            self.stats.confirmations += 1
            again = again and not event.fix_holds
        elif stage in OPEN_STAGES:
            await self._say(event, c, say.ask_status(rng).text, react=False)
        else:  # closed
            again = False
        if again:
            self._later_at(replace(event, at_h=self.clock.hours() + RECHECK_AFTER_H, fix_holds=True))
