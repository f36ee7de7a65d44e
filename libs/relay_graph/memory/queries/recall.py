"""Cypher of the read path `recall`: find entities a question names, the episodes near it in
meaning or connected to those entities, and the current facts about them.

Every statement starts from an index: the Episode vector index, the Episode(text) and Entity(name)
full-text indexes, Entity.uid / Entity.name_key, Speaker.key, Episode.at_ms, Session.session_id /
Session.last_at_ms, Episode.episode_id; all but COMMON_GROUND, which reads the first $n embedded
episodes the label scan meets, once per process and tenant in ten minutes (ten seconds while the
tenant has fewer). Scores from the vector
index and `vec.cosineDistance` are cosine distances (0 = same direction; similarity = 1 - d). An
episode whose vector is still to come (a chat turn's, episodes.embed_missing) counts as 2.0, the
farthest a cosine distance goes: it is found by the other signals, never by meaning.

Candidate statements return ids and distances only; the few episodes that make the answer are read
in full afterwards (`NEIGHBOURS_IN_FULL`, or `EPISODES_BY_ID` with a subject), so a busy entity
costs distance computations, not transfer.
`$cap` / `$per_entity` bound how many episodes / facts one entity contributes before ranking (its
newest ones), so an entity that thousands of episodes or facts name (a city, a plan) costs a
bounded amount: distances and sorting happen on at most that many rows per entity.
"""

from __future__ import annotations

import functools

from relay_graph.runtime.queries import Query
from relay_graph.memory.queries.facts import FACT_FIELDS

# ------------------------------------------------------------------ entities

# Entities whose normal-form name is one of the question's n-grams.
ENTITIES_EXACT = Query(
    "recall_entities_exact",
    "UNWIND $keys AS k "
    "MATCH (e:Entity {name_key: k}) "
    "RETURN e.uid AS uid, e.name AS name, e.name_key AS key, e.type AS type, 'exact' AS how",
    read_only=True,
)

# Round trip 1 of recall: ENTITIES_EXACT, and the speakers whose key is one of the question's n-grams,
# in one statement (`kind` says which).
NAMES = Query(
    "recall_names",
    "UNWIND $keys AS k "
    "MATCH (e:Entity {name_key: k}) "
    "RETURN 'entity' AS kind, e.uid AS uid, e.name AS name, e.name_key AS key, e.type AS type "
    "UNION ALL "
    "UNWIND $speaker_keys AS k MATCH (sp:Speaker {key: k}) "
    "RETURN 'speaker' AS kind, null AS uid, sp.name AS name, sp.key AS key, null AS type",
    read_only=True,
)

# Misspelt names: full-text queries built in memory.recall.anchors from the question's words that matched no
# name exactly (each `%word%` or a two-word intersection; word characters only). Each fuzzy term
# ($words) is looked up once first, for one hit (a common word such as "bill" can find a thousand
# customers): a query with a term that finds nothing finds nothing, so only the queries whose
# fuzzy terms all found something run (most questions name nobody misspelt, and each pair would
# otherwise expand both its terms again). Each query keeps its $limit best before the queries' hits
# are merged: a node outside one query's best is outranked there by $limit others, so it is not
# among the $limit best of all either.
ENTITIES_FUZZY = Query(
    "recall_entities_fuzzy",
    "UNWIND $words AS w "
    "CALL { WITH w CALL db.idx.fulltext.queryNodes('Entity', w) YIELD node RETURN node LIMIT 1 } "
    "WITH DISTINCT w "
    "WITH collect(w) AS live "
    "UNWIND $queries AS fq "
    "WITH fq WHERE all(p IN fq.parts WHERE p IN live) "
    "CALL { WITH fq CALL db.idx.fulltext.queryNodes('Entity', fq.ft) YIELD node, score "
    "       RETURN node, score ORDER BY score DESC LIMIT $limit } "
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
    "WITH vecf32($v) AS qv "
    "CALL db.idx.vector.queryNodes('Episode', 'embedding', $n, qv) YIELD node, score "
    "RETURN 'vector' AS signal, node.episode_id AS id, score AS d, null AS hops",
    read_only=True,
)

