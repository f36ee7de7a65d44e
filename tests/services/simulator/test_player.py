"""The player's reactions and the fault injectors, as pure logic: a scripted stand-in answers in
place of the gateway (the real one is exercised in test_stack.py)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone

import pytest

from relay_graph.desk.conversation import templates as replies
from relay_graph.desk.extraction.rules import extract
from services.simulator.client import ApiError, ChatReply
from services.simulator.clock import SimClock
from services.simulator.faults import InjectedFault, NetworkFaults, WordsOnly, make_injector
from services.simulator.phrasings import Utterance
from services.simulator.player import MAX_CHECKS, Player, asked_for
from services.simulator.storylines import EventKind, Profile, ScheduledEvent, Story

AT = datetime(2026, 9, 5, 10, 0, tzinfo=timezone.utc)
ASHA = Profile(name="Asha Verma", region="india", city="Pune", plan="Fiber 300", router="Tenda AC10",
               phone="+91 98220 12345")


class ScriptedDesk:
    """Answers chat turns from a script: `replies` maps a substring of the customer's text to
    (reply text, ticket id); tickets' stages are set by the test."""

    def __init__(self, replies_by_text: dict[str, tuple[str, str | None]] | None = None):
        self.replies = replies_by_text or {}
        self.said: list[tuple[str, str, str | None]] = []  # customer, text, session given
        self.stages: dict[str, str] = {}
        self.confirmed: list[tuple[str, bool]] = []
        self.lines: dict[str, list[dict]] = {}
        self.node_calls: list[tuple[str, bool]] = []
        self.block = False
        self.blocked = asyncio.Event()  # set once a chat hangs (block)

    async def chat(self, customer, text, *, session=None, wait=20.0):
        if self.block:
            self.blocked.set()
            await asyncio.Event().wait()
        self.said.append((customer, text, session))
        answer, ticket = next((v for k, v in self.replies.items() if k in text), ("Thanks for your message.", None))
        return ChatReply(session=session or f"s-{len(self.said)}", episode_id=f"t-{len(self.said)}", text=answer,
                         ticket_id=ticket, ticket_stage=self.stages.get(ticket) if ticket else None)

    async def tickets(self, customer=None):
        return [{"id": t, "stage": s, "issue": "no_connection"} for t, s in self.stages.items()]

    async def ticket(self, ticket_id):
        return {"id": ticket_id, "stage": self.stages[ticket_id]}

    async def confirm(self, ticket_id, *, fixed, by="customer"):
        self.confirmed.append((ticket_id, fixed))
        self.stages[ticket_id] = "closed" if fixed else "reopened"
        return {"id": ticket_id, "stage": self.stages[ticket_id]}

    async def line(self, customer):
        if customer not in self.lines:
            raise ApiError(404, "customer_not_found", "unknown", "GET", "/line")
        return self.lines[customer]

    async def set_node_status(self, node_id, *, up, by):
        self.node_calls.append((node_id, up))
        return {"node_id": node_id, "up": up, "changed": True}


def event(kind: EventKind, at_h: float = 0.0, *, text: str | None = None, story_id: str = "r0-c0-s1",
          problem: str | None = "no_connection", fix_holds: bool = True, fault: str | None = None) -> ScheduledEvent:
    return ScheduledEvent(at_h=at_h, customer=ASHA.name, kind=kind, story=Story.LINE_FAULT, story_id=story_id,
                          seq=0, profile=ASHA, seed=1, utterance=Utterance(text) if text else None, problem=problem,
                          fault=fault, fix_holds=fix_holds)


async def play(desk, events, injector=None, speed=8.0):
    player = Player(desk, injector or WordsOnly(), SimClock(speed), wait_s=1.0)
    return player, await player.play(events)


# ---------------------------------------------------------------- reading the desk's questions


def test_asked_for_reads_the_desks_questions():
    assert asked_for(replies.ask_for(["phone"])) == ["phone"]
    assert asked_for(replies.ask_for(["has_router", "lives_in"])) == ["has_router", "lives_in"]
    opened = replies.ticket_opened("T-1", AT, "intake", "No connection", handed_to="resolver").text
    assert asked_for(opened + " " + replies.ask_for(["phone"])) == ["phone"]
    # statements and other questions ask for nothing
    assert asked_for(opened) == []
    assert asked_for(replies.confirm_fixed_request("T-1", "we restarted your router", AT, "resolver").text) == []
    assert asked_for(replies.technician_dispatched("T-1", "v-1", "Ravi Kumar", AT, AT).text) == []
    assert asked_for(replies.refuse_off_topic().text) == []
    assert asked_for(None) == []


# ---------------------------------------------------------------- reactions


async def test_a_customer_answers_what_the_desk_asks_once_in_the_same_conversation():
    desk = ScriptedDesk({"internet is down": ("I have opened ticket T-1. Could you tell me a phone number we can "
                                              "reach you on and your router's make and model?", "T-1")})
    desk.stages["T-1"] = "reported"
    _, stats = await play(desk, [event(EventKind.SAY, text="Hi, the internet is down since last night.")])
    assert len(desk.said) == 3 and stats.turns == 3
    first_session = "s-1"
    answers = desk.said[1:]
    assert all(session == first_session for _, _, session in answers)
    read = [extract(text) for _, text, _ in answers]
    assert {(f.predicate, f.object) for e in read for f in e.facts} == {("phone", "+919822012345"),
                                                                        ("has_router", "Tenda AC10")}
    assert stats.tickets == {"T-1"}


