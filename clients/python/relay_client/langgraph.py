"""LangGraph's long-term memory on Relay: a `langgraph.store.base.BaseStore` whose items live in
Relay, so every agent of a team (LangGraph or not) shares them, and search goes through recall.

    from relay_client import Relay
    from relay_client.langgraph import RelayStore

    graph = builder.compile(store=RelayStore(Relay("acme")))   # RELAY_URL, RELAY_API_KEY

The mapping (clients/python/README.md, "LangGraph", says the same for users):

- a namespace is a Relay session: ("users", "asha") is `lg:users.asha.` (each label percent-encoded;
  LangGraph's labels hold no ".", and the closing "." keeps ("users",) from reaching ("users2",));
- each put is one turn of that session, spoken by `speaker` (default "langgraph"), whose text is
  `{"key": ..., "value": {...}}`; a delete is a turn whose value is null. Turns never change, so an
  item's current value is its key's newest turn, and every earlier value stays on file with when it
  was written (`at`), when Relay learnt it (`recorded_at`) and which agent wrote it: `history()`;
- each turn also mentions one entity per prefix of its namespace (`subject_of`: a digest, as Relay
  compares names case-blind), so search with a query is ONE recall with that prefix's entity as
  its subject: the turns under the prefix ranked by meaning, of which only each key's newest value
  is kept (an earlier value or a delete that ranks is dropped);
- get, list_namespaces and search without a query read the namespace's turns back in order
  (`GET /episodes`) and fold them into each key's newest value.

Needs the `langgraph` extra: `pip install relay-client[langgraph]`."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import uuid
from collections import Counter
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote, unquote

from langgraph.store.base import (BaseStore, GetOp, InvalidNamespaceError, Item, ListNamespacesOp, MatchCondition,
                                  Op, PutOp, Result, SearchItem, SearchOp, validate_op_namespace)

from . import models as m
from .calls import Call
from .client import AsyncRelay, Relay
from .verbs import MemoryVerbs

MAX_SESSION = 128  # a Relay identifier
MAX_TEXT = 8_000  # a turn's text
MAX_TURNS = 500  # turns in one POST /episodes
PAGE = 1_000  # turns per page read back
MAX_K = 100  # recall's largest k

# A plan yields the Calls it needs one at a time and gets each answer back: the sync store answers
# them with a Relay, the async one awaits an AsyncRelay, and the logic is written once.
Plan = Generator[Call, Any, Any]


@dataclass
class Version:
    """One value an item had: `value` None is a delete. `at` is when it was written (the world's
    clock), `recorded_at` when Relay had it on file (the belief clock), `agent` whose key wrote it."""

    value: dict[str, Any] | None
    at: datetime
    recorded_at: datetime | None
    agent: str | None
    episode_id: str


@dataclass
class _Current:
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    episode_id: str

    def item(self) -> Item:
        return Item(value=self.value, key=self.key, namespace=self.namespace, created_at=self.created_at,
                    updated_at=self.updated_at)

    def found(self, score: float | None) -> SearchItem:
        return SearchItem(self.namespace, self.key, self.value, self.created_at, self.updated_at, score)


class _Calls(MemoryVerbs):
    """The client's verbs, as Calls (what to send), not answers."""

    def __init__(self, tenant: str) -> None:
        self.tenant = tenant

    def _do(self, call: Call) -> Call:
        return call


