"""Cypher for facts, the entities they are about, the agents that write and read them, conflicts
and trust. Every value is a parameter. Labels and relationship types come only from the
registry (the vocabulary the engine's user registered): statements that must name one are built
from what is registered when first used, and again after a later registration
(`registry.FromRegistry`), one per predicate or entity type, in mappings keyed by that name; a
tenant's own predicate (memory/predicates.py) gets its statements from its definition, built on
first use and kept (`PerPredicate[predicate]`, `batch_writes(predicates)`).

Shape of the semantic band (per tenant graph):

    (:Slot {key, version, conflict_id})              one per (subject, predicate); guards writes
    (:Fact:Current|Superseded|Retired|Claim {fact_id, slot, predicate, subject_uid, object_uid,
        object_name, valid_from_ms, valid_to_ms, recorded_at_ms, expired_at_ms, believed_from_ms,
        asserted_by, label, corroborations, source, conflict_id})
    (f)-[:ABOUT {role: 'subject'|'object'}]->(:Entity:<Type> {uid, name, name_key, type})
    (f)-[:WRITTEN_BY]->(:Agent {name})     (new)-[:SUPERSEDES]->(old)
    (:Episode)-[:DERIVED]->(f)             (:Episode)-[:RETIRED]->(f)
    (subject)-[:<EDGE> {fact_id}]->(object)      mirror of a current fact
    (subject)-[:WAS {predicate, fact_id, valid_from_ms, valid_to_ms}]->(object)   an ended one
    (:Conflict {conflict_id, predicate, slot, subject_uid, open, opened_at_ms, settled_by,
        settled_at_ms})-[:BETWEEN]->(f), -[:SETTLED_FOR]->(winner)
    (:Agent)-[:HAS_TRUST]->(:Trust {agent, predicate, wins, losses, score})
    (:Agent)-[:CONSULTED {count, first_ms, last_ms}]->(f)

Writes are guarded: the statement only runs when `slot.version = $expected`, and bumps it. A
statement that returns no row did nothing (another writer got there first): read again, retry.
Every statement starts from an indexed node (Slot.key, Entity.uid, Fact.slot, Fact.fact_id,
Conflict.conflict_id, Agent.name).

Full-text lookups live only in read-only statements, never in one that then writes: a statement
that queries a full-text (or vector) index and afterwards creates or changes a node of an indexed
label aborts the whole FalkorDB 4.16 server (RediSearch_LockWrite assertion). Hence the shape:
one read (names + slot), then one guarded write.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache

from relay_graph.memory.registry import FromRegistry, Predicate, builtin, entity_types, every_predicate
from relay_graph.runtime.queries import Query

# ---------------------------------------------------------------------------------------------
# fragments (plain text; placeholders __LIKE_THIS__ are filled only from registry constants)

# The columns of a fact, with its state read from its label.
FACT_FIELDS = """f {.fact_id, .slot, .predicate, .subject_uid, .object_uid, .object_name, .valid_from_ms,
    .valid_to_ms, .recorded_at_ms, .expired_at_ms, .believed_from_ms, .asserted_by, .label, .corroborations,
    .conflict_id, .source,
    state: CASE WHEN f:Current THEN 'current' WHEN f:Claim THEN 'claim'
                WHEN f:Retired THEN 'retired' ELSE 'superseded' END}"""

# An entity by its exact uid (type and normal-form name). Writes address only this; a read that
# misses it is matched fuzzily afterwards by `names`, in a statement of its own.
_LOOKUP = """
OPTIONAL MATCH (__V__:Entity {uid: $__P___uid})
"""


def _lookup(var: str) -> str:
    """Bind `var` to the entity `$<var>_uid` (null when there is none)."""
    return _LOOKUP.replace("__P__", var).replace("__V__", var)


# Optimistic concurrency on the slot. The first write of a slot creates it at version 0.
_GUARD_NEW = """
MERGE (slot:Slot {key: $slot})
  ON CREATE SET slot.version = 0, slot.subject_uid = $s_uid, slot.predicate = $predicate
WITH slot WHERE slot.version = $expected
SET slot.version = slot.version + 1
"""
_GUARD = """
MATCH (slot:Slot {key: $slot}) WHERE slot.version = $expected
SET slot.version = slot.version + 1
WITH slot
MATCH (s:Entity {uid: $s_uid})
"""

# A new fact, its entities, its writer. __STATE__ is Current, Superseded (late-arriving) or Claim.
_NEW_FACT = """
MERGE (s:Entity {uid: $s_uid})
  ON CREATE SET s:__SUBJECT__, s.name = $s_name, s.name_key = $s_key, s.type = $s_type
