"""Facts with two clocks: writing, retiring, reading, and settling disagreements.

Each write is one read round trip (the names, the slot's version and its facts) and one write
statement guarded by the slot's version (optimistic concurrency: FalkorDB serialises writes on a
graph, so when two writers race for one slot exactly one statement matches the version it read; the
other gets no row back, reads again and re-plans). What a write *does* is decided in
`fact_planning` from plain data; the statements are in `queries.facts`.

`write_facts` does the same for a batch: one read for all of it, the same planner fact by fact,
and one guarded statement per kind of write for all its rows.

A write addresses exactly the entities it names: the normal-form key (case, spacing and
punctuation aside) or an id, never another entity spelt alike ("esha rao" is not "asha rao": two
people one letter apart are two people). Reads are forgiving and say so: a subject whose key is
not on file is matched by `names` (a customer's name, else a name spelt alike), and the answer
carries what it matched, or that the name is ambiguous. Everything a caller sends is checked before
anything is written: a bad request raises a typed `RelayError` and changes nothing.
"""

from __future__ import annotations

import asyncio
import random
import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from relay_graph.memory import changes
from relay_graph.memory import fact_planning as fp
from relay_graph.memory import names
from relay_graph.memory.entity_refs import CheckedName, EntityRef, entity_ref, object_name, resolve_entity, subject_name
from relay_graph.runtime.db import GraphClient
from relay_graph.memory.entities import name_key, search_text
from relay_graph.runtime.errors import InvalidInput, NotFound, RelayError, StateConflict
from relay_graph.memory.inputs import TIME_MAX, TIME_MIN, check_identifier, check_time
from relay_graph.memory.models import (
    AGENT_PATTERN,
    LABEL_PATTERN,
    Claim,
    ClaimsView,
    Clock,
    Ambiguous,
    FactInput,
    FactsAnswer,
    FactState,
    Matched,
    FactView,
    FactWriteResult,
    RetireInput,
    SettleResult,
)
from relay_graph.runtime.queries import Query
from relay_graph.memory.queries import facts as q
from relay_graph.memory.predicates import vocabulary
from relay_graph.memory.registry import Predicate, Vocabulary, clean_text
from relay_graph.runtime import times
from relay_graph.runtime.times import now_ms
from relay_graph.runtime.tenancy import validate_tenant

MAX_ATTEMPTS = 50
_AGENT = re.compile(AGENT_PATTERN)
_LABEL = re.compile(LABEL_PATTERN)
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MS = timedelta(milliseconds=1)


# ---------------------------------------------------------------------------------------------
# time and ids


# The fact clocks' own conversions: exact (integer arithmetic over a timedelta, no float) and
# bounded by the times a write may carry (inputs.check_time); runtime.times serves the rest.
def to_ms(value: datetime, what: str = "time") -> int:
    return (check_time(value, what) - _EPOCH) // _MS


_MS_MIN, _MS_MAX = (TIME_MIN - _EPOCH) // _MS, (TIME_MAX - _EPOCH) // _MS


def from_ms(value: int | None) -> datetime | None:
    # Writes are bounded (inputs.check_time); a value stored before they were is read at the bound
    # it passed rather than failing every read of its subject.
    return None if value is None else _EPOCH + min(max(value, _MS_MIN), _MS_MAX) * _MS


def _new_id() -> str:
    return uuid.uuid4().hex


def _slot_key(subject_uid: str, predicate: str) -> str:
    return f"{subject_uid}|{predicate}"


async def _backoff(attempt: int) -> None:
    await asyncio.sleep(random.uniform(0, 0.001 * min(attempt + 1, 20)))


# ---------------------------------------------------------------------------------------------
# validation (all of it happens before the first query)


@dataclass(frozen=True)
class _Write:
    p: Predicate
    subject: CheckedName
    object: CheckedName
    agent: str
    label: str | None
    source: str | None
    valid_from_ms: int | None
    recorded_at_ms: int | None


def _agent(value: object, what: str = "agent") -> str:
    if not isinstance(value, str) or not _AGENT.fullmatch(value):
        raise InvalidInput(f"{what} must match {AGENT_PATTERN}")
    return value


def _label(value: object) -> str | None:
    if value is not None and (not isinstance(value, str) or not _LABEL.fullmatch(value)):
        raise InvalidInput(f"label must match {LABEL_PATTERN}")
    return value


