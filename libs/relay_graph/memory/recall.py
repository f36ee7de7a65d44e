"""The read path: `recall(q)` answers with the episodes that matter to a question, how each was
found, and the current facts linked to them. It serves a support desk (customers, sessions,
facts) and any multi-session conversation (two friends over months of dated sessions) alike.

Signals (each a ranked list of episodes; without a `subject` all of them, with one the first two):

1. vector - meaning: the question's vector against episode vectors. Without a filter this is the
   vector index, over-fetched (3k, at least HYBRID_POOL). With a session or subject filter the filtered set is small and
   reached through an index (Session.session_id, Entity.uid), so it is scored exactly instead: an
   over-fetched index search in a large graph can hold none of a small session's turns. The
   question is embedded WITHOUT the names of the speakers it names ("What did Caroline paint?" ->
   "What did paint?"): the speaker signal carries who, and a name left in the vector makes every
   "Hey Caroline!" look like an answer (MiniLM weighs names heavily).
2. entities - the graph: entities the question names (its word n-grams equal to an entity's
   name_key, or full-text candidates whose name is within the fuzzy threshold of an n-gram: "alcie
   rao") and the `subject`, then their episodes (`<-MENTIONS-`, or `-HAS_SESSION-> <-IN-` for a
   customer), those reached from more named entities first, then nearest in meaning.
3. speakers - a speaker the question names (an n-gram equal to a Speaker.key, the normal form of
   a turn's `speaker`): the turns they spoke (`<-SPOKEN_BY-`), then turns naming them
   (`<-NAMES-`), nearest in meaning first.
4. words - full-text (RediSearch over Episode.text: stemmed, TF-IDF scored): the question's plain
   words OR'd, stopwords, question words and the named speakers' names out; the query string
   holds only letters and digits (no RediSearch syntax can come from the question) and is a
   parameter. Ties broken by meaning.
5. time - time expressions in the question (`time_expressions`: "in May 2023", "on 8 May 2023",
   "last year", "yesterday", "three weeks ago"): the turns whose time falls in those windows
   (through the Episode.at_ms index, at most TIME_SCAN), and the turns that SAY a time in them
   ("last Saturday" said on Monday 8 May 2023 is 6 May: Episode.said_from_ms / said_to_ms, read
   against each turn's own time when it is written), nearest in meaning first. Relative
   expressions in the question are read against the newest turn in memory (in the session, with
   a session filter): a conversation's "last year" is the year before its last session.
5b. spoken_then - the question names a speaker and a time: that speaker's turns said in those
   windows or saying a time in them ("What setback did Melanie face in October 2023?"), nearest in
   meaning first (from the speaker's newest SPEAKER_CAP turns). The speaker and time signals each
   rank all of theirs; this one ranks where they meet (dev half of bench.locomo, with the turn
   facts: 35.8 / 69.5 / 81.7 / 88.2 without it, 35.8 / 70.2 / 82.5 / 89.3 at weight 0.5,
   36.0 / 70.2 / 83.3 / 89.6 at 1.0, as time and dated weigh).
6. dated - a question that asks when ("When did Caroline go to the support group?", "how long")
   and names a speaker: that speaker's turns that say a time, nearest in meaning first. The
   answer to "when" is a turn that dates something ("I went yesterday"); without a named speaker
   the signal stays off ("when does my line drop?" asks about a habit).
7. joined - two hops: the entities one current fact away from a named entity (Pune <-ABOUT- fact
   -ABOUT-> Alice Rao), through its JOIN_PER_ENTITY facts whose claim is nearest the question,
   and the episodes that MENTION those, nearest in meaning first. A named speaker (the subject of
   the facts their turns state, turn_facts) anchors neither this nor the entities signal: their
   turns are the speaker signal's, and a join from a speaker reaches everything they ever talked
   about (on the dev half of bench.locomo, with the facts POST /episodes files, a join from the
   speakers cost every k: any-hit@1/5/10/20 35.8 / 70.2 / 81.5 / 89.0 without the turn facts;
   with them, joining from speakers to 20 of their entities 21.4 / 58.5 / 73.9 / 84.1, through
   only the fact nearest the question 32.6 / 67.1 / 79.6 / 88.5; as shipped 35.5 / 69.5 / 81.7 /
   88.2).
8. community - the entities that share a Community with a named entity (entity_graph: communities
   of the entity graph found by `algo.labelPropagation` and written back as Community nodes with
   IN_COMMUNITY edges; the netops agent refreshes them on its maintenance loop, `relay admin
   communities` at once), at most COMMUNITY_MEMBERS per named entity, and the episodes that
   MENTION those (each one's newest COMMUNITY_CAP), nearest in meaning first: two customers on one
   street and plan, one of them named, and what the other reported. A tenant whose communities
   were never computed has none, and the signal finds nothing. It reaches further than `joined`,
   so it weighs half as much.
9. neighbours - the NEIGHBOUR_REACH turns before and after each of the NEIGHBOUR_SEEDS best items
   of the fusion of 1-8 (same session; order by time, then by arrival `pos`, so a session whose
   turns share one time still has an order): an answer ("Yes! A sunset over the lake.") often
   carries none of the question's words and sits right after the turn that does ("Did you finish
   that painting?"), or two turns on when the other speaker asks back in between. Ranked by the
   rank of the hit they neighbour, the nearer first, the reply (after) before the turn before.

Fusion is weighted reciprocal-rank fusion: score = sum over the signals that found an item of
WEIGHTS[signal] / (RRF_K + its rank there), RRF_K = 30; an item counts once per signal, at its best
rank. An item found several ways outranks one found once at a similar rank, and no signal's raw
scale (distances, hop counts, TF-IDF) has to be calibrated against another's. The weights were
first chosen on the dev split of bench/recall_hybrid.py (synthetic), then moved on the dev half of
bench/locomo.py (real LoCoMo conversations; its test half is never tuned on): speakers from 0.5 to
1.0 (who said it is what a question about a person turns on), RRF k from 60 to 30 (the first ranks
count for more), neighbours two turns each side instead of one (the answer is often two turns on,
after the other speaker asks back). bench.locomo's ablation says what each signal earns there
(docs/benchmarks.md); then, on the same dev half, each signal's list from 30 to HYBRID_POOL = 100
(the evidence turn of small talk is often past the 30th of every signal) and the neighbour seeds
from 5 to 10 (every k gained there; docs/benchmarks.md has the figures). RRF k, the weights of words, vector,
speakers, time and dated, the neighbours' weight and reach, and a speaker-and-words signal (the
full-text hits among the named speaker's turns) were measured there too and moved nothing beyond
a question or two, so they stayed as they were. Words and neighbours stay at 0.5: they are the
broad ones (a topic word is in every turn of small talk about that topic; a neighbour is only
beside a hit). The weight moves cost the synthetic set a little, the pool and the seeds gained it
a little (bench.recall_hybrid, docs/benchmarks.md). Ties go to the nearer in meaning. Neighbours join in a
second step: the k best of signals 1-8 are taken with the turns around the strongest, then all are
fused; an item outside those k can only enter the answer as a neighbour. The fusion runs here
(`_add`), on the signals' ranked ids and distances; the database runs the signals and the
neighbours. (It ran in the database until 2026-12-02: ranking a few hundred hits in Cypher
collected and copied their nested lists clause after clause, which cost more than the signals'
own reads; docs/benchmarks.md, where recall's time goes.) A path through an entity or speaker
is written out only for the items answered.
`RecallItem.score` is the fused score; the path says how each item was found (its first signal's
hops) and ends with its similarity ("q ~ episode (vector 0.82)"). There is no similarity floor:
MiniLM scores true paraphrases as low as 0.1, and the path says how weak an item is.

Round trips: (1) entities and speakers named, the reference time if needed, and at once the
question's vector (embedded without the speakers this process last saw in the tenant, a list at
most a few seconds old; the speaker query checks that guess and a wrong one is embedded again, so
staleness costs time, never a different answer); as soon as the entities are known, their facts'
candidates (each entity's newest, no vector needed), still beside the model; (2) once the vector is
there, the signals (queries.recall.signals), as two statements side by side when the question
names a speaker (the speaker's signals, and the rest: the server runs each on a core of its own),
and beside them the named entities' facts' ranking; (3) the neighbours of the fused best, the
answer's episodes in full and the facts they DERIVED (queries.recall.NEIGHBOURS_IN_FULL). With a
subject, (2) is the subject's episodes and facts and (3) the answer in full with its derived facts.

Facts: current facts ABOUT the named entities (with a subject: only facts about the subject, so
an agent serving one customer never reads another's), ranked by how many named entities they
touch, then by the distance of their claim's vector (FactText) to the question; plus the current
facts the returned episodes DERIVED.

Shapes: `unknown_name` when the subject resolves to no entity (nothing is searched); `ambiguous`
when it is a name that stands for two or more customers (nothing is searched; `ambiguous` lists
them); `path` when a
named entity or speaker connected the question to an episode or a fact; `not_in_graph` when
entities or speakers were named but nothing connects them (the items, if any, were found only by
meaning, words or time), or nothing was found at all, or the question names one speaker and
another speaker's turn among the answer is nearer to it in meaning than any of theirs by more
than VOICE_MARGIN while none of theirs comes within VOICE_CEILING of it (LoCoMo's adversarial
questions ask one speaker about what the other did);
`memory` when nothing named was involved.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field
from typing import Any

from relay_graph.runtime.times import now_ms
from relay_graph.memory import inputs, names
from relay_graph.memory.entities import best_candidate
from relay_graph.memory.facts import from_ms
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embeddings import Embedder
from relay_graph.memory.entities import bare_word, name_key, name_words
from relay_graph.memory.episodes import STOPWORDS, VectorParam, wire_vector, word_ngrams
from relay_graph.runtime.errors import InvalidInput
from relay_graph.memory.models import (
    AGENT_PATTERN,
    Ambiguous,
    FactState,
    FactView,
    Matched,
    RecallItem,
    RecallResult,
    RecallShape,
)
from relay_graph.memory.queries import facts as fq
from relay_graph.memory.queries import recall as q
from relay_graph.memory.registry import clean_text
from relay_graph.memory.time_expressions import Window, needs_reference
from relay_graph.memory.time_expressions import windows as time_windows

RRF_K = 30
MAX_K = 100
MAX_QUESTION = 2_000
OVERFETCH = 3  # vector candidates per returned item
MIN_CANDIDATES = 30
# Without a subject each signal ranks at least this many before the fusion: the evidence turn of a
# question about small talk is often past the 30th of every single signal (dev half of bench.locomo).
HYBRID_POOL = 100
CAP = 500  # episodes one entity contributes before ranking (its newest)
PER_ENTITY_FACTS = 50  # facts one named entity contributes before ranking (its newest)
FUZZY_LIMIT = 20  # full-text candidates considered per question
MAX_FUZZY_QUERIES = 8
TIME_SCAN = 2_000  # turns one time window contributes before ranking
WORDS_SCAN = 100  # best full-text matches whose distance breaks score ties
SPEAKER_CAP = 400  # a speaker's newest turns ranked by meaning (a LoCoMo speaker has ~150-300)
SPEAKER_NAMED_CAP = 100  # newest turns naming a speaker
NEIGHBOUR_SEEDS = 10  # the strongest hits whose turns before and after join the fusion
NEIGHBOUR_REACH = 2  # turns on each side of a seed that join as its neighbours
DERIVED_SCAN = 4  # facts the answer's candidates derived, read per returned item (those of the answer are kept)
MAX_WORDS = 16  # full-text terms per question
# Weighted RRF: what each signal's rank is worth (tuned on the dev split of bench/recall_hybrid.py).
WEIGHTS = {"vector": 1.0, "entities": 1.0, "joined": 1.0, "words": 0.5, "speakers": 1.0, "time": 1.0,
           "dated": 1.0, "spoken_then": 1.0, "community": 0.5, "neighbours": 0.5}
JOIN_PER_ENTITY = 20  # entities one fact away that a named entity joins to
COMMUNITY_MEMBERS = 20  # entities of a named entity's community whose episodes join the signal
COMMUNITY_CAP = 100  # newest episodes one of those members contributes
# How much nearer in meaning another speaker's turn must be than the named speaker's best before
# recall says the question is not in memory, and how near the named speaker's best may be at most:
# a speaker who said something that near was talking about it too ("what did you think of Mel's
# race?"), so the question is theirs. Chosen together on the dev half of bench.locomo as the pair
# that catches the most adversarial questions while a not_in_graph there is right at least as
# often as it is wrong (docs/benchmarks.md).
VOICE_MARGIN = 0.12
VOICE_CEILING = 0.45
SAID_SPAN_MS = 400 * 86_400_000  # the longest span a turn's time expression says ("last year", with slack)
# A question that asks when: the answer is a turn that says a time.
_WHEN = re.compile(r"^\W*(?:since\s+)?when\b|\bhow\s+long\b|\b(?:what|which)\s+(?:year|month|day|date|week)\b",
                   re.IGNORECASE)
# Words of a question that say what is asked, not what about: left out of the full-text query.
QUESTION_WORDS = frozenset("""did does do done doing ever kind sort type much many whose which something anything
    someone anyone thing things like get got tell told say said""".split()) | {"such"}
_AGENT = re.compile(AGENT_PATTERN)
CUSTOMER = "Customer"

_VIA = {"mentions": "entity <-MENTIONS- episode", "session": "entity -HAS_SESSION-> session <-IN- episode",
        "spoke": "speaker <-SPOKEN_BY- episode", "named": "speaker <-NAMES- episode"}


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
    ranks: list[tuple[str, int]] = field(default_factory=list)  # (signal, rank there)
    via_entity: bool = False

    @property
    def fused(self) -> float:
        return sum(WEIGHTS[s] / (RRF_K + r) for s, r in self.ranks)


# ------------------------------------------------------------------ input


def _question(value: object) -> str:
    # The question is free text (inputs.check_text); read with its spacing collapsed.
    return " ".join(inputs.check_text(value, "q", MAX_QUESTION).split())


def _k(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_K:
        raise InvalidInput(f"k must be an integer from 1 to {MAX_K}")
    return value


def _session(value: object) -> str | None:
    if value is None:
        return None
    return inputs.check_identifier(value, "session")


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
        if any(best_candidate(g, [(r["uid"], key)]) for g in grams):
            out.append(r)
    return out


def _grams_by_len(ngrams: set[str]) -> dict[int, list[str]]:
    by_len: dict[int, list[str]] = {}
    for g in ngrams:
        by_len.setdefault(len(g.split()), []).append(g)
    return by_len


def _fuzzy_queries(text: str, covered: set[str]) -> list[str]:
    """Full-text queries for the words no exact name covered: each longer word fuzzily (edit
    distance 1, or 2 from five letters), and each pair of neighbouring words as an intersection, so "alcie rao" finds
    "alice rao" without listing every "rao". Numbers and short words are matched as they are."""
    words = name_words(text)

    def open_word(w: str) -> bool:
        return w not in covered and w not in STOPWORDS

    singles = [_term(w) for w in words if open_word(w) and _term(w).startswith("%")]
    pairs = [f"{_term(a)} {_term(b)}" for a, b in zip(words, words[1:])
             if open_word(a) and open_word(b) and (len(a) >= 2 and len(b) >= 2)]
    out = list(dict.fromkeys(pairs + singles))
    return out[:MAX_FUZZY_QUERIES]


def _term(w: str) -> str:  # RediSearch: %w% = edit distance 1, %%w%% = 2 (a swap is 2)
    if any(ch.isdigit() for ch in w) or len(w) < 4:
        return w
    return f"%{w}%" if len(w) == 4 else f"%%{w}%%"


def _fuzzy_params(queries: list[str]) -> dict[str, Any]:
    """ENTITIES_FUZZY's parameters: each query with its fuzzy terms, and those terms once each."""
    parts = [[t for t in ft.split() if t.startswith("%")] for ft in queries]
    return {"words": sorted({t for p in parts for t in p}),
            "queries": [{"ft": ft, "parts": p} for ft, p in zip(queries, parts)]}