MERGE (o:Entity {uid: $o_uid})
  ON CREATE SET o:__OBJECT__, o.name = $o_name, o.name_key = $o_key, o.type = $o_type
MERGE (a:Agent {name: $agent})
CREATE (f:Fact:__STATE__ {fact_id: $fact_id, slot: $slot, predicate: $predicate, subject_uid: $s_uid,
                          object_uid: $o_uid, object_name: o.name, valid_from_ms: $valid_from_ms,
                          valid_to_ms: $valid_to_ms, recorded_at_ms: $recorded_at_ms,
                          expired_at_ms: $expired_at_ms, asserted_by: $agent, label: $label, corroborations: 1,
                          source: $source})
CREATE (f)-[:ABOUT {role: 'subject'}]->(s), (f)-[:ABOUT {role: 'object'}]->(o), (f)-[:WRITTEN_BY]->(a)
"""
_MIRROR_NEW = """
CREATE (s)-[:__EDGE__ {fact_id: $fact_id}]->(o)
"""
_WAS_NEW = """
CREATE (s)-[:WAS {predicate: $predicate, fact_id: $fact_id, valid_from_ms: $valid_from_ms,
                  valid_to_ms: $valid_to_ms}]->(o)
"""
_OPEN_OR_JOIN_CONFLICT = """
SET f.conflict_id = $conflict_id, slot.conflict_id = $conflict_id
MERGE (conflict:Conflict {conflict_id: $conflict_id})
  ON CREATE SET conflict.predicate = $predicate, conflict.slot = $slot, conflict.subject_uid = $s_uid,
                conflict.open = true, conflict.opened_at_ms = $recorded_at_ms
