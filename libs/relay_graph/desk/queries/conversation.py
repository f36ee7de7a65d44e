"""The intake conversation's reads and its promises (relay_graph.desk.conversation)."""

from __future__ import annotations

from relay_graph.runtime.queries import Query

# The country of the city the customer lives in (the LIVES_IN mirror of their current lives_in
# fact, onto the catalogue's City), else nothing.
CUSTOMER_COUNTRY = Query(
    "conversation_customer_country",
    "MATCH (c:Entity {uid: $uid}) "
    "OPTIONAL MATCH (c)-[:LIVES_IN]->(city:City)-[:IN_COUNTRY]->(k:Country) "
    "RETURN k.code AS code, k.name AS name, city.name AS city_name, c.time_zone AS time_zone LIMIT 1",
    read_only=True,
)

# What the customer's clock is read from: the gazetteer id of the city they live in, its country,
# its name (a city the desk does not serve is no catalogue City: only its name is known), and the
# browser's zone kept on their first visit.
CUSTOMER_ZONE = Query(
    "conversation_customer_zone",
    "MATCH (c:Entity {uid: $uid}) "
    "OPTIONAL MATCH (c)-[:LIVES_IN]->(city:Entity) "
    "RETURN city.geonameid AS geonameid, city.country AS country, city.name AS city_name, "
    "c.time_zone AS time_zone LIMIT 1",
    read_only=True,
)

# The countries of the regions seeded in this tenant: the desk's own countries.
TENANT_COUNTRIES = Query(
    "conversation_tenant_countries",
    "MATCH (r:Region)<-[:IN_REGION]-(k:Country) RETURN r.code AS region, k.code AS code, k.name AS name",
    read_only=True,
)

COUNTRY_NAME = Query(
    "conversation_country_name",
    "MATCH (k:Country {code: $code}) RETURN k.name AS name",
    read_only=True,
)

# A served city by any of its names (the catalogue stores the key and the aliases).
SERVED_CITY = Query(
    "conversation_served_city",
    "MATCH (city:City {served: true})-[:IN_COUNTRY]->(k:Country) "
    "WHERE city.name_key = $key OR $name IN city.aliases "
    "RETURN city.name AS city_name, k.name AS country LIMIT 1",
    read_only=True,
)

SERVED_CITY_NAMES = Query(
    "conversation_served_city_names",
    "MATCH (city:City {served: true})-[:IN_COUNTRY]->(k:Country) "
    "RETURN city.name AS city_name ORDER BY city.population DESC LIMIT $limit",
    read_only=True,
)

FAQ_BY_ID = Query(
    "conversation_faq_by_id",
    "MATCH (f:Faq {faq_id: $faq_id}) RETURN f.faq_id AS faq_id, f.topic AS topic, f.question AS question, "
    "f.answer AS answer",
    read_only=True,
)

# What the desk's earlier replies in this session answered and asked (their `answers`).
SESSION_ANSWERS = Query(
    "conversation_session_answers",
    "MATCH (s:Session {session_id: $session})<-[:IN]-(ep:AgentReply) "
    "WHERE ep.episode_id <> $reply_id "
    "RETURN ep.answers AS answers, ep.at_ms AS at_ms",
    read_only=True,
)

# For a welcome back: how many other sessions the customer has talked in, their newest ticket and
# the newest promise still open.
RETURNING = Query(
    "conversation_returning",
    "MATCH (c:Entity {uid: $uid}) "
    # sessions they talked in (an outage notice's session, where only the desk spoke, is none)
    "OPTIONAL MATCH (c)-[:HAS_SESSION]->(s:Session) WHERE s.session_id <> $session AND (s)<-[:IN]-(:CustomerMessage) "
    "WITH c, count(s) AS before "
    "OPTIONAL MATCH (c)-[:HAS_TICKET]->(t:Ticket) "
    "WITH c, before, t ORDER BY t.updated_at_ms DESC "
    "WITH c, before, collect(t)[0] AS t "
    "OPTIONAL MATCH (c)-[:HAS_TICKET]->(:Ticket)-[:PROMISED]->(p:Promise {status: 'open'}) "
    "WITH before, t, p ORDER BY p.made_at_ms DESC "
    "WITH before, t, collect(p)[0] AS p "
    "RETURN before, t.ticket_id AS ticket_id, t.summary AS summary, t.stage AS stage, t.updated_at_ms AS updated_at_ms, "
    "p.text AS promise, p.due_at_ms AS promise_due_ms",
    read_only=True,
)

# A promise the desk made on a ticket, kept as a memory with a due time (MERGE on its id: a
# redelivered turn makes it once), and a line on the ticket's timeline.
MAKE_PROMISE = Query(
    "conversation_make_promise",
    "MATCH (t:Ticket {ticket_id: $ticket_id}) "
    "MERGE (p:Promise {promise_id: $promise_id}) "
    "ON CREATE SET p.text = $text, p.due_at_ms = $due_ms, p.made_at_ms = $now, p.made_by = $agent, "
    "  p.status = 'open', p.source = $source, p.due_zone = $due_zone "
    "MERGE (t)-[:PROMISED]->(p) "
    "RETURN p.promise_id AS promise_id, p.text AS text, p.due_at_ms AS due_at_ms, p.made_at_ms AS made_at_ms, "
    "p.made_by AS made_by, p.status AS status, p.source AS source, p.due_zone AS due_zone",
)

TICKET_PROMISES = Query(
    "conversation_ticket_promises",
    "MATCH (t:Ticket {ticket_id: $ticket_id})-[:PROMISED]->(p:Promise) "
    "RETURN p.promise_id AS promise_id, p.text AS text, p.due_at_ms AS due_at_ms, p.made_at_ms AS made_at_ms, "
    "p.made_by AS made_by, p.status AS status, p.source AS source, p.due_zone AS due_zone "
    "ORDER BY p.made_at_ms, p.promise_id",
    read_only=True,
)

# The open promises on a customer's open tickets whose due time has passed and that no reply has
# owned up to yet (chased_at_ms unset): the next reply says so.
OVERDUE_PROMISES = Query(
    "conversation_overdue_promises",
    "MATCH (c:Entity {uid: $uid})-[:HAS_TICKET]->(t:Ticket)-[:PROMISED]->(p:Promise {status: 'open'}) "
    "WHERE p.due_at_ms < $now AND p.chased_at_ms IS NULL AND NOT coalesce(t.stage, '') IN $closed_stages "
    "RETURN t.ticket_id AS ticket_id, t.stage AS stage, p.promise_id AS promise_id, p.text AS text, "
    "p.due_at_ms AS due_at_ms, "
    "p.made_at_ms AS made_at_ms, p.made_by AS made_by, p.status AS status, p.source AS source, "
    "p.due_zone AS due_zone ORDER BY p.due_at_ms, p.promise_id",
    read_only=True,
)

# A reply owned up to an overdue promise and chased it: said once (the promise stays open).
CHASE_PROMISE = Query(
    "conversation_chase_promise",
    "MATCH (t:Ticket {ticket_id: $ticket_id})-[:PROMISED]->(p:Promise {promise_id: $promise_id}) "
    "WHERE p.chased_at_ms IS NULL "
    "SET p.chased_at_ms = $now "
    "RETURN p.promise_id AS promise_id",
)
