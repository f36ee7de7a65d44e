"""The raw answer to the desk's own question (conversation.understood.raw_answer), pure: kept as
said against the first question it could answer; a number asked for is not answered by words
without a digit; a turn with other business keeps nothing."""

from __future__ import annotations

import pytest

from relay_graph.desk.conversation.understood import raw_answer
from relay_graph.desk.extraction.schema import Extraction


@pytest.mark.parametrize("asked, text, kept", [
    (["has_router"], "umm the grey box next to the telly", "has_router: umm the grey box next to the telly"),
    (["phone"], "its 98450 12345, evenings are best", "phone: its 98450 12345, evenings are best"),
    (["phone"], "yes its red and blinking fast", None),  # about something else, not their number
    (["phone", "has_router"], "the grey box by the tv", "has_router: the grey box by the tv"),
    (["phone"], "ok", None),
    (["has_router"], "thank u so much!", None),  # a thanks, not an answer
    (["has_router"], "hmm alright then", None),
    (["has_router"], "no idea, my son set it up", "has_router: no idea, my son set it up"),
    ([], "the grey box", None),
])
def test_a_raw_answer_is_kept_against_a_question_it_could_answer(asked, text, kept):
    got = raw_answer(asked, text, Extraction(), other_business=False)
    assert (got.object if got is not None else None) == kept
    if got is not None:
        assert got.predicate == "answered"


def test_a_turn_with_other_business_keeps_no_raw_answer():
    assert raw_answer(["has_router"], "the grey box, and what plans do you have?", Extraction(),
                      other_business=True) is None
