"""Cypher for a tenant's own predicates (memory/predicates.py). Every value is a parameter.

Shape (per tenant graph):

    (:Predicate {name, cardinality, object, conflict, description, retired, defined_at_ms,
        defined_by, updated_at_ms})                one per predicate the tenant defined
    (:Vocabulary {key, version, stamp})            one; every change moves `version` and draws a
                                                   new `stamp` (what a process's cache compares)

A change is guarded by the stamp it read (optimistic, like a fact's slot): a statement that
returns no row did nothing; read again and decide again. A change of cardinality is guarded by
the count of the predicate's facts as well, in the same statement, so no fact written meanwhile
can be re-read under another cardinality.
"""

from __future__ import annotations

from relay_graph.runtime.queries import Query

_FIELDS = ("p {.name, .cardinality, .object, .conflict, .description, .retired, .defined_at_ms, .defined_by, "
           ".updated_at_ms}")

# The vocabulary's stamp and every predicate the tenant defined (a few dozen at most).
VOCABULARY_READ = Query(
    "vocabulary_read",
    f"""OPTIONAL MATCH (v:Vocabulary {{key: $key}})
CALL {{
    MATCH (p:Predicate)
    RETURN collect({_FIELDS}) AS predicates
}}
RETURN v.version AS version, v.stamp AS stamp, predicates""",
    read_only=True,
)

# What a process's cache compares with the stamp it read the vocabulary at.
VOCABULARY_STAMP = Query(
    "vocabulary_stamp",
    "OPTIONAL MATCH (v:Vocabulary {key: $key}) RETURN v.stamp AS stamp",
    read_only=True,
)

# How many facts (any state, claims too) were written with a predicate: a full scan of the
# tenant's facts, paid only by a change of cardinality.
PREDICATE_FACTS = Query(
    "predicate_facts",
    "MATCH (f:Fact) WHERE f.predicate = $name RETURN count(f) AS facts",
    read_only=True,
)

_GUARD = """MERGE (v:Vocabulary {key: $key})
  ON CREATE SET v.version = 0, v.stamp = ''
WITH v WHERE v.stamp = $expected
"""
_NO_FACTS = """CALL {
    MATCH (f:Fact) WHERE f.predicate = $name
    RETURN count(f) AS facts
}
WITH v, facts WHERE facts = 0
"""
_PUT = """SET v.version = v.version + 1, v.stamp = $stamp
MERGE (p:Predicate {name: $name})
  ON CREATE SET p.defined_at_ms = $now_ms, p.defined_by = $agent
SET p.cardinality = $cardinality, p.object = $object, p.conflict = $conflict, p.description = $description,
    p.retired = false, p.updated_at_ms = $now_ms
RETURN v.version AS version"""

# Defines a predicate or changes its object type, conflict policy or description.
PREDICATE_PUT = Query("predicate_put", _GUARD + _PUT)
# The same, for a change of cardinality (or bringing back a retired predicate with another one):
# only while the predicate has no facts.
PREDICATE_PUT_NO_FACTS = Query("predicate_put_no_facts", _GUARD + _NO_FACTS + _PUT)

# Retires a predicate: later writes are refused, its facts stay and are read as before.
PREDICATE_RETIRE = Query(
    "predicate_retire",
    """MATCH (v:Vocabulary {key: $key}) WHERE v.stamp = $expected
MATCH (p:Predicate {name: $name})
SET v.version = v.version + 1, v.stamp = $stamp, p.retired = true, p.updated_at_ms = $now_ms
RETURN v.version AS version""",
)
