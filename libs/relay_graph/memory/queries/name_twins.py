"""Cypher of the name-twin merge (`memory.name_twins`): the Customer entities keyed by a name that is
exactly one id-keyed customer's name, what each of them holds, and moving all of it onto that
customer. The record is a `(:Setting {name: 'name_twins'})` node, so it goes with the graph.

Every value is a parameter. A relationship type is the one thing placed into the text
(`move_edges`): FalkorDB cannot re-point an edge, so an edge moves as a new one of the same type
and properties and the old one is deleted; the types come from the graph and are checked.

A guard (the customer's slots' versions as read) keeps what follows it grouped by what passed it:
an aggregate over nothing still returns a row, and the writes after it would run."""

from __future__ import annotations

import re
from functools import lru_cache

from relay_graph.runtime.queries import Query

# The record, and the candidates: Customer entities whose uid lies in `$ranges` (pairs [from, to)
# of the Entity.uid index: every customer key that is not an id Relay gives), each with the
# customers holding its key as their current name (`$names` + its key: the PersonName node, by
# its uid). Nothing but the record is read when it exists and `$force` is false; a tenant with no
# customer keyed by a name reads an empty index range.
CANDIDATES = Query(
    "name_twins_candidates",
    """
OPTIONAL MATCH (rec:Setting {name: $record})
CALL {
    WITH rec
    WITH rec WHERE rec IS NULL OR $force
    UNWIND $ranges AS r
    MATCH (t:Entity) WHERE t.uid >= r[0] AND t.uid < r[1]
    WITH t WHERE t:Customer
    MATCH (n:Entity {uid: $names + substring(t.uid, size($customers))})<-[:NAMED]-(c:Customer)
    WITH t, collect(DISTINCT c.uid) AS named
    RETURN collect([t.uid, named]) AS candidates
}
RETURN rec IS NOT NULL AS recorded, rec.at_ms AS at_ms, rec.merged AS merged, rec.left AS left, candidates
""".strip(),
    read_only=True,
)

# One candidate: the types of its edges (a session, a ticket, a line or a name of its own makes it
# a customer of its own), its slots (by the Slot.key range of its uid: `$lo` = uid + '|', `$hi` =
# uid + '}'), the facts it is the subject of, and the customer's slots of the same predicates.
TWIN = Query(
    "name_twins_twin",
    """
MATCH (t:Entity {uid: $twin})
CALL {
    WITH t
    OPTIONAL MATCH (t)-[r]-()
    RETURN collect(DISTINCT type(r)) AS types
}
CALL {
    MATCH (s:Slot) WHERE s.key >= $lo AND s.key < $hi
    RETURN collect([s.key, coalesce(s.predicate, substring(s.key, size($lo))), s.version, s.conflict_id]) AS slots
}
CALL {
    WITH t
    OPTIONAL MATCH (t)<-[:ABOUT {role: 'subject'}]-(f:Fact)
    RETURN collect(DISTINCT f.predicate) AS predicates
}
RETURN t.uid AS uid, types, slots, predicates
""".strip(),
    read_only=True,
)

_SLOT_FACT = """f {.fact_id, .slot, .predicate, .subject_uid, .object_uid, .object_name, .valid_from_ms,
    .valid_to_ms, .conflict_id, state: CASE WHEN f:Current THEN 'current' WHEN f:Claim THEN 'claim'
                WHEN f:Retired THEN 'retired' ELSE 'superseded' END}"""

# The facts of some slots (the twin's and the customer's, by Fact.slot), the customer's slots, and
# how many values each predicate holds when it is the tenant's own (a `:Predicate` node).
SLOTS = Query(
    "name_twins_slots",
    f"""
CALL {{
    UNWIND $keys AS key
    MATCH (f:Fact {{slot: key}})
    RETURN collect({_SLOT_FACT}) AS facts
}}
CALL {{
    UNWIND $customer_keys AS key
    MATCH (s:Slot {{key: key}})
    RETURN collect([s.key, s.version, s.conflict_id]) AS slots
}}
CALL {{
    UNWIND $predicates AS name
    MATCH (p:Predicate {{name: name}})
    RETURN collect([p.name, p.cardinality]) AS own
}}
RETURN facts, slots, own
""".strip(),
    read_only=True,
)

