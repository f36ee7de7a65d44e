"""Recall's signals: each a ranked list of episodes, run in the database and fused here.

Without a `subject` all of them run (each one the question gives something to search with); with
one, the first two, over the subject's episodes only.

1. vector - meaning: the question's vector (question_vector.py) against episode vectors. Without a
   filter this is the vector index, over-fetched (3k, at least HYBRID_POOL). With a session or
   subject filter the filtered set is small and reached through an index (Session.session_id,
   Entity.uid), so it is scored exactly instead: an over-fetched index search in a large graph can
   hold none of a small session's turns.
1b. distinct - a question that names nothing on file, no speaker and no time, asked of the vector
   index again with the tenant's common ground taken away (common_ground.py): what a turn says of
   its own, not what all its small talk shares. Weighed only in a question of meaning.
2. entities - the graph: entities the question names (anchors.py) and the `subject`, then their
   episodes (`<-MENTIONS-`, or `-HAS_SESSION-> <-IN-` for a customer), those reached from more
   named entities first, then nearest in meaning.
3. speakers - a speaker the question names (an n-gram equal to a Speaker.key, the normal form of a
   turn's `speaker`): the turns they spoke (`<-SPOKEN_BY-`), then turns naming them (`<-NAMES-`),
   nearest in meaning first.
4. words - full-text (RediSearch over Episode.text: stemmed, TF-IDF scored): the question's plain
   words OR'd (question.fulltext_query), the named speakers' names out. Ties broken by meaning.
5. time - time expressions in the question (`time_expressions`: "in May 2023", "last year",
   "three weeks ago"): the turns whose time falls in those windows (Episode.at_ms, at most
   TIME_SCAN), and the turns that SAY a time in them ("last Saturday" said on Monday 8 May 2023 is
   6 May: Episode.said_from_ms / said_to_ms, read at write), nearest in meaning first. Relative
   expressions are read against the newest turn in memory (in the session, with a session filter).
5b. spoken_then - the question names a speaker and a time: that speaker's turns said in those
   windows or saying a time in them ("What setback did Melanie face in October 2023?"), nearest in
   meaning first (from the speaker's newest SPEAKER_CAP turns): where speakers and time meet.
6. dated - a question that asks when ("When did Caroline go to the support group?", "how long")
   and names a speaker: that speaker's turns that say a time, nearest in meaning first. Without a
   named speaker it stays off ("when does my line drop?" asks about a habit).
7. joined - two hops: the entities one current fact away from a named entity (Pune <-ABOUT- fact
   -ABOUT-> Alice Rao), through its JOIN_PER_ENTITY facts whose claim is nearest the question, and
   the episodes that MENTION those, nearest in meaning first. A named speaker anchors neither this
   nor the entities signal: their turns are the speaker signal's, and a join from a speaker reaches
   everything they ever talked about (it cost every k on bench.locomo's dev half).
8. community - the entities that share a Community with a named entity (entity_graph's
   `algo.labelPropagation`, refreshed by netops), at most COMMUNITY_MEMBERS per named entity, and
   the episodes that MENTION those (each one's newest COMMUNITY_CAP), nearest in meaning first. A
   tenant whose communities were never computed has none, and the signal finds nothing.
9. neighbours - the NEIGHBOUR_REACH turns before and after each of the NEIGHBOUR_SEEDS best items
   of the fusion of 1-8 (same session; by time, then arrival `pos`): an answer ("Yes! A sunset
   over the lake.") often carries none of the question's words and sits right after the turn that
   does ("Did you finish that painting?"). Ranked by the rank of the hit they neighbour, the nearer
   first, the reply before the turn before. The k best of 1-8 are taken with the turns around the
   strongest, then all are fused; an item outside those k can enter the answer only as a neighbour.
   In a question of meaning (question.Kind) the turns beside a near hit (tuning.NEAR_SEED) are
   `near_neighbours` and rank no higher than that hit's full score; the others barely count. A
   turn that only asks (question.asks_only) counts for less there, and a near one ranks right
   after its reply.

The words signal runs for a question of meaning only when its kind hangs on it: when it holds words
the embedder cannot read, which the same statement counts in the tenant's turns (`terms`; the tenant's turns beside it).

Signals 1-8 go as one statement (queries.recall.signals), or two side by side when the question
names a speaker (the speaker's signals and the rest: the server runs each on a core of its own);
the neighbours, the answer's episodes in full and the facts they DERIVED as a third
(queries.recall.NEIGHBOURS_IN_FULL). A path through an entity or speaker is written out only for
the items answered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from relay_graph.memory.entities import name_key
from relay_graph.memory.queries import recall as q
from relay_graph.memory.recall import fusion, tuning
from relay_graph.memory.recall import question as qn
from relay_graph.memory.recall.anchors import Anchor
from relay_graph.memory.recall.concurrency import empty, gather_all
from relay_graph.memory.recall.fusion import Candidate
from relay_graph.memory.time_expressions import Window
from relay_graph.runtime.db import GraphClient

# The order the fusion adds them in, which is the order a path is told in: through a named entity
# or speaker first.
ORDER = ("entities", "joined", "speakers", "community", "vector", "distinct", "words", "time", "spoken_then",
         "dated")
SPEAKER_SIGNALS = frozenset({"speakers", "spoken_then", "dated"})
VIA_ENTITY = frozenset({"entities", "joined", "speakers", "community"})


@dataclass(frozen=True)
class Ask:
    """What a question gives the signals to search with."""

    session: str | None
    n: int  # each signal's list
    k: int
    anchors: list[Anchor]
    speaker_keys: list[str]
    windows: list[Window]
    ft: str | None  # the full-text query
    when: bool = False  # it asks when
    unknown: tuple[str, ...] = ()  # the full-text terms the embedder does not know (question.unknown_terms)
    distinct: Any = None  # the question's vector without the tenant's common ground (common_ground.without)
    plain: frozenset[str] = frozenset()  # uids of the anchors whose names are plain words (question.plain_word)

    @property
    def names(self) -> list[Anchor]:
        """The anchors that are names, not plain words."""
        return [a for a in self.anchors if a.uid not in self.plain]

    @property
    def named(self) -> bool:
        return bool(self.names or self.speaker_keys or self.windows)


@dataclass
class Fused:
    """The answer of the signals: candidates in order, the episodes by id, the facts they derived,
    and whether the speaker signal found anything."""

    top: list[Candidate]
    by_id: dict[str, dict[str, Any]]
    derived: list[dict[str, Any]]
    spoken: bool


def parts_of(ask: Ask) -> tuple[tuple[str, ...], dict[str, Any]]:
    """Which of signals 1-8 a question runs (meaning always; each other one when the question gave
    it something to search with), and their parameters."""
    w = tuning.WEIGHTS
    parts = ["vector_in_session" if ask.session is not None else "vector"]
    params: dict[str, Any] = {"n": ask.n, "session": ask.session}
    # a question that names nothing may be one of meaning: asked again without the common ground
    if ask.distinct is not None and ask.session is None and not ask.named and (
            tuning.MEANING_WEIGHTS["distinct"] or tuning.WORDS_WEIGHTS["distinct"]):
        parts.append("distinct")
        params.update(dv=ask.distinct)
    # An entity that is a speaker the question names anchors neither the entities signal nor the
    # join (see the module docstring, 7). Its facts still come with the answer.
    own = [a for a in ask.anchors if name_key(a.name) not in ask.speaker_keys]
    if ask.anchors:
        params.update(uids=[a.uid for a in ask.anchors], entity_uids=[a.uid for a in own], cap=tuning.CAP)
    # Nor do plain words (question.plain_word) in a question that names nothing else: a join from
    # "wedding" alone reaches whoever went to one.
    if own:
        parts.append("entities")
        if w["joined"] and ask.named:
            parts.append("joined")
            params.update(per_entity=tuning.JOIN_PER_ENTITY, join_uids=[a.uid for a in own])
    if ask.anchors and w["community"]:
        parts.append("community")
        params.update(per_community=tuning.COMMUNITY_MEMBERS, community_cap=tuning.COMMUNITY_CAP)
    windows = [[x.start_ms, x.end_ms] for x in ask.windows]
    keys = ask.speaker_keys
    if keys and w["speakers"]:
        parts.append("speakers")
        params.update(keys=keys, speaker_cap=tuning.SPEAKER_CAP, cap_named=tuning.SPEAKER_NAMED_CAP)
    if windows and w["time"]:
        parts.append("time")
        params.update(windows=windows, time_scan=tuning.TIME_SCAN, said_span=tuning.SAID_SPAN_MS)
    if windows and keys and w["spoken_then"]:
        parts.append("spoken_then")
        params.update(keys=keys, speaker_cap=tuning.SPEAKER_CAP, windows=windows)
    if ask.when and keys and w["dated"]:
        parts.append("dated")
        params.update(keys=keys)
    # A question that names nothing is of meaning unless a word the embedder cannot read is
    # specific in this tenant (question.kind_of): its words are searched, and those words counted,
    # only then.
    if ask.ft and (ask.named or ask.unknown or tuning.MEANING_WEIGHTS["words"]):
        parts.append("words")
        params.update(ft=ask.ft, words_scan=tuning.WORDS_SCAN)
    if not ask.named and ask.unknown:
        parts.append("terms")
        params.update(terms=list(ask.unknown), df_scan=tuning.DF_SCAN)
    return tuple(parts), params


def kind(ask: Ask, by_signal: Mapping[str, dict[str, Any]], turns: list[dict[str, Any]]) -> qn.Kind:
    """The question's kind (question.kind_of), from the terms' counts the statement brought and
    the tenant's turns (queries.recall.TURNS)."""
    terms = by_signal.get("terms")
    found = dict(zip(terms["ids"], terms["ds"])) if terms else {}
    n = float(turns[0]["n"]) if turns else 0.0
    return qn.kind_of(ask.names, ask.speaker_keys, ask.windows, bool(found) and qn.specific(found, n))