async def find_entities(client: GraphClient, tenant: str, text: str) -> list[Anchor]:
    """The entities a text names: exactly (one of its n-grams equals a name_key, through the
    index), or misspelt (full-text candidates for the words left over, kept when the whole name is
    within the fuzzy threshold of an n-gram of the text with as many words)."""
    ngrams = word_ngrams(text)
    exact = await client.run(tenant, q.ENTITIES_EXACT, {"keys": sorted(ngrams)}) if ngrams else []
    return await _with_misspelt(client, tenant, text, ngrams, exact)


async def _with_misspelt(client: GraphClient, tenant: str, text: str, ngrams: set[str],
                         exact: list[dict[str, Any]]) -> list[Anchor]:
    """`find_entities` once the exact names are known: the misspelt ones added."""
    covered = {w for r in exact for w in (r["key"] or "").split()}
    queries = _fuzzy_queries(text, covered)
    fuzzy = []
    if queries:
        rows = await client.run(tenant, q.ENTITIES_FUZZY, {**_fuzzy_params(queries), "limit": FUZZY_LIMIT})
        fuzzy = _accept_fuzzy(rows, _grams_by_len(ngrams))
    return _anchors(exact + fuzzy)


def _anchors(rows: list[dict[str, Any]]) -> list[Anchor]:
    anchors: dict[str, Anchor] = {}
    for r in rows:
        anchors.setdefault(r["uid"], Anchor(r["uid"], r["name"], r["type"], r.get("how") or "exact"))
    return list(anchors.values())