# A question of meaning, with the tenant's common ground taken away (memory.recall.common_ground):
# the vector index asked with the shifted vector $dv, each hit's distance still the one to the
# question itself (what the fusion breaks ties on and the answer shows).
EPISODES_DISTINCT = Query(
    "recall_episodes_distinct",
    "WITH vecf32($v) AS qv "
    "CALL db.idx.vector.queryNodes('Episode', 'embedding', $n, vecf32($dv)) YIELD node "
    "RETURN 'distinct' AS signal, node.episode_id AS id, vec.cosineDistance(node.embedding, qv) AS d, "
    "null AS hops",
    read_only=True,
)

# Session filter: a session has few turns, so every one is scored exactly (an over-fetched
# vector search in a big graph may hold none of them).
EPISODES_IN_SESSION = Query(
    "recall_episodes_in_session",
    "WITH vecf32($v) AS qv "
    "MATCH (s:Session {session_id: $session})<-[:IN]-(ep:Episode) "
    "WITH ep, coalesce(vec.cosineDistance(ep.embedding, qv), 2.0) AS d "
    "ORDER BY d LIMIT $n "
    "RETURN 'vector' AS signal, ep.episode_id AS id, d, null AS hops",
    read_only=True,
)

# The question's entities: their episodes (that MENTION one, or in a customer's sessions), those
# reached from more of them first, then nearest to the question.
EPISODES_OF_ENTITIES = Query(
    "recall_episodes_of_entities",
    "WITH vecf32($v) AS qv "
    "CALL { "
    "  UNWIND $entity_uids AS u "
    "  MATCH (e:Entity {uid: u}) "
    + _EPISODE_OF_ENTITY.format(e="e")
    + "WITH u, ep, via WHERE $session IS NULL OR ep.session_id = $session "
    "  WITH ep, collect({uid: u, via: via}) AS hops "
    "  RETURN ep, hops "
    "} "
    "WITH ep, hops, coalesce(vec.cosineDistance(ep.embedding, qv), 2.0) AS d "
    "ORDER BY size(hops) DESC, d LIMIT $n "
    "RETURN 'entities' AS signal, ep.episode_id AS id, d, hops",
    read_only=True,
)

# The end of a signal that reaches other entities `o` from a named one `e` (uid `u`): each `o`'s
# newest episodes that MENTION it ($<cap> of them) but not `e` (a turn naming both is the entities
# signal's already: "we adopted a puppy named Luna" names Luna and, as the fact's source, Melanie,
# and counted twice it outranked what Luna did), those reached from more named entities first,
# then nearest to the question.
_MENTIONS_OF_REACHED = (
    "  CALL {{ WITH o MATCH (o)<-[:MENTIONS]-(ep:Episode) "
    "         WITH ep ORDER BY ep.at_ms DESC LIMIT ${cap} RETURN ep }} "
    "  WITH u, e, o, ep WHERE ($session IS NULL OR ep.session_id = $session) AND NOT (ep)-[:MENTIONS]->(e) "
    "  WITH ep, collect({{uid: u, via: o.name}}) AS hops "
    "  RETURN ep, hops "
    "}} "
    "WITH ep, hops, coalesce(vec.cosineDistance(ep.embedding, qv), 2.0) AS d "
    "ORDER BY size(hops) DESC, d LIMIT $n "
    "RETURN '{signal}' AS signal, ep.episode_id AS id, d, hops"
)

# Two hops: the entities one current fact away from the question's entities other than the
# speakers it names ($join_uids; "Which studio is on Harbor Street?" -> Nova
# Pottery located_in Harbor Street), through the $per_entity facts of each named one whose claim
# (FactText) is nearest the question ("What did Caroline's dog bring?" -> "has pet Biscuit", not
# every place she has been), and the episodes that MENTION those (each one's newest $cap), those
# reached from more of them first, then nearest to the question.
EPISODES_JOINED = Query(
    "recall_episodes_joined",
    "WITH vecf32($v) AS qv "
    "CALL { WITH qv "
    "  UNWIND $join_uids AS u "
    "  MATCH (e:Entity {uid: u}) "
    "  CALL { WITH e, qv MATCH (e)<-[:ABOUT]-(f:Fact:Current)-[:ABOUT]->(o:Entity) WHERE NOT o.uid IN $uids "
    "         OPTIONAL MATCH (f)-[:PHRASED_AS]->(t:FactText) "
    "         WITH o, min(CASE WHEN t IS NULL THEN 2.0 ELSE vec.cosineDistance(t.embedding, qv) END) AS fd "
    "         ORDER BY fd LIMIT $per_entity RETURN o } "
    + _MENTIONS_OF_REACHED.format(cap="cap", signal="joined"),
    read_only=True,
)

