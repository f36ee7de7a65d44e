"""Cypher for the staff console: the whole graph as the page draws it (bounded), the open
conflicts, and the indexes.

    GRAPH_NODES     every node but the engine's bookkeeping (Outbox, Setting), up to $limit: its
                    labels, a stable key and a display name (an episode's whole text: the caller
                    shortens it, as Cypher's substring may cut a character in two), and its times
                    on both clocks when it has them (a fact's valid/recorded window, an episode's time).
    GRAPH_EDGES     every edge between two such nodes, up to $limit, with a WAS edge's window.
    OPEN_CONFLICTS  the open Conflict nodes, newest first, with their subject and predicate (the
                    page reads the claims themselves through /claims).
    INDEXES         db.indexes(): label, properties, kinds and status.
    FIND_WORD       the isolation demo's raw search: how many nodes carry a word in their text.
    KNOWLEDGE_FLOWS writer -> reader pairs of agents: facts one wrote that the other CONSULTED.

The node scans are whole-graph reads by design (the page's picture of everything; the
isolation demo's search of everything); $limit bounds the graph's."""

from __future__ import annotations

from relay_graph.runtime.queries import Query

_SKIP = "NOT n:Outbox AND NOT n:Setting"

GRAPH_NODES = Query(
    "console_graph_nodes",
    f"""
MATCH (n) WHERE {_SKIP}
WITH n LIMIT $limit
RETURN id(n) AS id, labels(n) AS labels,
       coalesce(n.fact_id, n.episode_id, n.ticket_id, n.conflict_id, n.session_id, n.node_id, n.uid) AS key,
       coalesce(n.name, n.object_name, n.ticket_id, n.session_id, n.node_id, n.conflict_id, n.kind, '') AS name,
       CASE WHEN n:Episode THEN n.text END AS text,
       n.predicate AS predicate, n.subject_uid AS subject_uid,
       n.valid_from_ms AS valid_from_ms, n.valid_to_ms AS valid_to_ms,
       n.recorded_at_ms AS recorded_at_ms, n.expired_at_ms AS expired_at_ms,
       n.believed_from_ms AS believed_from_ms, n.at_ms AS at_ms
""",
    read_only=True,
)

GRAPH_EDGES = Query(
    "console_graph_edges",
    f"""
MATCH (n)-[r]->(m) WHERE {_SKIP} AND NOT m:Outbox AND NOT m:Setting
WITH n, r, m LIMIT $limit
RETURN id(n) AS source, id(m) AS target, type(r) AS type,
       r.valid_from_ms AS valid_from_ms, r.valid_to_ms AS valid_to_ms
""",
    read_only=True,
)

OPEN_CONFLICTS = Query(
    "console_open_conflicts",
    """
MATCH (c:Conflict) WHERE c.open = true
WITH c ORDER BY c.opened_at_ms DESC LIMIT $limit
OPTIONAL MATCH (s:Entity {uid: c.subject_uid})
RETURN c.conflict_id AS conflict_id, c.opened_at_ms AS opened_at_ms, c.subject_uid AS subject,
       s.name AS subject_name, c.predicate AS predicate
ORDER BY opened_at_ms DESC
""",
    read_only=True,
)

INDEXES = Query(
    "console_indexes",
    "CALL db.indexes() YIELD label, properties, types, status RETURN label, properties, types, status",
    read_only=True,
)

# The isolation demo's raw read-only search: any node whose text carries the word (case-folded).
FIND_WORD = Query(
    "console_find_word",
    """
MATCH (n)
WHERE toLower(n.name) CONTAINS $word OR toLower(n.object_name) CONTAINS $word OR toLower(n.text) CONTAINS $word
RETURN count(n) AS hits
""",
    read_only=True,
)

# Knowledge flows: who read (CONSULTED) facts someone else wrote, how many facts and how often.
KNOWLEDGE_FLOWS = Query(
    "console_knowledge_flows",
    """
MATCH (reader:Agent)-[k:CONSULTED]->(f:Fact)-[:WRITTEN_BY]->(writer:Agent)
WHERE reader <> writer
RETURN writer.name AS writer, reader.name AS reader, count(DISTINCT f) AS facts, sum(k.count) AS reads,
       max(k.last_ms) AS last_ms
ORDER BY reads DESC, writer, reader
LIMIT $limit
""",
    read_only=True,
)
