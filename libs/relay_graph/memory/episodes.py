"""The episodic write path: turns of any conversation, stored once, embedded once.

- An episode's id is the caller's, or a hash of session, speaker, time and text, so a replayed
  batch MERGEs onto what it wrote the first time and writes nothing new.
- A text is embedded once per graph: before embedding, the batch looks its texts up by `text_key`
  (a hash of the text, indexed) and reuses the vectors another process already stored. The texts
  left are embedded in one call.
- MENTIONS: the customer, the explicit `mentions`, and every entity we already know whose normal-form
  name equals one of the text's word n-grams (1-4 words), looked up through the Entity.name_key index.
- Speakers: each turn is SPOKEN_BY its speaker (a `Speaker` node keyed by the speaker's normal-form
  name), and NAMES every speaker (known, or in this batch) whose key is one of its word n-grams, so
  recall can favour what "Caroline" said and what was said about her.
- `pos`: a turn's place in its session in order of arrival, so neighbouring turns are defined even
  when a whole session carries one time.
- `said_from_ms` / `said_to_ms`: the span of the time expressions a turn says, read against the
  turn's own time ("last Saturday" said on Monday 8 May 2023 is Saturday 6 May), so recall can
  find what was said about a time, and the turns that date something when a question asks when.
  Null when the turn names no time.
- The whole batch is one statement (atomic): a failure writes nothing.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from pydantic import ValidationError

from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embeddings import Embedder
from relay_graph.memory.entities import entity_uid, name_key
from relay_graph.runtime.errors import InvalidInput, InvalidValue
from relay_graph.memory.inputs import check_time
from relay_graph.memory.models import EpisodeInput
from relay_graph.memory.queries import episodes as q
from relay_graph.memory.registry import clean_text
from relay_graph.memory.time_expressions import windows as time_windows

MAX_BATCH = 500
MAX_MENTIONS = 50
MAX_NGRAM = 4
MAX_TEXT_WORDS = 2_000  # n-grams are taken from the first words of very long texts only
LOOKUP_CHUNK = 20_000  # name keys per lookup statement

# Words that are never an entity's whole name; an n-gram made only of them is not looked up.
STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have he her hers him his
    how i if in into is it its me my no not of on or our ours she so than that the their them then there
    these they this to too up us was we were what when where which who whom why will with would you your
    yours yes ok okay hi hello thanks thank please just also very about after before again all any""".split()
)


def text_key(text: str) -> str:
    """The hash that identifies a text in the graph (and the vector it was given)."""
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def episode_id_for(session: str, speaker: str, at_ms: int, text: str) -> str:
    """Deterministic id of an episode the caller gave no id (no tenant in it: the graph is the tenant)."""
    raw = "\x1f".join((session, speaker, str(at_ms), text))
    return "ep_" + hashlib.blake2b(raw.encode(), digest_size=16).hexdigest()


class VectorParam(Sequence[float]):
    """A vector as a query parameter. The falkordb client inlines parameters as Cypher text, one
    call per list element (a quarter of a millisecond for 384 floats, measured); this one's text
    is made once, by one printf-style format (a tenth of a millisecond), and reused by every query
    it is sent with."""

    __slots__ = ("_values", "_literal")

    def __init__(self, values: list[float], decimals: int = 6):
        self._values = values
        self._literal = "[" + (f"%.{decimals}f," * len(values) % tuple(values))[:-1] + "]" if values else "[]"

    def __getitem__(self, i):  # type: ignore[override]
        return self._values[i]

    def __len__(self) -> int:
        return len(self._values)

    def __str__(self) -> str:  # what falkordb's stringify_param_value sends for a non-list value
        return self._literal

    def __eq__(self, other: object) -> bool:
        return list(self._values) == list(other) if isinstance(other, Sequence) else NotImplemented


def wire_vector(vector: Sequence[float], decimals: int = 6) -> VectorParam:
    """A vector as sent to FalkorDB: rounded, so its Cypher text is half as long. Components of a
    unit 384-vector are ~0.05; 1e-6 is below float32 resolution at that size and moves a cosine by
    less than 1e-5."""
    return VectorParam(np.round(np.asarray(vector, dtype=np.float64), decimals).tolist(), decimals)


def ms(at: datetime) -> int:
    return int(check_time(at, "at").timestamp() * 1000)


def word_ngrams(text: str, max_n: int = MAX_NGRAM, max_words: int = MAX_TEXT_WORDS) -> set[str]:
    """The name_keys of the text's 1..max_n word n-grams (what an entity name_key could equal)."""
    words = []
    for w in name_key(text).split()[:max_words]:
        w = w.strip(".-")  # sentence ends and dashes used as punctuation; inner ones stay (tp-link)
        if w and re.search(r"\w", w):
            words.append(w)
    keys: set[str] = set()
    for n in range(1, max_n + 1):
        for i in range(len(words) - n + 1):
            gram = words[i : i + n]
            if all(g in STOPWORDS for g in gram) or (n == 1 and len(gram[0]) < 2):
                continue
            keys.add(" ".join(gram))
    return keys


