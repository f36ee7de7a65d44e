"""Stored keys made by an older `name_key`, moved to the key the rule gives now (docs/desk.md, "Keys of the
older name rule are moved once").

Rule 1 turned a combining mark into a space ("आशा राव" was keyed "आश र व", and so was "आशी राव")
and a joiner into a space. Rule 2 keeps the marks and drops the joiners. An entity's key is
recomputed from its stored `name` (the name as first written); its uid moves with every reference
to it: the facts about it (`subject_uid`, `object_uid`, `slot`), their slots and conflicts, and the
desk's `customer_uid` / `city_uid` / `fixed_by_uid`. A speaker's key likewise.

Never a merge: when the new uid is already held (by an entity written under rule 2, or by another
old entity moving to the same key), the entity stays under its old uid and is listed in the record
(`left`), for a person to settle; the first old entity (by uid) takes a free new uid. Nor a split:
an entity that rule 1 merged from two spellings (the second "आशी राव" write landed on "आशा राव")
is moved as one, under the name it was first written with; which of its facts were meant for the
other person is not on file.

Run once per tenant per process (the runtime calls it after the tenant's indexes, before its first
statement: `schema.declare_migration`) and by `relay admin migrate-names`. Only names the two rules
key differently are looked at (a mark, a joiner, a Unicode hyphen; ASCII names keep their keys),
and of those only the ones whose key holds no mark (rule 2 keeps marks; rule 1 never left one).
It writes only when something moves or is left; then it records a `(:Setting {name: 'name_keys'})`
with the rule version, when, what moved and what was left, and later runs skip the tenant.
Running it again changes nothing."""

from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable

from pydantic import BaseModel, Field

from relay_graph.memory.entities import IGNORABLE_CHARS, NAME_RULE_VERSION, entity_uid, name_key
from relay_graph.memory.queries import name_migration as q
from relay_graph.runtime.queries import Query
from relay_graph.runtime.queries.schema import declare_migration
from relay_graph.runtime.times import now_ms

log = logging.getLogger(__name__)

RECORD = "name_keys"
# FalkorDB's regex: what rule 1 and rule 2 key differently (tests/old_names.py; ASCII names keep
# their keys), and a combining mark
CHANGED = "[\\p{M}" + IGNORABLE_CHARS + "\u2010\u2212]"
MARK = "\\p{M}"

Run = Callable[[Query, dict[str, Any]], Awaitable[list[dict[str, Any]]]]


class Moved(BaseModel):
    old: str
    new: str


class Left(BaseModel):
    uid: str
    wanted: str  # the uid it would have now
    why: str


class NameKeyMigration(BaseModel):
    tenant: str
    rule: int = NAME_RULE_VERSION
    skipped: bool = Field(False, description="already recorded at this rule: nothing looked at")
    looked_at: int = 0
    moved: list[Moved] = []
    speakers_moved: list[Moved] = []
    left: list[Left] = []
    record: dict[str, Any] | None = Field(None, description="the tenant's record: rule, at_ms, moved, left")


def _plan(rows: list[dict[str, Any]], key_of: Callable[[dict[str, Any]], tuple[str, str]],
          taken: set[str]) -> tuple[list[tuple[str, str, str]], list[Left]]:
    """(old, new, key) moves and what is left: rows whose id changes, to a new id nothing holds;
    of several moving to one id, the first by old id."""
    moves, left = [], []
    for row in sorted(rows, key=lambda r: key_of(r)[0]):
        old, new, key = key_of(row)
        if new == old:
            continue
        if new in taken:
            left.append(Left(uid=old, wanted=new, why="the new key is already someone's: not merged"))
            continue
        taken.add(new)
        moves.append((old, new, key))
    return moves, left