async def fused_episodes(client: GraphClient, tenant: str, v, ask: Ask) -> Fused:
    """Signals 1-8 (one statement, or two side by side), fused here; then the neighbours of the
    strongest, the answer's episodes in full and the facts they derived (another statement), and
    the final fusion."""
    parts, params = parts_of(ask)
    params["v"] = v
    groups = [g for g in (tuple(x for x in parts if x in SPEAKER_SIGNALS),
                          tuple(x for x in parts if x not in SPEAKER_SIGNALS)) if g]
    turns_t = client.run(tenant, q.TURNS) if "terms" in parts else empty()
    *got_rows, turns = await gather_all(*(client.run(tenant, q.signals(g), params) for g in groups), turns_t)
    by_signal = {r["signal"]: r for got in got_rows for r in got}
    how = kind(ask, by_signal, turns)
    if not any(s in by_signal for s in ORDER):
        return Fused([], {}, [], False)
    spoken = "speakers" in by_signal
    weights = qn.weights(how)
    if "distinct" not in parts and weights["distinct"]:  # no common ground yet: meaning weighs as much
        weights = dict(weights) | {"vector": weights["vector"] + weights["distinct"]}
    cands = _fuse(by_signal, ask, weights)
    pre = [c.id for c in sorted(cands.values(), key=fusion.order)[:ask.k]]
    seeds = pre[:tuning.NEIGHBOUR_SEEDS]
    # in a question of meaning the turns beside a near hit weigh more (tuning.NEAR_SEED)
    near = {i for i in seeds if cands[i].d <= 1.0 - tuning.NEAR_SEED} if how is not qn.Kind.NAMED else None
    got = await client.run(tenant, q.NEIGHBOURS_IN_FULL, {
        "pre": pre, "seeds": seeds, "reach": tuning.NEIGHBOUR_REACH, "v": v,
        "subject": None, "limit": tuning.DERIVED_SCAN * ask.k})
    if not got:  # every candidate was deleted since the signals read it
        return Fused([], {}, [], spoken)
    return _with_neighbours(cands, pre, got[0], ask.k, weights, spoken, near)


