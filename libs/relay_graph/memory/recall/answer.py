"""`recall(q)`: the round trips, and the answer's shape.

Round trips: (1) entities and speakers named, the reference time if needed, and at once the
question's vector (question_vector.py); as soon as the entities are known, their facts' candidates
(each entity's newest, no vector needed), still beside the model; (2) once the vector is there,
the signals (signals.py) and beside them the named entities' facts' ranking; (3) the neighbours of
the fused best, the answer's episodes in full and the facts they DERIVED. With a subject, (2) is
the subject's episodes and facts and (3) the answer in full with its derived facts.

Shapes: `unknown_name` when the subject resolves to no entity (nothing is searched); `ambiguous`
when it is a name that stands for two or more customers (nothing is searched; `ambiguous` lists
them); `path` when a named entity or speaker connected the question to an episode or a fact;
`not_in_graph` when entities or speakers were named but nothing connects them (the items, if any,
were found only by meaning, words or time), or nothing was found at all, or the question names one
speaker and another speaker's turn is nearer to it in meaning (fusion.another_voice: LoCoMo's
adversarial questions ask one speaker about what the other did); `memory` when nothing named was
involved.

`RecallItem.score` is the fused score; the path says how each item was found (its first signal's
hops) and ends with its similarity ("q ~ episode (vector 0.82)"). There is no similarity floor:
MiniLM scores true paraphrases as low as 0.1, and the path says how weak an item is.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from relay_graph.memory.episodes import word_ngrams
from relay_graph.memory.facts import from_ms
from relay_graph.memory.models import FactView, Matched, RecallItem, RecallResult, RecallShape
from relay_graph.memory.queries import facts as fq
from relay_graph.memory.queries import recall as q
from relay_graph.memory.recall import anchors as an
from relay_graph.memory.recall import facts as rf
from relay_graph.memory.recall import common_ground, fusion, question_vector, signals, tuning
from relay_graph.memory.recall import question as qn
from relay_graph.memory.recall.anchors import Anchor
from relay_graph.memory.recall.concurrency import empty, gather_all, nothing, task
from relay_graph.memory.time_expressions import Window, needs_reference
from relay_graph.memory.time_expressions import windows as time_windows
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embeddings import Embedder
from relay_graph.runtime.times import now_ms


@dataclass
class _Started:
    """Round trip 1, under way: the names the question holds, its vector, the misspelt names."""

    question: str
    ngrams: set[str]
    grams: list[str]  # the n-grams a speaker's key can be (one or two words)
    names_t: asyncio.Task
    speakers_t: asyncio.Task
    refresh_t: asyncio.Task
    vector_t: asyncio.Task
    exact_t: asyncio.Task
    anchors_t: asyncio.Task
    ground_t: asyncio.Task  # the tenant's common ground (common_ground.py), kept per process
    more: list[asyncio.Task] = field(default_factory=list)  # tasks started later, cancelled alike

    def cancel_pending(self) -> None:
        for t in (self.names_t, self.speakers_t, self.exact_t, self.vector_t, self.anchors_t, self.refresh_t,
                  self.ground_t, *self.more):
            if not t.done():
                t.cancel()  # an embedding thread finishes on its own; nobody waits for it


@dataclass
class _Found:
    top: list[fusion.Candidate]
    by_id: dict[str, dict[str, Any]]
    derived: list[dict[str, Any]]
    anchor_facts: list[dict[str, Any]]
    anchors: list[Anchor]
    keys: list[str] = field(default_factory=list)  # the speakers the question names
    spoken: bool = False
    subj: Anchor | None = None
    matched: Matched | None = None


async def recall(client: GraphClient, embedder: Embedder, tenant: str, q_text: str, *, k: int = 10,
                 subject: str | None = None, session: str | None = None,
                 reader: str | None = None) -> RecallResult:
    question = qn.question(q_text)
    k = qn.k(k)
    session = qn.session(session)
    reader = qn.reader(reader)
    started = _start(client, embedder, tenant, question, hybrid=subject is None, ground=subject is None
                     and session is None)
    try:
        if subject is None:
            found = await _hybrid(client, embedder, tenant, started, k, session)
        else:
            found = await _with_subject(client, tenant, started, subject, k, session)
    finally:
        started.cancel_pending()
    if isinstance(found, RecallResult):
        return found
    return await _result(client, tenant, found, reader)


def _start(client: GraphClient, embedder: Embedder, tenant: str, question: str, *, hybrid: bool,
           ground: bool = False) -> _Started:
    """Round trip 1: the entities and speakers the question names; the question's vector (CPU, off
    the loop) at once, on the speakers this process last saw in the tenant; the list of the
    tenant's speakers read again when older than a few seconds (the next question's guess); the
    tenant's common ground when this process has not read it for a while (common_ground.py)."""
    ngrams = word_ngrams(question)
    grams = sorted(g for g in ngrams if len(g.split()) <= 2) if hybrid else []
    names_t = task(client.run(tenant, q.NAMES, {"keys": sorted(ngrams), "speaker_keys": grams})
                   if ngrams else empty())
    speakers_t = task(_kind(names_t, "speaker"))
    refresh_t = task(question_vector.SPEAKER_KEYS.read(client, tenant)
                     if grams and question_vector.SPEAKER_KEYS.stale(client, tenant) else nothing())
    vector_t = question_vector.start(client, embedder, tenant, question, grams, speakers_t)
    exact_t = task(_kind(names_t, "entity"))  # rows of the entities named exactly
    # the misspelt-name lookup waits for the vector (see anchors.entities_named)
    anchors_t = task(an.entities_named(client, tenant, question, ngrams, exact_t, vector_t if hybrid else None,
                                       getattr(embedder, "knows_word", None), speakers_t))
    ground_t = task(common_ground.read(client, tenant) if ground else nothing())
    return _Started(question, ngrams, grams, names_t, speakers_t, refresh_t, vector_t, exact_t, anchors_t,
                    ground_t)