def _validate(items: Sequence[Any]) -> list[EpisodeInput]:
    if not isinstance(items, (list, tuple)):
        raise InvalidInput("episodes must be a list")
    if len(items) > MAX_BATCH:
        raise InvalidInput(f"at most {MAX_BATCH} episodes per batch (got {len(items)}); split the batch",
                           code="batch_too_large")
    out = []
    for i, item in enumerate(items):
        try:
            ep = item if isinstance(item, EpisodeInput) else EpisodeInput.model_validate(item)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            # a value our checks refused (inputs.py) is an invalid value; a wrong shape, invalid input
            error = InvalidValue if first["type"] == "value_error" else InvalidInput
            raise error(f"episode {i} {where}: {first['msg'].removeprefix('Value error, ')}") from None
        # text, session and ids are kept exactly as given (EpisodeInput checked them: inputs.py)
        updates: dict[str, Any] = {"speaker": clean_text(ep.speaker, f"episode {i} speaker")}
        if ep.customer is not None:
            updates["customer"] = clean_text(ep.customer, f"episode {i} customer")
            if not name_key(updates["customer"]):
                raise InvalidValue(f"episode {i} customer has no letters or digits")
        if len(ep.mentions) > MAX_MENTIONS:
            raise InvalidInput(f"episode {i}: at most {MAX_MENTIONS} mentions")
        updates["mentions"] = [clean_text(m, f"episode {i} mention") for m in ep.mentions]
        out.append(ep.model_copy(update=updates))
    return out


def _rows(items: list[EpisodeInput]) -> tuple[list[str], list[dict[str, Any]]]:
    """Episode ids in input order, and one row per distinct episode (the first wins)."""
    ids, rows, seen = [], [], set()
    for ep in items:
        at = ms(ep.at)
        eid = ep.id or episode_id_for(ep.session, ep.speaker, at, ep.text)
        ids.append(eid)
        if eid in seen:
            continue
        seen.add(eid)
        said = [w for w in time_windows(ep.text, ep.at) if w.end_ms > w.start_ms]
        rows.append({"id": eid, "session": ep.session, "speaker": ep.speaker, "speaker_key": name_key(ep.speaker),
                     "text": ep.text,
                     "key": text_key(ep.text), "kind": ep.kind, "at": at, "agent": ep.agent,
                     # desk replies: the turn answered, the ticket, the graph rows the words rest on
                     "said_from": min(w.start_ms for w in said) if said else None,
                     "said_to": max(w.end_ms for w in said) if said else None,
                     "reply_to": ep.reply_to, "ticket_id": ep.ticket_id, "how_i_know": list(ep.how_i_know), "answers": list(ep.answers),
                     "_ep": ep})
    return ids, rows