CREATE (conflict)-[:BETWEEN]->(f)
WITH slot, s, f, conflict
CALL {
    WITH conflict
    UNWIND $between AS id
    MATCH (x:Fact {fact_id: id})
    CREATE (conflict)-[:BETWEEN]->(x)
    SET x.conflict_id = $conflict_id
}
"""

# Existing facts: final intervals and counts, then state moves with their mirror edges.
_SET_INTERVALS = """
CALL {
    UNWIND $changes AS ch
    MATCH (x:Fact {fact_id: ch.fact_id})
    SET x.valid_from_ms = ch.valid_from_ms, x.valid_to_ms = ch.valid_to_ms, x.expired_at_ms = ch.expired_at_ms,
        x.corroborations = x.corroborations + ch.corroborate,
        x.believed_from_ms = coalesce(ch.believed_from_ms, x.believed_from_ms)
}
"""
_TO_SUPERSEDED = """
CALL {
    UNWIND $to_superseded AS id
    MATCH (x:Fact {fact_id: id})
    REMOVE x:Current:Claim
    SET x:Superseded
}
"""
_TO_RETIRED = """
CALL {
    UNWIND $to_retired AS id
    MATCH (x:Fact {fact_id: id})
    REMOVE x:Current
    SET x:Retired, x.retired_by = $agent
}
"""
_TO_CURRENT = """
CALL {
    WITH s
    UNWIND $to_current AS id
    MATCH (x:Fact {fact_id: id})
    REMOVE x:Claim
    SET x:Current
    WITH s, x, id
    MATCH (o:Entity {uid: x.object_uid})
    CREATE (s)-[:__EDGE__ {fact_id: id}]->(o)
}
"""
# A fact that stops being current: its typed edge becomes WAS with the fact's interval.
_UNMIRROR = """
CALL {
    WITH s
    UNWIND $unmirror AS id
    MATCH (s)-[m:__EDGE__ {fact_id: id}]->(o:Entity)
    MATCH (x:Fact {fact_id: id})
    CREATE (s)-[:WAS {predicate: $predicate, fact_id: id, valid_from_ms: x.valid_from_ms,
                      valid_to_ms: x.valid_to_ms}]->(o)
    DELETE m
}
"""
# WAS edges follow their fact when history is re-cut (a late fact arrived, a value was extended).
_SYNC_WAS = """
CALL {
    WITH s
    UNWIND $changes AS ch
    MATCH (s)-[w:WAS {fact_id: ch.fact_id}]->(:Entity)
    SET w.valid_from_ms = ch.valid_from_ms, w.valid_to_ms = ch.valid_to_ms
}
"""
_SUPERSEDES = """
CALL {
    UNWIND $supersedes AS id
    MATCH (n:Fact {fact_id: $fact_id}), (x:Fact {fact_id: id})
    CREATE (n)-[:SUPERSEDES]->(x)
}
"""
# The episode a fact came from, when it names one that exists (no episode is created here).
_DERIVED = """
CALL {
    UNWIND $derived AS eid
    MATCH (e:Episode {episode_id: eid}), (n:Fact {fact_id: $fact_id})
    MERGE (e)-[:DERIVED]->(n)
}
"""
# The same for a statement that creates one fact and nothing else. A list, not
# `OPTIONAL MATCH (e:Episode {episode_id: $source})`: with no source that lookup is on null, which
# FalkorDB answers by scanning every Episode of the tenant (17 ms per fact at 20,000 episodes).
_DERIVED_NEW = """
WITH slot, s, f
CALL {
    WITH f
    UNWIND $derived AS eid
    MATCH (e:Episode {episode_id: eid})
    MERGE (e)-[:DERIVED]->(f)
}
"""
_RETIRED_BY_EPISODE = """
CALL {
    UNWIND $derived AS eid
    MATCH (e:Episode {episode_id: eid})
    UNWIND $to_retired AS id
    MATCH (x:Fact {fact_id: id})
    MERGE (e)-[:RETIRED]->(x)
}
"""
_CLOSE_CONFLICT = """
MATCH (conflict:Conflict {conflict_id: $conflict_id})
MATCH (w:Fact {fact_id: $fact_id})
SET conflict.open = false, conflict.settled_by = $by, conflict.settled_at_ms = $now_ms, slot.conflict_id = null
CREATE (conflict)-[:SETTLED_FOR]->(w)
WITH slot, s, conflict
CALL {
    WITH conflict
    MATCH (conflict)-[:BETWEEN]->(x:Fact)
    SET x.conflict_id = null
}
"""
# Trust per (agent, predicate): wins and losses of settled conflicts, score = (w+1)/(w+l+2).
_MOVE_TRUST = """
CALL {
    UNWIND $trust AS t
    MERGE (a:Agent {name: t.agent})
    MERGE (a)-[:HAS_TRUST]->(tr:Trust {predicate: $predicate})
      ON CREATE SET tr.agent = t.agent, tr.wins = t.win, tr.losses = t.loss
      ON MATCH SET tr.wins = tr.wins + t.win, tr.losses = tr.losses + t.loss
    WITH t, tr
    SET tr.score = (tr.wins + 1.0) / (tr.wins + tr.losses + 2.0)
    RETURN collect([t.agent, tr.score]) AS trust
}
"""
_DONE = """
RETURN slot.version AS version
"""


def _fill(text: str, p: Predicate, state: str = "") -> str:
    return (
        text.replace("__SUBJECT__", p.subject_type)
        .replace("__OBJECT__", p.object_type)
        .replace("__EDGE__", p.edge or "")
        .replace("__STATE__", state)
    )


# A predicate without a mirror edge (a tenant's own with a text, number or time object:
# memory/predicates.py) gets the same statements without the parts that name one.
_TO_CURRENT_UNMIRRORED = """
CALL {
    UNWIND $to_current AS id
    MATCH (x:Fact {fact_id: id})
    REMOVE x:Claim
    SET x:Current
}
"""
_UNMIRRORED = {_MIRROR_NEW: "", _WAS_NEW: "", _UNMIRROR: "", _TO_CURRENT: _TO_CURRENT_UNMIRRORED}


def _statement(name: str, p: Predicate, *parts: str, state: str = "") -> Query:
    if p.edge is None:
        parts = tuple(_UNMIRRORED.get(part, part) for part in parts)
    # a tenant's own predicate may share its name with another tenant's of another shape
    suffix = "" if builtin(p.name) == p else f":{p.object_type.lower()}{'' if p.edge else ':unmirrored'}"
    return Query(f"{name}:{p.name}{suffix}", _fill("".join(parts), p, state).strip())


_CARRY = "WITH slot, s, f\n"


class PerPredicate(Mapping[str, Query]):
    """One statement per predicate: `[name]` for a built-in one (as registered when first used),
    `[predicate]` for any, a tenant's own included (built on first use, kept for the next)."""

    def __init__(self, name: str, *parts: str, state: str = ""):
        self._name, self._parts, self._state = name, parts, state
        self._builtins: FromRegistry[Query] = FromRegistry(
            lambda: {p.name: self[p] for p in every_predicate().values()})
        self._made: dict[Predicate, Query] = {}

    def __getitem__(self, key: str | Predicate) -> Query:
        if not isinstance(key, Predicate):
            return self._builtins[key]
        made = self._made.get(key)
        if made is None:
            if len(self._made) >= _MAX_MADE:  # tenants' vocabularies come and go: keep the newest
                self._made.pop(next(iter(self._made)))
            made = self._made[key] = _statement(self._name, key, *self._parts, state=self._state)
        return made

    def __iter__(self) -> Iterator[str]:
        return iter(self._builtins)

    def __len__(self) -> int:
        return len(self._builtins)


