"""The deterministic reader: one set of rules for any lines, whichever system gave them."""

from __future__ import annotations

from bench.memory.questions import NONE, REFUSE, Question
from bench.memory.reader import correct, gold_in_context, read


def q(kind: str, gold="", **kw) -> Question:
    return Question(id="x", type="t", text="?", customer="Asha Verma", answer_kind=kind, gold=gold, **kw)


T1, T2, T3 = "2026-01-01T10:00:00+00:00", "2026-01-02T10:00:00+00:00", "2026-01-03T10:00:00+00:00"


def test_newest_line_wins_and_the_value_named_last():
    lines = [(T1, "Asha Verma: I live in Pune"), (T2, "Asha Verma: I moved from Pune to Mumbai")]
    assert read(q("city"), lines) == "Mumbai"
    assert read(q("city"), list(reversed(lines))) == "Mumbai"  # order given does not matter, dates do


def test_lines_after_the_moment_are_set_aside():
    lines = [(T1, "Asha Verma lives_in = Pune"), (T3, "intake: she had already moved to Chennai")]
    assert read(q("city"), lines, as_of=T2) == "Pune"
    assert read(q("city"), lines) == "Chennai"


def test_a_value_without_its_cue_is_not_an_answer():
    assert read(q("city"), [(T1, "field_tech: installed a mesh extender near Pune")]) is None


def test_plans_are_told_apart_by_whole_words():
    assert read(q("plan"), [(T1, "we upgraded to Fiber 1000")]) == "Fiber 1000"
    assert read(q("plan"), [(T1, "my plan is Fiber 100")]) == "Fiber 100"


def test_nothing_found_is_a_refusal_and_a_refusal_scores_only_when_gold_is_refuse():
    assert read(q("email"), [(T1, "Asha Verma: my wifi keeps dropping")]) is None
    assert correct(q("email", REFUSE), None) and not correct(q("email", REFUSE), "a@b.co")
    assert not correct(q("city", "Pune"), None)


def test_claims_are_one_value_per_agent():
    lines = [(T1, "field_tech: the router there is a Tenda AC10"), (T2, "retail_desk: sold a ZTE F670L"),
             (T3, "Asha Verma: hello")]
    assert read(q("router_claims"), lines) == ["Tenda AC10", "ZTE F670L"]


def test_multi_hop_prefers_the_outage_where_the_customer_lives():
    lines = [(T1, "Asha Verma lives_in = Pune"), (T3, "open outage o1 on Chennai hub"),
             (T2, "open outage o2 on Pune hub")]
    assert read(q("outage_city"), lines) == "Pune"
    assert read(q("outage_city"), [(T1, "Asha Verma lives_in = Pune")]) == NONE


def test_fix_skips_what_did_not_help():
    lines = [(T2, "field_tech: Tried: set a fixed radio channel for Asha Verma's wifi dropping; it did not help."),
             (T1, "field_tech: Fixed Asha Verma's wifi dropping: moved the access point to the hallway.")]
    assert read(q("fix", issue="wifi_drops"), lines) == "moved the access point to the hallway"
    assert read(q("fix", issue="slow_speed"), lines) is None


def test_phone_from_the_agent_asked_about():
    lines = [(T2, "Asha Verma phone = +919800011111 (filed by intake)"),
             (T1, "Asha Verma phone = +919822233333 (filed by night_desk)")]
    got = read(q("phone", agent="night_desk"), lines)
    assert correct(q("phone", "+91 98222 33333", agent="night_desk"), got)


def test_sets_and_gold_in_context():
    lines = [(T1, "ticket t1: Asha Verma, wifi_drops, stage fixed"), (T2, "Asha Verma: the LOS light is red")]
    assert read(q("issues"), lines) == ["no_signal_light", "wifi_drops"]
    assert gold_in_context(q("issues", ["no_signal_light", "wifi_drops"]), lines)
    assert not gold_in_context(q("issues", ["slow_speed", "wifi_drops"]), lines)
    assert gold_in_context(q("email", REFUSE), lines)
    assert gold_in_context(q("outage_city", NONE), lines)


def test_a_models_words_are_mapped_onto_the_same_vocabulary():
    from bench.memory.reader import llm_messages, parse_llm

    assert parse_llm(q("city"), "I don't know.") is None
    assert parse_llm(q("city"), "She lives in Mumbai now.") == "Mumbai"
    assert parse_llm(q("outage_city"), "none") == NONE
    assert parse_llm(q("router_claims"), "ZTE F670L, Tenda AC10") == ["Tenda AC10", "ZTE F670L"]
    msgs = llm_messages(q("city"), "Where?", [(T1, "Asha Verma: I live in Pune")], T2)
    assert msgs[0]["role"] == "system" and "[2026-01-01T10:00:00+00:00] Asha Verma: I live in Pune" in msgs[1]["content"]
    assert T2 in msgs[1]["content"]


def test_every_way_the_storyline_says_where_someone_lives_is_read():
    for text in ("I'm living in Pune", "we're based in Pune", "we live in Pune", "I've relocated to Pune",
                 "we've moved house to Pune", "Asha Verma lives_in = Pune"):
        assert read(q("city"), [(T1, text)]) == "Pune", text


def test_an_outage_is_in_context_only_where_a_line_says_outage():
    assert not gold_in_context(q("outage_city", "Pune"), [(T1, "Asha Verma lives_in = Pune")])
    assert gold_in_context(q("outage_city", "Pune"), [(T1, "open outage o1 on Pune hub")])