async def write_episodes(client: GraphClient, embedder: Embedder, tenant: str,
                         items: Sequence[EpisodeInput | dict], *, embed: bool = True) -> list[str]:
    """Writes a batch of episodes (at most 500) in one statement; returns their ids in input order.
    `embed=False` defers the vectors of texts never embedded before: the caller runs
    `embed_missing` on the ids once it has done what must not wait for the model (a chat turn's
    reply); until then vector search does not find those episodes (every other way does)."""
    episodes = _validate(items)
    if not episodes:
        return []
    ids, rows = _rows(episodes)

    # Entities named by the batch: customers are MERGEd; other names must match what we know.
    customers: dict[str, dict[str, str]] = {}
    for r in rows:
        ep: EpisodeInput = r["_ep"]
        if ep.customer:
            key = name_key(ep.customer)
            uid = entity_uid(q.CUSTOMER_LABEL, key)
            customers.setdefault(uid, {"uid": uid, "name": ep.customer, "key": key})
            r["customer"] = uid
        else:
            r["customer"] = None
    grams = {r["id"]: word_ngrams(r["_ep"].text) for r in rows}
    explicit = {r["id"]: {name_key(m) for m in r["_ep"].mentions} - {""} for r in rows}
    name_keys = set().union(*grams.values(), *explicit.values())

    text_keys = sorted({r["key"] for r in rows})
    keys = sorted(name_keys)
    session_ids = sorted({r["session"] for r in rows})
    found = await client.run(tenant, q.LOOKUP, {"text_keys": text_keys, "name_keys": keys[:LOOKUP_CHUNK],
                                                "session_ids": session_ids})
    for i in range(LOOKUP_CHUNK, len(keys), LOOKUP_CHUNK):  # long texts: more n-grams than one read should carry
        found += await client.run(tenant, q.LOOKUP, {"text_keys": [], "name_keys": keys[i : i + LOOKUP_CHUNK],
                                                     "session_ids": []})
    vectors: dict[str, list[float]] = {}
    uids_by_key: dict[str, set[str]] = {}
    speaker_keys = {r["speaker_key"] for r in rows if r["speaker_key"]}
    last_pos: dict[str, int] = {}
    stored: dict[str, tuple[int | None, set[str]]] = {}  # session -> (first turn's time, its customers)
    for f in found:
        if f["uid"] is not None:
            uids_by_key.setdefault(f["key"], set()).add(f["uid"])
        elif f["speaker"] is not None:
            speaker_keys.add(f["speaker"])
        elif f["vector"] is not None:
            vectors[f["key"]] = f["vector"]
        elif f["pos"] is not None:
            last_pos[f["key"]] = int(f["pos"])
            stored[f["key"]] = (f["first"], set(f["owners"] or []))
    for r in rows:  # replayed rows get a pos too; the write sets it only on a new episode
        r["pos"] = last_pos[r["session"]] = last_pos.get(r["session"], -1) + 1

    missing = {r["key"]: r["text"] for r in rows if r["key"] not in vectors}
    if missing and embed:
        order = list(missing)
        fresh = await embedder.aembed([missing[k] for k in order])
        vectors.update(zip(order, fresh))

    topics: dict[str, dict[str, str]] = {}
    mentions: list[dict[str, str]] = []
    for r in rows:
        targets: set[str] = set()
        if r["customer"]:
            targets.add(r["customer"])
        for key in explicit[r["id"]]:
            known = uids_by_key.get(key)
            if known:
                targets |= known
            else:  # an explicit mention we have never seen is kept as a Topic, not dropped
                uid = entity_uid(q.TOPIC_LABEL, key)
                name = next(m for m in r["_ep"].mentions if name_key(m) == key)
                topics.setdefault(uid, {"uid": uid, "name": name, "key": key})
                targets.add(uid)
        for key in grams[r["id"]]:
            targets |= uids_by_key.get(key, set())
        mentions.extend({"ep": r["id"], "uid": u} for u in sorted(targets))
    names = [{"ep": r["id"], "key": k} for r in rows for k in sorted(grams[r["id"]] & speaker_keys)]
    speakers = {r["speaker_key"]: {"key": r["speaker_key"], "name": r["speaker"]} for r in reversed(rows)
                if r["speaker_key"]}

    sessions: dict[str, dict[str, Any]] = {}
    for r in rows:
        s = sessions.setdefault(r["session"], {"id": r["session"], "first": r["at"], "last": r["at"],
                                               "customer": r["customer"]})
        s["first"], s["last"] = min(s["first"], r["at"]), max(s["last"], r["at"])
        s["customer"] = s["customer"] or r["customer"]
    # A customer's sessions are re-ordered (FOLLOWED_BY) only when one of them is new to them or
    # starts earlier than it did: the usual turn, in a session already in place, skips that work.
    chain = sorted({s["customer"] for s in sessions.values() if s["customer"] and _reorders(s, stored)})

    await client.run(tenant, q.WRITE, {
        "now": ms(datetime.now().astimezone()),
        "customers": list(customers.values()),
        "topics": list(topics.values()),
        "sessions": list(sessions.values()),
        "chain": chain,
        "speakers": list(speakers.values()),
        "episodes": [{k: v for k, v in r.items() if k not in ("_ep", "customer", "speaker_key")}
                     | {"vec": wire_vector(vectors[r["key"]]) if r["key"] in vectors else None} for r in rows],
        "spoken": [{"ep": r["id"], "key": r["speaker_key"]} for r in rows if r["speaker_key"]],
        "mentions": mentions,
        "names": names,
    })
    return ids


def _reorders(session: dict[str, Any], stored: dict[str, tuple[int | None, set[str]]]) -> bool:
    if session["id"] not in stored:
        return True
    first, owners = stored[session["id"]]
    return first is None or session["first"] < first or session["customer"] not in owners


async def embed_missing(client: GraphClient, embedder: Embedder, tenant: str, ids: Sequence[str]) -> int:
    """Gives the listed episodes that have no vector theirs (deferred by `write_episodes(...,
    embed=False)`); returns how many got one. Idempotent: run it again after a crash or a
    redelivery and it does only what is left."""
    wanted = sorted({str(i) for i in ids})
    if not wanted:
        return 0
    rows = await client.run(tenant, q.UNEMBEDDED, {"ids": wanted})
    if not rows:
        return 0
    vectors = await embedder.aembed([r["text"] for r in rows])
    done = await client.run(tenant, q.EMBED_MISSING, {
        "rows": [{"id": r["id"], "vec": wire_vector(v)} for r, v in zip(rows, vectors)]})
    return int(done[0]["n"]) if done else 0


def iter_batches(items: Sequence[Any], size: int = MAX_BATCH) -> Iterable[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
