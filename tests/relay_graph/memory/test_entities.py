"""Names without I/O: the normal form writes address, the fuzzy matching reads use, customer ids."""

from __future__ import annotations

import pytest

from relay_graph.memory.entities import (
    best_candidate,
    close_names,
    is_customer_id,
    name_key,
    new_customer_id,
    search_text,
)


@pytest.mark.parametrize(
    "name, candidates, expected",
    [
        ("ALICE  rao", [("u1", "Alice Rao")], "u1"),
        ("alcie rao", [("u1", "Alice Rao"), ("u2", "Bob Rao")], "u1"),
        ("alice rao", [("u2", "Bob Rao")], None),
        ("customer 12", [("u1", "customer 123")], None),  # numbers must agree
        ("fiber 300", [("u1", "Fiber 500")], None),
        ("fibre 300", [("u1", "Fiber 300")], "u1"),
        ("alice raoo", [("u1", "alice ra"), ("u2", "alice rao")], "u2"),  # the closest wins
    ],
)
def test_best_candidate(name, candidates, expected):
    best = best_candidate(name, candidates)
    assert (best[0] if best else None) == expected


def test_close_names_keeps_every_close_name_best_first():
    close = close_names("esha rao", [("a", "asha rao"), ("b", "isha rao"), ("c", "priya raman")])
    assert [uid for _, uid, _ in close] == ["a", "b"]  # both one edit away: a read must ask which
    assert close_names("esha rao", [("c", "priya raman")]) == []


def test_search_text_requires_words_and_exact_numbers_and_drops_syntax():
    assert search_text("Alice Rao") == "%%alice%% %rao%"
    assert search_text("asha kumar 1234") == "1234"  # numbers are exact, and enough
    assert search_text("x") is None
    assert search_text("a'}) MATCH (n) DETACH DELETE n //") == "%%match%% %%detach%% %%delete%%"
    assert "|" not in (search_text("@foo|bar") or "")


def test_customer_ids_are_their_own_key_and_distinct():
    ids = {new_customer_id() for _ in range(1000)}
    assert len(ids) == 1000
    for cid in list(ids)[:20]:
        assert name_key(cid) == cid and is_customer_id(cid)
    assert not is_customer_id("asha rao") and not is_customer_id("c-12")


@pytest.mark.parametrize("a, b", [("ZOYA  KHAN.", "Zoya Khan"), ("Dr. A. B.", "dr a b"), ("O'Neil", "o neil"),
                                  ("Alice\tRao", "alice rao")])
def test_name_key_sets_case_spacing_and_punctuation_aside(a, b):
    assert name_key(a) == name_key(b)


@pytest.mark.parametrize("a, b", [("asha rao", "esha rao"), ("alice.rao@example.in", "alicerao@example.in"),
                                  ("fritz 7.5", "fritz 75"), ("customer 12", "customer 123")])
def test_name_key_keeps_what_tells_names_apart(a, b):
    assert name_key(a) != name_key(b)
