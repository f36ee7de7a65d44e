"""Cypher of the read path `recall`: find entities a question names, the episodes near it in
meaning or connected to those entities, and the current facts about them.

Every statement starts from an index: the Episode vector index, Entity.uid / Entity.name_key,
the Entity(name) full-text index, Session.session_id, Episode.episode_id. Scores from the vector
index and `vec.cosineDistance` are cosine distances (0 = same direction; similarity = 1 - d).

Candidate statements return ids and distances only; the few episodes that make the answer are read
in full afterwards (`EPISODES_BY_ID`), so a busy entity costs distance computations, not transfer.
`$cap` / `$per_entity` bound how many episodes / facts one entity contributes before ranking (its
newest ones), so an entity that thousands of episodes or facts name (a city, a plan) costs a
bounded amount: distances and sorting happen on at most that many rows per entity.
"""

from __future__ import annotations

from . import Query
from .facts import FACT_FIELDS

# ------------------------------------------------------------------ entities

# Entities whose normal-form name is one of the question's n-grams.
ENTITIES_EXACT = Query(
    "recall_entities_exact",
    "UNWIND $keys AS k "
    "MATCH (e:Entity {name_key: k}) "
    "RETURN e.uid AS uid, e.name AS name, e.name_key AS key, e.type AS type, 'exact' AS how",
    read_only=True,
)

# Misspelt names: full-text queries built in recall.py from the question's words that matched no
# name exactly (each `%word%` or a two-word intersection; word characters only).
ENTITIES_FUZZY = Query(
    "recall_entities_fuzzy",
    "UNWIND $queries AS ft "
    "CALL db.idx.fulltext.queryNodes('Entity', ft) YIELD node, score "
    "WITH node, max(score) AS score "
    "ORDER BY score DESC LIMIT $limit "
    "RETURN node.uid AS uid, node.name AS name, node.name_key AS key, node.type AS type, 'fuzzy' AS how",
    read_only=True,
)

# ------------------------------------------------------------------ episode candidates

_EPISODE_OF_ENTITY = (
    "CALL {{ "
    "  WITH {e} MATCH ({e})<-[:MENTIONS]-(ep:Episode) "
    "  WITH ep ORDER BY ep.at_ms DESC LIMIT $cap RETURN ep, 'mentions' AS via "
    "  UNION "
    "  WITH {e} MATCH ({e})-[:HAS_SESSION]->(:Session)<-[:IN]-(ep:Episode) "
    "  WITH ep ORDER BY ep.at_ms DESC LIMIT $cap RETURN ep, 'session' AS via "
    "}} "
)

# No filter: the vector index, over-fetched (the caller fuses more than k candidates).
EPISODES_NEAR = Query(
    "recall_episodes_near",
    "CALL db.idx.vector.queryNodes('Episode', 'embedding', $n, vecf32($v)) YIELD node, score "
    "RETURN node.episode_id AS id, score AS d",
    read_only=True,
)

# Session filter: a session has few turns, so every one is scored exactly (an over-fetched
# vector search in a big graph may hold none of them).
EPISODES_IN_SESSION = Query(
    "recall_episodes_in_session",
    "MATCH (s:Session {session_id: $session})<-[:IN]-(ep:Episode) "
    "WITH ep, vec.cosineDistance(ep.embedding, vecf32($v)) AS d "
    "ORDER BY d LIMIT $n "
    "RETURN ep.episode_id AS id, d",
    read_only=True,
)

# The question's entities: their episodes (that MENTION one, or in a customer's sessions), those
# reached from more of them first, then nearest to the question.
EPISODES_OF_ENTITIES = Query(
    "recall_episodes_of_entities",
    "UNWIND $uids AS u "
    "MATCH (e:Entity {uid: u}) "
    + _EPISODE_OF_ENTITY.format(e="e")
    + "WITH u, ep, via WHERE $session IS NULL OR ep.session_id = $session "
    "WITH ep, collect({uid: u, via: via}) AS hops "
    "WITH ep, hops, vec.cosineDistance(ep.embedding, vecf32($v)) AS d "
    "ORDER BY size(hops) DESC, d LIMIT $n "
    "RETURN ep.episode_id AS id, hops, d",
    read_only=True,
)