class RelayStore(BaseStore):
    """A LangGraph store on a Relay tenant. Pass a `Relay` (sync, and async through a thread), an
    `AsyncRelay` (async only), or both; `root` names the sessions the store keeps (`root:...`), and
    `speaker` the voice its turns are written in. Stores with the same root on the same tenant see
    each other's items, whichever agent's key they hold."""

    supports_ttl = False

    def __init__(self, relay: Relay | AsyncRelay | None = None, arelay: AsyncRelay | None = None, *,
                 root: str = "lg", speaker: str = "langgraph") -> None:
        if isinstance(relay, AsyncRelay):
            relay, arelay = None, relay
        if relay is None and arelay is None:
            raise ValueError("RelayStore needs a Relay or an AsyncRelay client")
        tenants = {c.tenant for c in (relay, arelay) if c is not None}
        if len(tenants) != 1:
            raise ValueError(f"the two clients are for different tenants: {sorted(tenants)}")
        if not re.fullmatch(r"[A-Za-z0-9_~-]{1,20}", root):
            raise ValueError("root: 1 to 20 letters, digits and '_-~'")
        self._relay, self._arelay = relay, arelay
        self._calls = _Calls(tenants.pop())
        self.root, self.speaker = root, speaker

    @classmethod
    def from_env(cls, tenant: str, **kw: Any) -> RelayStore:
        """A store with a sync and an async client from RELAY_URL and RELAY_API_KEY."""
        return cls(Relay(tenant), AsyncRelay(tenant), **kw)

    # ---- where things live

    def session_of(self, namespace: tuple[str, ...]) -> str:
        """The Relay session that holds a namespace's items (read it with `Relay.episodes`)."""
        session = self._prefix_of(namespace)
        if len(session) > MAX_SESSION:
            raise InvalidNamespaceError(f"namespace {namespace} is too long for Relay: its session id "
                                        f"{session[:40]}... has {len(session)} characters, at most {MAX_SESSION}")
        return session

    def subject_of(self, prefix: tuple[str, ...]) -> str:
        """The name of the entity every turn under `prefix` mentions: recall with it as `subject`
        ranks only those turns, by meaning. A digest, so that names (which Relay compares case-
        and punctuation-blind) keep ("users", "A") apart from ("users", "a")."""
        digest = hashlib.blake2b(json.dumps([self.root, *prefix]).encode(), digest_size=16).hexdigest()
        return f"{self.root} namespace {digest}"

    def _prefix_of(self, labels: tuple[str, ...]) -> str:
        return f"{self.root}:" + "".join(quote(label, safe="") + "." for label in labels)

    def _namespace_of(self, session: str) -> tuple[str, ...] | None:
        head = f"{self.root}:"
        if not session.startswith(head) or not session.endswith("."):
            return None
        return tuple(unquote(label) for label in session[len(head):-1].split("."))

    def _text(self, key: str, value: dict[str, Any] | None) -> str:
        text = json.dumps({"key": key, "value": value}, ensure_ascii=False)
        try:
            text.encode()
        except UnicodeEncodeError:  # a lone surrogate: only its escape can be stored
            text = json.dumps({"key": key, "value": value})
        if len(text) > MAX_TEXT:
            raise ValueError(f"item {key!r} is {len(text)} characters as JSON; Relay keeps at most {MAX_TEXT} a turn")
        return text

    # ---- LangGraph's two entry points

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        if self._relay is None:
            raise TypeError("this RelayStore has only an AsyncRelay: use the async methods, or pass a Relay")
        return self._drive(self._batch(list(ops)), self._relay._do)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        if self._arelay is None:
            return await asyncio.to_thread(self.batch, ops)
        return await self._adrive(self._batch(ops), self._arelay._do)

    @staticmethod
    def _drive(plan: Plan, do: Any) -> Any:
        try:
            call = next(plan)
            while True:
                call = plan.send(do(call))
        except StopIteration as done:
            return done.value

    @staticmethod
    async def _adrive(plan: Plan, do: Any) -> Any:
        try:
            call = next(plan)
            while True:
                call = plan.send(await do(call))
        except StopIteration as done:
            return done.value

    # ---- the earlier values (the two clocks)

    def history(self, namespace: tuple[str, ...], key: str) -> list[Version]:
        """Every value `key` has had in `namespace`, oldest first, deletes as None: what LangGraph's
        `get` never shows. Each says when it was written and by which agent."""
        if self._relay is None:
            raise TypeError("history needs a Relay (sync) client")
        return self._drive(self._history(namespace, key), self._relay._do)

    async def ahistory(self, namespace: tuple[str, ...], key: str) -> list[Version]:
        if self._arelay is None:
            return await asyncio.to_thread(self.history, namespace, key)
        return await self._adrive(self._history(namespace, key), self._arelay._do)

    def _history(self, namespace: tuple[str, ...], key: str) -> Plan:
        turns = yield from self._turns(session=self.session_of(tuple(namespace)))
        return [Version(value, t.at, t.recorded_at, t.agent, t.episode_id)
                for t, (k, value) in ((t, self._envelope(t)) for t in turns) if k == key]

    # ---- the plan of one batch

    def _batch(self, ops: list[Op]) -> Plan:
        """As LangGraph's InMemoryStore: every read of the batch sees the store as it was before the
        batch, then its puts are written (the last put of a key wins)."""
        for op in ops:
            validate_op_namespace(op)
            if isinstance(op, PutOp) and op.ttl is not None:
                raise NotImplementedError("RelayStore keeps no TTL: Relay never forgets on a timer")
        read: dict[tuple[str, str], Any] = {}  # what this batch has read, by (how, where)
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                found, _ = yield from self._state(read, "session", self.session_of(tuple(op.namespace)))
                current = found.get(tuple(op.namespace), {}).get(op.key)
                results.append(current.item() if current else None)
            elif isinstance(op, SearchOp):
                results.append((yield from self._search(read, op)))
            elif isinstance(op, ListNamespacesOp):
                results.append((yield from self._list_namespaces(read, op)))
            elif isinstance(op, PutOp):
                if not op.namespace or op.namespace[0] == "langgraph":
                    raise InvalidNamespaceError(f"cannot write to namespace {op.namespace}")
                puts[(tuple(op.namespace), op.key)] = op
                results.append(None)
            else:
                raise ValueError(f"unknown operation: {type(op).__name__}")
        turns = [{"session": self.session_of(ns), "speaker": self.speaker, "id": f"{self.root}-{uuid.uuid4().hex}",
                  "text": self._text(key, None if op.value is None else dict(op.value)),
                  "mentions": [self.subject_of(ns[:depth]) for depth in range(len(ns) + 1)]}
                 for (ns, key), op in puts.items()]
        for i in range(0, len(turns), MAX_TURNS):
            yield self._calls.remember_turns(turns[i:i + MAX_TURNS])
        return results

    def _search(self, read: dict, op: SearchOp) -> Plan:
        found, turns = yield from self._state(read, "prefix", self._prefix_of(tuple(op.namespace_prefix)))
        current = {(ns, key): c for ns, items in found.items() for key, c in items.items()
                   if _matches(c.value, op.filter)}
        if not op.query:
            ranked = sorted(current.values(), key=lambda c: (-c.updated_at.timestamp(), c.namespace, c.key))
            return [c.found(None) for c in ranked[op.offset:op.offset + op.limit]]
        if not current:
            return []
        by_episode = {c.episode_id: c for c in current.values()}
        stale = sum(turns.values()) - len(current)  # earlier values, deletes and filtered items rank too
        k = min(MAX_K, op.offset + op.limit + max(stale, 0))
        recalled: m.Recalled = yield self._calls.recall(op.query, k=k, subject=self.subject_of(tuple(op.namespace_prefix)))
        scored: dict[str, float] = {}
        for hit in recalled.items:
            if hit.episode_id in by_episode:  # the key's newest value, not an earlier one or a delete
                scored.setdefault(hit.episode_id, hit.score)
        ranked = sorted(scored, key=lambda eid: -scored[eid])
        # the rest, unranked, as a vector store returns every item: newest first, without a score
        rest = sorted((c for c in current.values() if c.episode_id not in scored),
                      key=lambda c: (-c.updated_at.timestamp(), c.namespace, c.key))
        page = [by_episode[eid].found(scored[eid]) for eid in ranked] + [c.found(None) for c in rest]
        return page[op.offset:op.offset + op.limit]

    def _list_namespaces(self, read: dict, op: ListNamespacesOp) -> Plan:
        literal: tuple[str, ...] = ()
        for c in op.match_conditions or ():
            if c.match_type == "prefix":
                head = []
                for label in c.path:
                    if label == "*":
                        break
                    head.append(label)
                literal = max(literal, tuple(head), key=len)
        found, _ = yield from self._state(read, "prefix", self._prefix_of(literal))
        names = [ns for ns, items in found.items() if items
                 and all(_does_match(c, ns) for c in op.match_conditions or ())]
        if op.max_depth is not None:
            names = list({ns[:op.max_depth] for ns in names})
        return sorted(names)[op.offset:op.offset + op.limit]

    # ---- reading turns back and folding them into items

    def _state(self, read: dict, how: str, where: str) -> Plan:
        """The current items of one session ("session") or of every session under a prefix
        ("prefix"), by namespace, and how many turns each session holds; read once per batch."""
        if (how, where) not in read:
            if len(where) > MAX_SESSION:  # no session id is this long: nothing lives there
                read[(how, where)] = ({}, Counter())
            else:
                turns = yield from self._turns(**{"session" if how == "session" else "session_prefix": where})
                read[(how, where)] = (self._fold(turns), Counter(t.session for t in turns))
        return read[(how, where)]

    def _turns(self, **where: str) -> Plan:
        turns: list[m.Episode] = []
        after = None
        while True:
            page: m.Episodes = yield self._calls.episodes(**where, after=after, limit=PAGE)
            turns += page.episodes
            if page.next is None:
                return turns
            after = page.next

    def _envelope(self, turn: m.Episode) -> tuple[str | None, dict[str, Any] | None]:
        """(key, value) of a turn this store wrote; (None, None) for any other turn in its sessions."""
        if turn.speaker != self.speaker:
            return None, None
        try:
            body = json.loads(turn.text)
        except ValueError:
            return None, None
        if not (isinstance(body, dict) and set(body) == {"key", "value"} and isinstance(body["key"], str)
                and (body["value"] is None or isinstance(body["value"], dict))):
            return None, None
        return body["key"], body["value"]

    def _fold(self, turns: list[m.Episode]) -> dict[tuple[str, ...], dict[str, _Current]]:
        """Turns in order of arrival -> each key's newest value (a delete removes it; created_at is
        when the key was last put after not existing)."""
        out: dict[tuple[str, ...], dict[str, _Current]] = {}
        for turn in turns:
            ns = self._namespace_of(turn.session)
            key, value = self._envelope(turn)
            if ns is None or key is None:
                continue
            items = out.setdefault(ns, {})
            if value is None:
                items.pop(key, None)
                continue
            before = items.get(key)
            items[key] = _Current(ns, key, value, before.created_at if before else turn.at, turn.at, turn.episode_id)
        return out