_MAX_MADE = 4096


def _per_predicate(name: str, *parts: str, state: str = "") -> PerPredicate:
    return PerPredicate(name, *parts, state=state)


# A new current fact that closes nothing: the first of its slot, one more value of a multi-valued
# predicate, a value after a retirement. The commonest write, so the shortest statement.
CREATE_PLAIN = _per_predicate(
    "fact_create_plain",
    _GUARD_NEW, _NEW_FACT, _MIRROR_NEW, _DERIVED_NEW, _DONE,
    state="Current",
)
# A new current fact; whatever it supersedes (or a retired fact it cuts short) closes with it.
CREATE_CURRENT = _per_predicate(
    "fact_create_current",
    _GUARD_NEW, _NEW_FACT, _MIRROR_NEW, _CARRY,
    _SET_INTERVALS, _TO_SUPERSEDED, _UNMIRROR, _SYNC_WAS, _SUPERSEDES, _DERIVED, _DONE,
    state="Current",
)
# A late-arriving fact: stored in its place in the past (never current), its predecessor cut short.
CREATE_HISTORY = _per_predicate(
    "fact_create_history",
    _GUARD_NEW, _NEW_FACT, _WAS_NEW, _CARRY,
    _SET_INTERVALS, _TO_SUPERSEDED, _UNMIRROR, _SYNC_WAS, _DERIVED, _DONE,
    state="Superseded",
)
# A contested value: a claim beside the current one, in a new or the open conflict.
CREATE_CLAIM = _per_predicate(
    "fact_create_claim",
    _GUARD_NEW, _NEW_FACT, _OPEN_OR_JOIN_CONFLICT, _DERIVED, _DONE,
    state="Claim",
)
# A repeat: the count goes up (and, for a late repeat, the fact reaches further back).
CORROBORATE = _per_predicate(
    "fact_corroborate",
    _GUARD, _SET_INTERVALS, _TO_SUPERSEDED, _UNMIRROR, _SYNC_WAS, _DERIVED, _DONE,
)
RETIRE = _per_predicate(
    "fact_retire",
    _GUARD, _SET_INTERVALS, _TO_RETIRED, _UNMIRROR, _RETIRED_BY_EPISODE, _DONE,
)
SETTLE = _per_predicate(
    "conflict_settle",
    _GUARD, _CLOSE_CONFLICT, _SET_INTERVALS, _TO_SUPERSEDED, _TO_CURRENT, _UNMIRROR, _SYNC_WAS, _SUPERSEDES,
    _MOVE_TRUST, "RETURN slot.version AS version, trust",
)

# ---------------------------------------------------------------------------------------------
# reads

# Before a write: both names (by exact uid), the slot's version and every fact in it.
SLOT_READ = Query(
    "fact_slot_read",
    (
        _lookup("s")
        + _lookup("o")
        + """
OPTIONAL MATCH (slot:Slot {key: $slot})
CALL {
    MATCH (f:Fact {slot: $slot})
    RETURN collect(__FIELDS__) AS facts
}
RETURN s.name AS s_name, o.name AS o_name,
       slot.version AS version, slot.conflict_id AS conflict_id, facts
""".replace("__FIELDS__", FACT_FIELDS)
    ).strip(),
    read_only=True,
)

ENTITY_LOOKUP = Query(
    "entity_lookup",
    (_lookup("s") + "RETURN s.uid AS uid, s.name AS name").strip(),
    read_only=True,
)