# Community: the entities that share a Community with the question's entities (written by
# entity_graph.detect_communities from algo.labelPropagation; none before its first run) and the
# episodes that MENTION those (at most $per_community members per named entity, each one's newest
# $community_cap episodes), those reached from more named entities first, then nearest in meaning.
# It reaches further than `joined` (a neighbour's neighbour: two customers on one street, one city
# and one plan), so it weighs less in the fusion.
EPISODES_OF_COMMUNITY = Query(
    "recall_episodes_of_community",
    "WITH vecf32($v) AS qv "
    "CALL { "
    "  UNWIND $uids AS u "
    "  MATCH (e:Entity {uid: u})-[:IN_COMMUNITY]->(c:Community) "
    "  CALL { WITH c MATCH (c)<-[:IN_COMMUNITY]-(o:Entity) WHERE NOT o.uid IN $uids "
    "         WITH o LIMIT $per_community RETURN o } "
    + _MENTIONS_OF_REACHED.format(cap="community_cap", signal="community"),
    read_only=True,
)

# Subject filter: every episode of the subject (its sessions, or mentioning it), scored exactly,
# with the question's entities each one also mentions.
EPISODES_OF_SUBJECT = Query(
    "recall_episodes_of_subject",
    "WITH vecf32($v) AS qv "
    "CALL { "
    "  MATCH (e:Entity {uid: $subject}) "
    + _EPISODE_OF_ENTITY.format(e="e")
    + "WITH ep, via WHERE $session IS NULL OR ep.session_id = $session "
    "  WITH ep, collect(via) AS vias "
    "  OPTIONAL MATCH (ep)-[:MENTIONS]->(m:Entity) WHERE m.uid IN $uids "
    "  WITH ep, vias, collect(m.uid) AS hits "
    "  RETURN ep, vias, hits "
    "} "
    "WITH ep, vias, hits, coalesce(vec.cosineDistance(ep.embedding, qv), 2.0) AS d "
    "ORDER BY d "
    # the n nearest, and every one that also mentions a named entity
    "WITH collect({id: ep.episode_id, vias: vias, hits: hits, d: d}) AS rows "
    "UNWIND rows[0..$n] + [r IN rows[$n..] WHERE size(r.hits) > 0] AS r "
    "RETURN r.id AS id, r.vias AS vias, r.hits AS hits, r.d AS d",
    read_only=True,
)

# Words: the question's plain words OR'd (built in memory.recall.question: word characters only, stopwords out),
# against the Episode(text) full-text index (RediSearch: stemmed, TF-IDF scored).
# The $words_scan best by full-text score; ties (short turns sharing one word) broken by meaning.
EPISODES_BY_WORDS = Query(
    "recall_episodes_by_words",
    "WITH vecf32($v) AS qv "
    "CALL db.idx.fulltext.queryNodes('Episode', $ft) YIELD node, score "
    "WITH qv, node, score WHERE $session IS NULL OR node.session_id = $session "
    "WITH qv, node, score ORDER BY score DESC LIMIT $words_scan "
    "WITH node, score, coalesce(vec.cosineDistance(node.embedding, qv), 2.0) AS d "
    "ORDER BY score DESC, d LIMIT $n "
    "RETURN 'words' AS signal, node.episode_id AS id, d, null AS hops",
    read_only=True,
)