@dataclass(frozen=True)
class Subject:
    """What a recall's subject stands for: one entity (`anchor`, with a `matched` note when it was
    read as a name rather than its key), or an `ambiguous` name, or nothing (all None)."""

    anchor: Anchor | None = None
    matched: Matched | None = None
    ambiguous: Ambiguous | None = None


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


# ------------------------------------------------------------------ episodes


def _sim(d: float) -> str:
    return f"{1.0 - float(d):.2f}"


def _add(cands: dict[str, _Candidate], signal: str, ranked: list[tuple[str, float, list[str], bool]]) -> None:
    rank = 0
    for eid, d, hops, via_entity in ranked:
        c = cands.setdefault(eid, _Candidate(eid, float(d)))
        if any(s == signal for s, _ in c.ranks):  # a turn beside two hits counts once, at its best
            continue
        rank += 1
        c.d = min(c.d, float(d))
        _hit(c, signal, rank, hops, via_entity)


def _hit(c: _Candidate, signal: str, rank: int, hops: list[str], via_entity: bool) -> None:
    """A signal found the candidate at this rank: its score counts, and the path says how it was
    found (a path through a named entity or speaker first)."""
    c.ranks.append((signal, rank))
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


_SIGNAL_ORDER = ("entities", "joined", "speakers", "community", "vector", "words", "time", "spoken_then", "dated")  # the order the fusion adds them in
_SPEAKER_SIGNALS = frozenset({"speakers", "spoken_then", "dated"})
_VIA_ENTITY = frozenset({"entities", "joined", "speakers", "community"})


