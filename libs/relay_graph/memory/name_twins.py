"""Name twins merged into their customer, once (docs/desk.md, "Name twins are merged once").

Before writes by a customer's exact name landed on that customer (`usecases.facts._on_customers`),
`POST /facts {"subject": "Kavya Reddy", ...}` about a customer met on the site (id `c-...`, named
"Kavya Reddy") made a second entity, `Customer|kavya reddy`, holding those facts: a *twin*. A twin
is a Customer entity keyed by a name (not an id, `entities.is_customer_id`) whose key is the name
key of exactly one id-keyed customer's current name (NAMED edge), and which is no customer of its
own: it has no session, no ticket, no line and no name of its own (`OWN`), only facts, and perhaps
episodes' MENTIONS or tasks' TASK_ABOUT.

A twin is merged: everything of it moves onto the customer, and then it goes. Its facts
(`subject_uid`, `object_uid`, `slot`), their slots and conflicts, the mirror edges of current facts
and the WAS edges of ended ones, and every other edge (made again from the customer with its type
and properties; the old one deleted), and the desk's `customer_uid` references. Knowledge is never
lost nor overwritten:
- a slot only the twin has moves as it is; so does every fact of a multi-valued predicate;
- a twin's current fact whose value the customer's current fact of the slot has already is folded
  into it as a corroboration (its count added, reaching back to where the twin's began unless the
  customer's history there says otherwise, its episodes and other edges carried over) and goes:
  a value is never there twice;
- a single-valued predicate both hold now with different values, or a slot both have facts in
  with a conflict open, leaves the twin as it is, listed in `left` with the reason, for a person
  to settle (then run `relay admin merge-name-twins` again). So is a name two customers hold, and
  a customer of its own (a session, a ticket, a line, a name): never a guess.
A predicate the process does not know (neither built in nor the tenant's own) counts as
single-valued. Keys that begin with "c-" and a hex digit are not looked at (they share the id
range of the index).

Run once per tenant per process (after the name-key migration, before the tenant's first
statement: `schema.declare_migration`) and by `relay admin merge-name-twins`. The candidates come
from the Entity.uid index (the customer keys that are not ids) and, for each, the PersonName of
its key: a tenant whose customers all have ids costs one read of an empty index range. It records
a `(:Setting {name: 'name_twins', at_ms, merged, left})` once it found a candidate, and later starts
skip the tenant; the command looks again. Running it again changes nothing."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from pydantic import BaseModel, Field

from relay_graph.memory.entities import entity_uid, is_customer_id
from relay_graph.memory.names import CUSTOMER, PERSON_NAME
from relay_graph.memory.queries import name_migration as keys_q
from relay_graph.memory.queries import name_twins as q
from relay_graph.memory.registry import Cardinality, every_predicate
from relay_graph.runtime.queries import Query
from relay_graph.runtime.queries.schema import declare_migration
from relay_graph.runtime.times import now_ms

log = logging.getLogger(__name__)

RECORD = "name_twins"
# What makes a name-keyed customer one of its own (an older tenant's): a session, a ticket, a line,
# a name fact.
OWN = ("HAS_SESSION", "HAS_TICKET", "CONNECTED_VIA", "NAMED")
# A folded fact's edges that stay behind: the customer's fact has its own subject, writer, wording.
NOT_CARRIED = ("ABOUT", "WRITTEN_BY", "PHRASED_AS")
_PREFIX = CUSTOMER + "|"
# The Entity.uid index ranges [from, to) of customer keys that are not ids ("c-" and 16 hex
# digits): everything under "Customer|" but "Customer|c-" followed by a hex digit.
RANGES = [[_PREFIX, _PREFIX + "c-0"], [_PREFIX + "c-:", _PREFIX + "c-a"], [_PREFIX + "c-g", CUSTOMER + "}"]]

Run = Callable[[Query, dict[str, Any]], Awaitable[list[dict[str, Any]]]]


class Merged(BaseModel):
    twin: str
    customer: str
    facts: int = Field(0, description="facts moved onto the customer")
    folded: int = Field(0, description="facts the customer's same current value counts as corroborations")
    edges: int = Field(0, description="other edges moved (mirrors, WAS, mentions, tasks)")


class Left(BaseModel):
    twin: str
    customers: list[str]
    why: str


class NameTwinMerge(BaseModel):
    tenant: str
    skipped: bool = Field(False, description="already recorded: nothing looked at")
    looked_at: int = 0
    merged: list[Merged] = []
    left: list[Left] = []
    record: dict[str, Any] | None = Field(None, description="the tenant's record: at_ms, merged, left")


@dataclass
class _Plan:
    """How one twin merges, or why it does not (`why`)."""

    why: str | None = None
    folds: list[list[Any]] = field(default_factory=list)  # [twin fact, customer fact, valid_from_ms]
    renamed: list[list[str]] = field(default_factory=list)  # [twin slot, customer slot]
    merged: list[list[str]] = field(default_factory=list)  # slots both have
    guards: list[list[Any]] = field(default_factory=list)  # [customer slot, version or -1]


def _single(predicate: str, own: dict[str, str]) -> bool:
    known = every_predicate().get(predicate)
    if known is not None:
        return known.single
    return own.get(predicate) != Cardinality.MULTI.value


def _timeline(facts: list[dict]) -> list[dict]:
    return [f for f in facts if f["state"] != "claim"]


def _reach_back(kept: dict, twin: dict, others: list[dict]) -> int:
    """Where the customer's fact begins once the twin's is folded into it: the earlier start, unless
    another fact of the customer's (of that value, or any for a single-valued predicate) lies in
    between, which history says was true then."""
    start = min(kept["valid_from_ms"], twin["valid_from_ms"])
    for f in others:
        if f["fact_id"] == kept["fact_id"]:
            continue
        if f["valid_from_ms"] < kept["valid_from_ms"] and (f["valid_to_ms"] is None or f["valid_to_ms"] > start):
            return kept["valid_from_ms"]
    return start


def _plan_merge(twin: str, customer: str, slots: list[list], predicates: list[str], facts: list[dict],
               customer_slots: list[list], own: dict[str, str]) -> _Plan:
    """The merge of `twin` into `customer` from what was read (pure): its slots [key, predicate,
    version, conflict], the predicates of its facts, the facts of both sides' slots, the customer's
    slots [key, version, conflict], the tenant's own predicates' cardinalities."""
    plan = _Plan()
    twin_slots = {p: (key, conflict) for key, p, _, conflict in slots}
    theirs = {key: (version, conflict) for key, version, conflict in customer_slots}
    for predicate in sorted(set(twin_slots) | set(predicates)):
        old, new = f"{twin}|{predicate}", f"{customer}|{predicate}"
        mine = [f for f in facts if f["slot"] == old]
        other = [f for f in facts if f["slot"] == new]
        version, their_conflict = theirs.get(new, (-1, None))
        plan.guards.append([new, version])
        if new in theirs:
            plan.merged.append([old, new])
        elif predicate in twin_slots:
            plan.renamed.append([old, new])
        if not other:
            continue
        conflict = twin_slots.get(predicate, (None, None))[1] or their_conflict
        if conflict or any(f["state"] == "claim" for f in mine + other):
            return _Plan(why=f"both have {predicate} facts and a conflict is open on them: settle it first")
        now_mine = [f for f in mine if f["state"] == "current"]
        now_theirs = [f for f in other if f["state"] == "current"]
        if _single(predicate, own):
            if not (now_mine and now_theirs):
                continue
            if len(now_mine) == len(now_theirs) == 1 and now_mine[0]["object_uid"] == now_theirs[0]["object_uid"]:
                kept = now_theirs[0]
                plan.folds.append([now_mine[0]["fact_id"], kept["fact_id"],
                                   _reach_back(kept, now_mine[0], _timeline(other))])
                continue
            said = ", ".join(sorted({f["object_name"] for f in now_mine}))
            says = ", ".join(sorted({f["object_name"] for f in now_theirs}))
            return _Plan(why=f"both hold {predicate} now: {said!r} by the name, {says!r} by the id: "
                             "settle which is right")
        for f in now_mine:
            kept = next((c for c in now_theirs if c["object_uid"] == f["object_uid"]), None)
            if kept is not None:
                same = [c for c in _timeline(other) if c["object_uid"] == f["object_uid"]]
                plan.folds.append([f["fact_id"], kept["fact_id"], _reach_back(kept, f, same)])
    return plan


async def _move_edges(run: Run, kind: str, old: str, new: str, types: list[str], *, once: bool = False) -> int:
    moved = 0
    for rel_type in sorted(set(types)):
        for direction in ("out", "in", "self"):
            rows = await run(q.move_edges(kind, rel_type, direction, once=once), {"from": old, "to": new})
            moved += rows[0]["moved"] if rows else 0
    return moved


async def _merge_one(run: Run, twin: str, customer: str) -> Merged | str:
    """Merges `twin` into `customer`, or says why not: before anything changed, or (a write
    meanwhile) after part of it moved, which a later run completes."""
    [row] = await run(q.TWIN, {"twin": twin, "lo": twin + "|", "hi": twin + "}"}) or [None]
    if row is None:
        return "gone since it was read"
    own = sorted(set(row["types"]) & set(OWN))
    if own:
        return f"a customer of its own ({', '.join(own)}): not a twin"
    slots, predicates = row["slots"], row["predicates"]
    names = sorted({p for _, p, _, _ in slots} | set(predicates))
    read = await run(q.SLOTS, {
        "keys": [f"{u}|{p}" for p in names for u in (twin, customer)],
        "customer_keys": [f"{customer}|{p}" for p in names],
        "predicates": names,
    })
    found = read[0] if read else {"facts": [], "slots": [], "own": []}
    plan = _plan_merge(twin, customer, slots, predicates, found["facts"], found["slots"],
                      {n: c for n, c in found["own"]})
    if plan.why:
        return plan.why
    done = Merged(twin=twin, customer=customer)
    if plan.folds:
        bump = sorted({f"{customer}|{f['predicate']}" for f in found["facts"]
                       if f["fact_id"] in {kept for _, kept, _ in plan.folds}})
        if not await run(q.FOLD, {"guards": plan.guards, "folds": plan.folds, "bump": bump}):
            return "the customer's facts changed while merging: run it again"
        plan.guards = [[key, version + 1 if key in bump else version] for key, version in plan.guards]
        ids = [f[0] for f in plan.folds]
        edges = await run(q.FACT_EDGE_TYPES, {"ids": ids})
        for twin_fact, kept, _ in plan.folds:
            types = [e["type"] for e in edges if e["fact_id"] == twin_fact and e["type"] not in NOT_CARRIED]
            await _move_edges(run, "fact", twin_fact, kept, types, once=True)
        await run(q.DROP_FOLDED, {"twin": twin, "ids": ids})
        done.folded = len(ids)
    moved = await run(q.MOVE_FACTS, {"guards": plan.guards, "twin": twin, "customer": customer,
                                     "renamed": plan.renamed, "merged": plan.merged})
    if not moved:
        return "the customer's facts changed while merging: run it again"
    done.facts = moved[0]["moved"]
    types = [r["type"] for r in await run(q.EDGE_TYPES, {"twin": twin})]
    await _move_edges(run, "entity", twin, customer, [t for t in types if t == "ABOUT"])  # the facts'
    done.edges = await _move_edges(run, "entity", twin, customer, [t for t in types if t != "ABOUT"])
    gone = await run(q.DELETE_TWIN, {"twin": twin})
    if not gone or not gone[0]["deleted"]:  # an edge made meanwhile: the rest moved, it stays
        return "merged, but something linked to it again while merging: run it again"
    return done


async def migrate(run: Run, tenant: str, *, force: bool = False) -> NameTwinMerge:
    """Merges `tenant`'s name twins into their customers (module docstring). `run` runs one
    statement on the tenant's graph. `force`: look again even when the record says it ran."""
    out = NameTwinMerge(tenant=tenant)
    [row] = await run(q.CANDIDATES, {
        "record": RECORD, "force": force, "ranges": RANGES,
        "customers": _PREFIX, "names": entity_uid(PERSON_NAME, ""),
    })
    before = {"at_ms": row["at_ms"], "merged": row["merged"] or [], "left": row["left"] or []}
    if row["recorded"] and not force:
        out.skipped, out.record = True, before
        return out
    candidates = sorted(row["candidates"] or [])
    out.looked_at = len(candidates)
    for twin, named in candidates:
        ids = sorted(u for u in named if is_customer_id(u[len(_PREFIX):]))
        if not ids:
            continue  # named by customers keyed by a name themselves: an older tenant's, not ours
        if len(ids) > 1:
            out.left.append(Left(twin=twin, customers=ids, why=f"the name of {len(ids)} customers: "
                                                              "which one it was written for is not on file"))
            continue
        done = await _merge_one(run, twin, ids[0])
        if isinstance(done, Merged):
            out.merged.append(done)
        else:
            out.left.append(Left(twin=twin, customers=ids, why=done))
    if out.merged:
        olds, news = [m.twin for m in out.merged], [m.customer for m in out.merged]
        for prop in keys_q.REFERENCE_PROPERTIES:
            await run(keys_q.move_references(prop), {"olds": olds, "news": news})
    if out.left:  # another process may have merged one this run found changed meanwhile
        there = {r["uid"] for r in await run(q.EXISTING, {"uids": [x.twin for x in out.left]})}
        out.left = [x for x in out.left if x.twin in there]
    merged = [f"{m.twin} -> {m.customer}" for m in out.merged]
    left = [f"{x.twin}: {x.why}" for x in out.left]
    if out.looked_at and (not row["recorded"] or merged or left != before["left"]):
        await run(q.SET_RECORD, {"name": RECORD, "at_ms": now_ms(), "merged": merged, "left": left})
        log.info("tenant %s: %d name twins merged into their customers, %d left (%s)", tenant,
                 len(out.merged), len(out.left), ", ".join(x.twin for x in out.left) or "none")
    rec = await run(q.GET_RECORD, {"name": RECORD})
    out.record = rec[0] if rec else None
    return out


async def migrate_tenant(client, tenant: str, *, force: bool = True) -> NameTwinMerge:
    """`migrate` through a GraphClient (`relay admin merge-name-twins`)."""
    return await migrate(lambda query, params: client.run(tenant, query, params), tenant, force=force)


declare_migration("relay_graph.memory.name_twins", migrate)

__all__ = ["NameTwinMerge", "Merged", "Left", "migrate", "migrate_tenant", "RECORD"]