# A twin's fact that says what the customer's says (the same current value): the customer's fact
# counts it as a corroboration and reaches back to where the twin's began (`$folds`: [twin fact,
# customer fact, valid_from_ms]), and the customer's slots of them move on (`$bump`). Guarded by the
# versions of the customer's slots (`$guards`: [key, version], -1 for none) as read: no row when a
# write (or another process merging the same twin) changed one since.
FOLD = Query(
    "name_twins_fold",
    """
UNWIND $guards AS g
OPTIONAL MATCH (s:Slot {key: g[0]})
WITH collect(coalesce(s.version, -1) = g[1]) AS oks
WITH all(ok IN oks WHERE ok) AS ok
WHERE ok
UNWIND $folds AS x
MATCH (t:Fact {fact_id: x[0]}), (c:Fact {fact_id: x[1]})
SET c.corroborations = c.corroborations + coalesce(t.corroborations, 1), c.valid_from_ms = x[2]
WITH ok, count(c) AS folded
UNWIND $bump AS key
MATCH (slot:Slot {key: key})
SET slot.version = slot.version + 1
RETURN folded, count(slot) AS bumped
""".strip(),
)

# The types of the edges of some facts (what a folded fact carries over to the customer's).
FACT_EDGE_TYPES = Query(
    "name_twins_fact_edge_types",
    "UNWIND $ids AS id MATCH (f:Fact {fact_id: id})-[r]-() RETURN DISTINCT f.fact_id AS fact_id, type(r) AS type",
    read_only=True,
)

# A folded fact goes, with the twin's mirror edge of it (the customer's fact has its own).
DROP_FOLDED = Query(
    "name_twins_drop_folded",
    """
MATCH (t:Entity {uid: $twin})-[m]->(:Entity) WHERE m.fact_id IN $ids
DELETE m
WITH count(m) AS mirrors
UNWIND $ids AS id
MATCH (f:Fact {fact_id: id})
DETACH DELETE f
RETURN mirrors, count(f) AS facts
""".strip(),
)

# The facts about the twin now about the customer (`subject_uid`, `object_uid`, `slot`), the slots
# only the twin had renamed (`$renamed`: [old key, new key]), the twin's slots the customer also has
# dropped, the customer's moved on (`$merged`: [old key, new key]; a writer that read it before
# reads again), the conflicts of its facts re-keyed. Guarded like FOLD: no row, nothing done.
MOVE_FACTS = Query(
    "name_twins_move_facts",
    """
UNWIND $guards AS g
OPTIONAL MATCH (s:Slot {key: g[0]})
WITH collect(coalesce(s.version, -1) = g[1]) AS oks
WITH all(ok IN oks WHERE ok) AS ok
WHERE ok
MATCH (t:Entity {uid: $twin})
OPTIONAL MATCH (t)<-[:ABOUT]-(f:Fact)
WITH t, collect(DISTINCT f) AS facts
CALL {
    WITH facts
    UNWIND facts AS f
    MATCH (c:Conflict)-[:BETWEEN]->(f) WHERE c.subject_uid = $twin
    WITH DISTINCT c
    SET c.subject_uid = $customer, c.slot = $customer + '|' + c.predicate
    RETURN count(c) AS conflicts
}
CALL {
    WITH facts
    UNWIND facts AS f
    WITH f, f.subject_uid = $twin AS subject
    SET f.object_uid = CASE WHEN f.object_uid = $twin THEN $customer ELSE f.object_uid END,
        f.slot = CASE WHEN subject THEN $customer + '|' + f.predicate ELSE f.slot END,
        f.subject_uid = CASE WHEN subject THEN $customer ELSE f.subject_uid END
    RETURN count(f) AS moved
}
CALL {
    UNWIND $renamed AS k
    MATCH (slot:Slot {key: k[0]})
    SET slot.key = k[1], slot.subject_uid = $customer
    RETURN count(slot) AS renamed
}
CALL {
    UNWIND $merged AS k
    MATCH (slot:Slot {key: k[1]})
    SET slot.version = slot.version + 1
    WITH k
    MATCH (old:Slot {key: k[0]})
    RETURN collect(old) AS dropped
}
FOREACH (old IN dropped | DELETE old)
RETURN moved, conflicts, renamed, size(dropped) AS dropped
""".strip(),
)

