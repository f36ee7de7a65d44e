"""Cypher of the chat desk: who a session belongs to, a turn's sequence number in its session, and
the reply written to a turn.

Turns are ordinary episodes (queries/episodes.py writes them). A turn's sequence number lives on
the episode's own membership edge, `(ep:Episode)-[:IN {seq}]->(s:Session {turn_seq})`, and the
session keeps the counter. Not on the Episode node: in FalkorDB 4.16 setting any property on a node
that already has its vector leaves a stale copy in the vector index (measured: a k=10 query then
returns 5 rows), and the episode gets its vector in the statement that creates it.

Every pattern starts from an indexed node: Session.session_id, Episode.episode_id."""

from __future__ import annotations

from relay_graph.runtime.queries import Query

# The customers a session belongs to (normally none or one).
SESSION_OWNERS = Query(
    "chat_session_owners",
    "MATCH (s:Session {session_id: $session}) "
    "OPTIONAL MATCH (s)<-[:HAS_SESSION]-(c:Customer) "
    "RETURN collect(c.uid) AS owners",
    read_only=True,
)

# Gives the turn the session's next sequence number, once: the counter moves and the edge gets it
# in one statement (FalkorDB runs a graph's writes one at a time, so two turns never share a
# number); calling it again for the same turn returns the number it already has.
ASSIGN_SEQ = Query(
    "chat_assign_seq",
    "MATCH (ep:Episode {episode_id: $id}) "
    "WITH ep "
    "MATCH (ep)-[r:IN]->(s:Session) "
    "WHERE s.session_id = $session "
    "WITH r, s, r.seq IS NULL AS fresh "
    "FOREACH (_ IN CASE WHEN fresh THEN [1] ELSE [] END | SET s.turn_seq = coalesce(s.turn_seq, 0) + 1) "
    "WITH r, s, fresh "
    # a second SET clause: inside one SET, r.seq would still see the old counter
    "FOREACH (_ IN CASE WHEN fresh THEN [1] ELSE [] END | SET r.seq = s.turn_seq) "
    # the turn's announcement, in the same statement (the outbox: outbox.py reads and removes it)
    "FOREACH (_ IN CASE WHEN fresh THEN [1] ELSE [] END | "
    "  CREATE (:Outbox {episode_id: $id, session: $session, seq: r.seq, customer: $customer, "
    "                   notification_id: $notification_id, at_ms: $at_ms})) "
    "RETURN r.seq AS seq, fresh",
)

# An agent's reply episode, with what the customer is shown and why, and the stage of the ticket it
# concerns (its own ticket_id, else the one the caller names): what a chat request waiting for the
# reply answers with, in one round trip.
REPLY_AND_TICKET = Query(
    "chat_reply_and_ticket",
    "MATCH (ep:Episode {episode_id: $id}) "
    "WITH ep, coalesce(ep.ticket_id, $ticket_id) AS tid "
    "OPTIONAL MATCH (t:Ticket {ticket_id: tid}) "
    "RETURN ep.episode_id AS episode_id, ep.session_id AS session, ep.kind AS kind, ep.text AS text, "
    "ep.speaker AS speaker, ep.at_ms AS at_ms, ep.reply_to AS reply_to, ep.ticket_id AS ticket_id, "
    "ep.how_i_know AS how_i_know, ep.answers AS answers, t.ticket_id AS ticket, t.stage AS ticket_stage",
    read_only=True,
)