async def _hybrid(client: GraphClient, embedder: Embedder, tenant: str, s: _Started, k: int,
                  session: str | None) -> _Found:
    """Without a subject: every signal, fused; the named entities' facts beside them."""
    n = max(tuning.OVERFETCH * k, tuning.HYBRID_POOL)
    latest_t = task(client.run(tenant, q.LATEST, {"session": session}) if needs_reference(s.question) else empty())
    vector_f: asyncio.Future = asyncio.get_running_loop().create_future()
    facts_t = task(rf.of_entities(client, tenant, s.exact_t, s.anchors_t, vector_f, k))
    s.more += [latest_t]
    try:
        keys = [r["key"] for r in await s.speakers_t]
        windows = await _windows(s.question, latest_t)
        # a speaker's name is the speaker signal's: as a full-text word it would favour every greeting
        ft = qn.fulltext_query(s.question, drop={w for key in keys for w in key.split()})
        v = await s.vector_t
        when = bool(qn.WHEN.search(s.question))
        knows = getattr(embedder, "knows_word", None)
        unknown = tuple(qn.unknown_terms(ft, knows, s.question))
        # a question that names no speaker and no time may be one of meaning (signals, 1b); the
        # read, started with round trip 1 (not with a session filter: then it is None), is awaited
        # either way, so it is kept for the next question
        ground = await s.ground_t
        distinct = common_ground.without(v, ground) if not keys and not windows else None

        def run(anchors: list[Anchor]) -> asyncio.Task:
            plain = frozenset(a.uid for a in anchors if qn.plain_word(a.name, knows, s.question))
            return task(signals.fused_episodes(client, tenant, v, signals.Ask(
                session, n, k, anchors, keys, windows, ft, when, unknown, distinct, plain)))

        anchors, fused_t = await _run_on_names(s, run, vector_f, v)
        got, _ = await gather_all(fused_t, s.refresh_t)
        anchor_facts = await facts_t
    except BaseException:
        facts_t.cancel()
        raise
    return _Found(got.top, got.by_id, got.derived, anchor_facts, anchors, keys, got.spoken)


async def _run_on_names(s: _Started, run, vector_f: asyncio.Future, v) -> tuple[list[Anchor], asyncio.Task]:
    """Round trip 2 on the entities named. If the misspelt-name lookup is still running, it starts
    on the names found exactly and runs again only if the lookup adds an entity (rare; the answer is
    always the full one's). The facts' ranking wakes (`vector_f`) once round trip 2 is on its way."""
    if s.anchors_t.done():
        anchors = s.anchors_t.result()
        fused_t = run(anchors)
        s.more.append(fused_t)
        vector_f.set_result(v)
        return anchors, fused_t
    exact = an.anchors_of(await s.exact_t)
    fused_t = run(exact)
    s.more.append(fused_t)
    vector_f.set_result(v)
    anchors = await s.anchors_t
    if {a.uid for a in anchors} != {a.uid for a in exact}:
        fused_t.cancel()
        fused_t = run(anchors)
        s.more.append(fused_t)
    return anchors, fused_t


