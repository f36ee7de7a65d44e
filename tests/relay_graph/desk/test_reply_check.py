"""The honest-reply check: a reply naming a ticket, invoice, outage, fact or other record the graph
did not return for this turn is caught; what the graph returned passes; numbers that are not
identifiers (speeds, times, dates, plan names, router models) never trip it."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from relay_graph.desk.conversation import templates as replies
from relay_graph.desk.conversation.templates import Reply
from relay_graph.desk.conversation.reply_check import (
    CheckResult, allowed_from, check_reply, find_ids, honest_reply, invented_claims,
)

AT = datetime(2026, 9, 5, 10, 2, tzinfo=timezone.utc)
TICKET = "T-1A2B3C4D5E6F"  # tickets.py's own format: "T-" + 12 upper-case hex
FACT = "9f0c2d1e3b4a5c6d7e8f90a1b2c3d4e5"  # facts.py: uuid4 hex
OUTAGE = "out-3f9a0c2d11e4b5a6"  # network.py: "out-" + 16 hex


def test_an_invented_ticket_id_is_caught() -> None:
    got = check_reply(f"I have opened ticket T-9F8E7D6C5B4A for this and linked it to {TICKET}.", {TICKET})
    assert got == CheckResult(False, ["T-9F8E7D6C5B4A"])


def test_a_ticket_id_the_graph_returned_passes() -> None:
    assert check_reply(f"I have opened ticket {TICKET} for this: Slow speed on Wi-Fi, upstairs.", {TICKET}).ok


def test_ids_compare_without_case_or_trailing_punctuation() -> None:
    assert check_reply("Your ticket t-alice1. (see #T-ALICE1)", {"T-ALICE1"}).ok


@pytest.mark.parametrize("text, invented", [
    ("Ticket T-1 is being diagnosed.", "T-1"),
    ("Your ticket T-CANARY is open.", "T-CANARY"),
    ("I raised ticket 48213 for you.", "48213"),
    ("Ticket number 42 is open.", "42"),
    ("ticket #7 is open", "7"),
    ("Invoice INV-2024-0042 shows the charge.", "INV-2024-0042"),
    ("See invoice no. 7731.", "7731"),
    ("Please quote reference XK2231.", "XK2231"),
    ("Your case ID: XK-2231 is with billing.", "XK-2231"),
    ("Your complaint #99812 is logged.", "#99812"),
    ("TKT-5512 is with our team", "TKT-5512"),
    ("Outage out-0123456789abcdef affects your area.", "out-0123456789abcdef"),
    ("The outage ID A9-77 covers Koregaon Park.", "A9-77"),
    (f"I know this from fact {FACT[::-1]}.", FACT[::-1]),
    ("From episode ep_0123456789abcdef0123456789abcdef.", "ep_0123456789abcdef0123456789abcdef"),
    ("A visit visit-0a1b2c3d4e5f60718293 is booked.", "visit-0a1b2c3d4e5f60718293"),
    ("Procedure proc-aa11bb22cc33dd44ee55 worked before.", "proc-aa11bb22cc33dd44ee55"),
    ("Your record 123e4567-e89b-12d3-a456-426614174000 says so.", "123e4567-e89b-12d3-a456-426614174000"),
    ("Your account 1234567890123 is in credit.", "1234567890123"),
])
def test_every_kind_of_identifier_is_caught_when_not_returned(text: str, invented: str) -> None:
    got = check_reply(text, {TICKET, FACT, OUTAGE})
    assert not got.ok
    assert got.invented == [invented]


@pytest.mark.parametrize("text", [
    "Your plan gives you 300 Mbps; you are getting 45 Mbps on Wi-Fi.",
    "Last update 2026-09-05 10:02 UTC, about 2 hours ago.",
    "A technician will visit between 10:00 and 12:00 on the 5th.",
    "You are on Fiber 1000, with a TP-Link Archer C6 (Wi-Fi 6, 2.4 GHz and 5 GHz).",
    "Try the RT-AX55 or an AX3000 mesh; WPA2 is fine.",
    "We can reach you on +91 98765 43210.",
    "The outage started 3 hours ago and affects 120 homes.",
    "In fact 300 Mbps is what the line measures.",
    "Ticket 2 of 3 is closed.",
    "Your T-shirt size and your T-Mobile phone are not our business.",
    "Restart the router, wait 30 seconds, then check the 4 lights.",
    "",
])
def test_numbers_that_are_not_identifiers_do_not_trip_it(text: str) -> None:
    assert check_reply(text, set()) == CheckResult(True, [])


def test_several_ids_are_reported_once_each_in_order() -> None:
    text = f"Ticket T-77 and T-78 relate to {OUTAGE}; T-77 again, and invoice INV-9."
    assert find_ids(text) == ["T-77", "T-78", OUTAGE, "INV-9"]
    assert check_reply(text, {OUTAGE}).invented == ["T-77", "T-78", "INV-9"]


def test_amounts_are_checked_against_the_rows_when_values_are_given() -> None:
    values = ["Fiber 1000", "price 1499 INR per month"]
    assert check_reply("Fiber 1000 costs ₹1,499 a month.", set(), values).ok
    assert check_reply("Fiber 1000 costs ₹999 a month.", set(), values).invented == ["₹999"]
    assert check_reply("Fiber 1000 costs ₹999 a month.", set()).ok  # without values, prices are not judged


def test_an_identifier_inside_a_returned_value_is_allowed() -> None:
    values = ["TKT-5512 (the customer's reference from the old system)"]
    assert not check_reply("Your reference TKT-5512 is noted.", set()).ok
    assert check_reply("Your reference TKT-5512 is noted.", set(), values).ok


def test_allowed_ids_come_from_the_rows() -> None:
    rows = [
        {"ticket_id": "ABC", "stage": "diagnosing", "events": [{"detail": f"linked to outage {OUTAGE}"}]},
        {"fact_id": FACT, "predicate": "lives_in", "object": "Pune", "recorded_at": AT},
        replies.ticket_opened(TICKET, AT, "intake", "Slow speed"),
    ]
    ids, values = allowed_from(*rows)
    assert {"ABC", OUTAGE, FACT, TICKET} <= ids
    assert "Pune" in values and "diagnosing" in values


def test_honest_reply_keeps_a_clean_candidate_with_the_fallbacks_how_i_know() -> None:
    fallback = replies.ticket_opened(TICKET, AT, "intake", "Slow speed on Wi-Fi", handed_to="resolver")
    candidate = f"Thanks for letting us know! Ticket {TICKET} is open and our resolver is on it."
    got = honest_reply(candidate, fallback, set())  # the fallback's own ids are allowed
    assert got == Reply(candidate, fallback.how_i_know)


def test_honest_reply_throws_away_a_candidate_with_an_invented_id() -> None:
    fallback = replies.ticket_opened(TICKET, AT, "intake", "Slow speed on Wi-Fi")
    for candidate in (f"Ticket {TICKET} is open, and invoice INV-2291 is refunded.",
                      "Ticket T-000000000001 is open.",
                      f"Ticket {TICKET} is linked to outage out-aaaa1111bbbb2222."):
        assert honest_reply(candidate, fallback, {TICKET}) is fallback


def test_honest_reply_falls_back_on_an_empty_candidate() -> None:
    fallback = replies.refuse_off_topic()
    for candidate in (None, "", "   "):
        assert honest_reply(candidate, fallback, set()) is fallback


def test_honest_reply_checks_prices_when_values_are_given() -> None:
    fallback = Reply("Fiber 1000 costs 1499 INR a month.", ["plan Fiber 1000: 1499 INR"])
    assert honest_reply("Fiber 1000 is ₹1,499 per month.", fallback, set(), []).text == "Fiber 1000 is ₹1,499 per month."
    assert honest_reply("Fiber 1000 is only ₹999 this week!", fallback, set(), []) is fallback


# ---------------------------------------------------------------- times, stages, places (issue 31)

DRAFT = ("Your line tests healthy: 973 Mbps to the box. Lena Fischer is booked to visit you on Sun 6 Dec, "
         "10:00 IST, in Bengaluru. Ticket T-1 is open.")


@pytest.mark.parametrize("candidate, invented", [
    ("Lena will come on Sun 6 Dec at 10:00 IST; your line measured 973 Mbps.", []),
    ("Lena will come on Sun 6 Dec at 10:30 IST.", ["10:30"]),
    ("Lena will come on Sun 6 Dec at 4:30 pm.", ["16:30"]),
    ("Lena will come at 10:00 UTC.", ["UTC"]),
    ("Good news: the technician visited and your ticket is closed.", ["closed", "visited"]),
    ("We will see you in Bengaluru at 10:00 IST.", []),
    ("We will see you in Pune at 10:00 IST.", ["pune"]),
    ("Your speed is 973 Mbps and 2 people share it.", []),
])
def test_a_time_stage_or_place_the_rows_do_not_hold_is_invented(candidate, invented):
    assert sorted(invented_claims(candidate, [DRAFT])) == sorted(invented)


def test_a_reworded_reply_with_a_wrong_time_falls_back_to_the_graph_s_words():
    draft = Reply(DRAFT, ["technician visit v-1 for ticket T-1"])
    ids, values = allowed_from(draft)
    assert honest_reply("Lena visits at 11:00 IST tomorrow, ticket T-1.", draft, ids, values) is draft
    kept = honest_reply("Lena Fischer comes on Sun 6 Dec at 10:00 IST (ticket T-1).", draft, ids, values)
    assert kept.text.startswith("Lena Fischer comes") and kept.how_i_know == draft.how_i_know


def test_sources_are_the_how_i_know_rows_in_the_customer_s_words():
    from zoneinfo import ZoneInfo

    from relay_graph.desk.conversation.sources import sources_in_words

    how = ["fact 3f9a0c12aa3f9a0c12aa3f9a0c12aa00: lives_in = Hyderabad (recorded 2026-12-05 06:49 UTC by intake)",
           "technician visit visit-3f9a0c1 for ticket T-1: Lena Fischer, 2026-12-06 04:30 UTC to 2026-12-06 06:30 UTC",
           "ticket T-1: re-measured rd-3f9a0c12 healthy", "faq restart-router: How do I restart my router?"]
    said = sources_in_words(how, ZoneInfo("Asia/Kolkata"))
    assert said == ["lives in: Hyderabad (from your message on Sat 5 Dec)",
                    "the technician visit booked for Sun 6 Dec, 10:00 IST (Lena Fischer)",
                    "measured on your line for ticket T-1", "our help article: How do I restart my router?"]
    assert not any(find_ids(s) and not s.count("T-1") for s in said) and "UTC" not in " ".join(said)


def test_a_promise_and_a_row_on_file_are_sourced_without_ids_or_code_names():
    from zoneinfo import ZoneInfo

    from relay_graph.desk.conversation.sources import sources_in_words

    how = ["promise pr-8e55c8d75142 on ticket T-1: due 2026-12-05 18:51 UTC",
           "promise pr-1a2b3c4d5e6f on ticket T-2: due 2026-12-04 04:30 UTC, not kept",
           "fact lives_in = Bengaluru (recorded 5 Dec 2026)", "fact on_plan = Fiber 100 (superseded)",
           "visit visit-3f9a0c1: cancelled"]
    said = sources_in_words(how, ZoneInfo("Asia/Kolkata"))
    assert said == ["our promise on ticket T-1, due Sun 6 Dec, 00:21 IST",
                    "our promise on ticket T-2, due Fri 4 Dec, 10:00 IST, not kept yet",
                    "lives in: Bengaluru (recorded 5 Dec 2026)", "on plan: Fiber 100 (superseded)",
                    "the technician visit: cancelled"]
    assert find_ids("your promise pr-8e55c8d75142 is kept") == ["pr-8e55c8d75142"]  # a promise id is an id