# How specific the question's words are in this tenant (memory.recall.question.Kind): for each of
# $terms (words the embedder does not know), how many turns hold it, counted up to $df_scan, in the
# signals' statement; and, beside it, how many turns the tenant has (TURNS: alone, so the server
# answers from the label's count; inside a UNION it would scan every turn). Sent only for a
# question that names nothing and holds such words (its kind hangs on them).
TERMS_FOUND = Query(
    "recall_terms_found",
    "WITH vecf32($v) AS qv "
    "UNWIND $terms AS t "
    "CALL { WITH t CALL db.idx.fulltext.queryNodes('Episode', t) YIELD node "
    "       WITH node LIMIT $df_scan RETURN count(node) AS n } "
    "RETURN 'terms' AS signal, t AS id, toFloat(n) AS d, null AS hops",
    read_only=True,
)

TURNS = Query("recall_turns", "MATCH (ep:Episode) RETURN count(ep) AS n", read_only=True)

# The tenant's first $n embedded turns (in the order they were stored: the same sample every
# time while they last), whose mean is its common ground (memory.recall.common_ground).
COMMON_GROUND = Query(
    "recall_common_ground",
    "MATCH (ep:Episode) WHERE ep.embedding IS NOT NULL WITH ep LIMIT $n RETURN ep.embedding AS v",
    read_only=True,
)

# Every speaker key of the tenant (through the Speaker.key index: a range over all strings), for
# recall's per-process guess at which words of a question are speakers (see memory.recall.question_vector.SpeakerKeys).
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
    "WITH vecf32($v) AS qv "
    "CALL { "
    "  UNWIND $keys AS k "
    "  MATCH (sp:Speaker {key: k}) "
    "  CALL { "
    "    WITH sp MATCH (sp)<-[:SPOKEN_BY]-(ep:Episode) "
    "    WITH ep ORDER BY ep.at_ms DESC LIMIT $speaker_cap RETURN ep, 'spoke' AS via "
    "    UNION "
    "    WITH sp MATCH (sp)<-[:NAMES]-(ep:Episode) "
    "    WITH ep ORDER BY ep.at_ms DESC LIMIT $cap_named RETURN ep, 'named' AS via "
    "  } "
    "  WITH sp, ep, via WHERE $session IS NULL OR ep.session_id = $session "
    "  WITH ep, collect({name: sp.name, via: via}) AS hops "
    "  RETURN ep, hops "
    "} "
    "WITH ep, hops, size([h IN hops WHERE h.via = 'spoke']) AS spoke, "
    "     coalesce(vec.cosineDistance(ep.embedding, qv), 2.0) AS d "
    "ORDER BY spoke DESC, size(hops) DESC, d LIMIT $n "
    "RETURN 'speakers' AS signal, ep.episode_id AS id, d, hops",
    read_only=True,
)

# Time: the turns inside the windows the question names, and the turns that SAY a time inside them
# ("last Saturday" said on 8 May is 6 May: Episode.said_from_ms / said_to_ms, read at write), at
# most $time_scan of each, nearest first. A said span is at most $said_span long, so the index on
# said_from_ms bounds the second read from both sides.
EPISODES_IN_WINDOWS = Query(
    "recall_episodes_in_windows",
    "WITH vecf32($v) AS qv "
    "CALL { "
    "  UNWIND $windows AS w "
    "  MATCH (ep:Episode) WHERE ep.at_ms >= w[0] AND ep.at_ms < w[1] "
    "  WITH DISTINCT ep LIMIT $time_scan "
    "  RETURN ep "
    "  UNION "
    "  UNWIND $windows AS w "
    "  MATCH (ep:Episode) WHERE ep.said_from_ms >= w[0] - $said_span AND ep.said_from_ms < w[1] "
    "    AND ep.said_to_ms > w[0] "
    "  WITH DISTINCT ep LIMIT $time_scan "
    "  RETURN ep "
    "} "
    "WITH qv, ep WHERE $session IS NULL OR ep.session_id = $session "
    "WITH ep, coalesce(vec.cosineDistance(ep.embedding, qv), 2.0) AS d "
    "ORDER BY d LIMIT $n "
    "RETURN 'time' AS signal, ep.episode_id AS id, d, null AS hops",
    read_only=True,
)

