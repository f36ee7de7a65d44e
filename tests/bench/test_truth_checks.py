"""The truth auditor's sentence checks (bench.truth_checks) on fixed sentences: pure, no stack."""

from __future__ import annotations

from datetime import datetime, timezone

from bench import truth_checks as tc
from bench.truth_checks import Moment, check_sentence

SENT = datetime(2026, 12, 5, 6, 0, tzinfo=timezone.utc)  # 11:30 in India
VISIT = datetime(2026, 12, 6, 4, 30, tzinfo=timezone.utc)  # 10:00 in India, Dec 6
INDIA = Moment(at=SENT, zone="Asia/Kolkata", times=(VISIT,), stages=frozenset({"technician_dispatched"}),
               has_ticket=True, own_places=frozenset({"hyderabad"}))


def rules(sentence: str, moment: Moment = INDIA) -> list[str]:
    return [f.rule for f in tc.check_sentence(sentence, moment)]


def test_a_plain_sentence_in_the_customers_local_time_passes():
    assert rules("A technician will come on 6 December at 10:00, or else at 14:00.") == ["time"]  # 14:00: not on file
    assert rules("A technician will come on 6 December at 10:00.") == []
    assert rules("Your technician is booked for tomorrow at 10 AM.") == []


def test_ids_of_readings_actions_visits_nodes_and_facts_fail():
    for sentence in ("I measured your line (rd-0123456789abcdef).", "Action act-0123456789abcdef restarted the box.",
                     "Visit visit-0123456789abcdef0123 is booked.", "Your line goes through hub-ahmedabad.",
                     "How I know: 9f86d081884c7d659a2feaa0c55ad015.", "Problem: slow_speed."):
        assert rules(sentence) == ["ids"], sentence


def test_a_ticket_number_and_an_email_are_not_internal_ids():
    assert rules("Ticket T-1A2B3C4D5E6F is with our team; write to help@example.com.") == []


def test_utc_and_lab_time_are_not_said_to_a_customer():
    assert "utc" in rules("A technician will call you before 2026-12-06 04:30 UTC.")
    assert rules("Measured at lab time.") == ["ids"]


def test_a_time_on_file_in_utc_but_not_local_fails_and_says_so():
    failures = tc.check_sentence("The visit is at 04:30.", INDIA)
    assert [f.rule for f in failures] == ["time"] and "UTC" in failures[0].detail


def test_a_time_for_a_customer_whose_zone_is_unknown_fails():
    assert rules("We will call before 10:00.", Moment(at=SENT, times=(VISIT,))) == ["time"]


def test_numbers_that_are_not_times_are_left_alone():
    assert rules("Your line tests healthy: 973 Mbps to the box, 12 ms ping, for 4 people.") == []


def test_a_stage_named_must_be_the_tickets_stage_at_that_moment():
    assert rules("A technician is booked to look at it.") == []
    assert rules("Ticket T-1 is now closed.") == ["stage"]
    assert rules("Ticket T-1 is now closed.", Moment(at=SENT, stages=frozenset({"closed"}), has_ticket=True)) == []
    assert rules("Your ticket is now closed.", Moment(at=SENT)) == ["stage"]  # no ticket at all


def test_visited_only_once_a_visit_is_done():
    assert rules("A technician visited the home and checked the box.") == ["visit"]
    done = Moment(at=SENT, zone="Asia/Kolkata", visit_done=True, has_ticket=True)
    assert rules("A technician visited the home and checked the box.", done) == []


def test_a_city_must_be_the_customers_or_one_they_asked_about():
    assert rules("Your line in Hyderabad tests healthy.") == []
    assert rules("Your line in Pune tests healthy.") == ["place"]
    asked = Moment(at=SENT, own_places=frozenset({"hyderabad"}), named_places=frozenset({"pune"}))
    assert rules("Sorry, Pune is not on our list yet.", asked) == []
    coverage = Moment(at=SENT, coverage_question=True)
    assert rules("We serve Mumbai, Pune and Chennai.", coverage) == []


def test_places_are_read_from_a_customers_words_whatever_the_case():
    assert tc.known_place("do u cover pune? parents stay in kothrud") >= {"pune"}
    assert tc.zone_of_city("Bengaluru") == "Asia/Kolkata"
    assert tc.zone_of_city("Pune Central, Pune") == "Asia/Kolkata"
    assert tc.zone_of_city("Atlantis") is None


