"""Intake on a real FalkorDB, the handler called in-process: what the desk says about a customer's
own case is true when it is said. A question about the visit or the ticket is answered from the
ticket and its booked visit (the visit's own time, in the customer's zone), never a help article; a
callback promise past its due time is owned up to in the next reply, once; a fault already known on
the customer's line is said first and the new ticket is linked to it. Phrasings are other words
than the issue's, so the capability is tested, not a sentence."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from relay_graph.desk import agent_reads as desk
from relay_graph.desk.conversation import reads as talk_reads
from relay_graph.desk.customers.zone import customer_zone, local_when
from relay_graph.desk.network import store as network
from relay_graph.desk.tickets import store as tickets
from relay_graph.lab import world
from services.intake import agent as intake_agent


@pytest.fixture
async def seeded(graph_client, tenant):
    await world.seed_world(graph_client, tenant, "india", max_cities=3)
    return tenant


async def _say(intake, gw, who, text, session):
    return await intake_agent.answer_turn(intake, await gw.write_turn(who, text, session=session))


async def _booked(intake, gw, client, tenant, who, session):
    """A customer in Bengaluru with an open ticket and a technician booked a day and a half out."""
    opened = await _say(intake, gw, who, "I live in Koramangala, Bengaluru and my internet keeps cutting out", session)
    tid = opened.ticket.id
    await tickets.set_stage(client, tenant, tid, stage="technician_dispatched", agent="resolver")
    visit = await tickets.schedule_visit(client, tenant, tid, technician="Ravi Shetty",
                                         at=opened.reply.at + timedelta(hours=37))
    return tid, visit


@pytest.mark.parametrize("asked", ["when's the engineer turning up?", "technician kab tak aayega?",
                                   "is anybody coming over tomorrow?", "koi update hai?", "any progress?"])
async def test_a_question_about_the_visit_is_answered_from_the_ticket(gateway, intake, graph_client, stream_redis,
                                                                      seeded, asked):
    tid, visit = await _booked(intake, gateway, graph_client, seeded, "Kavya Nair", "s-u")
    got = await _say(intake, gateway, "Kavya Nair", asked, "s-u")
    assert "update" in got.answers and "faq" not in got.answers and "clarify" not in got.answers
    text = got.reply.text
    zone = await customer_zone(graph_client, seeded, "Kavya Nair")
    assert zone.key == "Asia/Kolkata"
    # the visit's own day and time on the customer's clock, not when it was booked
    assert f"Ravi Shetty, is booked to visit you on {local_when(visit.at, zone)}" in text
    assert "UTC" not in text and visit.visit_id not in text and tid in text
    assert "needs a technician visit" in text  # the stage in words
    assert "technician dispatched" not in text  # no step name


async def test_a_visit_question_without_a_ticket_is_no_help_article(gateway, intake, stream_redis, seeded):
    got = await _say(intake, gateway, "Arjun Sen", "when will the technician show up?", "s-n")
    assert "faq" not in got.answers and "installation" not in got.reply.text.lower()


async def test_a_missed_callback_is_owned_up_to_once(gateway, intake, graph_client, stream_redis, seeded):
    who = "Leela Iyer"
    opened = await _say(intake, gateway, who, "I live in Koramangala, Bengaluru; the wifi is really slow", "s-p")
    tid = opened.ticket.id
    ist = ZoneInfo("Asia/Kolkata")
    due = (opened.reply.at - timedelta(hours=3)).astimezone(ist)
    promise = await talk_reads.make_promise(graph_client, seeded, tid, "A technician will call you", due,
                                            agent="intake", source="t-earlier", at=due - timedelta(hours=12))
    got = await _say(intake, gateway, who, "hello? still waiting here", "s-p")
    assert "promise_overdue" in got.answers
    text = got.reply.text
    assert f"before {local_when(due, ist)}" in text and "has not happened yet" in text and "chased" in text
    assert promise.promise_id not in text and "UTC" not in text
    steps = [e.event for e in (await tickets.get_ticket(graph_client, seeded, tid)).timeline]
    assert "promise_chased" in steps
    again = await _say(intake, gateway, who, "ok thanks", "s-p")
    assert "promise_overdue" not in again.answers  # said once


async def test_a_promise_not_yet_due_is_not_called_missed(gateway, intake, graph_client, stream_redis, seeded):
    who = "Sanjay Rao"
    opened = await _say(intake, gateway, who, "I live in Koramangala, Bengaluru; the wifi is really slow", "s-q")
    due = (opened.reply.at + timedelta(hours=3)).astimezone(ZoneInfo("Asia/Kolkata"))
    await talk_reads.make_promise(graph_client, seeded, opened.ticket.id, "A technician will call you", due,
                                  agent="intake", source="t-x", at=opened.reply.at)
    got = await _say(intake, gateway, who, "ok", "s-q")
    assert "promise_overdue" not in got.answers


async def _exchange_of(client, tenant, who):
    [hop] = [h for h in await network.customer_line(client, tenant, who) if "exchange" in h.name]
    return hop


async def test_a_node_down_on_the_line_is_said_first(gateway, intake, graph_client, stream_redis, seeded):
    who = "Rekha Pai"
    await _say(intake, gateway, who, "hi, my home is in Koramangala, Bengaluru", "s-o")
    hop = await _exchange_of(graph_client, seeded, who)
    await network.set_node_status(graph_client, seeded, hop.node_id, up=False)
    got = await _say(intake, gateway, who, "broadband is totally dead since this morning", "s-o")
    assert got.answers[0] == "outage" and "ticket_opened" in got.answers
    assert got.reply.text.startswith(f"There is a known fault at {hop.name} since")
    assert hop.node_id not in got.reply.text


async def test_an_open_outage_reaches_a_customer_placed_after_it(gateway, intake, graph_client, stream_redis, seeded):
    await _say(intake, gateway, "Gopal Rao", "I stay in Koramangala, Bengaluru", "s-a")
    hop = await _exchange_of(graph_client, seeded, "Gopal Rao")
    await network.set_node_status(graph_client, seeded, hop.node_id, up=False)
    outage = await network.open_outage(graph_client, seeded, hop.node_id, cause="fibre cut")
    # a customer placed in the same area after the outage opened: not among those it listed
    got = await _say(intake, gateway, "Hema Das", "internet not working at all, I live in Koramangala, Bengaluru", "s-b")
    assert hop.node_id in [h.node_id for h in await network.customer_line(graph_client, seeded, "Hema Das")]
    assert got.answers[0] == "outage" and "ticket_opened" in got.answers
    assert f"known fault at {hop.name}" in got.reply.text and "no need to restart" in got.reply.text
    linked = await desk.ticket_outages(graph_client, seeded, got.ticket.id)
    assert [o.outage_id for o in linked] == [outage.outage_id]


def _pinned(intake, hour_utc: int, minute: int = 0):
    """The intake with its clock at the next such UTC time of day (after every turn written so far)."""
    now = datetime.now(timezone.utc)
    at = (now + timedelta(days=1)).replace(hour=hour_utc, minute=minute, second=0, microsecond=0)
    return dataclasses.replace(intake, clock=lambda: at), at


async def test_a_time_that_suits_them_becomes_a_callback_window_on_their_clock(gateway, intake, graph_client,
                                                                               stream_redis, seeded):
    who = "Meera Kulkarni"
    opened = await _say(intake, gateway, who, "I live in Koramangala, Bengaluru; the wifi is really slow", "s-w")
    morning, _ = _pinned(intake, 6)  # 11:30 in India: 18:00 is still ahead today
    got = await _say(morning, gateway, who, "evenings after 6 suit me best for a call", "s-w")
    assert "promise" in got.answers and "clarify" not in got.answers
    [promise] = await talk_reads.ticket_promises(graph_client, seeded, opened.ticket.id)
    ist = ZoneInfo("Asia/Kolkata")
    due = promise.due_at.astimezone(ist)
    assert (due.hour, due.minute) == (20, 0) and promise.due_zone == "Asia/Kolkata"  # 18:00 plus the window
    start = due - timedelta(hours=2)
    assert f"between {local_when(start, ist)} and {local_when(due, ist)}" in got.reply.text


async def test_a_callback_time_gone_by_today_is_the_soonest_window_and_the_reply_says_so(gateway, intake, graph_client,
                                                                                         stream_redis, seeded):
    who = "Kiran Joshi"
    opened = await _say(intake, gateway, who, "I live in Indiranagar, Bengaluru; my router is frozen", "s-gone")
    evening, at = _pinned(intake, 14, 21)  # 19:51 in India: 6 pm has gone by
    got = await _say(evening, gateway, who, "can someone call me after 6 pm today?", "s-gone")
    assert "promise" in got.answers
    [promise] = await talk_reads.ticket_promises(graph_client, seeded, opened.ticket.id)
    ist = ZoneInfo("Asia/Kolkata")
    assert promise.due_at.astimezone(ist) == (at + timedelta(hours=2)).astimezone(ist)  # 21:51, today, not tomorrow
    assert "gone by today" in got.reply.text and f"before {local_when(promise.due_at, ist)}" in got.reply.text


async def test_a_call_asked_for_with_no_open_ticket_is_answered_not_dropped(gateway, intake, graph_client,
                                                                            stream_redis, seeded):
    got = await _say(intake, gateway, "Tara Bose", "could someone ring me back by 5pm?", "s-none")
    assert "no_tickets" in got.answers and "no open ticket" in got.reply.text
    assert await tickets.open_tickets_for(graph_client, seeded, "Tara Bose") == []  # nothing promised, nothing opened