def _signal_parts(session, n, anchors: list[Anchor], speaker_keys: list[str], windows: list[Window],
                  ft: str | None, when: bool = False) -> tuple[tuple[str, ...], dict[str, Any]]:
    """Which of signals 1-8 a question runs (meaning always; each other one when the question gave
    it something to search with), and their parameters."""
    parts = ["vector_in_session" if session is not None else "vector"]
    params: dict[str, Any] = {"n": n, "session": session}
    # An entity that is a speaker the question names (the subject of the facts their turns state)
    # anchors neither the entities signal nor the join: their turns and the turns naming them are
    # the speaker signal's, and a join from a speaker reaches everything they ever talked about
    # (on the dev half of bench.locomo it cost every k, even through only the fact nearest the
    # question). Its facts still come with the answer.
    own = [a for a in anchors if name_key(a.name) not in speaker_keys]
    if anchors:
        params.update(uids=[a.uid for a in anchors], entity_uids=[a.uid for a in own], cap=CAP)
    if own:
        parts.append("entities")
        if WEIGHTS["joined"]:
            parts.append("joined")
            params.update(per_entity=JOIN_PER_ENTITY)
    if anchors:
        if WEIGHTS["community"]:
            parts.append("community")
            params.update(per_community=COMMUNITY_MEMBERS, community_cap=COMMUNITY_CAP)
    if speaker_keys and WEIGHTS["speakers"]:
        parts.append("speakers")
        params.update(keys=speaker_keys, speaker_cap=SPEAKER_CAP, cap_named=SPEAKER_NAMED_CAP)
    if windows and WEIGHTS["time"]:
        parts.append("time")
        params.update(windows=[[w.start_ms, w.end_ms] for w in windows], time_scan=TIME_SCAN, said_span=SAID_SPAN_MS)
    if windows and speaker_keys and WEIGHTS["spoken_then"]:
        parts.append("spoken_then")
        params.update(keys=speaker_keys, speaker_cap=SPEAKER_CAP,
                      windows=[[w.start_ms, w.end_ms] for w in windows])
    if when and speaker_keys and WEIGHTS["dated"]:
        parts.append("dated")
        params.update(keys=speaker_keys)
    if ft:
        parts.append("words")
        params.update(ft=ft, words_scan=WORDS_SCAN)
    return tuple(parts), params


