"""What recall reads from the question itself, before any query: its arguments checked, the
full-text query its plain words make, and the question without the names of the speakers it names.
"""

from __future__ import annotations

import enum
import re
from typing import Callable, Mapping, Sequence

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
NAME = re.compile(r"(?<=\w[\s,;:(\"'])([A-Z][a-z]+)\b")  # a capitalised word after another word


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
    WORDS = "words"  # names nothing, but holds a word meaning cannot see and few turns hold
    MEANING = "meaning"  # names nothing, and its words are all ones the embedder reads: meaning leads


def unknown_terms(ft: str | None, knows_word: Callable[[str], bool] | None, text: str = "") -> list[str]:
    """The full-text query's terms meaning cannot see: words the embedder does not know
    ("quillfeather", "e1042"; without a vocabulary to ask, an embedder without `knows_word`, every
    term), and names (a word the question capitalises after its first: "Who is Anthony?" - the
    model knows the word, not which Anthony)."""
    terms = ft.split(" | ") if ft else []
    names = {w.lower() for w in NAME.findall(text)}
    return [t for t in terms if knows_word is None or t in names or not knows_word(t)]


def plain_word(name: str, knows_word: Callable[[str], bool] | None, text: str) -> bool:
    """Whether an entity's name is a plain word rather than a name: one lower-case word, as filed
    and as the question writes it, that the embedder reads ("wedding", "packing": activities the
    turn rules filed; not "Pune", "Max" or "quillfeather"). A question that names only such
    entities is still one of meaning (kind_of): its vectors already weigh the word, and the
    entity's other turns are as often about something else ("a wedding date" after a proposal)."""
    word = name.strip()
    if knows_word is None or not word or " " in word or word != word.lower():
        return False
    return word not in {w.lower() for w in NAME.findall(text)} and knows_word(word)


def specific(found: Mapping[str, float], turns: float) -> bool:
    """Whether a term is found in some turns of the tenant but few: at most SPECIFIC_SHARE of them,
    or SPECIFIC_MIN_TURNS in a small tenant ("quillfeather" in 1 of 18 turns; a product name in
    every other turn is no clue to any one of them)."""
    bound = max(tuning.SPECIFIC_MIN_TURNS, tuning.SPECIFIC_SHARE * turns)
    return any(0 < n <= bound and n < tuning.DF_SCAN for n in found.values())


def kind_of(anchors: Sequence[object], speaker_keys: Sequence[str], windows: Sequence[Window],
            specific_word: bool = False) -> Kind:
    """A question that names an entity on file (by a name, not a plain word: `plain_word`; the
    caller passes only those), a speaker or a time is NAMED: the graph's signals lead. One that names none of them is of MEANING, unless it holds a specific word (`specific`)
    that the embedder cannot read (WORDS: "any news about quillfeather?"): a word the model knows
    is one its vectors already weigh, and what a question shares with turns in such words is as
    often a coincidence ("new family member" and "my new family photo album") as a clue, which
    then crowds the turn it depends on (bench.implicit_cues). A word the model spells in pieces
    (a name, a code, a coined word) is invisible to meaning, and the words are how it is found."""
    if anchors or speaker_keys or windows:
        return Kind.NAMED
    return Kind.WORDS if specific_word else Kind.MEANING


def asks_only(text: str) -> bool:
    """Whether a turn only asks: its last sentence is a question ("Did the milk go bad again?";
    not "Do you carry an umbrella? It rains all the time."). Such a turn holds no fact of its own
    (its answer, the turn after it, does): on LoCoMo's dev half a quarter of the turns end in a
    question mark but an eighth of the evidence turns do."""
    return text.rstrip().endswith("?")


def weights(kind: Kind) -> Mapping[str, float]:
    return {Kind.MEANING: tuning.MEANING_WEIGHTS, Kind.WORDS: tuning.WORDS_WEIGHTS}.get(kind, tuning.WEIGHTS)
