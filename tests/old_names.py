"""The name rule before marks were kept (rule 1 of `entities.name_key`), for tests that make graphs
as it did and check what stays the same: a combining mark, a joiner and every other character that
is not a letter, digit, space or `@ . + -` became a space."""

from __future__ import annotations

import re
import unicodedata

_OLD_PUNCT = re.compile(r"[^\w\s@.+-]")
_OLD_LOOSE_DOT = re.compile(r"(?<!\w)\.|\.(?!\w)")


def old_name_key(name: str) -> str:
    text = unicodedata.normalize("NFKC", name).casefold()
    return " ".join(_OLD_LOOSE_DOT.sub(" ", _OLD_PUNCT.sub(" ", text)).split())
