"""Cypher of the customer site: one customer's conversations, the turns of one of them, and whose a
fact or ticket is (the customer's live feed keeps only events about them).

Every pattern starts from an indexed node: Entity.uid, Session.session_id, Fact.fact_id,
Ticket.ticket_id."""

from __future__ import annotations

from relay_graph.runtime.queries import Query

# A customer's conversations, newest first, each with its first turn's text.
CUSTOMER_SESSIONS = Query(
    "site_customer_sessions",
    "MATCH (c:Entity {uid: $uid})-[:HAS_SESSION]->(s:Session) "
    "OPTIONAL MATCH (ep:Episode)-[r:IN]->(s) WHERE r.seq = 1 "
    "RETURN s.session_id AS session, s.first_at_ms AS first_at_ms, s.last_at_ms AS last_at_ms, "
    "head(collect(ep.text)) AS first_text "
    "ORDER BY first_at_ms DESC LIMIT $limit",
    read_only=True,
)

# The turns of a session (the customer's and the desk's), in order, if the session is the customer's.
SESSION_TURNS = Query(
    "site_session_turns",
    "MATCH (c:Entity {uid: $uid})-[:HAS_SESSION]->(s:Session {session_id: $session}) "
    "MATCH (ep:Episode)-[:IN]->(s) "
    "RETURN ep.episode_id AS episode_id, ep.kind AS kind, ep.speaker AS speaker, ep.text AS text, "
    "ep.at_ms AS at_ms, ep.reply_to AS reply_to, ep.ticket_id AS ticket_id, ep.how_i_know AS how_i_know "
    "ORDER BY ep.at_ms, ep.pos LIMIT $limit",
    read_only=True,
)

FACT_SUBJECT = Query(
    "site_fact_subject",
    "MATCH (f:Fact {fact_id: $id}) RETURN f.subject_uid AS subject_uid",
    read_only=True,
)

TICKET_CUSTOMER = Query(
    "site_ticket_customer",
    "MATCH (t:Ticket {ticket_id: $id}) RETURN t.customer_uid AS customer_uid",
    read_only=True,
)


# The browser's time zone a customer's first visit gave: the country whose prices they see until
# an address on file says otherwise (conversation.reads.customer_country).
SET_TIME_ZONE = Query(
    "site_set_time_zone",
    "MATCH (c:Entity {uid: $uid}) SET c.time_zone = $time_zone RETURN c.uid AS uid",
)