def _does_match(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """LangGraph's namespace match: a prefix or suffix path, "*" matching any one label."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path))
    else:
        raise ValueError(f"unsupported match type: {condition.match_type}")
    return all(want == "*" or have == want for have, want in pairs)


def _matches(value: dict[str, Any], wanted: dict[str, Any] | None) -> bool:
    """LangGraph's filter on a value's fields: equal, or `{"$eq"|"$ne"|"$gt"|"$gte"|"$lt"|"$lte": x}`,
    nested dicts field by field."""
    return not wanted or all(_compare(value.get(k), v) for k, v in wanted.items())


_OPS = {"$eq": lambda a, b: a == b, "$ne": lambda a, b: a != b,
        "$gt": lambda a, b: float(a) > float(b), "$gte": lambda a, b: float(a) >= float(b),
        "$lt": lambda a, b: float(a) < float(b), "$lte": lambda a, b: float(a) <= float(b)}


def _compare(have: Any, want: Any) -> bool:
    if isinstance(want, dict):
        if any(k.startswith("$") for k in want):
            unknown = set(want) - set(_OPS)
            if unknown:
                raise ValueError(f"unsupported filter operator: {sorted(unknown)}")
            if have is None and any(op not in ("$eq", "$ne") for op in want):
                return False
            return all(_OPS[op](have, v) for op, v in want.items())
        return isinstance(have, dict) and all(_compare(have.get(k), v) for k, v in want.items())
    if isinstance(want, (list, tuple)):
        return (isinstance(have, (list, tuple)) and len(have) == len(want)
                and all(_compare(h, w) for h, w in zip(have, want)))
    return have == want


__all__ = ["RelayStore", "Version"]
