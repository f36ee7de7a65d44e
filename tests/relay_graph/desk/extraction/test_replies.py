"""Templated replies: built only from graph values, saying how they know, never asking twice."""

from __future__ import annotations

import itertools
import re
from datetime import datetime, timedelta, timezone

import pytest

from relay_graph.runtime.errors import InvalidInput
from relay_graph.desk.conversation import templates as replies
from relay_graph.desk.conversation.templates import ASK_WORDING, Reply, ask_for, missing_info
from relay_graph.memory.models import FactState, FactView

AT = datetime(2026, 9, 5, 10, 2, tzinfo=timezone.utc)
ID = re.compile(r"\b(?:T|OUT|V|F)-\d+\b")


def fact(fid: str, predicate: str, obj: str, state: FactState = FactState.CURRENT) -> FactView:
    return FactView(fact_id=fid, subject="alice rao", predicate=predicate, object=obj, valid_from=AT, valid_to=None,
                    recorded_at=AT, expired_at=None, asserted_by="intake", state=state)


ON_FILE = [fact("F-1", "name", "Alice Rao"), fact("F-2", "lives_in", "Pune"), fact("F-3", "on_plan", "Fiber 300"),
           fact("F-4", "has_router", "Nokia G-140W-C"), fact("F-5", "prefers_contact", "email")]
NEEDED = ["name", "lives_in", "on_plan", "has_router", "phone", "prefers_contact"]


def assert_ids_are_sourced(reply: Reply) -> None:
    """A reply names no id that its how_i_know does not account for."""
    assert isinstance(reply, tuple) and isinstance(reply.text, str) and reply.text
    sources = " ".join(reply.how_i_know)
    for found in ID.findall(reply.text):
        assert found in sources, f"{found} is in the reply but not in how_i_know: {reply}"


def test_missing_info_returns_only_what_is_not_on_file_in_order() -> None:
    known = {"name": "Alice Rao", "lives_in": "Pune", "phone": "  ", "email": None}
    assert missing_info(known, ["phone", "name", "email", "lives_in", "on_plan", "phone"]) == ["phone", "email", "on_plan"]
    assert missing_info(known, []) == []
    assert missing_info({}, ["name"]) == ["name"]


def test_ask_for_words_the_question() -> None:
    assert ask_for([]) == ""
    assert ask_for(["lives_in"]) == "Could you tell me the city you live in?"
    assert ask_for(["name", "phone", "email"]) == (
        "Could you tell me your name, a phone number we can reach you on and your email address?")
    assert "favourite colour" in ask_for(["favourite_colour"])  # unknown keys are still asked plainly


# every subset of what we know, against everything we need: the greeting never asks for a known thing
@pytest.mark.parametrize("known_count", range(len(ON_FILE) + 1))
def test_greeting_never_asks_for_what_is_on_file(known_count: int) -> None:
    for on_file in itertools.combinations(ON_FILE, known_count):
        reply = replies.greeting(list(on_file), NEEDED)
        known = {f.predicate for f in on_file}
        for key in NEEDED:
            if key in known:
                assert ASK_WORDING[key] not in reply.text
            else:
                assert ASK_WORDING[key] in reply.text
        assert_ids_are_sourced(reply)


def test_greeting_by_name_says_where_the_name_came_from() -> None:
    reply = replies.greeting(ON_FILE, ["name", "lives_in"])
    assert reply.text == "Hello Alice Rao! How can I help you today?"
    assert reply.how_i_know == ["fact F-1: name = Alice Rao (recorded 2026-09-05 10:02 UTC by intake)",
                                "fact F-2: lives_in = Pune (recorded 2026-09-05 10:02 UTC by intake)"]


def test_greeting_ignores_facts_that_are_no_longer_current() -> None:
    old = [fact("F-9", "lives_in", "Delhi", FactState.RETIRED)]
    reply = replies.greeting(old, ["lives_in"])
    assert ASK_WORDING["lives_in"] in reply.text and "Delhi" not in reply.text
    assert reply.how_i_know == []


def test_acknowledge_names_what_was_learnt_and_asks_only_for_the_rest() -> None:
    learnt = [fact("F-10", "lives_in", "Mumbai"), fact("F-11", "phone", "9876543210")]
    ended = [fact("F-2", "lives_in", "Pune", FactState.RETIRED)]
    reply = replies.acknowledge(learnt, ended, on_file=ON_FILE[:1], needed=NEEDED)
    assert "you live in Mumbai" in reply.text and "you no longer live in Pune" in reply.text
    assert "we can reach you on 9876543210" in reply.text
    for key in ("name", "lives_in", "phone"):
        assert ASK_WORDING[key] not in reply.text
    for key in ("on_plan", "has_router", "prefers_contact"):
        assert ASK_WORDING[key] in reply.text
    assert [line.split(":")[0] for line in reply.how_i_know] == ["fact F-10", "fact F-11", "fact F-2"]
    assert_ids_are_sourced(reply)


def test_acknowledge_asks_again_for_what_was_just_ended() -> None:
    ended = [fact("F-2", "lives_in", "Pune", FactState.RETIRED)]
    reply = replies.acknowledge([], ended, on_file=ON_FILE, needed=["lives_in"])
    assert ASK_WORDING["lives_in"] in reply.text