ENTITY_MERGE: FromRegistry[Query] = FromRegistry(lambda: {
    t: Query(
        f"entity_merge:{t}",
        f"""MERGE (e:Entity {{uid: $uid}})
  ON CREATE SET e:{t}, e.name = $name, e.name_key = $key, e.type = $type
RETURN e.uid AS uid, e.name AS name""",
    )
    for t in sorted(entity_types())
})

# Reads of one subject's facts over a list of slots (one per predicate asked about). The subject
# is looked up like a write does; facts come only when it was found.
_SUBJECT_FACTS = (
    _lookup("s")
    + """
CALL {
    WITH s
    WITH s WHERE s IS NOT NULL
    MATCH (f:Fact) WHERE f.slot IN $slots AND __FILTER__
    RETURN collect(__FIELDS__) AS facts
}
RETURN s.name AS subject, facts
"""
).replace("__FIELDS__", FACT_FIELDS)


def _subject_facts(name: str, condition: str) -> Query:
    return Query(name, _SUBJECT_FACTS.replace("__FILTER__", condition).strip(), read_only=True)


FACTS_CURRENT = _subject_facts("facts_current", "f:Current")
# true in the world at $t: begun, not yet ended (zero-length corrections never match)
FACTS_WORLD_AT = _subject_facts(
    "facts_world_at",
    "NOT f:Claim AND f.valid_from_ms <= $t AND (f.valid_to_ms IS NULL OR $t < f.valid_to_ms)",
)
# on file as our answer at $t
FACTS_BELIEF_AT = _subject_facts(
    "facts_belief_at",
    "NOT f:Claim AND coalesce(f.believed_from_ms, f.recorded_at_ms) <= $t"
    " AND (f.expired_at_ms IS NULL OR $t < f.expired_at_ms)",
)
FACTS_HISTORY = _subject_facts("facts_history", "NOT f:Claim")

# The current value and pending claims of one slot, each with its writer's trust for the predicate.
CLAIMS = Query(
    "fact_claims",
    (
        _lookup("s")
        + """
CALL {
    WITH s
    WITH s WHERE s IS NOT NULL
    MATCH (f:Fact) WHERE f.slot IN $slots AND (f:Current OR f:Claim)
    OPTIONAL MATCH (f)-[:WRITTEN_BY]->(:Agent)-[:HAS_TRUST]->(t:Trust {predicate: $predicate})
    RETURN collect(__FIELDS__) AS facts, collect([f.asserted_by, t.score]) AS trust
}
OPTIONAL MATCH (slot:Slot {key: $slot})
RETURN s.name AS subject, facts, trust, slot.conflict_id AS conflict_id
""".replace("__FIELDS__", FACT_FIELDS)
    ).strip(),
    read_only=True,
)

# A conflict, the facts it is between, and the version of their slot.
CONFLICT_READ = Query(
    "conflict_read",
    (
        """
MATCH (c:Conflict {conflict_id: $conflict_id})
OPTIONAL MATCH (c)-[:BETWEEN]->(f:Fact)
WITH c, collect(__FIELDS__) AS facts
OPTIONAL MATCH (slot:Slot {key: c.slot})
RETURN c.open AS open, c.slot AS slot, c.predicate AS predicate, c.subject_uid AS subject_uid,
       slot.version AS version, slot.conflict_id AS slot_conflict_id, facts
""".replace("__FIELDS__", FACT_FIELDS)
    ).strip(),
    read_only=True,
)

# Every read by a named agent leaves a trace: who consulted which fact, how often.
CONSULTED = Query(
    "fact_consulted",
    """MERGE (a:Agent {name: $reader})
WITH a
UNWIND $fact_ids AS id
MATCH (f:Fact {fact_id: id})
MERGE (a)-[c:CONSULTED]->(f)
  ON CREATE SET c.count = 1, c.first_ms = $now_ms, c.last_ms = $now_ms
  ON MATCH SET c.count = c.count + 1, c.last_ms = $now_ms
RETURN count(c) AS consulted""",
    read_receipt=True,
)