# The twin's edges, by type (for `move_edges`).
EDGE_TYPES = Query(
    "name_twins_edge_types",
    "MATCH (t:Entity {uid: $twin})-[r]-() RETURN DISTINCT type(r) AS type",
    read_only=True,
)

# Which of some twins are still there (a twin left as "changed while merging" may have been merged
# by another process meanwhile).
EXISTING = Query(
    "name_twins_existing",
    "UNWIND $uids AS uid MATCH (e:Entity {uid: uid}) RETURN e.uid AS uid",
    read_only=True,
)

# The twin goes once nothing links to it any more.
DELETE_TWIN = Query(
    "name_twins_delete",
    """
MATCH (t:Entity {uid: $twin})
OPTIONAL MATCH (t)-[r]-()
WITH t, count(r) AS edges
WHERE edges = 0
DELETE t
RETURN count(*) AS deleted
""".strip(),
)

_TYPE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
# The node an edge moves from and to: an entity by uid, a fact by id.
_ENDS = {
    "entity": "MATCH (a:Entity {uid: $from}) MATCH (b:Entity {uid: $to})",
    "fact": "MATCH (a:Fact {fact_id: $from}) MATCH (b:Fact {fact_id: $to})",
}
_DIRECTIONS = {
    "out": ("MATCH (a)-[r:__T__]->(o) WHERE o <> a", "(b)-[n:__T__]->(o)"),
    "in": ("MATCH (o)-[r:__T__]->(a) WHERE o <> a", "(o)-[n:__T__]->(b)"),
    "self": ("MATCH (a)-[r:__T__]->(a) WHERE true", "(b)-[n:__T__]->(b)"),
}


def is_edge_type(name: object) -> bool:
    return isinstance(name, str) and _TYPE.fullmatch(name) is not None


@lru_cache(maxsize=512)
def move_edges(kind: str, rel_type: str, direction: str, *, once: bool = False) -> Query:
    """Every `rel_type` edge of node `$from` (`kind`: entity or fact) going `direction` (out, in,
    self) made again, with its properties, at node `$to`, and the old one deleted. `once`: not
    where `$to` has an edge of that type with the other end already (a folded fact's provenance)."""
    if not is_edge_type(rel_type):
        raise ValueError(f"{rel_type!r} is not a relationship type")
    match, create = _DIRECTIONS[direction]
    guard = f" AND NOT {create.replace('n:', ':')}" if once else ""
    text = (f"{_ENDS[kind]} {match}{guard} CREATE {create} SET n = properties(r) DELETE r "
            "RETURN count(n) AS moved").replace("__T__", rel_type)
    return Query(f"name_twins_move_{kind}_{direction}{'_once' if once else ''}:{rel_type}", text)


GET_RECORD = Query(
    "name_twins_record",
    "MATCH (s:Setting {name: $name}) RETURN s.at_ms AS at_ms, s.merged AS merged, s.left AS left",
    read_only=True,
)

# What merged is added to what the record has (another process may have merged some meanwhile);
# what is left is what this run left.
SET_RECORD = Query(
    "name_twins_set_record",
    "MERGE (s:Setting {name: $name}) "
    "SET s.at_ms = $at_ms, s.left = $left, "
    "    s.merged = coalesce(s.merged, []) + [m IN $merged WHERE NOT m IN coalesce(s.merged, [])] "
    "RETURN s.at_ms AS at_ms",
)