async def _fused_episodes(client, tenant, v, session, n, k, anchors: list[Anchor], speaker_keys: list[str],
                          windows: list[Window], ft: str | None, when: bool = False):
    """Signals 1-8 in one statement (queries.recall.signals), fused here; then the neighbours of
    the strongest, the answer's episodes in full and the facts they derived in another
    (queries.recall.NEIGHBOURS_IN_FULL), and the final fusion. Returns the answer as candidates in
    order, the episodes by id, the derived fact rows, and whether the speaker signal found anything."""
    parts, params = _signal_parts(session, n, anchors, speaker_keys, windows, ft, when)
    params["v"] = v
    groups = [g for g in (tuple(x for x in parts if x in _SPEAKER_SIGNALS),
                          tuple(x for x in parts if x not in _SPEAKER_SIGNALS)) if g]
    rows = [r for got in await _all(*(client.run(tenant, q.signals(g), params) for g in groups)) for r in got]
    if not rows:
        return [], {}, [], False
    names = {a.uid: a.name for a in anchors}
    fixed = {
        "vector": [f"session '{session}' <-IN- episode"] if session is not None else [],
        "words": [f"q -> words '{ft.replace(' | ', ' ') if ft else ''}' (full-text)"],
        "time": ["q -> time " + ", ".join(w.label() for w in windows)],
        "dated": ["q asks when -> episode says a time"],
        "spoken_then": ["q -> speaker and time " + ", ".join(w.label() for w in windows)],
    }
    paths = {"entities": lambda h: _entity_path(h, names), "joined": lambda h: _joined_path(h, names),
             "speakers": _speaker_path, "community": lambda h: _community_path(h, names)}
    by_signal = {r["signal"]: r for r in rows}
    cands: dict[str, _Candidate] = {}
    for signal in _SIGNAL_ORDER:  # the order a path is told in: through a named entity or speaker first
        r = by_signal.get(signal)
        if r is None:
            continue
        # a path through an entity or speaker is written out only for the candidates answered (_Hops)
        path = paths.get(signal)
        _add(cands, signal, [(eid, d, [_Hops(path, h)] if path else fixed[signal], signal in _VIA_ENTITY)
                             for eid, d, h in zip(r["ids"], r["ds"], r["hops"])])
    pre = [c.id for c in sorted(cands.values(), key=_order)[:k]]
    got = await client.run(tenant, q.NEIGHBOURS_IN_FULL, {
        "pre": pre, "seeds": pre[:NEIGHBOUR_SEEDS], "reach": NEIGHBOUR_REACH, "v": v,
        "subject": None, "limit": DERIVED_SCAN * k})
    if not got:  # every candidate was deleted since the signals read it
        return [], {}, [], "speakers" in by_signal
    out = got[0]
    by_id: dict[str, dict[str, Any]] = {}
    for eid, session_id, speaker, text, at_ms, d in out["eps"]:
        by_id[eid] = {"id": eid, "session": session_id, "speaker": speaker, "text": text, "at_ms": at_ms, "d": d}
    firsts: dict[str, tuple[str, str]] = {}  # a turn beside two seeds is a neighbour once, at its first place
    for nid, seed, side in out["near"]:
        firsts.setdefault(nid, (seed, side))
    pool = [cands[i] for i in pre]
    for rank, (nid, (seed, side)) in enumerate(firsts.items(), start=1):
        c = cands.get(nid)
        if c is None:
            c = cands[nid] = _Candidate(nid, 2.0)
        if nid not in pre:
            pool.append(c)
        _hit(c, "neighbours", rank, [f"turn {side} '{seed}' in its session"], False)
    for c in pool:  # the answer is ordered on each one's own distance to the question
        if c.id in by_id:
            c.d = float(by_id[c.id]["d"])
    top = sorted((c for c in pool if c.id in by_id), key=_order)[:k]
    for c in top:
        c.hops = [step for hop in c.hops for step in (hop.steps() if isinstance(hop, _Hops) else [hop])]
    ids = {c.id for c in top}
    derived = [row for row in out["derived"] if set(row["episodes"]) & ids][:k]
    return top, by_id, derived, "speakers" in by_signal


@dataclass(frozen=True)
class _Hops:
    """A signal's hops of one candidate, as read; written out as path steps when it is answered."""

    path: Any  # the hops -> the path's steps
    hops: Any

    def steps(self) -> list[str]:
        return self.path(self.hops)


def _entity_path(hops: list[dict[str, Any]], names: dict[str, str]) -> list[str]:
    vias: dict[str, set[str]] = {}
    for h in hops:
        vias.setdefault(h["uid"], set()).add(h["via"])
    out: list[str] = []
    for uid in sorted(vias):  # a customer's own turns also MENTION them: say "session" once
        out += [f"q -> entity '{names[uid]}'", _VIA["session" if "session" in vias[uid] else "mentions"]]
    return out


def _joined_path(hops: list[dict[str, Any]], names: dict[str, str]) -> list[str]:
    out: list[str] = []
    for h in sorted(hops, key=lambda h: (h["uid"], h["via"])):
        out += [f"q -> entity '{names[h['uid']]}'", f"entity <-ABOUT- fact -ABOUT-> entity '{h['via']}'",
                _VIA["mentions"]]
    return out


def _community_path(hops: list[dict[str, Any]], names: dict[str, str]) -> list[str]:
    out: list[str] = []
    for h in sorted(hops, key=lambda h: (h["uid"], h["via"] or "")):
        out += [f"q -> entity '{names[h['uid']]}'",
                f"entity -IN_COMMUNITY-> community <-IN_COMMUNITY- entity '{h['via']}'", _VIA["mentions"]]
    return out