def _entity_ids(row: dict[str, Any]) -> tuple[str, str, str]:
    key = name_key(row["name"])
    old = row["uid"]
    entity_type = row.get("type") or old.split("|", 1)[0]
    if not key or not old.startswith(f"{entity_type}|"):
        return old, old, key  # not a name-keyed entity (or no letters left): nothing to move
    return old, entity_uid(entity_type, key), key


def _speaker_ids(row: dict[str, Any]) -> tuple[str, str, str]:
    key = name_key(row["name"])
    return row["key"], key or row["key"], key


async def migrate(run: Run, tenant: str, *, force: bool = False) -> NameKeyMigration:
    """Moves `tenant`'s entities and speakers keyed by an older rule to their keys now (module
    docstring). `run` runs one statement on the tenant's graph. `force`: look again even when the
    record says this rule's migration ran."""
    out = NameKeyMigration(tenant=tenant)
    if not force:
        rec = await run(q.GET_RECORD, {"name": RECORD})
        if rec and (rec[0].get("rule") or 0) >= NAME_RULE_VERSION:
            out.skipped, out.record = True, rec[0]
            return out
    looking = {"changed": CHANGED, "mark": MARK}
    entities = await run(q.CANDIDATE_ENTITIES, looking)
    speakers = await run(q.CANDIDATE_SPEAKERS, looking)
    out.looked_at = len(entities) + len(speakers)

    wanted = sorted({new for old, new, _ in map(_entity_ids, entities) if new != old})
    taken = {r["uid"] for r in await run(q.TAKEN_UIDS, {"uids": wanted})} if wanted else set()
    moves, out.left = _plan(entities, _entity_ids, taken)
    for old, new, key in moves:
        if await run(q.MOVE_ENTITY, {"old": old, "new": new, "key": key}):
            out.moved.append(Moved(old=old, new=new))
        else:  # taken in the meantime by a write under the new rule
            out.left.append(Left(uid=old, wanted=new, why="the new key was taken while migrating: not merged"))
    if out.moved:
        olds, news = [m.old for m in out.moved], [m.new for m in out.moved]
        for prop in q.REFERENCE_PROPERTIES:
            await run(q.move_references(prop), {"olds": olds, "news": news})

    wanted = sorted({new for old, new, _ in map(_speaker_ids, speakers) if new != old})
    taken = {r["key"] for r in await run(q.TAKEN_SPEAKERS, {"keys": wanted})} if wanted else set()
    moves, left = _plan(speakers, _speaker_ids, taken)
    out.left += left
    for old, new, _ in moves:
        if await run(q.MOVE_SPEAKER, {"old": old, "new": new}):
            out.speakers_moved.append(Moved(old=old, new=new))
        else:
            out.left.append(Left(uid=old, wanted=new, why="the new key was taken while migrating: not merged"))

    if out.moved or out.speakers_moved or out.left:
        await run(q.SET_RECORD, {
            "name": RECORD, "value": NAME_RULE_VERSION, "at_ms": now_ms(),
            "moved": [f"{m.old} -> {m.new}" for m in out.moved + out.speakers_moved],
            "left": [f"{x.uid} (wanted {x.wanted})" for x in out.left],
        })
        log.info("tenant %s: %d names moved to the keys of rule %d, %d left under their old keys (%s)",
                 tenant, len(out.moved) + len(out.speakers_moved), NAME_RULE_VERSION, len(out.left),
                 ", ".join(x.uid for x in out.left) or "none")
    rec = await run(q.GET_RECORD, {"name": RECORD})
    out.record = rec[0] if rec else None
    return out


async def migrate_tenant(client, tenant: str, *, force: bool = True) -> NameKeyMigration:
    """`migrate` through a GraphClient (`relay admin migrate-names`)."""
    return await migrate(lambda query, params: client.run(tenant, query, params), tenant, force=force)


declare_migration("relay_graph.memory.name_keys", migrate)

__all__ = ["NameKeyMigration", "Moved", "Left", "migrate", "migrate_tenant", "RECORD"]
