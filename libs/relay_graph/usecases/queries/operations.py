"""Cypher of operators' work on one tenant graph: forgetting a customer, and counts by label and
type. Every forget step starts from the customer's indexed Entity.uid (or an indexed key) and
returns how many nodes it removed; the customer's own node goes last, with its remaining edges
(fact mirrors, CONNECTED_VIA)."""

from __future__ import annotations

from relay_graph.runtime.queries import Query

# Episodes of the customer's sessions, and any other episode that mentions them.
FORGET_EPISODES = Query(
    "forget_episodes",
    "MATCH (c:Entity {uid: $uid}) "
    "OPTIONAL MATCH (c)-[:HAS_SESSION]->(:Session)<-[:IN]-(a:Episode) "
    "WITH c, collect(a) AS own "
    "OPTIONAL MATCH (c)<-[:MENTIONS]-(b:Episode) "
    "WITH own, collect(b) AS named UNWIND own + named AS ep "
    "WITH DISTINCT ep DETACH DELETE ep RETURN count(ep) AS removed",
)

FORGET_SESSIONS = Query(
    "forget_sessions",
    "MATCH (c:Entity {uid: $uid})-[:HAS_SESSION]->(s:Session) "
    "WITH DISTINCT s DETACH DELETE s RETURN count(s) AS removed",
)

# Conflicts between facts about the customer go with those facts.
FORGET_CONFLICTS = Query(
    "forget_conflicts",
    "MATCH (c:Entity {uid: $uid})<-[:ABOUT]-(:Fact)<-[:BETWEEN]-(k:Conflict) "
    "WITH DISTINCT k DETACH DELETE k RETURN count(k) AS removed",
)

# Returns the other entities those facts were about (a phone number, a city), for FORGET_ORPHANS.
FORGET_FACTS = Query(
    "forget_facts",
    "MATCH (c:Entity {uid: $uid})<-[:ABOUT]-(f:Fact) "
    "WITH DISTINCT c, f "
    "OPTIONAL MATCH (f)-[:ABOUT]->(o:Entity) WHERE o <> c "
    "WITH f, collect(o.uid) AS others "
    "DETACH DELETE f "
    "WITH count(f) AS removed, collect(others) AS nested "
    "RETURN removed, reduce(acc = [], xs IN nested | acc + xs) AS others",
)

# An entity the customer's facts named goes too once nothing else is linked to it (run last, when
# the customer's own node and its mirror edges are gone); one another fact still names stays.
FORGET_ORPHANS = Query(
    "forget_orphans",
    "UNWIND $uids AS u MATCH (e:Entity {uid: u}) WHERE NOT (e)--() "
    "DELETE e RETURN count(e) AS removed",
)

# A claim's wording (FactText) is shared by every fact making it: it goes once no fact phrases it
# (a scan of FactText nodes; a write makes a text and its link in one query, so none is half-made).
FORGET_ORPHAN_TEXTS = Query(
    "forget_orphan_texts",
    "MATCH (t:FactText) WHERE NOT (t)<-[:PHRASED_AS]-(:Fact) "
    "DETACH DELETE t RETURN count(t) AS removed",
)

# Slot keys are `<subject uid>|<predicate>`.
FORGET_SLOTS = Query(
    "forget_slots",
    "MATCH (s:Slot) WHERE s.key STARTS WITH $prefix "
    "DETACH DELETE s RETURN count(s) AS removed",
)

FORGET_TICKETS = Query(
    "forget_tickets",
    "MATCH (c:Entity {uid: $uid})-[:HAS_TICKET]->(t:Ticket) "
    "WITH DISTINCT t "
    "OPTIONAL MATCH (t)-[:HAS_EVENT]->(e:TicketEvent) "
    "OPTIONAL MATCH (v:TechVisit)-[:FOR_TICKET]->(t) "
    "WITH t, collect(DISTINCT e) + collect(DISTINCT v) AS parts "
    "FOREACH (p IN parts | DETACH DELETE p) "
    "WITH t, size(parts) AS n DETACH DELETE t "
    "RETURN count(t) AS removed, sum(n) AS parts",
)

FORGET_CASE_MOVES = Query(
    "forget_case_moves",
    "MATCH (c:Entity {uid: $uid})-[:CASE_MOVED|CASE_ARRIVED]->(m:CaseMove) "
    "WITH DISTINCT m DETACH DELETE m RETURN count(m) AS removed",
)

FORGET_ENTITY = Query(
    "forget_entity",
    "MATCH (c:Entity {uid: $uid}) "
    "OPTIONAL MATCH (c)-[r]-() "
    "WITH c, count(r) AS edges DETACH DELETE c RETURN count(c) AS removed, sum(edges) AS edges",
)

NODE_COUNTS = Query(
    "ops_node_counts",
    "MATCH (n) UNWIND labels(n) AS label RETURN label, count(*) AS n ORDER BY label",
    read_only=True,
)

EDGE_COUNTS = Query(
    "ops_edge_counts",
    "MATCH ()-[r]->() RETURN type(r) AS type, count(r) AS n ORDER BY type",
    read_only=True,
)

# Moving a tenant: the graph's nodes, counted at the source and at the target.
COUNT_NODES = Query("ops_count_nodes", "MATCH (n) RETURN count(n) AS n", read_only=True)