def test_a_reply_is_checked_sentence_by_sentence():
    checked = tc.check_reply("Your ticket is booked.\nA technician visited at 10:00. It went through core-1.", INDIA)
    assert checked.sentences == 3
    assert sorted(f.rule for f in checked.failures) == ["ids", "visit"]


def test_what_the_simulator_run_turned_up_is_caught():
    # a customer's id inside a node's name, a welcome back naming a stage the ticket has left
    assert rules("There is a known outage affecting c-c714b63cca862f4d home box.") == ["ids"]
    closed = Moment(at=SENT, stages=frozenset({"closed"}), has_ticket=True)
    assert rules("Last time, ticket T-1 (Slow speed) has a technician visit booked.", closed) == ["stage"]
    assert rules("Last time, ticket T-1 (Slow speed) was fixed and closed.", closed) == []
    assert rules("Last time, ticket T-1 (Slow speed) was fixed and closed.", INDIA) == ["stage"]


def test_a_stage_is_judged_against_the_ticket_the_sentence_names():
    two = Moment(at=SENT, stages=frozenset({"reported"}), has_ticket=True,
                 ticket_stages={"T-OLD1": "closed", "T-NEW2": "reported"})
    assert rules("Last time, ticket T-OLD1 was fixed and closed.", two) == []
    assert rules("Ticket T-NEW2 is now closed.", two) == ["stage"]


def test_a_booked_visit_says_a_technician_is_booked_and_ids_are_no_places():
    booked = Moment(at=SENT, stages=frozenset({"reported"}), has_ticket=True, ticket_stages={"T-A1": "reported"},
                    booked=frozenset({"T-A1"}))
    assert rules("Last time, ticket T-A1 has a technician visit booked.", booked) == []
    assert rules("Last time, ticket T-A1 has a technician visit booked.",
                 Moment(at=SENT, has_ticket=True, ticket_stages={"T-A1": "reported"})) == ["stage"]
    assert rules("I have opened ticket T-6EDDE03EE114 for this: Charged twice.") == []


def test_gmt_is_a_customers_own_zone_where_and_when_it_is():
    winter, summer = datetime(2026, 12, 5, 12, tzinfo=timezone.utc), datetime(2026, 7, 5, 12, tzinfo=timezone.utc)
    said = "The technician comes on Mon 7 Dec, 10:00 GMT."
    assert not [f for f in check_sentence(said, Moment(at=winter, zone="Europe/London")) if f.rule == "utc"]
    assert [f for f in check_sentence(said, Moment(at=summer, zone="Europe/London")) if f.rule == "utc"]  # BST then
    assert [f for f in check_sentence(said, Moment(at=winter, zone="Asia/Kolkata")) if f.rule == "utc"]


def test_a_word_of_the_customers_own_name_is_no_place():
    said = "Welcome back, Vikram Bose!"
    now = datetime(2026, 12, 5, 12, tzinfo=timezone.utc)
    assert [f for f in check_sentence(said, Moment(at=now)) if f.rule == "place"]  # Bose is a city's name too
    assert not [f for f in check_sentence(said, Moment(at=now, own_names=frozenset({"vikram", "bose"})))
                if f.rule == "place"]


def test_a_customer_outside_the_footprint_may_be_pointed_to_a_served_city_and_coverage_agrees_with_it():
    uk = frozenset({"birmingham", "london", "manchester"})
    outside = Moment(at=SENT, own_places=frozenset({"coventry"}), served=uk)
    assert rules("The nearest city we serve is Birmingham.", outside) == []
    assert rules("The nearest city we serve is Leeds.", outside) == ["place", "footprint"]  # no hub there
    inside = Moment(at=SENT, own_places=frozenset({"london"}), served=uk)
    assert rules("Your line in Manchester tests healthy.", inside) == ["place"]  # theirs is London
    assert rules("Sorry, London is not on our list yet.", inside) == ["footprint"]  # it has a hub
    assert rules("We serve London.", Moment(at=SENT, own_places=frozenset({"london"}))) == []  # footprint not read
