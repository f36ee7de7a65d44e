"""How the rules extractor reads a message: sentences and clauses, questions and conditions that
assert nothing, and who a clause is about (the customer, or someone else)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from relay_graph.runtime.errors import InvalidInput
from relay_graph.desk.extraction.port import ExtractionContext

# ---------------------------------------------------------------------------------------------
# Sentences and clauses.

MAX_TEXT_CHARS = 8_000  # an episode's limit; anything longer is read up to here
MAX_FACTS = 40  # per message and bucket: a pasted log must not become a thousand facts
EMPTY = ExtractionContext()

_AUX = r"(?:is|are|was|were|do|does|did|can|could|will|would|should|shall|have|has|may|am)"
_WH = r"(?:what|where|when|why|how|which|who|whose)"
_LEAD = r"^(?:(?:so|and|but|ok|okay|also|hi|hello|hey|please|um|btw|sorry)[,!]?\s+)*"
_QUESTION_START = re.compile(
    rf"{_LEAD}(?:{_WH}(?:'s|'re)?\s+(?:{_AUX}\b|long\b|much\b|many\b|about\b|else\b|come\b)|{_WH}'s\b"
    rf"|{_AUX}\s+(?:you|u|i|we|it|there|the|my|our|this|that|someone|anyone|somebody|anybody|he|she|they|your)\b)",
    re.I,
)
_REQUEST = re.compile(
    rf"{_LEAD}(?:(?:can|could|would|will)\s+(?:you|u|someone|somebody|i|we)\b)|\bplease\b|\bpls\b|\bkindly\b", re.I
)
_CONDITIONAL = re.compile(rf"{_LEAD}(?:if|unless|in\s+case|whether|suppose|supposing|what\s+if)\b", re.I)
_BARE_SUBJECT = re.compile(r"(?:i|me|we|us|myself|(?:my|our)\s+[\w'-]+)", re.I)
_BARE_NAME = re.compile(r"[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+){0,2}")
_SENTENCE_SPLIT = re.compile(
    r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bSt\.)(?<!\bProf\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<=[.!?])\s+|\n+|;\s*"
)
_CLAUSE_SPLIT = re.compile(
    r",\s*|\s+-\s+|\s+(?:but|and|so|because|cause|though|although|however|whereas|while|plus|then)\s+", re.I
)


@dataclass
class Clause:
    text: str
    question: bool
    request: bool
    conditional: bool

    @property
    def asserts(self) -> bool:
        """Statements assert facts; questions and conditions do not."""
        return not (self.question or self.conditional)


@dataclass
class Sentence:
    text: str
    question: bool
    request: bool
    conditional: bool
    clauses: list[Clause] = field(default_factory=list)


def split_sentences(text: str) -> list[Sentence]:
    out = []
    for raw in _SENTENCE_SPLIT.split(text):
        s = raw.strip(" \t\"'()[]")
        if not s:
            continue
        ends_asking = s.rstrip().endswith("?")
        conditional = bool(_CONDITIONAL.search(s))
        parts: list[str] = []
        glue_next = False
        for p in _CLAUSE_SPLIT.split(s):
            p = p.strip(" .!?\"'")
            if not p:
                continue
            if parts and glue_next:
                parts[-1] += " and " + p  # "me and my wife moved ...": one subject, one clause
            elif parts and _BARE_NAME.fullmatch(p):
                parts[-1] += ", " + p  # "Koregaon Park, Pune": a bare place belongs to the clause before
            else:
                parts.append(p)
            glue_next = bool(_BARE_SUBJECT.fullmatch(parts[-1]))
        # "We moved to Mumbai, can you transfer my line?": only the asking clause is a question
        clauses = [
            Clause(p, bool(_QUESTION_START.search(p)) or (ends_asking and i == len(parts) - 1),
                    bool(_REQUEST.search(p)), conditional)
            for i, p in enumerate(parts)
        ]
        question = any(c.question for c in clauses)
        request = bool(_REQUEST.search(s)) or any(c.request for c in clauses)
        out.append(Sentence(s, question, request, conditional, clauses))
    return out


def prepare_text(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidInput("text must be a string")
    t = unicodedata.normalize("NFKC", text)[:MAX_TEXT_CHARS]
    t = t.translate({0x2019: "'", 0x2018: "'", 0x201C: '"', 0x201D: '"', 0x2013: "-", 0x2014: " - "})
    t = "".join(" " if unicodedata.category(c) in ("Cc", "Cf") and c != "\n" else c for c in t)
    return re.sub(r"\n\s*", "\n", re.sub(r"[^\S\n]+", " ", t))


# ---------------------------------------------------------------------------------------------
# Who is speaking about whom.

_KIN = (r"(?:brother|sister|mom|mum|mother|dad|father|wife|husband|partner|friend|neighbou?r|son|daughter|parents?"
        r"|kids?|children|flatmate|roommate|colleague|boss|uncle|aunt|cousin|grand\w+|landlord|tenant|in-laws?)")
THIRD_PARTY_POSSESSIVE = re.compile(
    rf"\b(?:his|her|their|(?!(?:it|that|what|who|there|here|name|let|he|she|today)'s)[a-z]+'s|{_KIN}s?')\s+"
    r"(?:(?:phone|mobile|cell|contact|whatsapp|email|e-mail)\s+)?(?:number|no\.?|email|e-mail|mail|address|id)\b",
    re.I,
)


_OTHERS = re.compile(
    r"\b(?:his|her|their|(?!(?:it|that|what|there|here|who|he|she|let|where|how)'s)[a-z]+'s|[a-z]+s')(?=\s)", re.I
)
_HOUSEHOLD = re.compile(r"\b(?:kids?'?s?|son's|daughter's|children's|family's)\s*$", re.I)


def someone_elses(prefix: str, *, household_ok: bool = False) -> bool:
    """True when the thing named after `prefix` is someone else's ("my neighbour's router is a ...")."""
    last = None
    for last in _OTHERS.finditer(prefix):
        pass
    if last is None:
        return False
    if household_ok and _HOUSEHOLD.search(prefix[: last.end()]):
        return False
    return not re.search(r"\b(?:i|my|we|our|me|mine)\b", prefix[last.end() :], re.I)