def test_acknowledge_with_nothing_new_and_nothing_missing() -> None:
    reply = replies.acknowledge([], on_file=ON_FILE, needed=["name"])
    assert reply == Reply("Thanks, I have everything I need for now.", [])


def test_ticket_opened_and_handed_to_the_resolver() -> None:
    reply = replies.ticket_opened("T-123", AT, "intake", "Slow speed on Wi-Fi, upstairs", handed_to="resolver",
                                  handed_at=AT)
    assert "T-123" in reply.text and "resolver" in reply.text and "Slow speed on Wi-Fi, upstairs" in reply.text
    assert reply.how_i_know == ["ticket T-123 (opened 2026-09-05 10:02 UTC by intake)",
                                "handoff of ticket T-123 to resolver at 2026-09-05 10:02 UTC"]
    assert_ids_are_sourced(reply)


def test_ticket_opened_without_a_handoff_claims_none() -> None:
    reply = replies.ticket_opened("T-124", AT, "intake", "Charged twice")
    assert "resolver" not in reply.text and len(reply.how_i_know) == 1


@pytest.mark.parametrize("stage", sorted(replies.STAGE_WORDING))
def test_every_known_stage_has_customer_wording(stage: str) -> None:
    reply = replies.status_update("T-123", stage, AT, owner="resolver")
    assert reply.text.startswith("Ticket T-123 ") and "{by}" not in reply.text and "is at the stage" not in reply.text
    assert reply.how_i_know == [f"ticket T-123: stage {stage} (updated 2026-09-05 10:02 UTC, owner resolver)"]


def test_an_unknown_stage_is_still_reported_in_its_own_words() -> None:
    reply = replies.status_update("T-123", "waiting_for_parts", AT, latest="ONT replacement ordered")
    assert "waiting for parts" in reply.text and "Latest: ONT replacement ordered." in reply.text
    assert reply.how_i_know == ["ticket T-123: stage waiting_for_parts (updated 2026-09-05 10:02 UTC)"]


def test_fixed_confirm_request_and_the_answers() -> None:
    ask = replies.confirm_fixed_request("T-123", "we moved your Wi-Fi to a clearer channel", AT, "resolver")
    assert "yes or no" in ask.text and ask.how_i_know[0].startswith("ticket T-123: fix")
    yes = replies.confirmation_received("T-123", True, "closed", AT)
    no = replies.confirmation_received("T-123", False, "reopened", AT)
    assert "closed" in yes.text and "reopened" in no.text
    for r in (ask, yes, no):
        assert_ids_are_sourced(r)


def test_technician_dispatch_names_the_visit_and_window() -> None:
    reply = replies.technician_dispatched("T-123", "V-9", "Ravi K", AT, AT + timedelta(hours=2))
    assert "Ravi K" in reply.text and "2026-09-05 10:02 UTC" in reply.text and "within 2 hours" in reply.text
    assert "V-9" not in reply.text and "V-9" in reply.how_i_know[0]  # a visit id is for the staff
    assert_ids_are_sourced(reply)
    with pytest.raises(InvalidInput):
        replies.technician_dispatched("T-123", "V-9", "Ravi K", AT, AT - timedelta(hours=1))


def test_outage_notice_with_eta_and_ticket() -> None:
    reply = replies.outage_notice("OUT-7", "Koregaon Park", AT, cause="fibre cut", eta=AT + timedelta(hours=4),
                                  ticket_id="T-123")
    assert "Koregaon Park" in reply.text and "fibre cut" not in reply.text and "2026-09-05 14:02 UTC" in reply.text
    assert reply.how_i_know == ["outage OUT-7 on Koregaon Park (opened 2026-09-05 10:02 UTC): fibre cut",
                                "ticket T-123 linked to outage OUT-7"]
    plain = replies.outage_notice("OUT-7", "Koregaon Park", AT)
    assert "expects" not in plain.text and "ticket" not in plain.text


def test_an_outage_of_a_home_box_is_your_home_box() -> None:
    """A home box's node name carries its customer's id: whoever words the notice, it is not said."""
    reply = replies.outage_notice("OUT-8", "c-c714b63cca862f4d home box", AT)
    assert "known fault at your home box" in reply.text and "c-c714" not in reply.text


def test_refusals_reveal_nothing_and_cite_nothing() -> None:
    for reply in (replies.refuse_other_customer(), replies.refuse_off_topic()):
        assert reply.how_i_know == []
        assert not ID.search(reply.text) and not re.search(r"\d", reply.text)
    assert "another customer" in replies.refuse_other_customer().text


@pytest.mark.parametrize("bad", ["", "   ", None, 42])
def test_replies_refuse_missing_ids(bad) -> None:
    with pytest.raises(InvalidInput):
        replies.ticket_opened(bad, AT, "intake", "Slow speed")
    with pytest.raises(InvalidInput):
        replies.status_update(bad, "open", AT)


def test_times_print_in_utc_whatever_zone_they_come_in() -> None:
    ist = timezone(timedelta(hours=5, minutes=30))
    assert replies.when(datetime(2026, 9, 5, 15, 32, tzinfo=ist)) == "2026-09-05 10:02 UTC"
    assert replies.when(datetime(2026, 9, 5, 10, 2)) == "2026-09-05 10:02 UTC"