async def test_checking_a_fixed_ticket_confirms_it_or_says_it_is_still_broken():
    desk = ScriptedDesk({"internet is down": ("Opened ticket T-1.", "T-1")})
    desk.stages["T-1"] = "fixed"
    report = event(EventKind.SAY, text="Hi, the internet is down.")
    await play(desk, [report, event(EventKind.CHECK, 0.01)])
    assert extract(desk.said[-1][1]).intent.value == "confirm_fixed"
    assert desk.said[-1][2] == "s-1", "in the story's conversation"

    desk = ScriptedDesk({"internet is down": ("Opened ticket T-1.", "T-1")})
    desk.stages["T-1"] = "fixed"
    player, stats = await play(desk, [report, event(EventKind.CHECK, 0.01, fix_holds=False)], speed=8.0)
    said = [extract(t) for _, t, _ in desk.said[1:]]
    assert said[0].intent.value == "confirm_not_fixed", "the hidden repair did not hold"
    # the stand-in never moves the ticket on, so the customer looks again (with the repair holding now)
    assert said[-1].intent.value == "confirm_fixed" and stats.confirmations == 2


async def test_a_technician_visit_is_confirmed_through_the_api():
    desk = ScriptedDesk({"red": ("Opened ticket T-9.", "T-9")})
    desk.stages["T-9"] = "technician_dispatched"
    _, stats = await play(desk, [event(EventKind.SAY, text="There's a red light on the fibre box.",
                                       problem="no_signal_light"), event(EventKind.CHECK, 0.01)])
    assert desk.confirmed == [("T-9", True)] and stats.confirmations == 1


async def test_a_ticket_still_being_worked_gets_asked_about_a_few_times_then_left():
    desk = ScriptedDesk({"internet is down": ("Opened ticket T-1.", "T-1")})
    desk.stages["T-1"] = "checking_line"
    await play(desk, [event(EventKind.SAY, text="The internet is down."), event(EventKind.CHECK, 0.01)], speed=8.0)
    asks = [t for _, t, _ in desk.said if extract(t).intent.value == "ask_status"]
    assert len(asks) == MAX_CHECKS


async def test_a_check_finds_the_ticket_when_the_reply_came_too_late():
    desk = ScriptedDesk()  # the report's reply names no ticket
    desk.stages["T-7"] = "fixed"
    await play(desk, [event(EventKind.SAY, text="The internet is down."), event(EventKind.CHECK, 0.01)])
    assert extract(desk.said[-1][1]).intent.value == "confirm_fixed"


async def test_faults_are_planted_and_repaired_through_the_injector():
    desk = ScriptedDesk()
    desk.lines[ASHA.name] = [{"node_id": "pune-ont-1", "kind": "Ont", "status": "up"},
                             {"node_id": "pune-spl-1", "kind": "Splitter", "status": "up"}]
    injector = NetworkFaults(desk)
    _, stats = await play(desk, [event(EventKind.FAULT, fault="fibre_cut"), event(EventKind.REPAIR, 0.01,
                                                                                   fault="fibre_cut")], injector)
    assert desk.node_calls == [("pune-ont-1", False), ("pune-ont-1", True)]
    assert stats.faults_on_network == 1 and stats.repairs == 1


async def test_stopping_ends_the_run_at_once_and_repairs_what_was_planted():
    desk = ScriptedDesk()
    desk.lines[ASHA.name] = [{"node_id": "pune-ont-1", "kind": "Ont", "status": "up"}]
    stop = asyncio.Event()
    player = Player(desk, NetworkFaults(desk), SimClock(8.0), stop=stop, wait_s=1.0)
    events = [event(EventKind.FAULT, fault="box_dead"), event(EventKind.SAY, 0.01, text="The internet is down."),
              event(EventKind.SAY, 500.0, text="never said")]
    desk.block = True  # the chat hangs
    task = asyncio.create_task(player.play(events))
    await asyncio.wait_for(desk.blocked.wait(), 10)  # the fault is planted and the chat in flight
    stop.set()
    stats = await asyncio.wait_for(task, 10)
    assert desk.node_calls == [("pune-ont-1", False), ("pune-ont-1", True)], "nothing is left down"
    assert stats.turns == 0


# ---------------------------------------------------------------- injectors


async def test_one_node_with_two_faults_comes_up_with_the_last_repair():
    desk = ScriptedDesk()
    desk.lines = {c: [{"node_id": "pune-ont-%d" % i, "kind": "Ont"}, {"node_id": "pune-spl-1", "kind": "Splitter"}]
                  for i, c in enumerate(("a", "b"))}
    inj = NetworkFaults(desk)
    fa = await inj.inject("cabinet_down", "a")
    fb = await inj.inject("cabinet_down", "b")
    assert fa.node_id == fb.node_id == "pune-spl-1" and desk.node_calls == [("pune-spl-1", False)]
    await inj.repair(fa)
    assert desk.node_calls == [("pune-spl-1", False)]
    await inj.repair(fb)
    assert desk.node_calls == [("pune-spl-1", False), ("pune-spl-1", True)]


async def test_a_fault_with_no_node_to_mark_lives_in_words():
    desk = ScriptedDesk()
    inj = NetworkFaults(desk)
    assert (await inj.inject("box_dead", "stranger")).via == "words"  # the desk does not know them (404)
    desk.lines["known"] = []
    assert (await inj.inject("box_dead", "known")).via == "words"  # known, not connected
    assert (await inj.inject("wifi_interference", "known")).via == "words"  # in the home
    await inj.repair(InjectedFault("box_dead", "known", "words"))
    assert desk.node_calls == []
    assert (await WordsOnly().inject("fibre_cut", "x")).via == "words"
    with pytest.raises(ValueError):
        make_injector("lab", desk)