# ---------------------------------------------------------------------------------------------
# batches (facts.write_facts)
#
# The same writes as above for many facts at once: one UNWIND statement per kind of write, for
# every predicate, each row guarded by its own slot's version (a row whose guard fails is not
# returned, and nothing of it is written). Labels and relationship types that depend on the row's
# predicate are literals in one FOREACH branch per entity type and per predicate (from the
# registry, built when first used: `batch_writes()`), which only that row's type or predicate enters.
#
# Shaped by what FalkorDB 4.16 charges for (measured with GRAPH.PROFILE and server CPU time):
# - a statement that creates nodes and also sets properties pays, once, a cost that grows with the
#   graph (about 1 ms at 20,000 nodes, 3-5 ms at 100,000): so few statements with many rows;
# - adding a label to a node just created (MERGE ... ON CREATE SET n:City) costs that much per
#   node: new entities are CREATEd with their labels, each by the first row of the statement that
#   names it (`s_create` / `o_create`; rows that share a new city name it the same, as the caller
#   resolves the batch's names); a row whose entity's creator failed its guard finds no entity,
#   writes nothing, returns nothing and is retried like any row whose guard failed;
# - a statement handles each slot at most once: updates apply only after all rows were matched,
#   so a second row of one slot would check a stale version. Later writes of a slot in the same
#   batch go into later statements (the caller's rounds);
# - no MERGE and no DELETE inside a CALL subquery that runs for several rows: FalkorDB 4.16 then
#   performs only one row's (MERGE: the first; DELETE: the last); CREATE behind an existence check
#   instead of MERGE, and the subquery returns what to delete for a FOREACH after it.

# Every name of the batch (by exact uid: a write never resolves a misspelling) and every slot
# (version, open conflict, facts), in one read.
BATCH_READ = Query(
    "facts_batch_read",
    """
CALL {
    UNWIND $names AS n
    OPTIONAL MATCH (e:Entity {uid: n})
    RETURN collect([n, e.name]) AS names
}
CALL {
    UNWIND $slots AS key
    OPTIONAL MATCH (slot:Slot {key: key})
    CALL {
        WITH key
        MATCH (f:Fact {slot: key})
        RETURN collect(__FIELDS__) AS facts
    }
    RETURN collect([key, slot.version, slot.conflict_id, facts]) AS slots
}
RETURN names, slots
""".replace("__FIELDS__", FACT_FIELDS).strip(),
    read_only=True,
)

# The version moves only once the row's entities are there (see `_B_NEW_FACT`).
_B_GUARD_NEW = """
UNWIND $rows AS r
MERGE (slot:Slot {key: r.slot})
  ON CREATE SET slot.version = 0, slot.subject_uid = r.s_uid, slot.predicate = r.predicate
WITH r, slot WHERE slot.version = r.expected
"""
_B_CREATE_ENTITY = """FOREACH (_ IN CASE WHEN known IS NULL AND r.__R___create AND r.__R___type = '__TYPE__'
                THEN [1] ELSE [] END |
    CREATE (:Entity:__TYPE__ {uid: r.__R___uid, name: r.__R___name, name_key: r.__R___key, type: '__TYPE__'}))
"""


def _create_entities(role: str, types: set[str]) -> str:
    """The entity a row names as subject (`s`) or object (`o`), created if the row is its creator
    and it does not exist yet: one branch per entity type that role can have."""
    branches = "".join(_B_CREATE_ENTITY.replace("__TYPE__", t) for t in sorted(types))
    return (f"OPTIONAL MATCH (known:Entity {{uid: r.__R___uid}})\n{branches}WITH r, slot\n").replace("__R__", role)