def _time(value: object, what: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InvalidInput(f"{what} must be a datetime")
    return to_ms(value)


def _clock(value: object) -> Clock:
    try:
        return Clock(value)
    except ValueError:
        raise InvalidInput(f"clock must be one of {[c.value for c in Clock]}") from None


def _source(value: object) -> str | None:
    return None if value is None else check_identifier(value, "source")  # an episode's id


def _validate_write(fact: FactInput, vocab: Vocabulary) -> _Write:
    p = vocab.get(fact.predicate)
    return _Write(
        p=p,
        subject=subject_name(fact.subject, p),
        object=object_name(fact.object, p),
        agent=_agent(fact.agent),
        label=_label(fact.label),
        source=_source(fact.source),
        valid_from_ms=_time(fact.valid_from, "valid_from"),
        recorded_at_ms=_time(fact.recorded_at, "recorded_at"),
    )


# ---------------------------------------------------------------------------------------------
# reading a slot


def _slot_fact(m: dict[str, Any]) -> fp.SlotFact:
    return fp.SlotFact(
        fact_id=m["fact_id"],
        object_uid=m["object_uid"],
        object_name=m["object_name"],
        state=m["state"],
        valid_from_ms=m["valid_from_ms"],
        valid_to_ms=m.get("valid_to_ms"),
        recorded_at_ms=m["recorded_at_ms"],
        expired_at_ms=m.get("expired_at_ms"),
        asserted_by=m["asserted_by"],
        corroborations=m.get("corroborations") or 1,
        believed_from_ms=m.get("believed_from_ms"),
    )


@dataclass(frozen=True)
class _Snapshot:
    subject: EntityRef
    object: EntityRef | None
    slot: fp.Slot


def _snapshot(row: dict[str, Any], subject: CheckedName, obj: CheckedName | None) -> _Snapshot:
    facts = tuple(_slot_fact(m) for m in row["facts"] or () if m.get("fact_id"))
    return _Snapshot(entity_ref(subject, row["s_name"]), entity_ref(obj, row["o_name"]) if obj is not None else None,
                     fp.Slot(row["version"] or 0, facts, row["conflict_id"]))


async def _read_slot(client: GraphClient, tenant: str, p: Predicate, subject: CheckedName, obj: CheckedName | None
                     ) -> _Snapshot:
    """Subject and object (by their exact keys) and the subject's slot, in one read."""
    params = {
        # no object (a retirement of whatever is current): "" matches nothing through the index,
        # while a null uid makes FalkorDB scan every entity of the tenant
        "s_uid": subject.uid, "o_uid": obj.uid if obj else "", "slot": _slot_key(subject.uid, p.name),
    }
    return _snapshot((await client.run(tenant, q.SLOT_READ, params))[0], subject, obj)


# ---------------------------------------------------------------------------------------------
# executing a plan


def _plan_params(plan: fp.Plan, slot_key: str, expected: int, subject: EntityRef, p: Predicate) -> dict[str, Any]:
    return {
        "slot": slot_key,
        "expected": expected,
        "s_uid": subject.uid,
        "predicate": p.name,
        "fact_id": plan.fact_id,
        "changes": [c.as_param() for c in plan.changes],
        "to_superseded": plan.moved_to(fp.SUPERSEDED),
        "to_retired": plan.moved_to(fp.RETIRED),
        "to_current": plan.mirrored(),
        "unmirror": plan.unmirrored(),
        "supersedes": list(plan.supersedes),
    }


_NEW_FACT_QUERIES = {
    fp.Kind.CREATE_CURRENT: q.CREATE_CURRENT,
    fp.Kind.CREATE_HISTORY: q.CREATE_HISTORY,
    fp.Kind.CREATE_CLAIM: q.CREATE_CLAIM,
}


def _new_fact_params(w: _Write, subject: EntityRef, obj: EntityRef, *, expected: int, fact_id: str,
                     valid_from_ms: int, valid_to_ms: int | None, recorded_at_ms: int,
                     expired_at_ms: int | None) -> dict[str, Any]:
    return {
        "slot": _slot_key(subject.uid, w.p.name), "expected": expected, "predicate": w.p.name,
        "fact_id": fact_id, "agent": w.agent, "label": w.label, "source": w.source,
        "s_uid": subject.uid, "s_name": subject.name, "s_key": name_key(subject.name), "s_type": subject.type,
        "o_uid": obj.uid, "o_name": obj.name, "o_key": name_key(obj.name), "o_type": obj.type,
        "valid_from_ms": valid_from_ms, "valid_to_ms": valid_to_ms, "recorded_at_ms": recorded_at_ms,
        "expired_at_ms": expired_at_ms,
    }


def _write_query(plan: fp.Plan, w: _Write, snap: _Snapshot) -> tuple[Query, dict[str, Any]]:
    """The statement that executes `plan`, and its parameters."""
    if plan.kind is fp.Kind.CREATE_CURRENT and not plan.changes:
        new = plan.new
        assert new is not None and snap.object is not None
        params = _new_fact_params(w, snap.subject, snap.object, expected=snap.slot.version, fact_id=new.fact_id,
                                  valid_from_ms=new.valid_from_ms, valid_to_ms=new.valid_to_ms,
                                  recorded_at_ms=new.recorded_at_ms, expired_at_ms=new.expired_at_ms)
        params["derived"] = [w.source] if w.source else []
        return q.CREATE_PLAIN[w.p], params
    params = _plan_params(plan, _slot_key(snap.subject.uid, w.p.name), snap.slot.version, snap.subject, w.p)
    params.update(agent=w.agent, derived=[w.source] if w.source else [])
    if plan.kind is fp.Kind.CORROBORATE:
        return q.CORROBORATE[w.p], params
    new = plan.new
    assert new is not None and snap.object is not None
    params.update(_new_fact_params(w, snap.subject, snap.object, expected=snap.slot.version, fact_id=new.fact_id,
                                   valid_from_ms=new.valid_from_ms, valid_to_ms=new.valid_to_ms,
                                   recorded_at_ms=new.recorded_at_ms, expired_at_ms=new.expired_at_ms))
    if plan.kind is fp.Kind.CREATE_CLAIM:
        params.update(conflict_id=plan.conflict_id, between=list(plan.between))
    return _NEW_FACT_QUERIES[plan.kind][w.p], params


# ---------------------------------------------------------------------------------------------
# the operations


async def write_fact(client: GraphClient, tenant: str, fact: FactInput) -> FactWriteResult:
    """Assert subject · predicate · object for an agent. A repeat corroborates, a new value
    supersedes (or, from another agent on a CONFLICT predicate, opens a conflict), an older
    valid_from takes its place in history (rules: `fact_planning`)."""
    tenant = validate_tenant(tenant)
    w = _validate_write(fact, await vocabulary(client, tenant, [getattr(fact, "predicate", None)]))
    await changes.fact_written(client, tenant)
    for attempt in range(MAX_ATTEMPTS):
        snap = await _read_slot(client, tenant, w.p, w.subject, w.object)
        assert snap.object is not None
        now = w.recorded_at_ms if w.recorded_at_ms is not None else fp.belief_now(now_ms(), snap.slot.facts)
        new = fp.NewValue(snap.object.uid, snap.object.name, w.agent,
                          w.valid_from_ms if w.valid_from_ms is not None else now)
        plan = fp.plan_write(snap.slot, new, single=w.p.single, policy=w.p.policy, now_ms=now,
                             fact_id=_new_id(), conflict_id=_new_id())
        query, params = _write_query(plan, w, snap)
        if await client.run(tenant, query, params):
            assert plan.outcome is not None and plan.fact_id is not None
            return FactWriteResult(fact_id=plan.fact_id, outcome=plan.outcome, superseded=list(plan.supersedes),
                                   conflict_id=plan.conflict_id)
        await _backoff(attempt)
    raise StateConflict(f"{w.p.name} of {w.subject.text!r} kept changing under this write; try again")


# ---------------------------------------------------------------------------------------------
# many facts at once


MAX_BATCH = 1_000


# Each single-fact statement's batch twin (same effects, one row per fact, every predicate of the
# vocabulary), by the single statement's name before its predicate.
_TWINS = {"fact_create_plain": "create_plain", "fact_create_current": "create_current",
          "fact_create_history": "create_history", "fact_create_claim": "create_claim",
          "fact_corroborate": "corroborate"}


def _batch_twin(batch: q.BatchWrites, single: Query) -> Query:
    return getattr(batch, _TWINS[single.name.split(":", 1)[0]])


async def _vocabulary_of(client: GraphClient, tenant: str, facts: object) -> Vocabulary:
    """The vocabulary a batch's predicates are taken from (nothing is read when all are built in)."""
    names = [getattr(f, "predicate", None) for f in facts] if isinstance(facts, (list, tuple)) else []
    return await vocabulary(client, tenant, names)


def _validate_batch(facts: object, vocab: Vocabulary) -> list[_Write]:
    if not isinstance(facts, (list, tuple)):
        raise InvalidInput("facts must be a list")
    if len(facts) > MAX_BATCH:
        raise InvalidInput(f"at most {MAX_BATCH} facts per batch (got {len(facts)})")
    writes = []
    for i, fact in enumerate(facts):
        if not isinstance(fact, FactInput):
            raise InvalidInput(f"facts[{i}] is not a fact")
        try:
            writes.append(_validate_write(fact, vocab))
        except RelayError as exc:
            raise type(exc)(f"facts[{i}]: {exc.message}", code=exc.code) from None
    return writes


class _BatchNames:
    """The names of a batch as one write after another would address them: the entity on file
    with that key, else the one an earlier fact of the batch is about to create, else a new one."""

    def __init__(self, found: dict[str, str | None]):
        self.found = found
        self.refs: dict[str, EntityRef] = {}

    def resolve(self, name: CheckedName) -> EntityRef:
        ref = self.refs.get(name.uid)
        if ref is None:
            ref = self.refs[name.uid] = entity_ref(name, self.found.get(name.uid))
        return ref


def _slot_state(row: list) -> tuple[str, fp.Slot]:
    key, version, conflict_id, facts = row
    return key, fp.Slot(version or 0, tuple(_slot_fact(m) for m in facts or () if m.get("fact_id")), conflict_id)


async def _read_batch(client: GraphClient, tenant: str, uids: list[str], slots: list[str]
                      ) -> tuple[dict[str, str | None], dict[str, fp.Slot]]:
    """The names on file for `uids` (uid -> its name, None when absent) and the slots, in one read."""
    row = (await client.run(tenant, q.BATCH_READ, {"names": uids, "slots": slots}))[0]
    found = {uid: name for uid, name in row["names"] or ()}
    return found, dict(_slot_state(r) for r in row["slots"] or ())


@dataclass
class _Planned:
    index: int
    key: str
    round: int
    plan: fp.Plan
    query: Query
    params: dict[str, Any]
    new_entities: tuple[str, ...]  # uids of the entities it names that are not in the graph yet


def _rows(items: list[_Planned]) -> list[dict[str, Any]]:
    """The statement's rows; each entity new to the graph is created by the first row naming it,
    and only that row carries its name (every value is sent as text: the less, the faster)."""
    named: set[str] = set()
    rows = []
    for it in items:
        row = it.params
        if "o_uid" in row:
            for role in ("s", "o"):
                uid = row[f"{role}_uid"]
                create = uid in it.new_entities and uid not in named
                named.add(uid)
                row[f"{role}_create"] = create
                if not create:
                    for field in ("name", "key", "type"):
                        row.pop(f"{role}_{field}", None)
        rows.append(row)
    return rows


async def write_facts(client: GraphClient, tenant: str, facts: list[FactInput]) -> list[FactWriteResult]:
    """`write_fact` for many facts at once, leaving the graph that writing them one after another
    in this order leaves, in far fewer round trips: one read for every name and slot of the batch
    (every name by its exact key, as `write_fact` addresses it), the same planner (facts of one slot planned in turn against the state the earlier ones leave), then
    one statement per kind of write (create, supersede, late-arriving, claim, corroborate) for all
    predicates, each row guarded by its own slot's version. A later write of a slot the batch
    already wrote goes into a later statement (a round). A row whose slot changed under it is
    written again through `write_fact`, after the batch, and so are the batch's later facts of that
    slot. Every fact is checked before anything is read or written: one bad fact raises its typed
    error (naming its position) and writes nothing. Results come in input order."""
    tenant = validate_tenant(tenant)
    vocab = await _vocabulary_of(client, tenant, facts)
    writes = _validate_batch(facts, vocab)
    if not writes:
        return []
    await changes.fact_written(client, tenant)
    results = await _write_checked(client, tenant, writes, list(facts), vocab)
    for result in results:
        if isinstance(result, RelayError):
            raise result
    return results  # type: ignore[return-value]


async def write_facts_each(client: GraphClient, tenant: str, facts: list[FactInput]
                           ) -> list[FactWriteResult | RelayError]:
    """`write_facts` atomic per fact, for any number of facts: each is checked on its own, a fact
    that fails its checks gets its error in its slot and nothing of it is written, and the others
    are written as `write_facts` writes them (batches of MAX_BATCH, in input order). A fact whose
    slot kept changing under it (StateConflict) is reported in its slot too. Results come in input
    order."""
    tenant = validate_tenant(tenant)
    vocab = await _vocabulary_of(client, tenant, facts)
    out: list[FactWriteResult | RelayError | None] = [None] * len(facts)
    good: list[tuple[int, _Write, FactInput]] = []
    for i, fact in enumerate(facts):
        try:
            if not isinstance(fact, FactInput):
                raise InvalidInput("not a fact")
            good.append((i, _validate_write(fact, vocab), fact))
        except RelayError as exc:
            out[i] = exc
    if good:
        await changes.fact_written(client, tenant)
    for start in range(0, len(good), MAX_BATCH):
        chunk = good[start : start + MAX_BATCH]
        results = await _write_checked(client, tenant, [w for _, w, _ in chunk], [f for _, _, f in chunk], vocab)
        for (i, _, _), result in zip(chunk, results):
            out[i] = result
    return out  # type: ignore[return-value]


async def _write_checked(client: GraphClient, tenant: str, writes: list[_Write], facts: list[FactInput],
                         vocab: Vocabulary) -> list[FactWriteResult | RelayError]:
    """The batch write of checked facts (`writes[i]` is `facts[i]` checked); a fact retried on
    its own that still fails has its error in its slot."""
    uids = list(dict.fromkeys(n.uid for w in writes for n in (w.subject, w.object)))
    slot_keys = list(dict.fromkeys(_slot_key(w.subject.uid, w.p.name) for w in writes))
    found, slots = await _read_batch(client, tenant, uids, slot_keys)

    names = _BatchNames(found)
    refs = [(names.resolve(w.subject), names.resolve(w.object)) for w in writes]

    # The statements name only this batch's predicates: FalkorDB keeps each statement's plan per
    # graph (at most CACHE_SIZE of them), and one with a branch for every predicate (and a label for
    # every entity type) held a plan several times the size, and the desk's labels in a memory-only
    # tenant. One statement per predicate kept more plans in all (docs/benchmarks.md, Many tenants).
    batch = q.batch_writes({w.p for w in writes})
    planned: list[_Planned] = []
    rounds: dict[str, int] = {}
    for i, (w, (subject, obj)) in enumerate(zip(writes, refs)):
        key = _slot_key(subject.uid, w.p.name)
        slot = slots.get(key) or fp.Slot()  # a subject new to the graph has no slots yet
        now = w.recorded_at_ms if w.recorded_at_ms is not None else fp.belief_now(now_ms(), slot.facts)
        new = fp.NewValue(obj.uid, obj.name, w.agent, w.valid_from_ms if w.valid_from_ms is not None else now)
        plan = fp.plan_write(slot, new, single=w.p.single, policy=w.p.policy, now_ms=now,
                             fact_id=_new_id(), conflict_id=_new_id())
        query, params = _write_query(plan, w, _Snapshot(subject, obj, slot))
        params["i"] = i
        fresh = tuple(ref.uid for ref in (subject, obj) if not ref.exists)
        planned.append(_Planned(i, key, rounds.get(key, 0), plan, _batch_twin(batch, query), params, fresh))
        rounds[key] = rounds.get(key, 0) + 1
        slots[key] = fp.apply_plan(slot, plan)

    results: list[FactWriteResult | None] = [None] * len(writes)
    lost: set[str] = set()  # slots that changed under the batch: the rest of them goes one by one
    for r in range(max(rounds.values())):
        statements: dict[Query, list[_Planned]] = {}
        for item in planned:
            if item.round == r and item.key not in lost:
                statements.setdefault(item.query, []).append(item)
        for query, items in statements.items():
            rows = await client.run(tenant, query, {"rows": _rows(items)})
            done = {row["i"] for row in rows}
            for it in items:
                if it.index in done:
                    plan = it.plan
                    assert plan.outcome is not None and plan.fact_id is not None
                    results[it.index] = FactWriteResult(fact_id=plan.fact_id, outcome=plan.outcome,
                                                        superseded=list(plan.supersedes), conflict_id=plan.conflict_id)
                else:
                    lost.add(it.key)
    out: list[FactWriteResult | RelayError] = []
    for i, result in enumerate(results):
        if result is None:
            try:
                result = await write_fact(client, tenant, facts[i])
            except RelayError as exc:
                out.append(exc)
                continue
        out.append(result)
    return out


async def retire_fact(client: GraphClient, tenant: str, retire: RetireInput) -> list[str]:
    """End what is current (the named object's fact, for a multi-valued predicate) on both
    clocks. Returns the retired fact ids; nothing current to retire is not an error: []."""
    tenant = validate_tenant(tenant)
    p = (await vocabulary(client, tenant, [getattr(retire, "predicate", None)])).get(retire.predicate)
    subject = subject_name(retire.subject, p)
    obj = object_name(retire.object, p) if retire.object is not None else None
    agent = _agent(retire.agent)
    valid_to = _time(retire.valid_to, "valid_to")
    recorded = _time(retire.recorded_at, "recorded_at")
    source = _source(retire.source)
    for attempt in range(MAX_ATTEMPTS):
        snap = await _read_slot(client, tenant, p, subject, obj)
        if not snap.subject.exists:
            return []
        object_uid = None
        if obj is not None:
            object_uid = fp.match_object(snap.slot.facts, obj.uid)
            if object_uid is None:
                return []
        now = recorded if recorded is not None else fp.belief_now(now_ms(), snap.slot.facts)
        plan = fp.plan_retire(snap.slot, object_uid, valid_to_ms=valid_to, now_ms=now)
        if plan.kind is fp.Kind.NOTHING:
            return []
        await changes.fact_written(client, tenant)
        params = _plan_params(plan, _slot_key(snap.subject.uid, p.name), snap.slot.version, snap.subject, p)
        params.update(agent=agent, derived=[source] if source else [])
        if await client.run(tenant, q.RETIRE[p], params):
            return [c.fact_id for c in plan.changes]
        await _backoff(attempt)
    raise StateConflict(f"{p.name} of {subject.text!r} kept changing under this retirement; try again")


def _view(m: dict[str, Any], subject: str) -> FactView:
    return FactView(
        fact_id=m["fact_id"],
        subject=subject,
        predicate=m["predicate"],
        object=m["object_name"],
        valid_from=from_ms(m["valid_from_ms"]),
        valid_to=from_ms(m.get("valid_to_ms")),
        recorded_at=from_ms(m["recorded_at_ms"]),
        expired_at=from_ms(m.get("expired_at_ms")),
        asserted_by=m["asserted_by"],
        label=m.get("label"),
        state=FactState(m["state"]),
        corroborations=m.get("corroborations") or 1,
        conflict_id=m.get("conflict_id"),
    )


async def _read_predicates(client: GraphClient, tenant: str, predicate: str | None) -> list[Predicate]:
    """The predicate a read names (a retired one of the tenant's own too), or every one it has."""
    vocab = await vocabulary(client, tenant, [predicate] if predicate is not None else [], every=predicate is None,
                             write=False)
    return [vocab.readable(predicate)] if predicate is not None else vocab.read_all()


@dataclass
class _Subject:
    """A read's subject: the rows read about it, and what a name that is not a key was read as."""

    rows: list[tuple[str, dict[str, Any]]]
    matched: Matched | None = None
    ambiguous: Ambiguous | None = None


async def _subject_rows(client: GraphClient, tenant: str, subject: object, predicates: list[Predicate],
                        query: Query, extra: dict[str, Any], *, with_slot: bool = False) -> _Subject:
    """Run a subject read once per subject type among `predicates` (today every predicate is about
    a Customer): by the exact key first; when no entity has that key, the subject is matched as a
    name (`names.match`): one entity -> its facts, with a `matched` note; two or more -> nothing
    read, `ambiguous`. Returns (subject name, row) pairs."""
    out = _Subject([])
    by_type: dict[str, list[Predicate]] = {}
    for p in predicates:
        by_type.setdefault(p.subject_type, []).append(p)
    for stype, preds in by_type.items():
        name = subject_name(subject, preds[0])

        async def read(uid: str) -> dict[str, Any]:
            params = {"s_uid": uid, "slots": [_slot_key(uid, p.name) for p in preds], **extra}
            if with_slot:
                params["slot"] = _slot_key(uid, preds[0].name)
            return (await client.run(tenant, query, params))[0]

        row = await read(name.uid)
        if row["subject"] is None:
            found = await names.match(client, tenant, name.text, stype, what="subject")
            if found.ambiguous is not None:
                out.ambiguous = found.ambiguous
                continue
            if found.one is None:
                continue
            out.matched = found.matched
            row = await read(found.one.uid)
            if row["subject"] is None:  # gone between the two reads
                continue
        out.rows.append((row["subject"], row))
    return out


async def _consulted(client: GraphClient, tenant: str, reader: str | None, fact_ids: list[str]) -> None:
    if reader is not None and fact_ids:
        await client.run(tenant, q.CONSULTED, {"reader": reader, "fact_ids": fact_ids, "now_ms": now_ms()})


async def record_consulted(client: GraphClient, tenant: str, reader: str, fact_ids: list[str]) -> None:
    """What `read_facts(reader=...)` records after its read (`reader` CONSULTED each fact), for a
    caller that reads first and records it beside its next step, not before it."""
    await _consulted(client, validate_tenant(tenant), _agent(reader, "reader"), list(fact_ids))


@dataclass(frozen=True)
class Worded:
    sentence: str  # "Asha Verma lives in Pune since ... (on file from intake)" (relay.sentence)
    learnt: str  # how long before the read Relay learnt it: "3 days ago" (relay.ago)


async def sentences(client: GraphClient, tenant: str, views: list[FactView], *,
                    now_ms: int | None = None) -> dict[str, Worded]:
    """fact_id -> the fact as one sentence and how long ago it was learnt (before `now_ms`, default
    now), both worded in the read by the database's functions (udf.py); facts removed since are
    absent."""
    tenant = validate_tenant(tenant)
    if not views:
        return {}
    rows = await client.run(tenant, q.FACT_SENTENCES,
                            {"facts": [{"fact_id": v.fact_id, "subject": v.subject} for v in views],
                             "now_ms": times.now_ms() if now_ms is None else now_ms})
    return {r["fact_id"]: Worded(r["sentence"], r["learnt"]) for r in rows}


async def read_facts(
    client: GraphClient,
    tenant: str,
    subject: str,
    predicate: str | None = None,
    *,
    as_of: datetime | None = None,
    clock: Clock = Clock.WORLD,
    reader: str | None = None,
) -> list[FactView]:
    """`facts_about`'s facts (none when the subject is an ambiguous name)."""
    return (await facts_about(client, tenant, subject, predicate, as_of=as_of, clock=clock, reader=reader)).facts


async def facts_about(
    client: GraphClient,
    tenant: str,
    subject: str,
    predicate: str | None = None,
    *,
    as_of: datetime | None = None,
    clock: Clock = Clock.WORLD,
    reader: str | None = None,
) -> FactsAnswer:
    """What is current now; with `as_of`, what was true in the world at that time (`clock=world`:
    valid_from <= t < valid_to) or what we had on file as our answer then (`clock=belief`).
    Claims that are still contested are not facts yet (see `claims`). A named `reader` is
    recorded as having CONSULTED every fact returned. A subject that is not a key on file is read
    as the name it matches (`matched`), or answered as `ambiguous` (see `names`)."""
    tenant = validate_tenant(tenant)
    predicates = await _read_predicates(client, tenant, predicate)
    clock = _clock(clock)
    reader = _agent(reader, "reader") if reader is not None else None
    if as_of is None:
        query, extra = q.FACTS_CURRENT, {}
    else:
        t = _time(as_of, "as_of")
        query = q.FACTS_WORLD_AT if clock is Clock.WORLD else q.FACTS_BELIEF_AT
        extra = {"t": t}
    found = await _subject_rows(client, tenant, subject, predicates, query, extra)
    views = [_view(m, name) for name, row in found.rows for m in row["facts"] or ()]
    views.sort(key=lambda v: (v.predicate, v.valid_from, v.recorded_at, v.fact_id))
    await _consulted(client, tenant, reader, [v.fact_id for v in views])
    return FactsAnswer(facts=views, matched=found.matched, ambiguous=found.ambiguous)


async def history(client: GraphClient, tenant: str, subject: str, predicate: str | None = None) -> list[FactView]:
    """`history_about`'s facts."""
    return (await history_about(client, tenant, subject, predicate)).facts


async def history_about(client: GraphClient, tenant: str, subject: str, predicate: str | None = None
                        ) -> FactsAnswer:
    """Every fact about the subject (of one predicate, if given) in world order: superseded,
    retired and late-arriving ones too, zero-length corrections included. Claims still contested
    are not in it (see `claims`); once settled they are, as current or superseded facts."""
    tenant = validate_tenant(tenant)
    predicates = await _read_predicates(client, tenant, predicate)
    found = await _subject_rows(client, tenant, subject, predicates, q.FACTS_HISTORY, {})
    views = [_view(m, name) for name, row in found.rows for m in row["facts"] or ()]
    views.sort(key=lambda v: (v.valid_from, v.recorded_at, v.predicate, v.fact_id))
    return FactsAnswer(facts=views, matched=found.matched, ambiguous=found.ambiguous)


async def claims(client: GraphClient, tenant: str, subject: str, predicate: str, *,
                 reader: str | None = None) -> ClaimsView:
    """The current value and every contested claim of one slot, best first: the writing agent's
    trust for this predicate, then the newest record. `conflict_id` is the open conflict, if any."""
    tenant = validate_tenant(tenant)
    [p] = await _read_predicates(client, tenant, predicate)
    reader = _agent(reader, "reader") if reader is not None else None
    found = await _subject_rows(client, tenant, subject, [p], q.CLAIMS, {"predicate": p.name}, with_slot=True)
    if not found.rows:
        return ClaimsView(claims=[], conflict_id=None, ambiguous=found.ambiguous)
    _, row = found.rows[0]
    trust = {agent: score for agent, score in row["trust"] or () if score is not None}
    ranked = fp.rank_claims((_slot_fact(m) for m in row["facts"] or ()), trust)
    out = [
        Claim(fact_id=r.fact.fact_id, object=r.fact.object_name, asserted_by=r.fact.asserted_by, trust=r.trust,
              recorded_at=from_ms(r.fact.recorded_at_ms))
        for r in ranked
    ]
    await _consulted(client, tenant, reader, [c.fact_id for c in out])
    return ClaimsView(claims=out, conflict_id=row["conflict_id"], matched=found.matched)


def _id(value: object, what: str) -> str:
    text = clean_text(value, what)
    if " " in text:
        raise InvalidInput(f"{what} {text!r} is not an id")
    return text


async def settle(client: GraphClient, tenant: str, conflict_id: str, fact_id: str, by: str) -> SettleResult:
    """A person decides a conflict: `fact_id` is the right claim. It becomes current, the others
    are superseded, the conflict closes, and the agents' trust for that predicate moves (winner's
    up, the others' down). Unknown conflict -> NotFound; a fact outside it -> InvalidInput;
    settled already -> AlreadyExists (409)."""
    tenant = validate_tenant(tenant)
    conflict_id = _id(conflict_id, "conflict_id")
    fact_id = _id(fact_id, "fact_id")
    by = clean_text(by, "by")
    for attempt in range(MAX_ATTEMPTS):
        rows = await client.run(tenant, q.CONFLICT_READ, {"conflict_id": conflict_id})
        if not rows:
            raise NotFound(f"no conflict {conflict_id}")
        row = rows[0]
        facts = tuple(_slot_fact(m) for m in row["facts"] or () if m.get("fact_id"))
        conflict = fp.ConflictState(conflict_id, bool(row["open"]), tuple(f.fact_id for f in facts))
        slot = fp.Slot(version=row["version"] or 0, facts=facts, conflict_id=row["slot_conflict_id"])
        now = fp.belief_now(now_ms(), facts)
        plan = fp.plan_settle(slot, conflict, fact_id, now_ms=now)
        p = (await vocabulary(client, tenant, [row["predicate"]], write=False)).readable(row["predicate"])
        subject = EntityRef(row["subject_uid"], "", p.subject_type)
        params = _plan_params(plan, row["slot"], slot.version, subject, p)
        params.update(conflict_id=conflict_id, by=by, now_ms=now, agent=None,
                      trust=[{"agent": t.agent, "win": t.win, "loss": t.loss} for t in plan.trust])
        result = await client.run(tenant, q.SETTLE[p], params)
        if result:
            return SettleResult(conflict_id=conflict_id, winner=fact_id, losers=list(plan.supersedes),
                                trust={agent: float(score) for agent, score in result[0]["trust"]})
        await _backoff(attempt)
    raise StateConflict(f"conflict {conflict_id} kept changing while being settled; try again")


__all__ = [
    "EntityRef", "resolve_entity", "search_text", "write_fact", "write_facts", "write_facts_each", "retire_fact",
    "read_facts", "facts_about", "history", "history_about", "claims", "settle", "to_ms", "from_ms", "MAX_ATTEMPTS", "MAX_BATCH",
]