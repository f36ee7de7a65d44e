"""Cypher for "how do we know this?": a fact with everything behind it, and the exact-name
lookup of an entity of any type that the tool catalogue resolves names with before it runs a
query.

    FACT_PROVENANCE   a fact by id, its subject's name, the agent(s) it was WRITTEN_BY, the episodes
                      that DERIVED (and RETIRED) it, the facts it SUPERSEDES and that supersede it,
                      the Conflict it stands in (with the other claims and the one it was settled
                      for), and the agents that CONSULTED it.
    ENTITY_BY_KEY     entities of any type whose normal-form name is $key.

Both start from an index (Fact.fact_id, Entity.name_key). An OPTIONAL MATCH that finds nothing
leaves one all-null map in a collect(); the caller drops maps without an id."""

from __future__ import annotations

from relay_graph.runtime.queries import Query

# A related fact, briefly: enough to say what it was and when, not its whole record.
_BRIEF = """{fact_id: __V__.fact_id, object: __V__.object_name, asserted_by: __V__.asserted_by,
    valid_from_ms: __V__.valid_from_ms, valid_to_ms: __V__.valid_to_ms, recorded_at_ms: __V__.recorded_at_ms,
    expired_at_ms: __V__.expired_at_ms,
    state: CASE WHEN __V__:Current THEN 'current' WHEN __V__:Claim THEN 'claim'
                WHEN __V__:Retired THEN 'retired' ELSE 'superseded' END}"""

_EPISODE = """{episode_id: __V__.episode_id, session: __V__.session_id, speaker: __V__.speaker,
    text: __V__.text, at_ms: __V__.at_ms, kind: __V__.kind}"""


def _brief(var: str) -> str:
    return _BRIEF.replace("__V__", var)


def _episode(var: str) -> str:
    return _EPISODE.replace("__V__", var)


FACT_PROVENANCE = Query(
    "fact_provenance",
    f"""
MATCH (f:Fact {{fact_id: $fact_id}})
OPTIONAL MATCH (s:Entity {{uid: f.subject_uid}})
WITH f, s
CALL {{
    WITH f
    OPTIONAL MATCH (f)-[:WRITTEN_BY]->(a:Agent)
    RETURN collect(DISTINCT a.name) AS writers
}}
CALL {{
    WITH f
    OPTIONAL MATCH (e:Episode)-[:DERIVED]->(f)
    RETURN collect(DISTINCT {_episode('e')}) AS derived
}}
CALL {{
    WITH f
    OPTIONAL MATCH (e:Episode)-[:RETIRED]->(f)
    RETURN collect(DISTINCT {_episode('e')}) AS retired_by
}}
CALL {{
    WITH f
    OPTIONAL MATCH (f)-[:SUPERSEDES]->(x:Fact)
    RETURN collect(DISTINCT {_brief('x')}) AS supersedes
}}
CALL {{
    WITH f
    OPTIONAL MATCH (y:Fact)-[:SUPERSEDES]->(f)
    RETURN collect(DISTINCT {_brief('y')}) AS superseded_by
}}
CALL {{
    WITH f
    OPTIONAL MATCH (c:Conflict)-[:BETWEEN]->(f)
    OPTIONAL MATCH (c)-[:BETWEEN]->(x:Fact)
    OPTIONAL MATCH (c)-[:SETTLED_FOR]->(w:Fact)
    RETURN collect(DISTINCT {{conflict_id: c.conflict_id, open: c.open, opened_at_ms: c.opened_at_ms,
                             settled_by: c.settled_by, settled_at_ms: c.settled_at_ms,
                             settled_for: w.fact_id}}) AS conflicts,
           collect(DISTINCT {_brief('x')}) AS between
}}
CALL {{
    WITH f
    OPTIONAL MATCH (r:Agent)-[k:CONSULTED]->(f)
    RETURN collect(DISTINCT {{agent: r.name, count: k.count, last_ms: k.last_ms}}) AS consulted
}}
RETURN f {{.fact_id, .predicate, .subject_uid, .object_uid, .object_name, .valid_from_ms, .valid_to_ms,
          .recorded_at_ms, .expired_at_ms, .believed_from_ms, .asserted_by, .corroborations, .conflict_id,
          .source,
          state: CASE WHEN f:Current THEN 'current' WHEN f:Claim THEN 'claim'
                      WHEN f:Retired THEN 'retired' ELSE 'superseded' END}} AS fact,
       s.name AS subject, writers, derived, retired_by, supersedes, superseded_by, conflicts, between, consulted
""".strip(),
    read_only=True,
)

ENTITY_BY_KEY = Query(
    "entity_by_key",
    "MATCH (e:Entity {name_key: $key}) "
    "RETURN e.uid AS uid, e.name AS name, e.type AS type ORDER BY e.uid LIMIT 20",
    read_only=True,
)