async def _with_subject(client: GraphClient, tenant: str, s: _Started, subject: str, k: int,
                        session: str | None) -> _Found | RecallResult:
    """A customer's own memory: the subject's episodes by meaning and by the entities named, and
    only facts about the subject; round trip 3 reads the k best in full (their distances too)."""
    resolved = await an.resolve_subject(client, tenant, subject)
    if resolved.ambiguous is not None:
        return RecallResult(shape=RecallShape.AMBIGUOUS, items=[], facts=[], ambiguous=resolved.ambiguous)
    subj = resolved.anchor
    if subj is None:
        return RecallResult(shape=RecallShape.UNKNOWN_NAME, items=[], facts=[])
    anchors = [a for a in await s.anchors_t if a.uid != subj.uid]
    v = await s.vector_t
    n = max(tuning.OVERFETCH * k, tuning.MIN_CANDIDATES)
    facts_t = task(rf.of_subject(client, tenant, v, subj, anchors, k))
    try:
        meaning, named = await signals.episodes_with_subject(client, tenant, v, subj, anchors, session, n)
        cands: dict[str, fusion.Candidate] = {}
        for name, ranked in (("entities", named), ("vector", meaning)):
            fusion.add(cands, name, ranked)
        pre_ids = [c.id for c in sorted(cands.values(), key=fusion.order)[:k]]
        rows, derived, anchor_facts = await gather_all(
            client.run(tenant, q.EPISODES_BY_ID, {"ids": pre_ids, "v": v}) if pre_ids else empty(),
            rf.derived(client, tenant, pre_ids, subj), facts_t)
    except BaseException:
        facts_t.cancel()
        raise
    by_id = {r["ep"]["id"]: r["ep"] for r in rows}
    for c in cands.values():
        if c.id in by_id and by_id[c.id]["d"] is not None:
            c.d = float(by_id[c.id]["d"])
    top = [c for c in sorted(cands.values(), key=fusion.order) if c.id in by_id][:k]
    ids = {c.id for c in top}
    derived = [row for row in derived if set(row["episodes"]) & ids][:k]
    return _Found(top, by_id, derived, anchor_facts, anchors, subj=subj, matched=resolved.matched)


async def _result(client: GraphClient, tenant: str, f: _Found, reader: str | None) -> RecallResult:
    """The items and facts found, their shape, and the reader's CONSULTED edges."""
    items = []
    for c in f.top:
        r = f.by_id[c.id]
        items.append(RecallItem(
            episode_id=c.id, session=r["session"], speaker=r["speaker"], text=r["text"], at=from_ms(r["at_ms"]),
            score=round(c.fused, 6), path=c.hops + [f"q ~ episode (vector {fusion.sim(c.d)})"]))
    facts: dict[str, FactView] = {}
    for row in list(f.anchor_facts) + list(f.derived):
        facts.setdefault(row["fact"]["fact_id"], rf.fact_view(row))
    connected = ((any(c.via_entity for c in f.top) or bool(f.anchor_facts))
                 and not fusion.another_voice(f.top, f.by_id, f.keys))
    named_any = f.subj is not None or bool(f.anchors) or bool(f.spoken)
    if connected:
        shape = RecallShape.PATH
    elif named_any or not (items or facts):
        shape = RecallShape.NOT_IN_GRAPH
    else:
        shape = RecallShape.MEMORY
    if reader and facts:
        await client.run(tenant, fq.CONSULTED, {"reader": reader, "fact_ids": list(facts), "now_ms": now_ms()})
    return RecallResult(shape=shape, items=items, facts=list(facts.values()), matched=f.matched)


async def _windows(question: str, latest_t: asyncio.Task) -> list[Window]:
    latest = await latest_t
    reference = from_ms(latest[0]["at_ms"]) if latest and latest[0]["at_ms"] is not None else None
    return [w for w in time_windows(question, reference) if w.end_ms > w.start_ms]


async def _kind(names_t: asyncio.Task, kind: str) -> list[dict[str, Any]]:
    return [r for r in await names_t if r["kind"] == kind]
