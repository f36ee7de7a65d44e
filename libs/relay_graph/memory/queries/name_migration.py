"""Cypher of the name-key migration (`memory.name_migration`): the entities and speakers whose stored
key an older `name_key` may have made differently, and moving one of them to its key now, with
every reference to its uid. The record is a `(:Setting {name: 'name_keys'})` node, so it goes with
the graph (snapshots, moves, reset)."""

from __future__ import annotations

from relay_graph.runtime.queries import Query

# Only a name with a character the two rules treat differently ($changed: a combining mark, a
# joiner or other default-ignorable, a Unicode hyphen) can have another key now, and only when its
# key has no mark ($mark): rule 1 never left one in a key, rule 2 keeps them. So a graph written by
# rule 2 returns (next to) nothing, however many Hindi or Thai names it holds.
CANDIDATE_ENTITIES = Query(
    "names_migration_entities",
    "MATCH (e:Entity) WHERE e.name IS NOT NULL AND size(string.matchRegEx(e.name, $changed)) > 0 "
    "AND size(string.matchRegEx(coalesce(e.name_key, ''), $mark)) = 0 "
    "RETURN e.uid AS uid, e.name AS name, e.name_key AS name_key, e.type AS type",
    read_only=True,
)

CANDIDATE_SPEAKERS = Query(
    "names_migration_speakers",
    "MATCH (sp:Speaker) WHERE sp.name IS NOT NULL AND size(string.matchRegEx(sp.name, $changed)) > 0 "
    "AND size(string.matchRegEx(coalesce(sp.key, ''), $mark)) = 0 "
    "RETURN sp.key AS key, sp.name AS name",
    read_only=True,
)

# Which of the new uids some entity already holds (then nothing moves onto it).
TAKEN_UIDS = Query(
    "names_migration_taken",
    "UNWIND $uids AS u MATCH (e:Entity {uid: u}) RETURN e.uid AS uid",
    read_only=True,
)

TAKEN_SPEAKERS = Query(
    "names_migration_taken_speakers",
    "UNWIND $keys AS k MATCH (sp:Speaker {key: k}) RETURN sp.key AS key",
    read_only=True,
)

# One entity to its new uid and key, and the facts about it, their slots and conflicts (a fact's
# slot is "<subject uid>|<predicate>"). Guarded: nothing happens when the new uid is taken by then.
MOVE_ENTITY = Query(
    "names_migration_move_entity",
    """
MATCH (e:Entity {uid: $old})
OPTIONAL MATCH (taken:Entity {uid: $new})
WITH e WHERE taken IS NULL
SET e.uid = $new, e.name_key = $key
WITH e
OPTIONAL MATCH (e)<-[:ABOUT]-(f:Fact)
WITH e, collect(DISTINCT f) AS facts,
     collect(DISTINCT CASE WHEN f.subject_uid = $old THEN f.predicate END) AS predicates
CALL {
    WITH facts
    UNWIND facts AS f
    WITH f, f.subject_uid = $old AS subject
    SET f.object_uid = CASE WHEN f.object_uid = $old THEN $new ELSE f.object_uid END,
        f.slot = CASE WHEN subject THEN $new + '|' + f.predicate ELSE f.slot END,
        f.subject_uid = CASE WHEN subject THEN $new ELSE f.subject_uid END
    RETURN count(f) AS facts_moved
}
CALL {
    WITH predicates
    UNWIND predicates AS predicate
    MATCH (slot:Slot {key: $old + '|' + predicate})
    SET slot.key = $new + '|' + predicate, slot.subject_uid = $new
    RETURN count(slot) AS slots
}
CALL {
    WITH facts
    UNWIND facts AS f
    MATCH (c:Conflict)-[:BETWEEN]->(f) WHERE c.subject_uid = $old
    SET c.subject_uid = $new, c.slot = $new + '|' + c.predicate
    RETURN count(DISTINCT c) AS conflicts
}
RETURN e.uid AS uid, facts_moved, slots, conflicts
""".strip(),
)

# The desk's references to an entity by uid (tickets, visits, faults, measurements, moves: a
# customer's or a city's uid), rewritten once for every entity moved. A whole-graph scan, run only
# when something moved.
REFERENCE_PROPERTIES = ("customer_uid", "city_uid", "fixed_by_uid")


def move_references(prop: str) -> Query:
    if prop not in REFERENCE_PROPERTIES:
        raise ValueError(f"{prop} is not a uid reference")
    return Query(
        f"names_migration_refs_{prop}",
        f"MATCH (n) WHERE n.{prop} IN $olds "
        f"WITH n, [i IN range(0, size($olds) - 1) WHERE $olds[i] = n.{prop}][0] AS i "
        f"SET n.{prop} = $news[i] RETURN count(n) AS n",
    )


MOVE_SPEAKER = Query(
    "names_migration_move_speaker",
    "MATCH (sp:Speaker {key: $old}) OPTIONAL MATCH (taken:Speaker {key: $new}) "
    "WITH sp WHERE taken IS NULL SET sp.key = $new RETURN sp.key AS key",
)

GET_RECORD = Query(
    "names_migration_record",
    "MATCH (s:Setting {name: $name}) RETURN s.value AS rule, s.at_ms AS at_ms, s.moved AS moved, s.left AS left",
    read_only=True,
)

SET_RECORD = Query(
    "names_migration_set_record",
    "MERGE (s:Setting {name: $name}) SET s.value = $value, s.at_ms = $at_ms, s.moved = $moved, s.left = $left "
    "RETURN s.value AS value",
)