def _fuse(by_signal: dict[str, dict[str, Any]], ask: Ask, weights: Mapping[str, float]) -> dict[str, Candidate]:
    """Signals 1-8's rows (ids, distances and hops per signal) fused into candidates."""
    names = {a.uid: a.name for a in ask.anchors}
    labels = ", ".join(w.label() for w in ask.windows)
    fixed = {
        "vector": [f"session '{ask.session}' <-IN- episode"] if ask.session is not None else [],
        "distinct": [],  # meaning too: the answer's path says "q ~ episode (vector ...)"
        "words": [f"q -> words '{ask.ft.replace(' | ', ' ') if ask.ft else ''}' (full-text)"],
        "time": ["q -> time " + labels],
        "dated": ["q asks when -> episode says a time"],
        "spoken_then": ["q -> speaker and time " + labels],
    }
    paths = {"entities": lambda h: fusion.entity_path(h, names), "joined": lambda h: fusion.joined_path(h, names),
             "speakers": fusion.speaker_path, "community": lambda h: fusion.community_path(h, names)}
    cands: dict[str, Candidate] = {}
    for signal in ORDER:
        r = by_signal.get(signal)
        if r is None:
            continue
        path = paths.get(signal)
        via = signal in VIA_ENTITY
        if path is None:  # no hops read: every item's path is the signal's own
            steps = fixed[signal]
            ranked = [(eid, d, steps, via) for eid, d in zip(r["ids"], r["ds"])]
        else:
            ranked = [(eid, d, [fusion.Hops(path, h)], via) for eid, d, h in zip(r["ids"], r["ds"], r["hops"])]
        fusion.add(cands, signal, ranked, weights)
    return cands


