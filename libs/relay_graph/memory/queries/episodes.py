"""Cypher of the episodic band: episodes, sessions, who wrote them and what they mention.

(:Agent {name})-[:WROTE]->(:Episode:<Kind> {episode_id, session_id, speaker, text, text_key, at_ms,
recorded_at_ms, kind, embedding; desk replies also reply_to, ticket_id, how_i_know})
-[:IN {seq: a customer turn's number, see queries/chat.py}]->(:Session {session_id, first_at_ms, last_at_ms}),
(:Entity:Customer)-[:HAS_SESSION]->(:Session)-[:FOLLOWED_BY]->(:Session),
(:Episode)-[:MENTIONS]->(:Entity),
(:Episode)-[:SPOKEN_BY]->(:Speaker {key: name_key(speaker), name})<-[:NAMES]-(:Episode whose words name
that speaker). Speakers are their own label, not Entities: a speaker is a voice in a conversation
("alice", "intake", "Caroline"), and facts never resolve their subjects to one.
An episode's `pos` is its place in its session in order of arrival (the session's largest `pos`
before the batch, plus its place in the batch): turns written with one time per session still have
an order, which is what "the turn before / after" means in recall.

A batch is written by ONE statement (FalkorDB serialises writes per graph, so it is atomic) made of
phases joined by `WITH count(*) AS _` (an aggregate always yields one row, so an empty phase does
not end the statement). Every phase starts from an index: Entity.uid, Session.session_id,
Episode.episode_id.

FalkorDB 4.16 keeps a stale copy of a node in a vector index whenever a node that already has its
vector gets another label or property set (queries then return fewer than k rows). So an Episode
gets its kind label first and its properties last, once, when it is new (`ep.text_key IS NULL`:
MERGE made it just now), and is never SET again afterwards; a replayed episode writes nothing.
Its vector comes with its properties, or - when the writer defers it (a chat turn, whose reply must
not wait for the model) - later, by EMBED_MISSING, which sets it once on an episode that has none:
a first vector is indexed correctly, and nothing is set on the node after it.
"""

from __future__ import annotations

from typing import get_args

from relay_graph.memory.models import EpisodeInput
from relay_graph.runtime.queries import Query

# The kind labels come from the model's Literal: code constants, never caller text.
KINDS: tuple[str, ...] = get_args(EpisodeInput.model_fields["kind"].annotation)
CUSTOMER_LABEL = "Customer"
TOPIC_LABEL = "Topic"  # an explicit mention that names no entity we know yet

# One read before the write: vectors of texts already in the graph (any process embedded them),
# the entities and speakers whose key equals one of the batch's word n-grams, and for each of the
# batch's sessions its largest `pos`, its first turn's time and the customers it belongs to (what
# decides whether the write must re-order a customer's sessions).
LOOKUP = Query(
    "episodes_lookup",
    "UNWIND $text_keys AS k "
    "MATCH (e:Episode {text_key: k}) "
    "WITH k, head(collect(e)) AS e "
    "RETURN k AS key, e.embedding AS vector, null AS uid, null AS speaker, null AS pos, null AS first, "
    "null AS owners "
    "UNION ALL "
    "UNWIND $name_keys AS k "
    "MATCH (n:Entity {name_key: k}) "
    "RETURN k AS key, null AS vector, n.uid AS uid, null AS speaker, null AS pos, null AS first, null AS owners "
    "UNION ALL "
    "UNWIND $name_keys AS k "
    "MATCH (sp:Speaker {key: k}) "
    "RETURN k AS key, null AS vector, null AS uid, sp.key AS speaker, null AS pos, null AS first, null AS owners "
    "UNION ALL "
    "UNWIND $session_ids AS k "
    "MATCH (s:Session {session_id: k})<-[:IN]-(ep:Episode) "
    "WITH k, s, max(ep.pos) AS pos "
    "OPTIONAL MATCH (c:Entity)-[:HAS_SESSION]->(s) "
    "RETURN k AS key, null AS vector, null AS uid, null AS speaker, pos, s.first_at_ms AS first, "
    "collect(c.uid) AS owners",
    read_only=True,
)

_LABEL_ON_CREATE = " ".join(
    f"FOREACH (_ IN CASE WHEN ep.text_key IS NULL AND e.kind = '{kind}' THEN [1] ELSE [] END | SET ep:{kind})"
    for kind in KINDS
)