# Spoken then: the named speakers' turns said inside the question's windows or saying a time inside
# them ("What setback did Melanie face in October 2023?"): the intersection of the speaker and
# time signals, nearest first. From the speaker (at most $speaker_cap of their newest turns), so a
# window over a busy tenant costs no more than the speaker signal.
EPISODES_SPOKEN_THEN = Query(
    "recall_episodes_spoken_then",
    "WITH vecf32($v) AS qv "
    "UNWIND $keys AS k "
    "MATCH (sp:Speaker {key: k}) "
    "WITH qv, sp "
    "CALL { WITH sp MATCH (sp)<-[:SPOKEN_BY]-(ep:Episode) "
    "       WITH ep ORDER BY ep.at_ms DESC LIMIT $speaker_cap RETURN ep } "
    "WITH qv, ep WHERE ($session IS NULL OR ep.session_id = $session) "
    "  AND any(w IN $windows WHERE (ep.at_ms >= w[0] AND ep.at_ms < w[1]) "
    "          OR (ep.said_from_ms IS NOT NULL AND ep.said_from_ms < w[1] AND ep.said_to_ms > w[0])) "
    "WITH DISTINCT qv, ep "
    "WITH ep, coalesce(vec.cosineDistance(ep.embedding, qv), 2.0) AS d "
    "ORDER BY d LIMIT $n "
    "RETURN 'spoken_then' AS signal, ep.episode_id AS id, d, null AS hops",
    read_only=True,
)

# Dated: a question that asks when ("When did Caroline go to the support group?") is answered by a
# turn that says a time ("I went yesterday"): the turns of the named speakers that say one, nearest
# first. Only with a named speaker: "when does my line drop?" asks about a habit, and every turn
# of a tenant that says "tonight" is no answer to it.
EPISODES_DATED = Query(
    "recall_episodes_dated",
    "WITH vecf32($v) AS qv "
    "UNWIND $keys AS k "
    "MATCH (sp:Speaker {key: k}) "
    "WITH qv, sp "  # from the speaker: the planner would otherwise scan every Episode
    "MATCH (sp)<-[:SPOKEN_BY]-(ep:Episode) "
    "WHERE ep.said_from_ms IS NOT NULL AND ($session IS NULL OR ep.session_id = $session) "
    "WITH DISTINCT qv, ep "
    "WITH ep, coalesce(vec.cosineDistance(ep.embedding, qv), 2.0) AS d "
    "ORDER BY d LIMIT $n "
    "RETURN 'dated' AS signal, ep.episode_id AS id, d, null AS hops",
    read_only=True,
)

# Every signal statement above returns the same columns (signal, id, d, hops), so several run as
# one statement (`signals`), their parts joined by UNION ALL (each part keeps its own ORDER BY and
# LIMIT, and its rows stay together in order): the question's vector parsed once, and one round
# trip instead of one per signal. Recall sends a named speaker's signals as a second statement
# beside the rest, so the server runs the two on two threads.
#
# Each statement makes the question's vector once (`WITH vecf32($v) AS qv`, carried through its
# clauses) and compares every row with that: `vecf32($v)` written in a per-row expression converts
# the 384-number parameter again for every row, about 5 microseconds each (measured on 500 rows:
# 3.1 ms against 0.9 ms), which a busy entity's thousand candidates turned into milliseconds.
SIGNALS = {
    "vector": EPISODES_NEAR,
    "vector_in_session": EPISODES_IN_SESSION,
    "distinct": EPISODES_DISTINCT,
    "entities": EPISODES_OF_ENTITIES,
    "joined": EPISODES_JOINED,
    "community": EPISODES_OF_COMMUNITY,
    "words": EPISODES_BY_WORDS,
    "speakers": EPISODES_OF_SPEAKERS,
    "time": EPISODES_IN_WINDOWS,
    "dated": EPISODES_DATED,
    "spoken_then": EPISODES_SPOKEN_THEN,
    "terms": TERMS_FOUND,
}


_QV = "WITH vecf32($v) AS qv "


