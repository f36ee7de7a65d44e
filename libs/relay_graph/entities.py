"""Entity names: the normal form that makes "Alice  Rao" and "alice rao" one entity, and the
fuzzy matching that makes "alcie rao" find her too."""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher

_PUNCT = re.compile(r"[^\w\s@.+-]", re.UNICODE)


def name_key(name: str) -> str:
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _PUNCT.sub(" ", text)
    return " ".join(text.split())


def entity_uid(entity_type: str, key: str) -> str:
    """The unique id of an entity: its type and its normal-form name."""
    return f"{entity_type}|{key}"


def fulltext_query(name: str) -> str | None:
    """A RediSearch query with fuzzy terms, built only from word characters (no query syntax
    from the caller survives). None when there is nothing to search for."""
    words = [w for w in re.findall(r"\w+", name_key(name)) if len(w) >= 2][:8]
    if not words:
        return None
    return " | ".join(f"%{w}%" if len(w) >= 4 else w for w in words)


def similarity(a: str, b: str) -> float:
    return SequenceMatcher(None, name_key(a), name_key(b)).ratio()


FUZZY_THRESHOLD = 0.85
