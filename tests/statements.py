"""The named Cypher of the tests' shared read helpers (tests/reads.py): what a test reads back to
check what the code under test wrote, where no production code reads it that way. As in the
`queries` packages, every value is a parameter and every pattern starts from an indexed node. Test
modules may still run a statement of their own inline; shared helpers keep theirs here
(tests/test_architecture.py holds both rules)."""

from __future__ import annotations

from relay_graph.desk.queries.agent_reads import EPISODE_FIELDS
from relay_graph.runtime.queries import Query

# The customer is the one whose session the episode is in (a session belongs to one customer).
TURN = Query(
    "test_turn",
    "MATCH (ep:Episode {episode_id: $id}) "
    "OPTIONAL MATCH (ep)-[:IN]->(s:Session)<-[:HAS_SESSION]-(c:Customer) "
    "WITH ep, c ORDER BY c.uid "
    f"RETURN {EPISODE_FIELDS}, collect(c.name)[0] AS customer",
    read_only=True,
)

TRANSCRIPT = Query(
    "test_transcript",
    "MATCH (s:Session {session_id: $session})<-[:IN]-(ep:Episode) "
    f"RETURN {EPISODE_FIELDS}, null AS customer ORDER BY ep.at_ms, ep.recorded_at_ms, ep.episode_id",
    read_only=True,
)

TRIED_FIXES = Query(
    "test_tried_fixes",
    "MATCH (t:Ticket {ticket_id: $id})-[r:TRIED_FIX]->(p:Procedure) "
    "RETURN p.procedure_id AS procedure_id, p.steps AS steps, r.round AS round, r.outcome AS outcome "
    "ORDER BY r.at_ms, p.procedure_id",
    read_only=True,
)

TURN_SEQ = Query(
    "test_turn_seq",
    "MATCH (ep:Episode {episode_id: $id}) "
    "WITH ep "
    "MATCH (ep)-[r:IN]->(s:Session) "
    "RETURN s.session_id AS session, r.seq AS seq",
    read_only=True,
)

REPLY = Query(
    "test_reply",
    "MATCH (ep:Episode {episode_id: $id}) "
    "RETURN ep.episode_id AS episode_id, ep.session_id AS session, ep.kind AS kind, ep.text AS text, "
    "ep.speaker AS speaker, ep.at_ms AS at_ms, ep.reply_to AS reply_to, ep.ticket_id AS ticket_id, "
    "ep.how_i_know AS how_i_know, ep.answers AS answers",
    read_only=True,
)

EPISODE = Query(
    "test_episode",
    "MATCH (ep:Episode {episode_id: $id}) "
    "OPTIONAL MATCH (ep)-[:MENTIONS]->(m:Entity) "
    "RETURN ep.episode_id AS episode_id, ep.session_id AS session, ep.speaker AS speaker, ep.text AS text, "
    "ep.kind AS kind, ep.at_ms AS at_ms, ep.recorded_at_ms AS recorded_at_ms, labels(ep) AS labels, "
    "collect(m.uid) AS mentions",
    read_only=True,
)

SESSION_CHAIN = Query(
    "test_session_chain",
    "MATCH (c:Entity {uid: $uid})-[:HAS_SESSION]->(s:Session) "
    "OPTIONAL MATCH (s)-[:FOLLOWED_BY]->(n:Session) "
    "RETURN s.session_id AS session, s.first_at_ms AS first_at_ms, collect(n.session_id) AS next "
    "ORDER BY first_at_ms",
    read_only=True,
)

CUSTOMER_OF_SESSION = Query(
    "test_customer_of_session",
    "MATCH (s:Session {session_id: $session})<-[:HAS_SESSION]-(c:Customer) "
    "RETURN c.name AS customer ORDER BY c.uid LIMIT 1",
    read_only=True,
)

ESCALATIONS = Query(
    "test_escalations",
    "MATCH (t:Ticket {ticket_id: $id})-[:ESCALATED]->(e:Escalation) "
    "RETURN e.escalation_id AS escalation_id, e.ticket_id AS ticket_id, e.round AS round, e.reason AS reason, "
    "e.to AS to, e.agent AS agent, e.at_ms AS at_ms, t.priority AS priority ORDER BY e.at_ms",
    read_only=True,
)