def _with_neighbours(cands: dict[str, Candidate], pre: list[str], out: dict[str, Any], k: int,
                     weights: Mapping[str, float], spoken: bool, near: set[str] | None = None) -> Fused:
    """The last fusion step: the neighbours of the seeds join the k best of signals 1-8, and the
    answer is ordered on each one's own distance to the question. `near` (a question of meaning
    only; None otherwise): the seeds near enough for their neighbours to count; in such a question a
    turn that only asks (question.asks_only) counts for ASKS_ONLY of its score, unless it is a near
    seed whose reply was read with the candidates: then it comes right after that reply."""
    near_seeds = near or set()
    by_id: dict[str, dict[str, Any]] = {}
    for eid, session_id, speaker, text, at_ms, d in out["eps"]:
        by_id[eid] = {"id": eid, "session": session_id, "speaker": speaker, "text": text, "at_ms": at_ms, "d": d}
    firsts: dict[str, tuple[str, str]] = {}  # a turn beside two seeds is a neighbour once, at its first place
    for nid, seed, side in out["near"]:
        firsts.setdefault(nid, (seed, side))
    replies: dict[str, str] = {}  # a seed's first turn after it (the rows come nearest first)
    for nid, seed, side in out["near"]:
        if side == "after":
            replies.setdefault(seed, nid)
    pool = [cands[i] for i in pre]
    for rank, (nid, (seed, side)) in enumerate(firsts.items(), start=1):
        c = cands.get(nid)
        if c is None:
            c = cands[nid] = Candidate(nid, 2.0, weights=weights)
        if nid not in pre:
            pool.append(c)
        fusion.hit(c, "near_neighbours" if seed in near_seeds else "neighbours", rank,
                   [f"turn {side} '{seed}' in its session"], False)
        if seed in near_seeds and nid not in near_seeds and c.below is None:
            c.below = cands[seed]  # the reply comes with the turn it answers, not above its full score
    for c in pool:
        if c.id in by_id:
            c.d = float(by_id[c.id]["d"])
            if near is not None and qn.asks_only(by_id[c.id]["text"]):
                c.factor = tuning.ASKS_ONLY
                if c.id in near_seeds and replies.get(c.id) in by_id:
                    c.answer = cands[replies[c.id]]  # the question comes with its answer, after it
    top = sorted((c for c in pool if c.id in by_id), key=fusion.order)[:k]
    for c in top:
        c.hops = fusion.written_out(c.hops)
    ids = {c.id for c in top}
    derived = [row for row in out["derived"] if set(row["episodes"]) & ids][:k]
    return Fused(top, by_id, derived, spoken)


async def episodes_with_subject(client: GraphClient, tenant: str, v, subject: Anchor, anchors: list[Anchor],
                                session: str | None, n: int) -> tuple[fusion.Ranked, fusion.Ranked]:
    """With a subject: its episodes nearest in meaning (vector), and those that also mention a
    named entity (entities), as two ranked lists."""
    names = {a.uid: a.name for a in anchors}
    rows = await client.run(tenant, q.EPISODES_OF_SUBJECT, {
        "subject": subject.uid, "session": session, "uids": list(names), "v": v, "cap": tuning.CAP, "n": n})

    def hops(r, with_hits: bool) -> list[str]:
        out = [f"subject -> entity '{subject.name}'", fusion.VIA["session" if "session" in r["vias"] else "mentions"]]
        if with_hits:
            for uid in sorted(r["hits"]):
                out += [f"q -> entity '{names[uid]}'", fusion.VIA["mentions"]]
        return out
    meaning = [(r["id"], r["d"], hops(r, False), True) for r in rows[:n]]
    named = sorted((r for r in rows if r["hits"]), key=lambda r: (-len(r["hits"]), r["d"]))[:n]
    return meaning, [(r["id"], r["d"], hops(r, True), True) for r in named]