def _union(parts: tuple[str, ...]) -> str:
    """The SIGNALS named as one CALL of their parts joined by UNION ALL, the question's vector
    made once for all of them (each part of SIGNALS starts with _QV: that line moves out). A name
    outside SIGNALS is a KeyError: the text is only ever made of these statements."""
    if not parts:
        raise ValueError("no signal to run")
    bodies = []
    for part in parts:
        cypher = SIGNALS[part].cypher
        if not cypher.startswith(_QV):
            raise ValueError(f"{part} does not start with the question's vector")
        bodies.append("WITH qv " + cypher[len(_QV):])
    return _QV + "CALL { " + " UNION ALL ".join(bodies) + " } "


# The current facts episodes DERIVED, from one episode id (`id`) a row (with a subject: only facts
# ABOUT it); `episodes` says which of the ids derived each, `s` is its subject. FACTS_DERIVED and
# NEIGHBOURS_IN_FULL read them this way.
_DERIVED_BY = (
    "MATCH (ep:Episode {episode_id: id})-[:DERIVED]->(f:Fact:Current) "
    "WITH f, collect(id) AS episodes "
    "WHERE $subject IS NULL OR f.subject_uid = $subject OR f.object_uid = $subject "
    "WITH f, episodes LIMIT $limit "
    "MATCH (f)-[:ABOUT {role: 'subject'}]->(s:Entity) "
)

