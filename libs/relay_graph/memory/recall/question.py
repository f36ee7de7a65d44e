"""What recall reads from the question itself, before any query: its arguments checked, the
full-text query its plain words make, and the question without the names of the speakers it names.
"""

from __future__ import annotations

import re

from relay_graph.memory import inputs
from relay_graph.memory.entities import bare_word, name_key, name_words
from relay_graph.memory.episodes import STOPWORDS
from relay_graph.memory.models import AGENT_PATTERN
from relay_graph.memory.recall import tuning
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
