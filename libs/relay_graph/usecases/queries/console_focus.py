"""Cypher for the console's search and its focused view of one customer.

    TICKET_CUSTOMER     the customer a ticket is about (search by ticket id).
    PHONE_FACTS         every current `phone` fact with its subject (search by phone: the digits are
                        compared in Python, as people write a number in many ways).
    FOCUS_FACTS         the customer's facts on both clocks (current, superseded, retired, claims),
                        the agents who wrote them and the episodes they were derived from.
    FOCUS_SESSIONS      the customer's sessions and, newest first, up to $limit of their episodes.
    FOCUS_TICKETS       the customer's tickets, their timeline events, technician visits, and the
                        agents who opened, handed off or picked them up.
    FOCUS_LINE          the customer's line: home box, cabinet, exchange, hub and core above it.
    NODES_BY_ID         the nodes of those graph ids, projected as the whole-graph read does, with a
                        ticket's issue and stage and an event's kind for their labels.
    EDGES_AMONG         every edge between two of those nodes.

Every statement starts at the customer's uid (an index lookup) and walks out a few hops; only the
phone search reads every current phone fact (one per customer at most, in practice)."""

from __future__ import annotations

from relay_graph.runtime.queries import Query
from relay_graph.usecases.queries.console import NODE_COLUMNS

TICKET_CUSTOMER = Query(
    "console_ticket_customer",
    "MATCH (t:Ticket {ticket_id: $id}) RETURN t.customer_uid AS uid",
    read_only=True,
)

PHONE_FACTS = Query(
    "console_phone_facts",
    "MATCH (f:Fact:Current {predicate: 'phone'}) RETURN f.subject_uid AS uid, f.object_name AS phone",
    read_only=True,
)

FOCUS_FACTS = Query(
    "console_focus_facts",
    """
MATCH (f:Fact {subject_uid: $uid})
OPTIONAL MATCH (f)-[:WRITTEN_BY]->(a:Agent)
OPTIONAL MATCH (e:Episode)-[:DERIVED]->(f)
RETURN collect(DISTINCT id(f)) + collect(DISTINCT id(a)) + collect(DISTINCT id(e)) AS ids
""",
    read_only=True,
)

FOCUS_SESSIONS = Query(
    "console_focus_sessions",
    """
MATCH (c:Entity {uid: $uid})-[:HAS_SESSION]->(s:Session)
OPTIONAL MATCH (s)<-[:IN]-(e:Episode)
WITH s, e ORDER BY e.at_ms DESC
WITH collect(DISTINCT id(s)) AS sessions, collect(id(e)) AS episodes
RETURN sessions + episodes[0..$limit] AS ids
""",
    read_only=True,
)

FOCUS_TICKETS = Query(
    "console_focus_tickets",
    """
MATCH (c:Entity {uid: $uid})-[:HAS_TICKET]->(t:Ticket)
OPTIONAL MATCH (t)-[:HAS_EVENT]->(ev:TicketEvent)
WITH t, collect(id(ev)) AS events
OPTIONAL MATCH (v:TechVisit)-[:FOR_TICKET]->(t)
WITH t, events, collect(id(v)) AS visits
OPTIONAL MATCH (a:Agent)-[:OPENED|HANDED_OFF|PICKED_UP]->(t)
WITH t, events, visits, collect(DISTINCT id(a)) AS agents
RETURN [id(t)] + events + visits + agents AS ids
""",
    read_only=True,
)

FOCUS_LINE = Query(
    "console_focus_line",
    """
MATCH (c:Entity {uid: $uid})-[:CONNECTED_VIA]->(home)
OPTIONAL MATCH (cab)-[:DROP]->(home)
OPTIONAL MATCH (cab)-[:PON]->(ex)
OPTIONAL MATCH (ex)-[:UPLINK*1..3]->(up)
RETURN collect(DISTINCT id(home)) + collect(DISTINCT id(cab)) + collect(DISTINCT id(ex))
       + collect(DISTINCT id(up)) AS ids
""",
    read_only=True,
)

NODES_BY_ID = Query(
    "console_nodes_by_id",
    f"""
MATCH (n) WHERE id(n) IN $ids
{NODE_COLUMNS},
       n.issue_kind AS issue, n.stage AS stage, n.event AS event, n.visit_id AS visit
""",
    read_only=True,
)

EDGES_AMONG = Query(
    "console_edges_among",
    """
MATCH (n)-[r]->(m) WHERE id(n) IN $ids AND id(m) IN $ids
RETURN id(n) AS source, id(m) AS target, type(r) AS type,
       r.valid_from_ms AS valid_from_ms, r.valid_to_ms AS valid_to_ms
""",
    read_only=True,
)

# The two clocks of one customer's facts: each fact with the message it came from, for the sentence
# that says why its world time and record time differ.
CLOCK_FACTS = Query(
    "console_clock_facts",
    """
MATCH (f:Fact {subject_uid: $uid})
OPTIONAL MATCH (e:Episode)-[:DERIVED]->(f)
OPTIONAL MATCH (f)-[:SUPERSEDES]->(old:Fact)
WITH f, collect(e)[0] AS e, collect(old.object_name) AS replaced
RETURN f.fact_id AS fact_id, f.predicate AS predicate, f.object_name AS object,
       f.valid_from_ms AS valid_from_ms, f.valid_to_ms AS valid_to_ms,
       f.recorded_at_ms AS recorded_at_ms, f.expired_at_ms AS expired_at_ms, f.asserted_by AS asserted_by,
       CASE WHEN f:Current THEN 'current' WHEN f:Claim THEN 'claim' WHEN f:Retired THEN 'retired'
            ELSE 'superseded' END AS state,
       e.kind AS source_kind, e.speaker AS speaker, e.at_ms AS said_at_ms, replaced
ORDER BY recorded_at_ms
""",
    read_only=True,
)