# Subject filter: every episode of the subject (its sessions, or mentioning it), scored exactly,
# with the question's entities each one also mentions.
EPISODES_OF_SUBJECT = Query(
    "recall_episodes_of_subject",
    "MATCH (e:Entity {uid: $subject}) "
    + _EPISODE_OF_ENTITY.format(e="e")
    + "WITH ep, via WHERE $session IS NULL OR ep.session_id = $session "
    "WITH ep, collect(via) AS vias "
    "OPTIONAL MATCH (ep)-[:MENTIONS]->(m:Entity) WHERE m.uid IN $uids "
    "WITH ep, vias, collect(m.uid) AS hits "
    "WITH ep, vias, hits, vec.cosineDistance(ep.embedding, vecf32($v)) AS d "
    "ORDER BY d "
    # the n nearest, and every one that also mentions a named entity
    "WITH collect({id: ep.episode_id, vias: vias, hits: hits, d: d}) AS rows "
    "UNWIND rows[0..$n] + [r IN rows[$n..] WHERE size(r.hits) > 0] AS r "
    "RETURN r.id AS id, r.vias AS vias, r.hits AS hits, r.d AS d",
    read_only=True,
)

EPISODES_BY_ID = Query(
    "recall_episodes_by_id",
    "UNWIND $ids AS id "
    "MATCH (ep:Episode {episode_id: id}) "
    "RETURN ep.episode_id AS episode_id, ep.session_id AS session, ep.speaker AS speaker, ep.text AS text, "
    "ep.at_ms AS at_ms",
    read_only=True,
)

# ------------------------------------------------------------------ facts

_FACT_COLUMNS = (
    "MATCH (f)-[:ABOUT {role: 'subject'}]->(s:Entity) "
    f"RETURN {FACT_FIELDS} AS fact, s.name AS subject, hits, d"
)
_FACT_RANK = (
    "OPTIONAL MATCH (f)-[:PHRASED_AS]->(t:FactText) "
    "WITH f, hits, CASE WHEN t IS NULL THEN 2.0 ELSE vec.cosineDistance(t.embedding, vecf32($v)) END AS d "
    "ORDER BY hits DESC, d ASC, f.recorded_at_ms DESC LIMIT $limit "
)

# Current facts ABOUT the question's entities (each entity's newest $per_entity): those naming
# more of them (a subject counts twice) first, then nearest in meaning (FactText), then newest.
FACTS_OF_ENTITIES = Query(
    "recall_facts_of_entities",
    "UNWIND $uids AS u "
    "MATCH (e:Entity {uid: u}) "
    "CALL { WITH e MATCH (e)<-[:ABOUT]-(f:Fact:Current) "
    "       WITH f ORDER BY f.recorded_at_ms DESC LIMIT $per_entity RETURN f } "
    "WITH DISTINCT f "
    "WITH f, CASE WHEN f.subject_uid IN $uids THEN 2 ELSE 0 END "
    "      + CASE WHEN f.object_uid IN $uids THEN 1 ELSE 0 END AS hits "
    + _FACT_RANK
    + _FACT_COLUMNS,
    read_only=True,
)

# With a subject, only facts ABOUT the subject; the question's entities rank them.
FACTS_OF_SUBJECT = Query(
    "recall_facts_of_subject",
    "MATCH (e:Entity {uid: $subject}) "
    "CALL { WITH e MATCH (e)<-[:ABOUT]-(f:Fact:Current) "
    "       WITH f ORDER BY f.recorded_at_ms DESC LIMIT $per_entity RETURN f } "
    "WITH f, CASE WHEN f.subject_uid IN $uids THEN 1 ELSE 0 END "
    "      + CASE WHEN f.object_uid IN $uids THEN 1 ELSE 0 END AS hits "
    + _FACT_RANK
    + _FACT_COLUMNS,
    read_only=True,
)

# Current facts the returned episodes DERIVED (with a subject: only facts ABOUT it).
FACTS_DERIVED = Query(
    "recall_facts_derived",
    "UNWIND $ids AS id "
    "MATCH (ep:Episode {episode_id: id})-[:DERIVED]->(f:Fact:Current) "
    "WITH DISTINCT f "
    "WHERE $subject IS NULL OR f.subject_uid = $subject OR f.object_uid = $subject "
    "WITH f, 0 AS hits, 2.0 AS d LIMIT $limit "
    + _FACT_COLUMNS,
    read_only=True,
)
