"""The read path: `recall(q)` answers with the episodes that matter to a question, how each was
found, and the current facts linked to them.

Two sources of episodes, fused:

1. Meaning: the question's vector against episode vectors. Without a filter this is the vector
   index, over-fetched (3k). With a session or subject filter the filtered set is small and reached
   through an index (Session.session_id, Entity.uid), so it is scored exactly instead: an
   over-fetched index search in a large graph can hold none of a small session's turns.
2. The graph: entities the question names (its word n-grams equal to an entity's name_key, or
   full-text candidates whose name is within the fuzzy threshold of an n-gram: "alcie rao") and the
   `subject`, then their episodes (`<-MENTIONS-`, or `-HAS_SESSION-> <-IN-` for a customer), those
   reached from more named entities first, then nearest in meaning.

Fusion is reciprocal-rank fusion: score = sum over the sources that found an item of
1 / (60 + its rank there). An item found both ways outranks one found once at a similar rank, and
neither source's raw scale (distances vs hop counts) has to be calibrated against the other.
`RecallItem.score` is that fused score; the vector similarity is in the path ("vector 0.82").
There is no similarity floor: MiniLM scores true paraphrases as low as 0.1, and the path says how
weak an item is.

Facts: current facts ABOUT the named entities (with a subject: only facts about the subject, so
an agent serving one customer never reads another's), ranked by how many named entities they
touch, then by the distance of their claim's vector (FactText) to the question; plus the current
facts the returned episodes DERIVED.

Shapes: `unknown_name` when the subject resolves to no entity (nothing is searched); `path` when a
named entity connected the question to an episode or a fact; `not_in_graph` when entities were
named but nothing connects them (the items, if any, are only similar) or nothing was found at all;
`memory` when only meaning found the items.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field
from typing import Any

from . import fact_planning
from .facts import from_ms, resolve_entity
from .db import GraphClient
from .embeddings import Embedder
from .entities import name_key
from .episodes import STOPWORDS, wire_vector, word_ngrams
from .errors import InvalidInput, InvalidValue
from .models import AGENT_PATTERN, FactState, FactView, RecallItem, RecallResult, RecallShape
from .queries import facts as fq
from .queries import recall as q
from .registry import clean_text

RRF_K = 60
MAX_K = 100
MAX_QUESTION = 2_000
OVERFETCH = 3  # vector candidates per returned item
MIN_CANDIDATES = 30
CAP = 500  # episodes one entity contributes before ranking (its newest)
PER_ENTITY_FACTS = 50  # facts one named entity contributes before ranking (its newest)
FUZZY_LIMIT = 20  # full-text candidates considered per question
MAX_FUZZY_QUERIES = 8
_AGENT = re.compile(AGENT_PATTERN)
CUSTOMER = "Customer"

_VIA = {"mentions": "entity <-MENTIONS- episode", "session": "entity -HAS_SESSION-> session <-IN- episode"}


@dataclass(frozen=True)
class Anchor:
    """An entity the question (or the subject argument) names."""

    uid: str
    name: str
    type: str | None
    how: str  # exact | fuzzy


@dataclass
class _Candidate:
    id: str
    d: float
    hops: list[str] = field(default_factory=list)
    ranks: list[int] = field(default_factory=list)
    via_entity: bool = False

    @property
    def fused(self) -> float:
        return sum(1.0 / (RRF_K + r) for r in self.ranks)


# ------------------------------------------------------------------ input


def _question(value: object) -> str:
    if not isinstance(value, str):
        raise InvalidValue("q must be a string")
    text = " ".join(value.split())
    if not text:
        raise InvalidValue("q is empty")
    if len(text) > MAX_QUESTION:
        raise InvalidValue(f"q is longer than {MAX_QUESTION} characters")
    if any(ord(c) < 32 for c in text):
        raise InvalidValue("q contains control characters")
    return text


def _k(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_K:
        raise InvalidInput(f"k must be an integer from 1 to {MAX_K}")
    return value


def _session(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > 128:
        raise InvalidValue("session must be a non-empty string of at most 128 characters")
    return value.strip()


def _reader(value: object) -> str | None:
    if value is not None and (not isinstance(value, str) or not _AGENT.fullmatch(value)):
        raise InvalidInput(f"reader must match {AGENT_PATTERN}")
    return value


# ------------------------------------------------------------------ entities


def _accept_fuzzy(rows: list[dict[str, Any]], grams_by_len: dict[int, list[str]]) -> list[dict[str, Any]]:
    """Full-text candidates whose whole name is within the fuzzy threshold of an n-gram of the
    question with as many words (numbers must agree: "fiber 300" is not "fiber 500")."""
    out = []
    for r in rows:
        key = r["key"] or ""
        grams = grams_by_len.get(len(key.split()), [])
        if any(fact_planning.best_candidate(g, [(r["uid"], key)]) for g in grams):
            out.append(r)
    return out


def _grams_by_len(text: str) -> dict[int, list[str]]:
    by_len: dict[int, list[str]] = {}
    for g in word_ngrams(text):
        by_len.setdefault(len(g.split()), []).append(g)
    return by_len


def _fuzzy_queries(text: str, covered: set[str]) -> list[str]:
    """Full-text queries for the words no exact name covered: each longer word fuzzily (edit
    distance 1, or 2 from five letters), and each pair of neighbouring words as an intersection, so "alcie rao" finds
    "alice rao" without listing every "rao". Numbers and short words are matched as they are."""
    words = [w for w in re.findall(r"\w+", name_key(text))]

    def term(w: str) -> str:  # RediSearch: %w% = edit distance 1, %%w%% = 2 (a swap is 2)
        if any(ch.isdigit() for ch in w) or len(w) < 4:
            return w
        return f"%{w}%" if len(w) == 4 else f"%%{w}%%"

    def open_word(w: str) -> bool:
        return w not in covered and w not in STOPWORDS

    singles = [term(w) for w in words if open_word(w) and term(w).startswith("%")]
    pairs = [f"{term(a)} {term(b)}" for a, b in zip(words, words[1:])
             if open_word(a) and open_word(b) and (len(a) >= 2 and len(b) >= 2)]
    out = list(dict.fromkeys(pairs + singles))
    return out[:MAX_FUZZY_QUERIES]


async def find_entities(client: GraphClient, tenant: str, text: str) -> list[Anchor]:
    """The entities a text names: exactly (one of its n-grams equals a name_key, through the
    index), or misspelt (full-text candidates for the words left over, kept when the whole name is
    within the fuzzy threshold of an n-gram of the text with as many words)."""
    keys = sorted(word_ngrams(text))
    exact = await client.run(tenant, q.ENTITIES_EXACT, {"keys": keys}) if keys else []
    covered = {w for r in exact for w in (r["key"] or "").split()}
    queries = _fuzzy_queries(text, covered)
    fuzzy = []
    if queries:
        rows = await client.run(tenant, q.ENTITIES_FUZZY, {"queries": queries, "limit": FUZZY_LIMIT})
        fuzzy = _accept_fuzzy(rows, _grams_by_len(text))
    anchors: dict[str, Anchor] = {}
    for r in exact + fuzzy:
        anchors.setdefault(r["uid"], Anchor(r["uid"], r["name"], r["type"], r["how"]))
    return list(anchors.values())


async def resolve_subject(client: GraphClient, tenant: str, subject: str) -> Anchor | None:
    """The entity a subject names: the customer of that name or the closest customer name
    (`facts.resolve_entity`), else an entity of any type with that exact name."""
    name = clean_text(subject, "subject")
    key = name_key(name)
    if not key:
        return None
    ref = await resolve_entity(client, tenant, name, CUSTOMER)
    if ref is not None:
        return Anchor(ref.uid, ref.name, ref.type, "exact" if ref.uid.endswith("|" + key) else "fuzzy")
    rows = await client.run(tenant, q.ENTITIES_EXACT, {"keys": [key]})
    if not rows:
        return None
    best = sorted(rows, key=lambda r: r["uid"])[0]
    return Anchor(best["uid"], best["name"], best["type"], "exact")


# ------------------------------------------------------------------ episodes


def _sim(d: float) -> str:
    return f"{1.0 - float(d):.2f}"


def _add(cands: dict[str, _Candidate], ranked: list[tuple[str, float, list[str], bool]]) -> None:
    for rank, (eid, d, hops, via_entity) in enumerate(ranked, start=1):
        c = cands.setdefault(eid, _Candidate(eid, float(d)))
        c.ranks.append(rank)
        if via_entity and not c.via_entity:
            c.hops = hops + c.hops
            c.via_entity = True
        elif not c.hops:
            c.hops = list(hops)


async def _episodes_with_subject(client, tenant, v, subject: Anchor, anchors: list[Anchor], session, n):
    names = {a.uid: a.name for a in anchors}
    rows = await client.run(tenant, q.EPISODES_OF_SUBJECT, {
        "subject": subject.uid, "session": session, "uids": list(names), "v": v, "cap": CAP, "n": n})
    def hops(r, with_hits: bool) -> list[str]:
        out = [f"subject -> entity '{subject.name}'", _VIA["session" if "session" in r["vias"] else "mentions"]]
        if with_hits:
            for uid in sorted(r["hits"]):
                out += [f"q -> entity '{names[uid]}'", _VIA["mentions"]]
        return out
    meaning = [(r["id"], r["d"], hops(r, False), True) for r in rows[:n]]
    named = sorted((r for r in rows if r["hits"]), key=lambda r: (-len(r["hits"]), r["d"]))[:n]
    return meaning, [(r["id"], r["d"], hops(r, True), True) for r in named]


async def _episodes_by_meaning(client, tenant, v, session, n):
    if session is not None:
        rows = await client.run(tenant, q.EPISODES_IN_SESSION, {"session": session, "v": v, "n": n})
        return [(r["id"], r["d"], [f"session '{session}' <-IN- episode"], False) for r in rows]
    rows = await client.run(tenant, q.EPISODES_NEAR, {"v": v, "n": n})
    return [(r["id"], r["d"], [], False) for r in rows]


async def _episodes_of_entities(client, tenant, v, anchors: list[Anchor], session, n):
    if not anchors:
        return []
    names = {a.uid: a.name for a in anchors}
    rows = await client.run(tenant, q.EPISODES_OF_ENTITIES, {
        "uids": list(names), "session": session, "v": v, "n": n, "cap": CAP})
    out = []
    for r in rows:
        vias: dict[str, set[str]] = {}
        for h in r["hops"]:
            vias.setdefault(h["uid"], set()).add(h["via"])
        hops: list[str] = []
        for uid in sorted(vias):  # a customer's own turns also MENTION them: say "session" once
            hops += [f"q -> entity '{names[uid]}'", _VIA["session" if "session" in vias[uid] else "mentions"]]
        out.append((r["id"], r["d"], hops, True))
    return out


# ------------------------------------------------------------------ facts


def fact_view(row: dict[str, Any]) -> FactView:
    """A row of `fact` (queries.facts.FACT_FIELDS) and `subject` (its subject's name)."""
    m = row["fact"]
    return FactView(
        fact_id=m["fact_id"], subject=row["subject"], predicate=m["predicate"], object=m["object_name"],
        valid_from=from_ms(m["valid_from_ms"]), valid_to=from_ms(m.get("valid_to_ms")),
        recorded_at=from_ms(m["recorded_at_ms"]), expired_at=from_ms(m.get("expired_at_ms")),
        asserted_by=m["asserted_by"], state=FactState(m["state"]), corroborations=m.get("corroborations") or 1,
        conflict_id=m.get("conflict_id"),
    )


async def _anchor_facts(client, tenant, v, subject: Anchor | None, anchors: list[Anchor], limit: int):
    uids = [a.uid for a in anchors]
    if subject is not None:
        return await client.run(tenant, q.FACTS_OF_SUBJECT, {
            "subject": subject.uid, "uids": uids, "v": v, "per_entity": PER_ENTITY_FACTS, "limit": limit})
    if not uids:
        return []
    return await client.run(tenant, q.FACTS_OF_ENTITIES, {"uids": uids, "v": v, "per_entity": PER_ENTITY_FACTS,
                                                          "limit": limit})


# ------------------------------------------------------------------ recall


async def recall(client: GraphClient, embedder: Embedder, tenant: str, q_text: str, *, k: int = 10,
                 subject: str | None = None, session: str | None = None,
                 reader: str | None = None) -> RecallResult:
    question = _question(q_text)
    k = _k(k)
    session = _session(session)
    reader = _reader(reader)

    # The question's vector (CPU, off the loop) is computed while the graph names its entities.
    embedding = asyncio.ensure_future(embedder.aembed([question]))
    try:
        subj, anchors = await asyncio.gather(
            resolve_subject(client, tenant, subject) if subject is not None else _none(),
            find_entities(client, tenant, question))
        if subject is not None and subj is None:
            return RecallResult(shape=RecallShape.UNKNOWN_NAME, items=[], facts=[])
        v = wire_vector((await embedding)[0])
    finally:
        if not embedding.done():
            embedding.cancel()  # the thread finishes on its own; nobody waits for it
    if subj is not None:
        anchors = [a for a in anchors if a.uid != subj.uid]
    n = max(OVERFETCH * k, MIN_CANDIDATES)

    if subj is not None:
        (meaning, named), anchor_facts = await asyncio.gather(
            _episodes_with_subject(client, tenant, v, subj, anchors, session, n),
            _anchor_facts(client, tenant, v, subj, anchors, k))
    else:
        meaning, named, anchor_facts = await asyncio.gather(
            _episodes_by_meaning(client, tenant, v, session, n),
            _episodes_of_entities(client, tenant, v, anchors, session, n),
            _anchor_facts(client, tenant, v, None, anchors, k))

    cands: dict[str, _Candidate] = {}
    _add(cands, named)
    _add(cands, meaning)
    top = sorted(cands.values(), key=lambda c: (-c.fused, c.d, c.id))[:k]
    ids = [c.id for c in top]

    details, derived = await asyncio.gather(
        client.run(tenant, q.EPISODES_BY_ID, {"ids": ids}) if ids else _empty(),
        client.run(tenant, q.FACTS_DERIVED, {"ids": ids, "subject": subj.uid if subj else None, "limit": k})
        if ids else _empty())
    by_id = {r["episode_id"]: r for r in details}
    items = []
    for c in top:
        r = by_id.get(c.id)
        if r is None:  # an index entry whose node is gone
            continue
        items.append(RecallItem(
            episode_id=c.id, session=r["session"], speaker=r["speaker"], text=r["text"], at=from_ms(r["at_ms"]),
            score=round(c.fused, 6), path=c.hops + [f"q ~ episode (vector {_sim(c.d)})"]))

    facts: dict[str, FactView] = {}
    for row in list(anchor_facts) + list(derived):
        facts.setdefault(row["fact"]["fact_id"], fact_view(row))

    connected = any(c.via_entity for c in top) or bool(anchor_facts)
    named_any = subj is not None or bool(anchors)
    if connected:
        shape = RecallShape.PATH
    elif named_any or not (items or facts):
        shape = RecallShape.NOT_IN_GRAPH
    else:
        shape = RecallShape.MEMORY

    if reader and facts:
        await client.run(tenant, fq.CONSULTED, {"reader": reader, "fact_ids": list(facts), "now_ms": _now_ms()})
    return RecallResult(shape=shape, items=items, facts=list(facts.values()))


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


async def _empty() -> list:
    return []


async def _none() -> Any:
    return None


__all__ = ["recall", "find_entities", "resolve_subject", "Anchor", "fact_view", "RRF_K"]
