"""Entity names and customer ids, without any I/O.

- `name_key`: the one normal form of a name, the same everywhere (writes, reads, the desk's
  extraction and catalogue, the console's API): "Alice  Rao" and "alice rao" are one entity,
  "आशा राव" and "आशी राव" are two. A write addresses only this key (or an id, which is a key too).
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

# Bumped whenever name_key's output changes for some name: stored keys of an older rule are
# recomputed once per tenant (name_migration.py).
NAME_RULE_VERSION = 2


def _ranges(codes: Iterable[int]) -> str:
    """A regex character class body for `codes` (sorted), as ranges."""
    out, start, prev = [], None, None
    for c in codes:
        if start is None:
            start = prev = c
        elif c == prev + 1:
            prev = c
        else:
            out.append((start, prev))
            start = prev = c
    if start is not None:
        out.append((start, prev))
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in out)


# Combining marks (Mn, Mc, Me) of this Python's Unicode version: a Devanagari, Tamil or Bengali
# vowel sign, a Thai vowel or tone mark, Arabic harakat, Hebrew points, a Latin accent that has no
# precomposed letter. Every mark Unicode assigns is in planes 0, 1 and 14.
_MARKS = _ranges(c for plane in (range(0x20000), range(0xE0000, 0xE1000)) for c in plane
                 if unicodedata.category(chr(c))[0] == "M")
# Default-ignorable code points (Unicode's Default_Ignorable_Code_Point, which NFKC_Casefold
# removes): the joiners ZWJ/ZWNJ, zero-width space, soft hyphen, bidi marks and isolates,
# variation selectors (emoji presentation too), the grapheme joiner, tags, Hangul fillers.
IGNORABLE_CHARS = ("\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
                   "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
                   "\U0001d173-\U0001d17a\U000e0000-\U000e0fff")  # a character class's body
_IGNORABLE = re.compile(f"[{IGNORABLE_CHARS}]")
# a keycap emoji ("1️⃣" without its variation selector): an emoji, not a digit with a mark
_KEYCAP = re.compile("[0-9#*]\u20e3")
# not a letter, digit, `_`, combining mark, space or `@ . + -`: punctuation, symbols, emoji
_PUNCT = re.compile(f"[^\\w\\s@.+{_MARKS}-]")
# a mark whose base is gone (it sat on punctuation or an emoji, which are spaces or `@ . + -` by
# then, or it starts the name): it goes too
_LOOSE_MARK = re.compile(f"(^|[\\s@.+-])[{_MARKS}]+")
# a dot that is not inside a word ("Khan.", "Dr. A. B."): punctuation, unlike the dots of an
# e-mail address or a version ("alice.rao@example.in", "fritz 7.5")
_LOOSE_DOT = re.compile(f"\\.(?:(?<![\\w{_MARKS}]\\.)|(?!\\w))")
# a word of a normal-form name: letters, digits and `_` with the marks on them (not `\w+`, which
# breaks "आशा" after its first consonant)
WORD = re.compile(f"(?:\\w|[{_MARKS}])+")
# letters and digits with the marks on them, no `_`: the token of text matched against names
TOKEN = re.compile(f"(?:[^\\W_]|[{_MARKS}])+")
# the diacritics of Latin, Greek and Cyrillic letters (after NFKD): what `fold_accents` removes
_ACCENTS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
# a name's trailing possessive or stray `- + .` ("rao's" is "rao s"): not part of the word
_WORD_TAIL = re.compile(f"[^\\w{_MARKS}]+s?$")
_DIGITS = re.compile(r"\d+")
_CUSTOMER_ID = re.compile(r"c-[0-9a-f]{16}")

FUZZY_THRESHOLD = 0.85


def name_key(name: str) -> str:
    """The normal form of a name (docs/desk.md, "Names are normalised once"):

    1. default-ignorable code points go (ZWJ, ZWNJ, zero-width space, soft hyphen, bidi marks,
       variation selectors): they change how letters are drawn, not which letters they are;
    2. Unicode NFKC, case-folded (full case folding: "ß" -> "ss", "İ" -> "i" + U+0307), NFKC again;
    3. combining marks stay with the letter they are on: a vowel sign is part of the name;
    4. punctuation, symbols and emoji are spaces, and so is a dot not inside a word; letters,
       digits, `_` and the `@ . + -` of e-mail addresses, phone numbers and model names stay
       (a Unicode hyphen or minus is `-`); an apostrophe is a space ("O'Neil" is "o neil");
    5. spacing collapsed to one space, none at the ends.

    "ZOYA  KHAN." and "Zoya Khan" are one key; "आशा राव" and "आशी राव" are two."""
    if name.isascii():  # steps 1-3 change nothing in ASCII, and folding it is lower-casing it
        text = _PUNCT.sub(" ", name.lower())
    else:
        text = unicodedata.normalize("NFKC", _IGNORABLE.sub("", name))
        text = unicodedata.normalize("NFKC", text.casefold())
        if "\u2010" in text or "\u2212" in text:  # hyphens NFKC leaves: a hyphen is the ASCII one
            text = text.replace("\u2010", "-").replace("\u2212", "-")
        if "\u20e3" in text:
            text = _KEYCAP.sub(" ", text)
        text = _LOOSE_MARK.sub(r"\1", _PUNCT.sub(" ", text))
    if "." in text:
        text = _LOOSE_DOT.sub(" ", text)
    return " ".join(text.split())


def name_words(name: str) -> list[str]:
    """The words of `name`'s normal form, each with its marks (the `@ . + -` between them go)."""
    return WORD.findall(name_key(name))


def fold_accents(text: str) -> str:
    """`text` without the accents of Latin, Greek and Cyrillic letters ("São Paulo" -> "Sao Paulo"),
    for reads that recognise the catalogue's known names (cities, plans, routers) in what a
    customer typed on any keyboard. The marks of other scripts stay: a Devanagari vowel sign or a
    Thai tone mark is part of the word, never an accent. Never for keys: "Zoë" and "Zoe" are two
    names to `name_key`."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", _ACCENTS.sub("", unicodedata.normalize("NFKD", text)))


def bare_word(word: str) -> str:
    """A word's normal form without a trailing possessive or stray punctuation ("Rao's" -> "rao")."""
    return _WORD_TAIL.sub("", name_key(word))


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
    tokens = name_words(name)[:8]
    numbered = [t for t in tokens if any(ch.isdigit() for ch in t)]
    if numbered:
        return " ".join(numbered)
    words = [f"%%{t}%%" if len(t) >= 5 else f"%{t}%" for t in tokens if len(t) >= 3]
    return " ".join(words) or None
