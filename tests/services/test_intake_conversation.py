"""Intake's conversation on a real FalkorDB, the handler called in-process: a redelivered turn
keeps one promise; a returning customer hears the last ticket's outcome; with a Groq key (httpx's
MockTransport) the LLM's wording of the catalogue's rows is kept when it names only what the graph
returned, and the template is sent when it names a plan or a price the rows do not hold."""

from __future__ import annotations

import dataclasses
from zoneinfo import ZoneInfo

import pytest

from relay_graph.desk.tickets import store as tickets
from relay_graph.lab import world
from relay_graph.desk.conversation.reads import ticket_promises
from relay_graph.desk.llm import GroqWriter
from services.intake import agent as intake_agent

from ..relay_graph.desk.llm.fakes import Clock, Groq, completion


@pytest.fixture
async def seeded(graph_client, tenant):
    await world.seed_world(graph_client, tenant, "india", max_cities=3)
    return tenant


async def test_a_redelivered_callback_turn_keeps_one_promise(gateway, intake, memory, stream_redis, graph_client, seeded):
    gw = gateway
    first = await intake_agent.answer_turn(intake, await gw.write_turn("Asha Rao", "My router is frozen.", session="s-p"))
    ticket = first.ticket.id
    n = await gw.write_turn("Asha Rao", "Can a technician call me before 10am?", session="s-p")
    said = await intake_agent.answer_turn(intake, n)
    assert said.answers == ["promise"] and ticket in said.reply.text
    again = await intake_agent.answer_turn(intake, n)
    assert again.redelivered
    [promise] = await ticket_promises(graph_client, seeded, ticket)
    due = promise.due_at.astimezone(ZoneInfo(promise.due_zone))  # the desk's India: 10:00 IST, not UTC
    assert (promise.text, due.hour, due.minute, promise.due_zone, promise.status) == (
        "A technician will call you", 10, 0, "Asia/Kolkata", "open")
    events = [e.event for e in (await tickets.get_ticket(graph_client, seeded, ticket)).timeline]
    assert events.count("promised") == 1


async def test_a_returning_customer_hears_how_the_last_ticket_ended(gateway, intake, memory, stream_redis, graph_client, seeded):
    gw = gateway
    opened = await intake_agent.answer_turn(intake, await gw.write_turn("Ravi Nair", "My wifi keeps dropping.",
                                                                         session="s-1"))
    tid = opened.ticket.id
    await tickets.set_stage(graph_client, seeded, tid, stage="fixed", agent="resolver")
    await tickets.confirm(graph_client, seeded, tid, fixed=True, by="customer")
    back = await intake_agent.answer_turn(intake, await gw.write_turn("Ravi Nair", "Hello!", session="s-2"))
    assert back.answers[0] == "welcome_back"
    assert f"Last time, ticket {tid}" in back.reply.text and "was fixed and closed" in back.reply.text
    # a later turn of the same session is no first turn
    later = await intake_agent.answer_turn(intake, await gw.write_turn("Ravi Nair", "Which plans do you have?",
                                                                        session="s-2"))
    assert later.answers == ["plans"]


def groq_writer(*said: str) -> GroqWriter:
    clock = Clock()
    return GroqWriter(["k1"], ["w1"], Groq(*[completion(s) for s in said]).transport, sleep=clock.sleep, clock=clock)


@pytest.mark.parametrize("worded, kept", [
    ("Our plans: Fiber 100 at ₹629, Fiber 300 at ₹1,099 and Fiber 1000 at ₹1,699 a month, plus GST.", True),
    ("Our plans: Fiber 100 at ₹629 and Fiber 500 at ₹899 a month, plus GST.", False),  # a plan and a price nobody has
])
async def test_with_a_key_the_llm_words_the_catalogue_rows_and_the_check_holds(gateway, intake, memory, stream_redis, seeded,
                                                                              worded, kept):
    deps = dataclasses.replace(intake, writer=groq_writer(worded))
    gw = gateway
    got = await intake_agent.answer_turn(deps, await gw.write_turn("Jaya Das", "Which plans do you have?"))
    assert got.answers == ["plans"]
    if kept:
        assert got.reply.text == worded
    else:
        assert got.reply.text.startswith("Our fibre plans in India: Fiber 100 (100 Mbps down, 50 up): ₹629 a month")
    assert any(h.startswith("plan fiber-300") for h in got.reply.how_i_know)