def _speaker_path(hops: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for h in sorted(hops, key=lambda h: (h["name"], h["via"])):
        out += [f"q -> speaker '{h['name']}'", _VIA[h["via"]]]
    return out


def without_words(text: str, words: set[str]) -> str:
    """The text without the given (normal-form) words; the text itself if nothing would be left."""
    kept = [w for w in text.split() if name_key(w).strip(".-'") not in words
            and bare_word(w) not in words]
    return " ".join(kept) if any(re.search(r"\w", w) for w in kept) else text


def fulltext_query(text: str, drop: set[str] = frozenset()) -> str | None:
    """The question as a full-text query: its plain words (letters and digits only, so nothing in
    it is RediSearch syntax), stopwords, one-letter words and `drop` out, OR'd; None when no word
    is left."""
    words = [part for w in name_words(text) for part in w.split("_") if part]
    keep = [w for w in dict.fromkeys(words)
            if len(w) > 1 and w not in STOPWORDS and w not in QUESTION_WORDS and w not in drop]
    return " | ".join(keep[:MAX_WORDS]) or None


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


async def _subject_facts(client, tenant, v, subject: Anchor, anchors: list[Anchor], limit: int):
    return await client.run(tenant, q.FACTS_OF_SUBJECT, {
        "subject": subject.uid, "uids": [a.uid for a in anchors], "v": v, "per_entity": PER_ENTITY_FACTS,
        "limit": limit})


async def _entity_facts(client, tenant, exact_t: asyncio.Task, anchors_t: asyncio.Task, vector_f: asyncio.Future,
                        limit: int):
    """The named entities' facts: their candidates (queries.recall.FACT_CANDIDATES) as soon as the
    entities named exactly are known, while the question is still being embedded (a misspelt name,
    found later, adds its own); ranked once the vector is there, beside round trip 2. Candidates
    are per entity, so reading them in two goes changes nothing. `vector_f` gets the vector once
    round trip 2 is on its way: that one decides when recall answers, so it is sent first."""
    async def candidates(uids: list[str]) -> list[str]:
        if not uids:
            return []
        rows = await client.run(tenant, q.FACT_CANDIDATES, {"uids": uids, "per_entity": PER_ENTITY_FACTS})
        return [r["id"] for r in rows]

    exact = [a.uid for a in _anchors(await exact_t)]
    ids = await candidates(exact)
    uids = [a.uid for a in await anchors_t]
    ids += [i for i in await candidates([u for u in uids if u not in exact]) if i not in ids]
    if not ids:
        return []
    return await client.run(tenant, q.FACTS_OF_ENTITIES, {"fact_ids": ids, "uids": uids, "v": await vector_f,
                                                          "limit": limit})


# ------------------------------------------------------------------ recall


async def recall(client: GraphClient, embedder: Embedder, tenant: str, q_text: str, *, k: int = 10,
                 subject: str | None = None, session: str | None = None,
                 reader: str | None = None) -> RecallResult:
    question = _question(q_text)
    k = _k(k)
    session = _session(session)
    reader = _reader(reader)
    hybrid = subject is None  # a customer's own memory (subject) keeps the two sources it had
    n = max(OVERFETCH * k, HYBRID_POOL if hybrid else MIN_CANDIDATES)
    relative = hybrid and needs_reference(question)
    ngrams = word_ngrams(question)
    grams = sorted(g for g in ngrams if len(g.split()) <= 2) if hybrid else []

    # Round trip 1: the entities and speakers the question names, and the reference time of
    # "yesterday" if it says so. The question's vector (CPU, off the loop) starts at once, on the
    # speakers this process last saw in the tenant (`_SpeakerKeys`); the speaker query checks that
    # guess and a wrong one is embedded again, so the vector is always the one the stored speakers
    # give. Round trip 2 (see the module docstring) starts once the vector is there.
    names_t = _task(client.run(tenant, q.NAMES, {"keys": sorted(ngrams), "speaker_keys": grams})
                    if ngrams else _empty())
    speakers_t = _task(_kind(names_t, "speaker"))
    # the list of the tenant's speakers, read again when older than a few seconds (next question's guess)
    refresh_t = _task(SPEAKER_KEYS.read(client, tenant) if grams and SPEAKER_KEYS.stale(client, tenant)
                      else _none())
    vector_t = _start_question_vector(client, embedder, tenant, question, grams, speakers_t)
    exact_t = _task(_kind(names_t, "entity"))  # rows of the entities named exactly
    # the misspelt-name lookup waits for the vector: beside the model it slows the embedding that
    # round trip 2 waits for, and it rarely adds a name (docs/benchmarks.md: where recall's time goes)
    anchors_t = _task(_entities_named(client, tenant, question, ngrams, exact_t, vector_t if hybrid else None))
    fused_t: asyncio.Task | None = None
    latest_t: asyncio.Task | None = None
    facts_t: asyncio.Task | None = None  # the subject's or the named entities' facts: for the answer, not the fusion
    subj: Anchor | None = None
    matched: Matched | None = None
    signals: dict[str, list[tuple[str, float, list[str], bool]]] = {}  # with a subject
    top: list[_Candidate] = []
    by_id: dict[str, dict[str, Any]] = {}
    derived: list[dict[str, Any]] = []
    spoken = False
    keys: list[str] = []  # the speakers the question names
    try:
        if subject is not None:
            resolved = await resolve_subject(client, tenant, subject)
            matched = resolved.matched
            if resolved.ambiguous is not None:
                return RecallResult(shape=RecallShape.AMBIGUOUS, items=[], facts=[], ambiguous=resolved.ambiguous)
            subj = resolved.anchor
            if subj is None:
                return RecallResult(shape=RecallShape.UNKNOWN_NAME, items=[], facts=[])
            anchors = [a for a in await anchors_t if a.uid != subj.uid]
            v = await vector_t
            facts_t = _task(_subject_facts(client, tenant, v, subj, anchors, k))
            meaning, named = await _episodes_with_subject(client, tenant, v, subj, anchors, session, n)
            signals = {"entities": named, "vector": meaning}
        else:
            latest_t = _task(client.run(tenant, q.LATEST, {"session": session}) if relative else _empty())
            vector_f: asyncio.Future = asyncio.get_running_loop().create_future()
            facts_t = _task(_entity_facts(client, tenant, exact_t, anchors_t, vector_f, k))
            keys = [s["key"] for s in await speakers_t]
            windows = await _windows(question, latest_t)
            # a speaker's name is the speaker signal's: as a full-text word it would favour every greeting
            ft = fulltext_query(question, drop={w for key in keys for w in key.split()})
            v = await vector_t

            def run(anchors: list[Anchor]) -> asyncio.Task:
                return _task(_fused_episodes(client, tenant, v, session, n, k, anchors, keys, windows, ft,
                                             bool(_WHEN.search(question))))

            if anchors_t.done():
                anchors = anchors_t.result()
                fused_t = run(anchors)
                vector_f.set_result(v)  # the facts' ranking wakes after round trip 2 has started
            else:
                # the misspelt-name lookup is still running: start with the names found exactly and
                # run again only if it adds an entity (rare; the answer is always the full one's)
                exact = _anchors(await exact_t)
                fused_t = run(exact)
                vector_f.set_result(v)
                anchors = await anchors_t
                if {a.uid for a in anchors} != {a.uid for a in exact}:
                    fused_t.cancel()
                    fused_t = run(anchors)
            (top, by_id, derived, spoken), _ = await _all(fused_t, refresh_t)
    except BaseException:
        if facts_t is not None:
            facts_t.cancel()
        raise
    finally:
        for t in (names_t, speakers_t, exact_t, vector_t, anchors_t, latest_t, refresh_t, fused_t):
            if t is not None and not t.done():
                t.cancel()  # an embedding thread finishes on its own; nobody waits for it
    assert facts_t is not None
    if hybrid:
        anchor_facts = await facts_t
    else:
        # with a subject, round trip 3: the k best in full (their distances too) and their facts
        cands: dict[str, _Candidate] = {}
        for name, ranked in signals.items():
            _add(cands, name, ranked)
        pre_ids = [c.id for c in sorted(cands.values(), key=_order)[:k]]
        rows, derived, anchor_facts = await _all(
            client.run(tenant, q.EPISODES_BY_ID, {"ids": pre_ids, "v": v}) if pre_ids else _empty(),
            _derived(client, tenant, pre_ids, subj), facts_t)
        by_id = {r["ep"]["id"]: r["ep"] for r in rows}
        for c in cands.values():
            if c.id in by_id and by_id[c.id]["d"] is not None:
                c.d = float(by_id[c.id]["d"])
        top = [c for c in sorted(cands.values(), key=_order) if c.id in by_id][:k]
        ids = {c.id for c in top}
        derived = [row for row in derived if set(row["episodes"]) & ids][:k]
    items = []
    for c in top:
        r = by_id[c.id]
        items.append(RecallItem(
            episode_id=c.id, session=r["session"], speaker=r["speaker"], text=r["text"], at=from_ms(r["at_ms"]),
            score=round(c.fused, 6), path=c.hops + [f"q ~ episode (vector {_sim(c.d)})"]))

    facts: dict[str, FactView] = {}
    for row in list(anchor_facts) + list(derived):
        facts.setdefault(row["fact"]["fact_id"], fact_view(row))

    connected = (any(c.via_entity for c in top) or bool(anchor_facts)) and not _another_voice(top, by_id, keys)
    named_any = subj is not None or bool(anchors) or bool(spoken)
    if connected:
        shape = RecallShape.PATH
    elif named_any or not (items or facts):
        shape = RecallShape.NOT_IN_GRAPH
    else:
        shape = RecallShape.MEMORY

    if reader and facts:
        await client.run(tenant, fq.CONSULTED, {"reader": reader, "fact_ids": list(facts), "now_ms": now_ms()})
    return RecallResult(shape=shape, items=items, facts=list(facts.values()), matched=matched)


# ------------------------------------------------------------------ round trip 1


class _SpeakerKeys:
    """Per graph client (kept with it), each tenant's speaker keys as last read: a guess at which of a
    question's n-grams are speakers, so its vector (embedded without their names) can start before
    the speaker query answers. The guess is only a head start: recall checks it against that query
    every time and embeds again when they differ, so a stale list (a speaker added since the last
    read, which is at most TTL_S old, a few seconds) never changes an answer; it costs one more
    embedding. Each speaker query's answer corrects the list for the n-grams it asked about."""

    TTL_S = 5.0
    MAX = 20_000  # keys read per tenant; a bigger tenant's guess covers the first MAX

    def _tenants(self, client: GraphClient) -> dict[str, tuple[frozenset[str], float]]:
        return client.kept("memory.recall.speaker_keys", dict)

    def guess(self, client: GraphClient, tenant: str) -> frozenset[str] | None:
        """The tenant's speaker keys as last known (None before the first read)."""
        entry = self._tenants(client).get(tenant)
        return entry[0] if entry is not None else None

    def stale(self, client: GraphClient, tenant: str) -> bool:
        entry = self._tenants(client).get(tenant)
        return entry is None or time.monotonic() - entry[1] > self.TTL_S

    async def read(self, client: GraphClient, tenant: str) -> None:
        rows = await client.run(tenant, q.SPEAKER_KEYS, {"limit": self.MAX})
        self._tenants(client)[tenant] = (frozenset(r["key"] for r in rows), time.monotonic())

    def learn(self, client: GraphClient, tenant: str, grams: list[str], found: set[str]) -> None:
        """What a speaker query said about these n-grams (the speakers among them), kept."""
        tenants = self._tenants(client)
        keys, at = tenants.get(tenant, (frozenset(), 0.0))  # learnt alone: still due for a read
        tenants[tenant] = ((keys - set(grams)) | found, at)


SPEAKER_KEYS = _SpeakerKeys()


def _start_question_vector(client: GraphClient, embedder: Embedder, tenant: str, question: str, grams: list[str],
                           speakers_t: asyncio.Task) -> asyncio.Task:
    """The question's vector, without the names of the speakers it names (see the module
    docstring). On a guess at the speakers the model starts now, before any query is sent (a task
    would start it only at the caller's next await, after the first round trip's queries are
    built); the task embeds again if the speaker query disagrees with the guess."""
    guess = SPEAKER_KEYS.guess(client, tenant) if grams else frozenset()
    if guess is None:  # nothing read yet for this tenant: wait for the speaker query
        return _task(_vector_on_speakers(client, embedder, tenant, question, grams, speakers_t, frozenset(), None))
    guessed = guess.intersection(grams)
    first = embedder.submit([_text_without(question, guessed)], _wired)
    return _task(_vector_on_speakers(client, embedder, tenant, question, grams, speakers_t, guessed, first))


async def _vector_on_speakers(client: GraphClient, embedder: Embedder, tenant: str, question: str, grams: list[str],
                              speakers_t: asyncio.Task, guessed: frozenset[str],
                              first: asyncio.Future | None) -> VectorParam:
    try:
        found = {s["key"] for s in await speakers_t}
    except BaseException:
        if first is not None:
            first.cancel()
        raise
    if first is not None and found == guessed:
        return await first
    SPEAKER_KEYS.learn(client, tenant, grams, found)
    if first is not None:
        first.cancel()  # the wrong text's thread finishes on its own
    return await embedder.submit([_text_without(question, found)], _wired)


def _wired(vectors: list[list[float]]) -> VectorParam:
    # in the model's thread: the vector's Cypher text (a quarter of a millisecond) is made before
    # the event loop hears the vector is there
    return wire_vector(vectors[0])


def _text_without(question: str, speaker_keys: set[str]) -> str:
    return without_words(question, {w for key in speaker_keys for w in key.split()}) if speaker_keys else question


async def _windows(question: str, latest_t: asyncio.Task) -> list[Window]:
    latest = await latest_t
    reference = from_ms(latest[0]["at_ms"]) if latest and latest[0]["at_ms"] is not None else None
    return [w for w in time_windows(question, reference) if w.end_ms > w.start_ms]


async def _kind(names_t: asyncio.Task, kind: str) -> list[dict[str, Any]]:
    return [r for r in await names_t if r["kind"] == kind]


async def _entities_named(client: GraphClient, tenant: str, question: str, ngrams: set[str],
                          exact_t: asyncio.Task, after: asyncio.Task | None = None) -> list[Anchor]:
    exact = await exact_t
    if after is not None:
        await asyncio.wait([after])
    return await _with_misspelt(client, tenant, question, ngrams, exact)


def _task(aw) -> asyncio.Task:
    return asyncio.ensure_future(aw)


async def _all(*aws) -> list[Any]:
    """asyncio.gather that cancels the rest when one fails."""
    tasks = [_task(a) for a in aws]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        raise


async def _derived(client, tenant, ids: list[str], subj: Anchor | None) -> list[dict[str, Any]]:
    if not ids:
        return []
    return await client.run(tenant, q.FACTS_DERIVED, {"ids": ids, "subject": subj.uid if subj else None,
                                                      "limit": 2 * len(ids)})


def _another_voice(top: list[_Candidate], by_id: dict[str, dict[str, Any]], keys: list[str]) -> bool:
    """Whether the question names one speaker but what is nearest to it in meaning was said by
    someone else, by more than VOICE_MARGIN of similarity, and none of their own turns is within
    VOICE_CEILING of it: "What did Caroline realise after her
    charity race?" when the race was Melanie's. The speaker's own turns are still found (and
    returned); the graph does not connect the question to what that speaker said."""
    if len(keys) != 1 or not top:
        return False
    named = [1.0 - c.d for c in top if name_key(by_id[c.id]["speaker"] or "") == keys[0]]
    other = [1.0 - c.d for c in top if name_key(by_id[c.id]["speaker"] or "") != keys[0]]
    best = max(named, default=0.0)
    return bool(other) and max(other) - best > VOICE_MARGIN and best < VOICE_CEILING


def _order(c: "_Candidate") -> tuple[float, float, str]:
    return (-c.fused, c.d, c.id)


async def _empty() -> list:
    return []


async def _none() -> Any:
    return None


__all__ = ["recall", "find_entities", "resolve_subject", "Subject", "fulltext_query", "Anchor", "fact_view", "RRF_K", "WEIGHTS"]
