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


def similarity(a: str, b: str) -> float:
    return SequenceMatcher(None, name_key(a), name_key(b)).ratio()


FUZZY_THRESHOLD = 0.85