async def test_a_yes_to_is_it_fixed_is_a_confirmation_not_a_reading(gateway, intake, memory, stream_redis, graph_client, seeded):
    gw = gateway
    opened = await intake_agent.answer_turn(intake, await gw.write_turn("Mira Das", "My router is frozen.", session="s-c"))
    tid = opened.ticket.id
    await tickets.set_stage(graph_client, seeded, tid, stage="fixed", agent="resolver")
    got = await intake_agent.answer_turn(intake, await gw.write_turn("Mira Das", "yes, it's better now", session="s-c"))
    assert got.answers == ["confirmation"] and got.change == "closed"
    events = [e.event for e in (await tickets.get_ticket(graph_client, seeded, tid)).timeline]
    assert "customer_reading" not in events


async def test_prices_are_in_the_country_of_the_city_the_customer_lives_in(gateway, intake, memory, stream_redis, graph_client,
                                                                           tenant):
    from relay_graph.desk.catalogue import ensure_catalogue

    await ensure_catalogue(graph_client, tenant, "europe")
    intake_agent.extraction_contexts(intake).clear()  # the extractor learns the region's cities now, not within CONTEXT_TTL_S
    gw = gateway
    home = await intake_agent.answer_turn(intake, await gw.write_turn("Lena Vogel", "What do your plans cost?",
                                                                       session="s-l"))
    assert home.answers == ["plans"] and "£" in home.reply.text  # the desk's first country: the UK
    moved = await intake_agent.answer_turn(intake, await gw.write_turn(
        "Lena Vogel", "I live in Berlin now.\nWhat do your plans cost?", session="s-l"))
    assert moved.answers[0] == "plans" and "noted" in moved.answers
    assert "Our fibre plans in Germany" in moved.reply.text and "€" in moved.reply.text and "19% VAT" in moved.reply.text


@pytest.mark.parametrize("worded, kept", [
    ("A technician will call you before 10:00 IST tomorrow; the promise is on ticket {tid}.", True),
    ("A technician will call you before 10:00 UTC tomorrow; the promise is on ticket {tid}.", False),  # not their zone
    ("A technician will call you before 11:30 IST tomorrow; the promise is on ticket {tid}.", False),  # not the time held
    ("A technician visited and will call you before 10:00 IST; the promise is on ticket {tid}.", False),  # no visit
    ("Our desk in Mumbai will call you before 10:00 IST; the promise is on ticket {tid}.", False),  # a place not held
])
async def test_with_a_key_a_promise_s_rewording_keeps_the_graph_s_time_zone_stage_and_place(
        gateway, intake, memory, stream_redis, graph_client, seeded, worded, kept):
    gw = gateway
    first = await intake_agent.answer_turn(intake, await gw.write_turn("Kavya Rao", "My router is frozen.", session="s-g"))
    tid = first.ticket.id
    text = worded.format(tid=tid)
    deps = dataclasses.replace(intake, writer=groq_writer(text))
    said = await intake_agent.answer_turn(deps, await gw.write_turn("Kavya Rao", "Can a technician call me before 10am?",
                                                                     session="s-g"))
    assert said.answers == ["promise"]
    [promise] = await ticket_promises(graph_client, seeded, tid)
    assert promise.due_zone == "Asia/Kolkata"
    if kept:
        assert said.reply.text == text
    else:  # the template, worded from the promise the graph holds
        assert said.reply.text != text and tid in said.reply.text, said.reply.text
        assert "10:00" in said.reply.text and "UTC" not in said.reply.text and "visited" not in said.reply.text


async def test_a_status_is_worded_from_the_stage_the_ticket_has_when_the_reply_is_stored(
        gateway, intake, memory, stream_redis, graph_client, seeded, monkeypatch):
    gw = gateway
    opened = await intake_agent.answer_turn(intake, await gw.write_turn("Nila Rao", "My router is frozen.", session="s-r"))
    tid = opened.ticket.id
    before = await tickets.open_tickets_for(graph_client, seeded, "Nila Rao")
    assert [t.stage.value for t in before] == ["reported"]

    async def read_then_moved(client, tenant, customer):
        # what the turn read, and the resolver moves the ticket on while the turn is answered
        await tickets.set_stage(graph_client, seeded, tid, stage="fixing", agent="resolver")
        return before

    monkeypatch.setattr(intake_agent.tickets, "open_tickets_for", read_then_moved)
    again = await intake_agent.answer_turn(intake, await gw.write_turn("Nila Rao", "my router is still frozen",
                                                                       session="s-r"))
    assert "ticket_status" in again.answers, again.reply.text
    assert f"Ticket {tid} is being worked on" in again.reply.text and "waiting to be picked up" not in again.reply.text
