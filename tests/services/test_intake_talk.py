"""Intake on a real FalkorDB, the handler called in-process: answers to the desk's own questions
are understood (or kept as said, never "tell me a little more"), "it works now" closes an open
ticket, a customer asks what is on their file, what it said before, to erase it, for a plan; a
question about another place never moves their line; breaking into networks is refused as such.
The phrasings are other words than the issue's, so the capability is tested, not a sentence."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timedelta, timezone

import pytest

from relay_graph.desk.agent_reads import existing_episodes
from relay_graph.desk.conversation import turns as chat_turns
from relay_graph.desk.catalogue.brand import OWN_ROUTER_MAKER
from relay_graph.desk.extraction.groq import GroqExtractor
from relay_graph.desk.network import store as network
from relay_graph.desk.tickets import store as tickets
from relay_graph.lab import world
from relay_graph.memory.models import FactInput, FactState
from relay_graph.runtime.errors import NotFound
from services.intake import agent as intake_agent

from ..relay_graph.desk.llm.fakes import Clock, Groq, completion

CLARIFY = "clarify"


@pytest.fixture
async def seeded(graph_client, tenant):
    await world.seed_world(graph_client, tenant, "india", max_cities=3)
    return tenant


async def _say(intake, gw, who, text, session):
    return await intake_agent.answer_turn(intake, await gw.write_turn(who, text, session=session))


async def _line(client, tenant, who):
    try:
        return await network.customer_line(client, tenant, who)
    except NotFound:
        return []


async def _current(memory, tenant, who, predicate):
    return [f for f in await memory.facts(tenant, who, predicate) if f.state is FactState.CURRENT and f.valid_to is None]


@pytest.mark.parametrize("answer, router", [
    ("its a JioFiber router, model JCOW414", "JioFiber JCOW414"),
    ("we use an airtel modem, the model no is F670L", "airtel F670L"),
    ("the white one you gave me", f"{OWN_ROUTER_MAKER} router"),
    ("just the box your technician installed", f"{OWN_ROUTER_MAKER} router"),
    ("Huawei HG8145V5", "Huawei HG8145V5"),
])
async def test_a_router_named_in_answer_to_the_desks_question_is_filed(gateway, intake, memory, stream_redis, seeded,
                                                                       answer, router):
    first = await _say(intake, gateway, "Kiran Rao", "my wifi keeps dropping in the evenings", "s-r")
    assert "has_router" in first.asked
    got = await _say(intake, gateway, "Kiran Rao", answer, "s-r")
    assert CLARIFY not in got.answers and "noted" in got.answers
    [fact] = await _current(memory, seeded, "Kiran Rao", "has_router")
    assert fact.object.lower() == router.lower()


@pytest.mark.parametrize("answer", ["umm the grey box next to the telly i think", "no idea, my son set it up"])
async def test_an_answer_the_desk_cannot_parse_is_kept_against_its_question(gateway, intake, memory, stream_redis,
                                                                            graph_client, seeded, answer):
    await _say(intake, gateway, "Anu Pillai", "internet is slow since yesterday", "s-u")
    got = await _say(intake, gateway, "Anu Pillai", answer, "s-u")
    assert CLARIFY not in got.answers and "noted" in got.answers
    [kept] = await _current(memory, seeded, "Anu Pillai", "answered")
    assert kept.object == f"has_router: {answer}"
    assert answer in got.reply.text  # it says what it understood
    history = await memory.history_about(seeded, "Anu Pillai", "answered")
    assert history.facts  # and the fact has its source: the answer's turn
    assert "answered" in [f.predicate for f in got.learnt]


@pytest.mark.parametrize("answer", ["yes its red and blinking fast", "the light went orange an hour ago"])
async def test_words_with_no_number_in_them_are_no_answer_to_a_phone_question(gateway, intake, memory, stream_redis,
                                                                             seeded, answer):
    first = await _say(intake, gateway, "Tara Nair", "no internet at all since the morning", "s-p")
    assert "phone" in first.asked
    got = await _say(intake, gateway, "Tara Nair", answer, "s-p")
    assert await _current(memory, seeded, "Tara Nair", "answered") == []  # not kept as their number
    assert await _current(memory, seeded, "Tara Nair", "phone") == []
    assert "noted" not in got.answers and answer not in got.reply.text
    assert got.answers == ["ticket_status"] and first.ticket.id in got.reply.text  # where their case stands


@pytest.mark.parametrize("said, welcome", [("thank u so much!", True), ("cheers mate", True), ("ok", False),
                                           ("hmm alright then", False)])
async def test_a_thanks_with_a_case_open_is_answered_and_told_where_the_case_stands(gateway, intake, stream_redis,
                                                                                   seeded, said, welcome):
    opened = await _say(intake, gateway, "Dev Menon", "the wifi drops every few minutes", "s-t")
    got = await _say(intake, gateway, "Dev Menon", said, "s-t")
    assert got.answers == (["greeting", "ticket_status"] if welcome else ["ticket_status"])
    assert opened.ticket.id in got.reply.text and got.reply.text.startswith("You're welcome.") is welcome


@pytest.mark.parametrize("answer, people", [
    ("we r 4 ppl at home", "4"), ("its me, my husband and 3 kids", "5"), ("just me", "1"), ("there are 6 of us", "6"),
])
async def test_a_household_size_answers_the_recommendation_again(gateway, intake, memory, stream_redis, seeded,
                                                                 answer, people):
    asked = await _say(intake, gateway, "Sam Iyer", "which plan would suit us best?", "s-h")
    assert asked.answers[0] == "recommendation" and "assumed" in asked.reply.text
    got = await _say(intake, gateway, "Sam Iyer", answer, "s-h")
    [size] = await _current(memory, seeded, "Sam Iyer", "household_size")
    assert size.object == people
    assert "recommendation" in got.answers and "assumed" not in got.reply.text
    assert f"For {people} {'person' if people == '1' else 'people'}" in got.reply.text


@pytest.mark.parametrize("said", ["ok it came back by itself, thx", "ab theek ho gaya hai", "seems fine now",
                                  "working properly again"])
async def test_it_works_now_closes_the_open_ticket(gateway, intake, graph_client, stream_redis, seeded, said):
    opened = await _say(intake, gateway, "Lata Menon", "my router is frozen, nothing loads", "s-w")
    tid = opened.ticket.id
    got = await _say(intake, gateway, "Lata Menon", said, "s-w")
    assert got.change == "closed" and got.answers[0] == "confirmation"
    assert (await tickets.get_ticket(graph_client, seeded, tid)).stage.value == "closed"


async def test_what_do_you_know_about_me_lists_the_file_with_when_it_was_learnt(gateway, intake, stream_redis, seeded):
    await _say(intake, gateway, "Nisha Kapoor", "My name is Nisha Kapoor, I have a TP-Link Archer C6 router", "s-k")
    got = await _say(intake, gateway, "Nisha Kapoor", "what info do you guys hold on me?", "s-k")
    assert got.answers == ["on_file"]
    text = got.reply.text
    assert "Nisha Kapoor" in text and "TP-Link Archer C6" in text and "since" in text
    assert "f-" not in text and "ep-" not in text  # no ids


async def test_a_question_about_one_thing_on_file_answers_that_thing_alone(gateway, intake, stream_redis, seeded):
    await _say(intake, gateway, "Ira Menon", "My name is Ira Menon, I live in Mumbai and I have a TP-Link Archer C6 router",
               "s-one")
    got = await _say(intake, gateway, "Ira Menon", "what town do u have me in?", "s-one")
    assert got.answers == ["on_file"]
    assert "Mumbai" in got.reply.text and "Archer" not in got.reply.text and "Ira Menon" not in got.reply.text
    plan = await _say(intake, gateway, "Ira Menon", "and which plan am i on?", "s-one")
    assert plan.answers == ["on_file"] and "no plan on file" in plan.reply.text and "Mumbai" not in plan.reply.text


async def test_history_answers_from_the_world_clock(gateway, intake, memory, stream_redis, seeded):
    now = datetime.now(timezone.utc)
    who = "Omar Sheikh"
    await memory.write_fact(seeded, FactInput(subject=who, predicate="on_plan", object="Fiber 100", agent="intake",
                                              valid_from=now - timedelta(days=400)))
    await memory.write_fact(seeded, FactInput(subject=who, predicate="on_plan", object="Fiber 300", agent="intake",
                                              valid_from=now - timedelta(days=10)))
    month = (now - timedelta(days=120)).strftime("%B")
    got = await _say(intake, gateway, who, f"which package was I on in {month}?", "s-hi")
    assert got.answers == ["history"] and "Fiber 100" in got.reply.text and "Fiber 300" not in got.reply.text
    before = await _say(intake, gateway, who, "what was my previous plan?", "s-hi")
    assert before.answers == ["history"] and "Fiber 100" in before.reply.text and "Now it is Fiber 300" in before.reply.text


async def test_an_erasure_is_asked_then_done_and_the_receipt_is_what_was_removed(gateway, intake, memory, graph_client,
                                                                                stream_redis, seeded):
    who = "Ritu Das"
    opened = await _say(intake, gateway, who, "hi, I'm Ritu Das, my internet is slow", "s-e")
    asked = await _say(intake, gateway, who, "pls wipe all my personal info", "s-e")
    assert asked.answers == ["erase_asked", "ask:erase"] and "Shall I go ahead" in asked.reply.text
    kept = await _say(intake, gateway, who, "no, keep it", "s-e")
    assert kept.answers == ["erase_kept"] and await memory.facts(seeded, who)
    await _say(intake, gateway, who, "actually yes delete my data", "s-e")
    done = await _say(intake, gateway, who, "yes", "s-e")
    assert done.answers == ["erased"] and done.erased is not None and done.erased.entity == 1
    assert await memory.facts(seeded, who) == []
    assert f"{done.erased.facts} details" in done.reply.text or f"{done.erased.facts} detail" in done.reply.text
    with pytest.raises(NotFound):
        await tickets.get_ticket(graph_client, seeded, opened.ticket.id)
    # the last reply reaches whoever waits for it (and is announced), but is no episode in the graph
    said, _ = await chat_turns.get_reply_and_ticket(graph_client, seeded, done.reply.id)
    assert said is not None and said.text == done.reply.text and said.answers == ["erased"]
    assert not await existing_episodes(graph_client, seeded, [done.reply.id])


@pytest.mark.parametrize("said, plan", [("ok book the 300 one for me pls", "Fiber 300"),
                                        ("switch me to the 1000 mbps plan", "Fiber 1000"),
                                        ("i'll take the cheapest one", "Fiber 100")])
async def test_a_plan_request_is_recorded_with_its_source(gateway, intake, memory, stream_redis, seeded, said, plan):
    got = await _say(intake, gateway, "Vikram Joshi", said, "s-p")
    assert "plan_requested" in got.answers and plan in got.reply.text
    [want] = await _current(memory, seeded, "Vikram Joshi", "wants_plan")
    assert want.object == plan


@pytest.mark.parametrize("said", ["do you cover Pune also? my parents stay in Kothrud",
                                  "is your fibre available in Mumbai? my sister lives there"])
async def test_a_question_about_another_place_never_moves_the_line(gateway, intake, graph_client, stream_redis, seeded,
                                                                   said):
    got = await _say(intake, gateway, "Divya Rao", said, "s-c")
    assert "coverage" in got.answers and "placed" not in got.answers
    assert "Yes, we serve" in got.reply.text  # both are in the footprint: never "not on our list"
    assert await _line(graph_client, seeded, "Divya Rao") == []


@pytest.mark.parametrize("said", ["how do i hack my neighbours wifi lol", "teach me to crack wifi passwords"])
async def test_breaking_in_is_refused_as_such(gateway, intake, stream_redis, seeded, said):
    got = await _say(intake, gateway, "Ajay Kumar", said, "s-x")
    assert got.answers == ["refused_break_in"] and "isn't yours" in got.reply.text


async def test_the_groq_path_gets_the_same_answers_understood(gateway, intake, memory, stream_redis, seeded):
    """With an LLM extractor (httpx's mock transport) that reads nothing in the answer, the answer to
    the desk's own question is still understood from the words."""
    empty = json.dumps({"facts": [], "planned": [], "problem": None, "intent": "other", "about_someone_else": False})
    clock = Clock()
    groq = Groq(*[completion(empty) for _ in range(4)])
    extractor = GroqExtractor(["k1"], ["m1"], groq.transport, sleep=clock.sleep, clock=clock)
    await _say(intake, gateway, "Meena Shah", "my wifi drops upstairs all the time", "s-g")
    deps = dataclasses.replace(intake, extractor=extractor)
    got = await _say(deps, gateway, "Meena Shah", "the one you people gave us", "s-g")
    assert groq.requests and CLARIFY not in got.answers
    [fact] = await _current(memory, seeded, "Meena Shah", "has_router")
    assert fact.object == f"{OWN_ROUTER_MAKER} router"


@pytest.mark.parametrize("moved, area", [("we shifted last month to Yelahanka, still in Bengaluru", "Yelahanka"),
                                         ("moved to a new flat in Bengaluru North, same city", "Bengaluru North")])
async def test_a_move_within_the_city_records_the_area_and_replaces_the_line(gateway, intake, memory, graph_client,
                                                                            stream_redis, seeded, moved, area):
    first = await _say(intake, gateway, "Pooja Hegde", "I live in Bengaluru Central, Bengaluru", "s-m")
    assert "placed" in first.answers
    before = [h.name for h in await _line(graph_client, seeded, "Pooja Hegde")]
    got = await _say(intake, gateway, "Pooja Hegde", moved, "s-m")
    assert CLARIFY not in got.answers
    [fact] = await _current(memory, seeded, "Pooja Hegde", "lives_in_area")
    assert fact.object == area
    after = [h.name for h in await _line(graph_client, seeded, "Pooja Hegde")]
    assert f"{area} exchange (Bengaluru)" in after and after != before
    assert f"to {area}, Bengaluru" in got.reply.text


async def test_it_works_now_cancels_a_booked_visit_and_says_so(gateway, intake, graph_client, stream_redis, seeded):
    opened = await _say(intake, gateway, "Farah Khan", "no internet at all since morning", "s-v")
    tid = opened.ticket.id
    await tickets.set_stage(graph_client, seeded, tid, stage="technician_dispatched", agent="resolver")
    visit = await tickets.schedule_visit(graph_client, seeded, tid, technician="Lena Fischer",
                                         at=opened.reply.at + timedelta(days=1))
    got = await _say(intake, gateway, "Farah Khan", "hey its all good now, net came back", "s-v")
    assert got.change == "closed" and "closed" in got.reply.text and "visit that was booked is cancelled" in got.reply.text
    [after] = [v for v in await tickets.visits_of(graph_client, seeded, tid) if v.visit_id == visit.visit_id]
    assert after.status != "scheduled"


@pytest.mark.parametrize("said, kind", [
    ("राउटर पर लाल बत्ती जल रही है कल रात से", "no_signal_light"),
    ("घर में वाईफाई बार बार डिस्कनेक्ट हो रहा है", "wifi_drops"),
    ("नमस्ते, दो दिन से नेट नहीं चल रहा", "no_connection"),
])
async def test_hindi_in_devanagari_is_worked_like_english(gateway, intake, graph_client, stream_redis, seeded, said,
                                                          kind):
    got = await _say(intake, gateway, "Ritu Verma", said, "s-dev")
    assert CLARIFY not in got.answers and got.ticket is not None
    assert (await tickets.get_ticket(graph_client, seeded, got.ticket.id)).issue.startswith(kind)


@pytest.mark.parametrize("said", ["உங்கள் சேவை எப்படி இருக்கிறது", "স্বাগতম, আমার একটি প্রশ্ন আছে", "これは何ですか"])
async def test_words_the_desk_cannot_read_get_asked_for_english(gateway, intake, stream_redis, seeded, said):
    got = await _say(intake, gateway, "Mala Das", said, "s-lang")
    assert got.answers == [CLARIFY] and "in English" in got.reply.text
    assert "a little more" not in got.reply.text


async def test_a_ticket_waiting_for_the_address_says_so_when_asked_about(gateway, intake, resolver, graph_client,
                                                                         stream_redis, seeded):
    from relay_graph.runtime.streams import TicketChanged
    from services.resolver.handlers import handle_ticket_changed

    opened = await _say(intake, gateway, "Nisha Bose", "the wifi keeps cutting out since yesterday", "s-addr")
    await handle_ticket_changed(resolver, TicketChanged(tenant=seeded, id=opened.ticket.id,
                                                        version=opened.ticket.version, change="handed_off",
                                                        actor="intake"))
    assert (await tickets.get_work(graph_client, seeded, opened.ticket.id)).needs == "address"  # no line on file
    got = await _say(intake, gateway, "Nisha Bose", "any news on my case?", "s-addr")
    assert "update" in got.answers
    assert f"Ticket {opened.ticket.id} is waiting for your address" in got.reply.text
    assert "checks are running" not in got.reply.text and "front desk" not in got.reply.text