# Each part is a unit subquery (CALL { ... }, run once, to its end, before the next): FalkorDB keeps
# this statement's plan in every tenant that writes turns, and an aggregation between the parts
# (`WITH count(*) AS _`, as before) costs a kept plan several times what a CALL does (bench.plan_bytes).
WRITE = Query(
    "episodes_write",
    # entities the batch names: its customers and explicit mentions we do not know yet
    f"CALL {{ UNWIND $customers AS cu "
    f"MERGE (c:Entity:{CUSTOMER_LABEL} {{uid: cu.uid}}) "
    f"  ON CREATE SET c.name = cu.name, c.name_key = cu.key, c.type = '{CUSTOMER_LABEL}', c.created_at_ms = $now }} "
    f"CALL {{ UNWIND $topics AS tp "
    f"MERGE (t:Entity:{TOPIC_LABEL} {{uid: tp.uid}}) "
    f"  ON CREATE SET t.name = tp.name, t.name_key = tp.key, t.type = '{TOPIC_LABEL}', t.created_at_ms = $now }} "
    # sessions: first and last turn times only ever widen, so a replay sets nothing
    f"CALL {{ UNWIND $sessions AS so "
    f"MERGE (s:Session {{session_id: so.id}}) "
    f"FOREACH (_ IN CASE WHEN s.first_at_ms IS NULL OR so.first < s.first_at_ms THEN [1] ELSE [] END | "
    f"  SET s.first_at_ms = so.first) "
    f"FOREACH (_ IN CASE WHEN s.last_at_ms IS NULL OR so.last > s.last_at_ms THEN [1] ELSE [] END | "
    f"  SET s.last_at_ms = so.last) "
    f"FOREACH (u IN CASE WHEN so.customer IS NULL THEN [] ELSE [so.customer] END | "
    f"  MERGE (c:Entity {{uid: u}}) MERGE (c)-[:HAS_SESSION]->(s)) }} "
    # the voices of the batch
    f"CALL {{ UNWIND $speakers AS sk "
    f"MERGE (sp:Speaker {{key: sk.key}}) ON CREATE SET sp.name = sk.name }} "
    # a customer's sessions in order of their first turn: add missing links, drop stale ones
    f"CALL {{ UNWIND $chain AS cu "
    f"MATCH (c:Entity {{uid: cu}}) "
    f"WITH c "  # start from the customer: without this the planner scans every Session
    f"MATCH (c)-[:HAS_SESSION]->(s:Session) "
    f"WHERE s.first_at_ms IS NOT NULL "
    f"WITH c, s ORDER BY s.first_at_ms, s.session_id "
    f"WITH c, collect(s) AS ss "
    f"UNWIND range(0, size(ss) - 1) AS i "
    f"WITH ss[i] AS a, CASE WHEN i + 1 < size(ss) THEN ss[i + 1] ELSE null END AS nxt "
    f"OPTIONAL MATCH (a)-[r:FOLLOWED_BY]->(x:Session) "
    f"WHERE nxt IS NULL OR x <> nxt "
    f"DELETE r "
    f"WITH DISTINCT a, nxt "
    f"WHERE nxt IS NOT NULL "
    f"MERGE (a)-[:FOLLOWED_BY]->(nxt) }} "
    # the episodes themselves
    f"CALL {{ UNWIND $episodes AS e "
    f"MATCH (s:Session {{session_id: e.session}}) "
    f"MERGE (ep:Episode {{episode_id: e.id}}) "
    f"{_LABEL_ON_CREATE} "
    f"FOREACH (_ IN CASE WHEN ep.text_key IS NULL THEN [1] ELSE [] END | "
    f"  SET ep.session_id = e.session, ep.speaker = e.speaker, ep.text = e.text, ep.text_key = e.key, "
    f"      ep.kind = e.kind, ep.at_ms = e.at, ep.recorded_at_ms = $now, "
    f"      ep.reply_to = e.reply_to, ep.ticket_id = e.ticket_id, ep.how_i_know = e.how_i_know, "
    f"      ep.answers = e.answers, "
    f"      ep.pos = e.pos, ep.said_from_ms = e.said_from, ep.said_to_ms = e.said_to, "
    f"      ep.embedding = CASE WHEN e.vec IS NULL THEN null ELSE vecf32(e.vec) END) "
    f"MERGE (ep)-[:IN]->(s) "
    f"FOREACH (a IN CASE WHEN e.agent IS NULL THEN [] ELSE [e.agent] END | "
    f"  MERGE (ag:Agent {{name: a}}) MERGE (ag)-[:WROTE]->(ep)) }} "
    # who said them
    f"CALL {{ UNWIND $spoken AS sb "
    f"MATCH (ep:Episode {{episode_id: sb.ep}}) "
    f"MATCH (sp:Speaker {{key: sb.key}}) "
    f"MERGE (ep)-[:SPOKEN_BY]->(sp) }} "
    # what they mention
    f"CALL {{ UNWIND $mentions AS mn "
    f"MATCH (ep:Episode {{episode_id: mn.ep}}) "
    f"MATCH (m:Entity {{uid: mn.uid}}) "
    f"MERGE (ep)-[:MENTIONS]->(m) }} "
    # which speakers their words name
    f"UNWIND $names AS nm "
    f"MATCH (ep:Episode {{episode_id: nm.ep}}) "
    f"MATCH (sp:Speaker {{key: nm.key}}) "
    f"MERGE (ep)-[:NAMES]->(sp)",
)

