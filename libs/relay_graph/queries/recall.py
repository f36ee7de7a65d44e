"""Cypher of the read path `recall`: find entities a question names, the episodes near it in
meaning or connected to those entities, and the current facts about them.

Every statement starts from an index: the Episode vector index, the Episode(text) and Entity(name)
full-text indexes, Entity.uid / Entity.name_key, Speaker.key, Episode.at_ms, Session.session_id /
Session.last_at_ms, Episode.episode_id. Scores from the vector
index and `vec.cosineDistance` are cosine distances (0 = same direction; similarity = 1 - d). An
episode whose vector is still to come (a chat turn's, episodes.embed_missing) counts as 2.0, the
farthest a cosine distance goes: it is found by the other signals, never by meaning.

Candidate statements return ids and distances only; the few episodes that make the answer are read
in full afterwards (`EPISODES_AROUND`), so a busy entity costs distance computations, not transfer.
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
# name exactly (each `%word%` or a two-word intersection; word characters only). Each fuzzy term
# ($words) is expanded once first: a query with a term that finds nothing finds nothing, so only
# the queries whose fuzzy terms all found something run (most questions name nobody misspelt, and
# each pair would otherwise expand both its terms again).
ENTITIES_FUZZY = Query(
    "recall_entities_fuzzy",
    "UNWIND $words AS w "
    "CALL db.idx.fulltext.queryNodes('Entity', w) YIELD node "
    "WITH DISTINCT w "
    "WITH collect(w) AS live "
    "UNWIND $queries AS fq "
    "WITH fq WHERE all(p IN fq.parts WHERE p IN live) "
    "CALL db.idx.fulltext.queryNodes('Entity', fq.ft) YIELD node, score "
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
    "WITH ep, coalesce(vec.cosineDistance(ep.embedding, vecf32($v)), 2.0) AS d "
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
    "WITH ep, hops, coalesce(vec.cosineDistance(ep.embedding, vecf32($v)), 2.0) AS d "
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
    "WITH ep, vias, hits, coalesce(vec.cosineDistance(ep.embedding, vecf32($v)), 2.0) AS d "
    "ORDER BY d "
    # the n nearest, and every one that also mentions a named entity
    "WITH collect({id: ep.episode_id, vias: vias, hits: hits, d: d}) AS rows "
    "UNWIND rows[0..$n] + [r IN rows[$n..] WHERE size(r.hits) > 0] AS r "
    "RETURN r.id AS id, r.vias AS vias, r.hits AS hits, r.d AS d",
    read_only=True,
)

# Words: the question's plain words OR'd (built in recall.py: word characters only, stopwords out),
# against the Episode(text) full-text index (RediSearch: stemmed, TF-IDF scored).
# The $scan best by full-text score; ties (short turns sharing one word) broken by meaning.
EPISODES_BY_WORDS = Query(
    "recall_episodes_by_words",
    "CALL db.idx.fulltext.queryNodes('Episode', $ft) YIELD node, score "
    "WITH node, score WHERE $session IS NULL OR node.session_id = $session "
    "WITH node, score ORDER BY score DESC LIMIT $scan "
    "WITH node, score, coalesce(vec.cosineDistance(node.embedding, vecf32($v)), 2.0) AS d "
    "RETURN node.episode_id AS id, score, d ORDER BY score DESC, d LIMIT $n",
    read_only=True,
)

# Speakers whose key is one of the question's n-grams.
SPEAKERS = Query(
    "recall_speakers",
    "UNWIND $keys AS k MATCH (sp:Speaker {key: k}) RETURN sp.key AS key, sp.name AS name",
    read_only=True,
)

# Every speaker key of the tenant (through the Speaker.key index: a range over all strings), for
# recall's per-process guess at which words of a question are speakers (see recall._SpeakerKeys).
SPEAKER_KEYS = Query(
    "recall_speaker_keys",
    "MATCH (sp:Speaker) WHERE sp.key >= '' RETURN sp.key AS key LIMIT $limit",
    read_only=True,
)

# Speakers the question names (its word n-grams equal to a Speaker.key): the turns they spoke and
# the turns naming them (each speaker's newest $cap / $cap_named). Turns a named speaker spoke come
# first ("Hey Caroline!" names her but says nothing about her), then those reached from more of
# them, then the nearest to the question.
EPISODES_OF_SPEAKERS = Query(
    "recall_episodes_of_speakers",
    "UNWIND $keys AS k "
    "MATCH (sp:Speaker {key: k}) "
    "CALL { "
    "  WITH sp MATCH (sp)<-[:SPOKEN_BY]-(ep:Episode) "
    "  WITH ep ORDER BY ep.at_ms DESC LIMIT $cap RETURN ep, 'spoke' AS via "
    "  UNION "
    "  WITH sp MATCH (sp)<-[:NAMES]-(ep:Episode) "
    "  WITH ep ORDER BY ep.at_ms DESC LIMIT $cap_named RETURN ep, 'named' AS via "
    "} "
    "WITH sp, ep, via WHERE $session IS NULL OR ep.session_id = $session "
    "WITH ep, collect({name: sp.name, via: via}) AS hops "
    "WITH ep, hops, size([h IN hops WHERE h.via = 'spoke']) AS spoke, "
    "     coalesce(vec.cosineDistance(ep.embedding, vecf32($v)), 2.0) AS d "
    "ORDER BY spoke DESC, size(hops) DESC, d LIMIT $n "
    "RETURN ep.episode_id AS id, hops, d",
    read_only=True,
)

# Time: the turns inside the windows the question names (at most $scan of them), nearest first.
EPISODES_IN_WINDOWS = Query(
    "recall_episodes_in_windows",
    "UNWIND $windows AS w "
    "MATCH (ep:Episode) WHERE ep.at_ms >= w[0] AND ep.at_ms < w[1] "
    "WITH DISTINCT ep LIMIT $scan "
    "WITH ep WHERE $session IS NULL OR ep.session_id = $session "
    "WITH ep, coalesce(vec.cosineDistance(ep.embedding, vecf32($v)), 2.0) AS d "
    "ORDER BY d LIMIT $n "
    "RETURN ep.episode_id AS id, d",
    read_only=True,
)

# The reference time of relative expressions ("yesterday"): the newest turn, through the sessions'
# last turn times (a few hundred sessions, not ten thousand turns).
LATEST = Query(
    "recall_latest",
    "MATCH (s:Session) WHERE s.last_at_ms >= 0 AND ($session IS NULL OR s.session_id = $session) "
    "RETURN max(s.last_at_ms) AS at_ms",
    read_only=True,
)

# The returned episodes in full, each with its distance to the question; for the `$seeds` among
# them also the turn before and the turn after in their session (order: time, then arrival `pos`,
# then id), in full too, and whether that turn DERIVED any fact (so recall reads facts for a
# neighbour only when there are some).
_EP_FIELDS = ("{{id: {e}.episode_id, session: {e}.session_id, speaker: {e}.speaker, text: {e}.text, "
              "at_ms: {e}.at_ms, d: coalesce(vec.cosineDistance({e}.embedding, vecf32($v)), 2.0)}}")
EPISODES_AROUND = Query(
    "recall_episodes_around",
    "UNWIND $ids AS id "
    "MATCH (ep:Episode {episode_id: id}) "
    "OPTIONAL MATCH (ep)-[:IN]->(:Session)<-[:IN]-(o:Episode) WHERE id IN $seeds AND o <> ep "
    "WITH ep, o, CASE WHEN o IS NULL THEN null "
    "  WHEN o.at_ms < ep.at_ms OR (o.at_ms = ep.at_ms AND (coalesce(o.pos, -1) < coalesce(ep.pos, -1) "
    "    OR (coalesce(o.pos, -1) = coalesce(ep.pos, -1) AND o.episode_id < ep.episode_id))) "
    "  THEN 'before' ELSE 'after' END AS side "
    "WITH ep, o, side, CASE WHEN o IS NULL THEN 0 ELSE size([(o)-[:DERIVED]->(:Fact) | 1]) END AS derives "
    "ORDER BY o.at_ms, coalesce(o.pos, -1), o.episode_id "
    "WITH ep, side, collect({o: o, derives: derives}) AS os "
    "WITH ep, collect({side: side, x: CASE side WHEN 'before' THEN last(os) ELSE head(os) END}) AS near "
    "RETURN " + _EP_FIELDS.format(e="ep") + " AS ep, "
    "[n IN near WHERE n.x.o IS NOT NULL | {side: n.side, derives: n.x.derives > 0, "
    "  ep: " + _EP_FIELDS.format(e="n.x.o") + "}] AS near",
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
# (`episodes`: which of $ids derived each; recall asks for the candidates before the last fusion
# step and keeps the facts of the episodes it returns.)
FACTS_DERIVED = Query(
    "recall_facts_derived",
    "UNWIND $ids AS id "
    "MATCH (ep:Episode {episode_id: id})-[:DERIVED]->(f:Fact:Current) "
    "WITH f, collect(id) AS episodes "
    "WHERE $subject IS NULL OR f.subject_uid = $subject OR f.object_uid = $subject "
    "WITH f, episodes, 0 AS hits, 2.0 AS d LIMIT $limit "
    "MATCH (f)-[:ABOUT {role: 'subject'}]->(s:Entity) "
    f"RETURN {FACT_FIELDS} AS fact, s.name AS subject, hits, d, episodes",
    read_only=True,
)
