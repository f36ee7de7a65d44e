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
    TICKET_CROSSINGS the same, on one ticket: facts about its customer one of its agents consulted
                    while it was open, written by another agent.
    TICKET_EXPERTS  "who has worked on this?": people on tickets of similar issues (by graph).
    MAP_NODES, MAP_LINKS, OPEN_OUTAGES  the region map: hubs, exchanges, cores, their uplinks,
                    the open outages.

The node scans are whole-graph reads by design (the page's picture of everything; the
isolation demo's search of everything); $limit bounds the graph's."""

from __future__ import annotations

from relay_graph.runtime.queries import Query

_SKIP = "NOT n:Outbox AND NOT n:Setting"
# A node as the console draws it (whole graph or one customer's part): labels, a stable key, a
# display name, an episode's text, and its times on both clocks when it has them.
NODE_COLUMNS = """RETURN id(n) AS id, labels(n) AS labels,
       coalesce(n.fact_id, n.episode_id, n.ticket_id, n.conflict_id, n.session_id, n.node_id, n.uid) AS key,
       coalesce(n.name, n.object_name, n.ticket_id, n.session_id, n.node_id, n.conflict_id, n.kind, '') AS name,
       CASE WHEN n:Episode THEN n.text END AS text,
       n.predicate AS predicate, n.subject_uid AS subject_uid,
       n.valid_from_ms AS valid_from_ms, n.valid_to_ms AS valid_to_ms,
       n.recorded_at_ms AS recorded_at_ms, n.expired_at_ms AS expired_at_ms,
       n.believed_from_ms AS believed_from_ms, n.at_ms AS at_ms"""

GRAPH_NODES = Query(
    "console_graph_nodes",
    f"""
MATCH (n) WHERE {_SKIP}
WITH n LIMIT $limit
{NODE_COLUMNS}
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

# Knowledge crossings on one ticket: facts about the ticket's customer that one agent working the
# ticket CONSULTED while the ticket was open (its CONSULTED edge's window overlaps the ticket's,
# from opened to closed, or to now while it is open) and another agent wrote.
TICKET_CROSSINGS = Query(
    "console_ticket_crossings",
    """
MATCH (t:Ticket {ticket_id: $ticket_id})
OPTIONAL MATCH (t)-[:HAS_EVENT]->(e:TicketEvent)
WITH t, collect(DISTINCT e.agent) AS agents
MATCH (c:Entity {uid: t.customer_uid})<-[:ABOUT]-(f:Fact)
MATCH (reader:Agent)-[k:CONSULTED]->(f)-[:WRITTEN_BY]->(writer:Agent)
WHERE reader <> writer AND reader.name IN agents
  AND k.last_ms >= t.opened_at_ms AND k.first_ms <= coalesce(t.closed_at_ms, $now_ms)
RETURN writer.name AS writer, reader.name AS reader, f.fact_id AS fact_id, f.predicate AS predicate,
       f.object_name AS object, k.count AS reads, k.first_ms AS first_ms, k.last_ms AS last_ms,
       f:Current AS current
ORDER BY k.last_ms DESC, f.fact_id
LIMIT $limit
""",
    read_only=True,
)

# "Who has worked on this?": the agents and technicians on other tickets of similar issues, by
# graph: the same Issue (`same issue`), or an Issue whose fix shares a step with a fix that worked
# on this one (`shared fix`: Ticket-FIXED_BY->Procedure, its ProcSteps' actions); ranked by the
# similar tickets they fixed, then worked. The procedure ids pass through WITH before they key an
# index lookup: FalkorDB refuses `{procedure_id: p.procedure_id}` when the OPTIONAL MATCH that binds
# `p` found nothing (an issue nobody has fixed yet), while a null value simply matches nothing.
TICKET_EXPERTS = Query(
    "console_ticket_experts",
    """
MATCH (t:Ticket {ticket_id: $ticket_id})-[:TICKET_ABOUT]->(i:Issue)
OPTIONAL MATCH (i)<-[:TICKET_ABOUT]-(:Ticket)-[:FIXED_BY]->(p:Procedure)
WITH t, i, p.procedure_id AS fix
OPTIONAL MATCH (s:ProcStep {procedure_id: fix})
WITH t, i, collect(DISTINCT s.action) AS actions
OPTIONAL MATCH (i)<-[:TICKET_ABOUT]-(same:Ticket) WHERE same <> t
WITH t, i, actions, collect(DISTINCT same) AS sames
OPTIONAL MATCH (s2:ProcStep) WHERE s2.action IN actions
WITH t, i, sames, s2.procedure_id AS sharing
OPTIONAL MATCH (p2:Procedure {procedure_id: sharing})<-[:FIXED_BY]-(via:Ticket)-[:TICKET_ABOUT]->(j:Issue)
WHERE via <> t AND j <> i
WITH t, sames, collect(DISTINCT via) AS vias
WITH [x IN sames | [x, 'same issue']] + [x IN vias | [x, 'shared fix']] AS similar
UNWIND similar AS pair
WITH pair[0] AS o, pair[1] AS why
MATCH (o)-[:HAS_EVENT]->(e:TicketEvent) WHERE e.agent IS NOT NULL
WITH o, why, collect(DISTINCT e.agent) AS agents, max(e.at_ms) AS last_ms
OPTIONAL MATCH (tech:Technician)-[:VISITS]->(:TechVisit)-[:FOR_TICKET]->(o)
WITH o, why, last_ms, agents, collect(DISTINCT 'technician ' + tech.name) AS techs
WITH o, why, last_ms, agents + techs AS people
UNWIND people AS who
WITH who, o, why, last_ms, o.stage IN ['fixed', 'closed'] AS fixed
RETURN who AS expert, count(DISTINCT o) AS tickets, count(DISTINCT CASE WHEN fixed THEN o END) AS fixed,
       collect(DISTINCT o.issue_kind) AS issues, collect(DISTINCT why) AS why, max(last_ms) AS last_ms,
       collect(DISTINCT o.ticket_id)[..10] AS ticket_ids
ORDER BY fixed DESC, tickets DESC, expert
LIMIT $limit
""",
    read_only=True,
)

# The region map: its hubs (Pop), exchanges (Olt) and cores (Backbone), the uplinks between them,
# and the open outages with how many customers each reaches. Cabinets and home boxes are below
# the map's scale (a region has thousands).
MAP_NODES = Query(
    "console_map_nodes",
    """
MATCH (n:NetNode) WHERE n:Pop OR n:Olt OR n:Backbone
RETURN n.node_id AS node_id, n.kind AS kind, n.name AS name, n:Up AS up, n.capacity_gbps AS capacity_gbps
ORDER BY n.node_id
LIMIT $limit
""",
    read_only=True,
)

MAP_LINKS = Query(
    "console_map_links",
    """
MATCH (a:NetNode)-[r:UPLINK]->(b:NetNode) WHERE a:Olt OR a:Pop
RETURN a.node_id AS source, b.node_id AS target, coalesce(r.up, true) AS up, coalesce(r.backup, false) AS backup,
       r.capacity_gbps AS capacity_gbps
LIMIT $limit
""",
    read_only=True,
)

OPEN_OUTAGES = Query(
    "console_open_outages",
    """
MATCH (o:Outage) WHERE o.open = true
OPTIONAL MATCH (o)-[:AFFECTS]->(c:Customer)
RETURN o.outage_id AS outage_id, o.node_id AS node_id, o.opened_at_ms AS opened_at_ms, o.cause AS cause,
       count(c) AS customers
ORDER BY o.opened_at_ms DESC
LIMIT $limit
""",
    read_only=True,
)

# The plain vector store's side of a comparison, live: the customer's own turns (their sessions'
# episodes), nearest to the question first, as the memory benchmark's vector store ranks them.
CUSTOMER_TURNS_NEAREST = Query(
    "console_customer_turns_nearest",
    """
WITH vecf32($v) AS qv
MATCH (c:Entity {uid: $uid})-[:HAS_SESSION]->(:Session)<-[:IN]-(ep:Episode)
WITH ep, coalesce(vec.cosineDistance(ep.embedding, qv), 2.0) AS d
ORDER BY d, ep.episode_id
LIMIT $k
RETURN ep.episode_id AS episode_id, ep.speaker AS speaker, ep.text AS text, ep.at_ms AS at_ms, d
""",
    read_only=True,
)

# The graph id of an entity (a customer's node in a neighbourhood).
NODE_OF_UID = Query(
    "console_node_of_uid",
    "MATCH (n:Entity {uid: $uid}) RETURN id(n) AS id",
    read_only=True,
)
