"""Entity names and customer ids, without any I/O.

- `name_key`: the normal form that makes "Alice  Rao" and "alice rao" one entity. It is the only
  thing a write ever addresses: a write names exactly one key (or an id, which is a key too).
- `similarity` / `close_names`: the fuzzy matching that makes a read of "alcie rao" find her. It
  is for reads only (`names.py`); a write never lands on a name it was not given.
- Customer ids: a customer is an entity keyed by a stable id (`c-` and hex), and their name is a
  `name` fact about them, so two customers called "Priya Raman" are two customers."""

from __future__ import annotations

import re
import unicodedata
import uuid
from difflib import SequenceMatcher
from typing import Iterable

_PUNCT = re.compile(r"[^\w\s@.+-]", re.UNICODE)
# a dot that is not inside a word ("Khan.", "Dr. A. B."): punctuation, unlike the dots of an
# e-mail address or a version ("alice.rao@example.in", "fritz 7.5")
_LOOSE_DOT = re.compile(r"(?<!\w)\.|\.(?!\w)")
_DIGITS = re.compile(r"\d+")
_CUSTOMER_ID = re.compile(r"c-[0-9a-f]{16}")

FUZZY_THRESHOLD = 0.85


def name_key(name: str) -> str:
    """Case, spacing and punctuation aside: "ZOYA  KHAN." and "Zoya Khan" are one key. Kept: what
    tells identifiers apart (@ . + - inside e-mail addresses, phone numbers, model names)."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _LOOSE_DOT.sub(" ", _PUNCT.sub(" ", text))
    return " ".join(text.split())


def entity_uid(entity_type: str, key: str) -> str:
    """The unique id of an entity: its type and its normal-form name."""
    return f"{entity_type}|{key}"


def new_customer_id() -> str:
    """A new customer's id: `c-` and 16 hex digits (64 random bits)."""
    return "c-" + uuid.uuid4().hex[:16]


def is_customer_id(value: str) -> bool:
    """Whether `value` has the shape of an id Relay gave a customer. Ids are never misspelt: a
    read by an id that is not on file finds nothing rather than a similar id."""
    return _CUSTOMER_ID.fullmatch(name_key(value)) is not None


def similarity(a: str, b: str) -> float:
    return SequenceMatcher(None, name_key(a), name_key(b)).ratio()


def close_names(name: str, candidates: Iterable[tuple[str, str]],
                threshold: float = FUZZY_THRESHOLD) -> list[tuple[float, str, str]]:
    """Every (score, uid, name) whose name is at least `threshold` similar to `name`, best first.

    Numbers must agree exactly: "customer 12" is not a misspelling of "customer 123", and
    "fiber 300" is not "fiber 500", however similar the strings are."""
    key = name_key(name)
    digits = _DIGITS.findall(key)
    out = []
    for uid, cand in candidates:
        other = name_key(cand)
        if _DIGITS.findall(other) != digits:
            continue
        sm = SequenceMatcher(None, key, other)
        # the cheap upper bounds first: most candidates are far
        if sm.real_quick_ratio() < threshold or sm.quick_ratio() < threshold:
            continue
        score = sm.ratio()
        if score >= threshold:
            out.append((score, uid, cand))
    out.sort(key=lambda c: (-c[0], c[1]))
    return out


def best_candidate(name: str, candidates: Iterable[tuple[str, str]],
                   threshold: float = FUZZY_THRESHOLD) -> tuple[str, str] | None:
    """The (uid, name) whose name is most similar to `name`, if at least `threshold`."""
    close = close_names(name, candidates, threshold)
    return (close[0][1], close[0][2]) if close else None


def search_text(name: str) -> str | None:
    """The full-text query that finds the names a misspelling of `name` could be (for reads).
    Numbers are never misspelt ("customer 12" is not "customer 123"), so a name with numbers is
    looked up by those alone, exactly. Otherwise every word of three or more letters must be
    present, allowing one edit in words of up to four letters and two in longer ones (a swapped
    pair of letters is two edits); shorter words do not count. Requiring every word keeps the
    search to a handful of names however many customers share a first name. Built only from word
    characters: no query syntax from the caller survives."""
    tokens = re.findall(r"\w+", name_key(name))[:8]
    numbered = [t for t in tokens if any(ch.isdigit() for ch in t)]
    if numbered:
        return " ".join(numbered)
    words = [f"%%{t}%%" if len(t) >= 5 else f"%{t}%" for t in tokens if len(t) >= 3]
    return " ".join(words) or None