# The neighbours step and the answer read in full, once the client has fused signals 1-8 (see
# memory.recall.signals's docstring for the rules): the turns after and before each of $seeds (the strongest
# candidates, in order; the reply first, the nearer first), each neighbour once at its first
# place; then the candidates $pre and those neighbours in full, each with its distance to the
# question, and the current facts they DERIVED (the client keeps those of the episodes it returns).
# Returns one row: `near` ([id, seed, side] in rank order), `eps` ([id, session, speaker, text,
# at_ms, distance] each) and `derived` (fact, subject and `episodes`, which of the ids derived it).
# The fusion itself runs in the client: ranking a few hundred hits in Cypher meant collecting and
# copying their nested lists clause after clause, which cost more than the signals' own reads
# (GRAPH.PROFILE), and one more round trip costs far less.
NEIGHBOURS_IN_FULL = Query(
    "recall_neighbours_in_full",
    "CALL { "
    "  UNWIND range(0, size($seeds) - 1) AS si "
    "  WITH si, $seeds[si] AS sid "
    "  MATCH (ep:Episode {episode_id: sid})-[:IN]->(:Session)<-[:IN]-(o:Episode) WHERE o <> ep "
    "  WITH si, sid, o, CASE WHEN o.at_ms < ep.at_ms OR (o.at_ms = ep.at_ms AND (coalesce(o.pos, -1) "
    "    < coalesce(ep.pos, -1) OR (coalesce(o.pos, -1) = coalesce(ep.pos, -1) AND o.episode_id < ep.episode_id))) "
    "    THEN 'before' ELSE 'after' END AS side "
    "  ORDER BY o.at_ms, coalesce(o.pos, -1), o.episode_id "
    "  WITH si, sid, side, collect(o.episode_id) AS os "
    "  WITH si, sid, side, CASE side WHEN 'before' THEN reverse(os)[0..$reach] ELSE os[0..$reach] END AS ns "
    "  UNWIND range(0, size(ns) - 1) AS j "
    "  WITH si, sid, side, j, ns[j] AS nid "
    "  ORDER BY si, j, side "  # the nearer first; 'after' < 'before': the reply first
    "  RETURN collect([nid, sid, side]) AS near "
    "} "
    # a turn beside two seeds is listed twice (the client keeps its first place), and read once
    "WITH near, $pre + [n IN near WHERE NOT n[0] IN $pre | n[0]] AS ids, vecf32($v) AS qv "
    "CALL { WITH ids, qv UNWIND ids AS id "
    "  MATCH (ep:Episode {episode_id: id}) "
    "  RETURN collect([id, ep.session_id, ep.speaker, ep.text, ep.at_ms, "
    "                  coalesce(vec.cosineDistance(ep.embedding, qv), 2.0)]) AS eps } "
    "CALL { WITH ids UNWIND ids AS id " + _DERIVED_BY
    + f"RETURN collect({{fact: {FACT_FIELDS}, subject: s.name, episodes: episodes}}) AS derived }} "
    "RETURN near, eps, derived",
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

# With a subject: the answer's episodes in full, each with its distance to the question.
EPISODES_BY_ID = Query(
    "recall_episodes_by_id",
    "WITH vecf32($v) AS qv "
    "UNWIND $ids AS id "
    "MATCH (ep:Episode {episode_id: id}) "
    "RETURN {id: ep.episode_id, session: ep.session_id, speaker: ep.speaker, text: ep.text, at_ms: ep.at_ms, "
    "        d: coalesce(vec.cosineDistance(ep.embedding, qv), 2.0)} AS ep",
    read_only=True,
)

# ------------------------------------------------------------------ facts

_FACT_COLUMNS = (
    "MATCH (f)-[:ABOUT {role: 'subject'}]->(s:Entity) "
    f"RETURN {FACT_FIELDS} AS fact, s.name AS subject, hits, d"
)
_FACT_RANK = (
    "OPTIONAL MATCH (f)-[:PHRASED_AS]->(t:FactText) "
    "WITH f, hits, CASE WHEN t IS NULL THEN 2.0 ELSE vec.cosineDistance(t.embedding, qv) END AS d "
    "ORDER BY hits DESC, d ASC, f.recorded_at_ms DESC LIMIT $limit "
)

# Current facts ABOUT the question's entities (each entity's newest $per_entity): those naming
# more of them (a subject counts twice) first, then nearest in meaning (FactText), then newest.
# In two statements: the candidates need only the entities, so they are read while the question
# is still being embedded (an entity that thousands of facts are about, a city or a router model,
# costs its traversal and sort there, beside the model, not beside the signals); the ranking needs
# the question's vector and reads only those candidates, by id (a fact that stopped being current
# in between is left out).
FACT_CANDIDATES = Query(
    "recall_fact_candidates",
    "UNWIND $uids AS u "
    "MATCH (e:Entity {uid: u}) "
    "CALL { WITH e MATCH (e)<-[:ABOUT]-(f:Fact:Current) "
    "       WITH f ORDER BY f.recorded_at_ms DESC LIMIT $per_entity RETURN f } "
    "WITH DISTINCT f "
    "RETURN f.fact_id AS id",
    read_only=True,
)

FACTS_OF_ENTITIES = Query(
    "recall_facts_of_entities",
    "WITH vecf32($v) AS qv "
    "UNWIND $fact_ids AS fid "
    "MATCH (f:Fact {fact_id: fid}) WHERE f:Current "
    "WITH qv, f, CASE WHEN f.subject_uid IN $uids THEN 2 ELSE 0 END "
    "      + CASE WHEN f.object_uid IN $uids THEN 1 ELSE 0 END AS hits "
    + _FACT_RANK
    + _FACT_COLUMNS,
    read_only=True,
)


@functools.lru_cache(maxsize=None)
def signals(parts: tuple[str, ...]) -> Query:
    """The SIGNALS named, as one statement: a row per signal that found anything, its ids, distances
    and hops as lists in the signal's order (recall fuses them). Lists, not a row per hit: half the
    values for the client to read. (collect leaves nulls out: a signal without hops, whose every
    row's hops are null, lists none, and the client reads nothing it does not use.)"""
    return Query("recall_signals_" + "_".join(parts), _union(parts)
                 + "WITH signal, collect(id) AS ids, collect(d) AS ds, collect(hops) AS hops "
                 "RETURN signal, ids, ds, hops", read_only=True)


# With a subject, only facts ABOUT the subject; the question's entities rank them.
FACTS_OF_SUBJECT = Query(
    "recall_facts_of_subject",
    "WITH vecf32($v) AS qv "
    "MATCH (e:Entity {uid: $subject}) "
    "CALL { WITH e MATCH (e)<-[:ABOUT]-(f:Fact:Current) "
    "       WITH f ORDER BY f.recorded_at_ms DESC LIMIT $per_entity RETURN f } "
    "WITH qv, f, CASE WHEN f.subject_uid IN $uids THEN 1 ELSE 0 END "
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
    "UNWIND $ids AS id " + _DERIVED_BY
    + f"RETURN {FACT_FIELDS} AS fact, s.name AS subject, 0 AS hits, 2.0 AS d, episodes",
    read_only=True,
)