# A row whose new entity was to be created by a row that failed its guard finds no entity and
# stops here, before its slot's version moves: nothing of it is written, and it is retried.
_B_NEW_FACT = """
MATCH (s:Entity {uid: r.s_uid})
WITH r, slot, s
MATCH (o:Entity {uid: r.o_uid})
SET slot.version = slot.version + 1
WITH r, slot, s, o
MERGE (a:Agent {name: r.agent})
CREATE (f:Fact:__STATE__ {fact_id: r.fact_id, slot: r.slot, predicate: r.predicate, subject_uid: r.s_uid,
                          object_uid: r.o_uid, object_name: o.name, valid_from_ms: r.valid_from_ms,
                          valid_to_ms: r.valid_to_ms, recorded_at_ms: r.recorded_at_ms,
                          expired_at_ms: r.expired_at_ms, asserted_by: r.agent, label: r.label, corroborations: 1,
                          source: r.source})
CREATE (f)-[:ABOUT {role: 'subject'}]->(s), (f)-[:ABOUT {role: 'object'}]->(o), (f)-[:WRITTEN_BY]->(a)
"""
_B_WAS_NEW = """
CREATE (s)-[:WAS {predicate: r.predicate, fact_id: r.fact_id, valid_from_ms: r.valid_from_ms,
                  valid_to_ms: r.valid_to_ms}]->(o)
"""
_B_CARRY = "WITH r, slot, s, f\n"
_B_OPEN_OR_JOIN_CONFLICT = """
SET f.conflict_id = r.conflict_id, slot.conflict_id = r.conflict_id
MERGE (conflict:Conflict {conflict_id: r.conflict_id})
  ON CREATE SET conflict.predicate = r.predicate, conflict.slot = r.slot, conflict.subject_uid = r.s_uid,
                conflict.open = true, conflict.opened_at_ms = r.recorded_at_ms
CREATE (conflict)-[:BETWEEN]->(f)
WITH r, slot, s, f, conflict
CALL {
    WITH r, conflict
    UNWIND r.between AS id
    MATCH (x:Fact {fact_id: id})
    CREATE (conflict)-[:BETWEEN]->(x)
    SET x.conflict_id = r.conflict_id
}
"""
_B_GUARD = """
UNWIND $rows AS r
MATCH (slot:Slot {key: r.slot}) WHERE slot.version = r.expected
SET slot.version = slot.version + 1
WITH r, slot
MATCH (s:Entity {uid: r.s_uid})
"""
_B_SET_INTERVALS = """
CALL {
    WITH r
    UNWIND r.changes AS ch
    MATCH (x:Fact {fact_id: ch.fact_id})
    SET x.valid_from_ms = ch.valid_from_ms, x.valid_to_ms = ch.valid_to_ms, x.expired_at_ms = ch.expired_at_ms,
        x.corroborations = x.corroborations + ch.corroborate,
        x.believed_from_ms = coalesce(ch.believed_from_ms, x.believed_from_ms)
}
"""
_B_TO_SUPERSEDED = """
CALL {
    WITH r
    UNWIND r.to_superseded AS id
    MATCH (x:Fact {fact_id: id})
    REMOVE x:Current:Claim
    SET x:Superseded
}
"""
# A fact that stops being current: its typed edge (the one edge from the subject that carries the
# fact's id and is not a WAS, whatever the predicate) becomes WAS with the fact's interval.
_B_UNMIRROR = """
CALL {
    WITH r, s
    UNWIND r.unmirror AS id
    MATCH (s)-[m]->(o:Entity)
    WHERE m.fact_id = id AND type(m) <> 'WAS'
    MATCH (x:Fact {fact_id: id})
    CREATE (s)-[:WAS {predicate: r.predicate, fact_id: id, valid_from_ms: x.valid_from_ms,
                      valid_to_ms: x.valid_to_ms}]->(o)
    RETURN collect(m) AS unmirrored
}
FOREACH (m IN unmirrored | DELETE m)
WITH *
"""
_B_SYNC_WAS = """
CALL {
    WITH r, s
    UNWIND r.changes AS ch
    MATCH (s)-[w:WAS {fact_id: ch.fact_id}]->(:Entity)
    SET w.valid_from_ms = ch.valid_from_ms, w.valid_to_ms = ch.valid_to_ms
}
"""
_B_SUPERSEDES = """
CALL {
    WITH r, f
    UNWIND r.supersedes AS id
    MATCH (x:Fact {fact_id: id})
    CREATE (f)-[:SUPERSEDES]->(x)
}
"""
# The episode a fact came from, when it exists (never created or changed here: an Episode that
# gets a property set after it was written loses its vector index entry). CREATE, not MERGE (see
# above): a new fact has no DERIVED edge yet, an existing one is checked first.
_B_DERIVED = """
CALL {
    WITH r, f
    UNWIND r.derived AS eid
    MATCH (e:Episode {episode_id: eid})
    CREATE (e)-[:DERIVED]->(f)
}
"""
_B_DERIVED_EXISTING = """
CALL {
    WITH r
    UNWIND r.derived AS eid
    MATCH (e:Episode {episode_id: eid})
    MATCH (n:Fact {fact_id: r.fact_id})
    WITH e, n WHERE NOT (e)-[:DERIVED]->(n)
    CREATE (e)-[:DERIVED]->(n)
}
"""
_B_DONE = """
RETURN r.i AS i
"""


def _batch(name: str, *parts: str, state: str = "") -> Query:
    return Query(name, "".join(parts).replace("__STATE__", state).strip())


def _b_entities(preds: tuple[Predicate, ...]) -> str:
    return (_create_entities("s", {p.subject_type for p in preds})
            + _create_entities("o", {p.object_type for p in preds}))