# Reads used by tests and tools: an episode by id with its session and mentions.

# Episodes of the list that have no vector yet (their writer deferred it), with their text.
UNEMBEDDED = Query(
    "episodes_unembedded",
    "UNWIND $ids AS id "
    "MATCH (ep:Episode {episode_id: id}) "
    "WHERE ep.embedding IS NULL AND ep.text IS NOT NULL "
    "RETURN ep.episode_id AS id, ep.text AS text",
    read_only=True,
)

# The deferred vectors, each set once: an episode that got one meanwhile is left alone.
EMBED_MISSING = Query(
    "episodes_embed_missing",
    "UNWIND $rows AS r "
    "MATCH (ep:Episode {episode_id: r.id}) "
    "WHERE ep.embedding IS NULL "
    "SET ep.embedding = vecf32(r.vec) "
    "RETURN count(ep) AS n",
)


# Turn facts (memory/turn_facts.py): the episodes of the list that already DERIVED a fact by the
# turn rules (a replayed batch is not filed twice), and the MENTIONS links from a turn to the
# entities its facts name (the source turn, and the batch's other turns that name them: the
# entities did not exist yet when the batch's MENTIONS were written).
FILED_BY_RULES = Query(
    "episodes_filed_by_rules",
    "UNWIND $ids AS id "
    "MATCH (ep:Episode {episode_id: id})-[:DERIVED]->(f:Fact) WHERE f.label = $label "
    "RETURN DISTINCT id",
    read_only=True,
)

LINK_MENTIONS = Query(
    "episodes_link_mentions",
    "UNWIND $links AS l "
    "MATCH (ep:Episode {episode_id: l.ep}) "
    "MATCH (e:Entity {uid: l.uid}) "
    "MERGE (ep)-[:MENTIONS]->(e) "
    "RETURN count(*) AS n",
)


# Reading episodes back (memory/transcripts.py): a page of one session's turns, or of every session
# whose id starts with a prefix, in order of arrival (session id, then `pos`, then episode id: a
# page starts after the last one the previous page returned, so a write between pages neither
# repeats nor skips a turn already listed).
_PAGE = (
    "WITH s.session_id AS session, coalesce(ep.pos, 0) AS pos, ep "
    "WHERE session > $after_session OR (session = $after_session AND "
    "  (pos > $after_pos OR (pos = $after_pos AND ep.episode_id > $after_id))) "
    "WITH session, pos, ep ORDER BY session, pos, ep.episode_id LIMIT $limit "
    "OPTIONAL MATCH (ag:Agent)-[:WROTE]->(ep) "
    "WITH session, pos, ep, min(ag.name) AS agent "
    "RETURN ep.episode_id AS id, session, pos, ep.speaker AS speaker, ep.text AS text, ep.kind AS kind, "
    "ep.at_ms AS at_ms, ep.recorded_at_ms AS recorded_at_ms, agent "
    "ORDER BY session, pos, id"
)

LIST_IN_SESSION = Query(
    "episodes_list_session",
    "MATCH (s:Session {session_id: $session})<-[:IN]-(ep:Episode) " + _PAGE,
    read_only=True,
)

LIST_UNDER_PREFIX = Query(
    "episodes_list_prefix",
    "MATCH (s:Session) WHERE s.session_id STARTS WITH $prefix "
    "MATCH (s)<-[:IN]-(ep:Episode) " + _PAGE,
    read_only=True,
)
