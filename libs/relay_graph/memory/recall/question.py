"""What recall reads from the question itself, before any query: its arguments checked, the
full-text query its plain words make, and the question without the names of the speakers it names.
"""

from __future__ import annotations

import enum
import re
from typing import Mapping, Sequence

from relay_graph.memory import inputs
from relay_graph.memory.entities import bare_word, name_key, name_words
from relay_graph.memory.episodes import STOPWORDS
from relay_graph.memory.models import AGENT_PATTERN
from relay_graph.memory.recall import tuning
from relay_graph.memory.time_expressions import Window
from relay_graph.runtime.errors import InvalidInput

# A question that asks when: the answer is a turn that says a time.
WHEN = re.compile(r"^\W*(?:since\s+)?when\b|\bhow\s+long\b|\b(?:what|which)\s+(?:year|month|day|date|week)\b",
                  re.IGNORECASE)
# Words of a question that say what is asked, not what about: left out of the full-text query.
QUESTION_WORDS = frozenset("""did does do done doing ever kind sort type much many whose which something anything
    someone anyone thing things like get got tell told say said""".split()) | {"such"}
_AGENT = re.compile(AGENT_PATTERN)


def question(value: object) -> str:
    # The question is free text (inputs.check_text); read with its spacing collapsed.
    return " ".join(inputs.check_text(value, "q", tuning.MAX_QUESTION).split())


def k(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= tuning.MAX_K:
        raise InvalidInput(f"k must be an integer from 1 to {tuning.MAX_K}")
    return value


def session(value: object) -> str | None:
    if value is None:
        return None
    return inputs.check_identifier(value, "session")


def reader(value: object) -> str | None:
    if value is not None and (not isinstance(value, str) or not _AGENT.fullmatch(value)):
        raise InvalidInput(f"reader must match {AGENT_PATTERN}")
    return value


def without_words(text: str, words: set[str]) -> str:
    """The text without the given (normal-form) words; the text itself if nothing would be left."""
    kept = [w for w in text.split() if name_key(w).strip(".-'") not in words
            and bare_word(w) not in words]
    return " ".join(kept) if any(re.search(r"\w", w) for w in kept) else text


def text_without_speakers(text: str, speaker_keys: set[str]) -> str:
    return without_words(text, {w for key in speaker_keys for w in key.split()}) if speaker_keys else text


def fulltext_query(text: str, drop: set[str] = frozenset()) -> str | None:
    """The question as a full-text query: its plain words (letters and digits only, so nothing in
    it is RediSearch syntax), stopwords, one-letter words and `drop` out, OR'd; None when no word
    is left."""
    words = [part for w in name_words(text) for part in w.split("_") if part]
    keep = [w for w in dict.fromkeys(words)
            if len(w) > 1 and w not in STOPWORDS and w not in QUESTION_WORDS and w not in drop]
    return " | ".join(keep[:tuning.MAX_WORDS]) or None


class Kind(str, enum.Enum):
    """What kind of question recall answers, and so how it fuses its signals."""

    NAMED = "named"  # names a speaker, an entity on file or a time: the graph's signals lead
    MEANING = "meaning"  # names nothing on file and no time: meaning is all it has to go on


def kind_of(anchors: Sequence[object], speaker_keys: Sequence[str], windows: Sequence[Window],
            words_found: bool) -> Kind:
    """A question that names no entity on file, no speaker and no time, and shares no content word
    with any turn (its full-text query found nothing) is one of meaning: what the other signals
    find then (the neighbours of whatever is near in meaning) only crowds the turn it depends on.
    A nameless question whose words find turns keeps the full fusion: a rare word ("the
    Quillfeather regatta") or the words of the turn before an answer ("Did the pottery piece get
    finished?") are how it is found."""
    return Kind.NAMED if anchors or speaker_keys or windows or words_found else Kind.MEANING


def weights(kind: Kind) -> Mapping[str, float]:
    return tuning.MEANING_WEIGHTS if kind is Kind.MEANING else tuning.WEIGHTS