def _b_mirror_new(preds: tuple[Predicate, ...]) -> str:
    """The typed edge of a new current fact: one branch per predicate that has one."""
    return "".join(
        f"FOREACH (_ IN CASE WHEN r.predicate = '{p.name}' THEN [1] ELSE [] END |\n"
        f"    CREATE (s)-[:{p.edge} {{fact_id: r.fact_id}}]->(o))\n"
        for p in preds if p.edge is not None
    )


def _b_was_new(preds: tuple[Predicate, ...]) -> str:
    """A late-arriving fact's WAS edge, for the predicates that mirror their facts."""
    unmirrored = sorted(p.name for p in preds if p.edge is None)
    if not unmirrored:
        return _B_WAS_NEW
    names = ", ".join(f"'{name}'" for name in unmirrored)  # checked names (registry._NAME)
    return (f"FOREACH (_ IN CASE WHEN r.predicate IN [{names}] THEN [] ELSE [1] END |"
            + _B_WAS_NEW.rstrip() + ")\n")


@dataclass(frozen=True)
class BatchWrites:
    """The batch statements, one per kind of write, for every registered predicate."""

    create_plain: Query  # a new current fact that closes nothing (the commonest write)
    create_current: Query  # a new current fact and whatever it supersedes or cuts short
    create_history: Query  # a late-arriving fact, in its place in the past
    create_claim: Query  # a contested value: a claim in a new or the open conflict
    corroborate: Query  # a repeat

    def all(self) -> tuple[Query, ...]:
        return (self.create_plain, self.create_current, self.create_history, self.create_claim, self.corroborate)


@lru_cache(maxsize=256)
def _batch_writes(preds: tuple[Predicate, ...]) -> BatchWrites:
    entities, mirror = _b_entities(preds), _b_mirror_new(preds)
    return BatchWrites(
        create_plain=_batch(
            "facts_batch_create_plain",
            _B_GUARD_NEW, entities, _B_NEW_FACT, mirror, _B_CARRY, _B_DERIVED, _B_DONE,
            state="Current",
        ),
        create_current=_batch(
            "facts_batch_create_current",
            _B_GUARD_NEW, entities, _B_NEW_FACT, mirror, _B_CARRY,
            _B_SET_INTERVALS, _B_TO_SUPERSEDED, _B_UNMIRROR, _B_SYNC_WAS, _B_SUPERSEDES, _B_DERIVED, _B_DONE,
            state="Current",
        ),
        create_history=_batch(
            "facts_batch_create_history",
            _B_GUARD_NEW, entities, _B_NEW_FACT, _b_was_new(preds), _B_CARRY,
            _B_SET_INTERVALS, _B_TO_SUPERSEDED, _B_UNMIRROR, _B_SYNC_WAS, _B_DERIVED, _B_DONE,
            state="Superseded",
        ),
        create_claim=_batch(
            "facts_batch_create_claim",
            _B_GUARD_NEW, entities, _B_NEW_FACT, _B_CARRY, _B_OPEN_OR_JOIN_CONFLICT, _B_DERIVED, _B_DONE,
            state="Claim",
        ),
        corroborate=_batch(
            "facts_batch_corroborate",
            _B_GUARD, _B_SET_INTERVALS, _B_TO_SUPERSEDED, _B_UNMIRROR, _B_SYNC_WAS, _B_DERIVED_EXISTING, _B_DONE,
        ),
    )


def batch_writes(predicates: Iterable[Predicate] | None = None) -> BatchWrites:
    """The batch statements for `predicates` (default: what is registered now; a batch passes the
    predicates its facts name), built on first use and kept for the next."""
    preds = every_predicate().values() if predicates is None else predicates
    return _batch_writes(tuple(sorted(preds, key=lambda p: p.name)))

# Facts worded as sentences by the database (relay.sentence, udf.py), each under the subject name
# the caller read it with, and how long ago Relay learnt it (relay.ago of its recorded time); a
# fact gone since is left out.
FACT_SENTENCES = Query(
    "fact_sentences",
    """UNWIND $facts AS x
MATCH (f:Fact {fact_id: x.fact_id})
RETURN f.fact_id AS fact_id, relay.sentence(x.subject, f.predicate, f.object_name, f.valid_from_ms, f.asserted_by)
       AS sentence, relay.ago(f.recorded_at_ms, $now_ms) AS learnt""",
    read_only=True,
)
