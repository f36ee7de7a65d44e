"""The entities a question names (the graph's way in): exactly (an n-gram of the question equal to
an entity's name_key, through the index), or misspelt (full-text candidates for the words left
over, kept when the whole name is within the fuzzy threshold of an n-gram with as many words:
"alcie rao"); and the entity a recall's `subject` argument stands for.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Callable

from relay_graph.memory import names
from relay_graph.memory.entities import best_candidate, name_key, name_words
from relay_graph.memory.episodes import STOPWORDS, word_ngrams
from relay_graph.memory.models import Ambiguous, Matched
from relay_graph.memory.queries import recall as q
from relay_graph.memory.recall import tuning
from relay_graph.memory.registry import clean_text
from relay_graph.memory.recall.question import NAME
from relay_graph.runtime.db import GraphClient

CUSTOMER = "Customer"


@dataclass(frozen=True)
class Anchor:
    """An entity the question (or the subject argument) names."""

    uid: str
    name: str
    type: str | None
    how: str  # exact | fuzzy


@dataclass(frozen=True)
class Subject:
    """What a recall's subject stands for: one entity (`anchor`, with a `matched` note when it was
    read as a name rather than its key), or an `ambiguous` name, or nothing (all None)."""

    anchor: Anchor | None = None
    matched: Matched | None = None
    ambiguous: Ambiguous | None = None


async def find_entities(client: GraphClient, tenant: str, text: str) -> list[Anchor]:
    """The entities a text names: exactly (one of its n-grams equals a name_key, through the
    index), or misspelt (full-text candidates for the words left over, kept when the whole name is
    within the fuzzy threshold of an n-gram of the text with as many words)."""
    ngrams = word_ngrams(text)
    exact = await client.run(tenant, q.ENTITIES_EXACT, {"keys": sorted(ngrams)}) if ngrams else []
    return await with_misspelt(client, tenant, text, ngrams, exact)


async def entities_named(client: GraphClient, tenant: str, question: str, ngrams: set[str],
                         exact_t: asyncio.Task, after: asyncio.Task | None = None,
                         knows_word: Callable[[str], bool] | None = None,
                         speakers_t: asyncio.Task | None = None) -> list[Anchor]:
    """`find_entities` from the rows of the names found exactly (`exact_t`), the misspelt-name
    lookup sent only once `after` is done (recall passes the question's vector: beside the model
    the lookup slows the embedding that the signals wait for, and it rarely adds a name), and only
    for the words `knows_word` does not know (see fuzzy_queries) and no speaker's name holds (the
    rows of `speakers_t`: a speaker named exactly is not misspelt)."""
    exact = await exact_t
    spoken = await speakers_t if speakers_t is not None else []
    if after is not None:
        await asyncio.wait([after])
    return await with_misspelt(client, tenant, question, ngrams, exact, knows_word,
                               {w for r in spoken for w in (r["key"] or "").split()})


async def with_misspelt(client: GraphClient, tenant: str, text: str, ngrams: set[str],
                        exact: list[dict[str, Any]], knows_word: Callable[[str], bool] | None = None,
                        speaker_words: set[str] = frozenset()) -> list[Anchor]:
    """`find_entities` once the exact names are known: the misspelt ones added."""
    covered = {w for r in exact for w in (r["key"] or "").split()} | speaker_words
    queries = fuzzy_queries(text, covered, knows_word)
    fuzzy = []
    if queries:
        rows = await client.run(tenant, q.ENTITIES_FUZZY, {**fuzzy_params(queries), "limit": tuning.FUZZY_LIMIT})
        fuzzy = _accept_fuzzy(rows, _grams_by_len(ngrams))
    return anchors_of(exact + fuzzy)


def anchors_of(rows: list[dict[str, Any]]) -> list[Anchor]:
    anchors: dict[str, Anchor] = {}
    for r in rows:
        anchors.setdefault(r["uid"], Anchor(r["uid"], r["name"], r["type"], r.get("how") or "exact"))
    return list(anchors.values())


def fuzzy_queries(text: str, covered: set[str], knows_word: Callable[[str], bool] | None = None) -> list[str]:
    """Full-text queries for the words no exact name covered: each longer word fuzzily (edit
    distance 1, or 2 from five letters), and each pair of neighbouring words as an intersection, so "alcie rao" finds
    "alice rao" without listing every "rao". Numbers and short words are matched as they are.
    With `knows_word` (the embedder's vocabulary), only around a word it does not know or that the
    text capitalises as a name: a misspelt name is rarely an English word ("alcie" is not), and
    the words of most questions are ("what did she say about the router?" has no name to look for)."""
    words = name_words(text)
    names = {w.lower() for w in NAME.findall(text)}

    def open_word(w: str) -> bool:
        return w not in covered and w not in STOPWORDS

    def unknown(w: str) -> bool:
        return knows_word is None or w in names or not knows_word(w)

    singles = [_term(w) for w in words if open_word(w) and unknown(w) and _term(w).startswith("%")]
    pairs = [f"{_term(a)} {_term(b)}" for a, b in zip(words, words[1:])
             if open_word(a) and open_word(b) and (len(a) >= 2 and len(b) >= 2) and (unknown(a) or unknown(b))]
    out = list(dict.fromkeys(pairs + singles))
    return out[:tuning.MAX_FUZZY_QUERIES]


def fuzzy_params(queries: list[str]) -> dict[str, Any]:
    """ENTITIES_FUZZY's parameters: each query with its fuzzy terms, and those terms once each."""
    parts = [[t for t in ft.split() if t.startswith("%")] for ft in queries]
    return {"words": sorted({t for p in parts for t in p}),
            "queries": [{"ft": ft, "parts": p} for ft, p in zip(queries, parts)]}


def _term(w: str) -> str:  # RediSearch: %w% = edit distance 1, %%w%% = 2 (a swap is 2)
    if any(ch.isdigit() for ch in w) or len(w) < 4:
        return w
    return f"%{w}%" if len(w) == 4 else f"%%{w}%%"


def _accept_fuzzy(rows: list[dict[str, Any]], grams_by_len: dict[int, list[str]]) -> list[dict[str, Any]]:
    """Full-text candidates whose whole name is within the fuzzy threshold of an n-gram of the
    question with as many words (numbers must agree: "fiber 300" is not "fiber 500")."""
    out = []
    for r in rows:
        key = r["key"] or ""
        grams = grams_by_len.get(len(key.split()), [])
        if any(best_candidate(g, [(r["uid"], key)]) for g in grams):
            out.append(r)
    return out


def _grams_by_len(ngrams: set[str]) -> dict[int, list[str]]:
    by_len: dict[int, list[str]] = {}
    for g in ngrams:
        by_len.setdefault(len(g.split()), []).append(g)
    return by_len


async def resolve_subject(client: GraphClient, tenant: str, subject: str) -> Subject:
    """The entity a subject names: the customer with that key, else the customer that name
    stands for (`names.match`: their name fact, else a name spelt alike; two or more is
    ambiguous), else an entity of any type with that exact name."""
    name = clean_text(subject, "subject")
    key = name_key(name)
    if not key:
        return Subject()
    found = await names.match(client, tenant, name, CUSTOMER, what="subject")
    if found.ambiguous is not None:
        return Subject(ambiguous=found.ambiguous)
    if found.one is not None:
        hit = found.one
        return Subject(Anchor(hit.uid, hit.id, CUSTOMER, "exact" if found.how == "exact" else "fuzzy"), found.matched)
    rows = await client.run(tenant, q.ENTITIES_EXACT, {"keys": [key]})
    if not rows:
        return Subject()
    best = sorted(rows, key=lambda r: r["uid"])[0]
    return Subject(Anchor(best["uid"], best["name"], best["type"], "exact"))