_SUBJECT_FILLER = re.compile(
    r"(?:\s|\b(?:just|recently|also|finally|already|now|all|both|have|has|had|'ve|'s|is|are|was|were|currently|still"
    r"|actually|officially)\b)*$",
    re.I,
)
_FILLER_WORDS = {"hi", "hello", "hey", "so", "ok", "okay", "also", "and", "but", "yes", "yeah", "well", "btw", "fyi",
                 "update", "note", "news", "good", "great", "today", "yesterday", "then", "finally", "anyway"}


def third_party(prefix: str) -> bool:
    """True when the words before a verb make someone or something else its subject ("my brother
    moved ...", "our office moved ...", "they live ..."). No subject at all reads as the customer."""
    tail = _SUBJECT_FILLER.sub("", prefix[-80:]).rstrip()
    if not tail or re.search(r"\b(?:i|we|i've|we've|i'd|we'd|me|us|im|i'm|we're)$", tail, re.I):
        return False
    if re.search(r"\b(?:i|me|we|us|myself)\s+and\b|\band\s+(?:i|me|myself)\b", tail[-40:], re.I):
        return False  # "me and my wife", "my wife and I"
    if re.search(r"\b(?:he|she|they|it|you|someone|somebody|everyone|people|who)$", tail, re.I):
        return True
    if re.search(r"\b(?:my|our|the|his|her|their|your|a|an|this|that)\s+(?:[\w'-]+\s+){0,2}[\w'-]+$", tail, re.I):
        return True
    last = re.search(r"([A-Za-z][\w'-]*)$", tail)
    return bool(last and last.group(1)[0].isupper() and last.group(1).lower() not in _FILLER_WORDS)


