"""The vector store's context: turns are filtered to the customer by id, whatever name they go by."""

from __future__ import annotations

import numpy as np

from bench.memory.contexts import VectorStore

T1, T2 = "2026-01-01T10:00:00+00:00", "2026-01-02T10:00:00+00:00"
ASHA, ESHA = "c-00000000000000a1", "c-00000000000000e1"


def store() -> VectorStore:
    turns = [{"customer": ASHA, "speaker": "asha rao", "text": "I live in Pune", "at": T1},
             {"customer": ESHA, "speaker": "esha rao", "text": "I live in Delhi", "at": T2},
             {"customer": ASHA, "speaker": "field_tech", "text": "Fixed asha rao's wifi", "at": T2},
             {"customer": None, "speaker": "netops", "text": "Outage: the Pune city hub is down.", "at": T2}]
    return VectorStore(turns, np.eye(4, dtype=np.float32))


def test_only_the_turns_of_that_id_newest_first():
    assert store().context(ASHA, [1.0, 0.0, 0.0, 0.0]) == [(T2, "field_tech: Fixed asha rao's wifi"),
                                                           (T1, "asha rao: I live in Pune")]
    assert store().context(ESHA, [1.0, 0.0, 0.0, 0.0]) == [(T2, "esha rao: I live in Delhi")]


def test_no_id_and_an_unknown_id_find_nothing():
    assert store().context(None, [0.0, 0.0, 0.0, 1.0]) == []
    assert store().context("c-ffffffffffffffff", [1.0, 0.0, 0.0, 0.0]) == []


def test_top_k_by_similarity():
    assert store().context(ASHA, [0.0, 0.0, 1.0, 0.0], k=1) == [(T2, "field_tech: Fixed asha rao's wifi")]
