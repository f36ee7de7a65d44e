"""Reads the desk agents need that no aggregate module offers: a turn with its session and
customer and its reply, a customer's latest session, the routing state of a ticket, the outages
behind it, and the agents' edges on it.

Everything here is read-only; writes go through the aggregate modules (episodes, facts, tickets,
network). Every pattern starts from an indexed node: Episode.episode_id, Entity.uid,
Session.session_id, Ticket.ticket_id, Outage.outage_id / node_id."""

from __future__ import annotations

from relay_graph.runtime.queries import Query

EPISODE_FIELDS = (
    "ep.episode_id AS episode_id, ep.text AS text, ep.speaker AS speaker, ep.kind AS kind, "
    "ep.at_ms AS at_ms, ep.recorded_at_ms AS recorded_at_ms, ep.session_id AS session, "
    "ep.reply_to AS reply_to, ep.ticket_id AS ticket_id, ep.how_i_know AS how_i_know"
)

# A turn with its session's customer (the one whose session the episode is in: a session belongs
# to one customer), and the reply written to it if there is one (`reply`: a map of the same
# fields, null when there is none): intake's first read of a turn is one round trip. The reply is
# looked up by its own id (deterministic, see relay_graph.desk.agent_reads.reply_id_for), from the index.
TURN_AND_REPLY = Query(
    "desk_turn_and_reply",
    "MATCH (ep:Episode {episode_id: $id}) "
    "OPTIONAL MATCH (ep)-[:IN]->(s:Session)<-[:HAS_SESSION]-(c:Customer) "
    "WITH ep, c ORDER BY c.uid "
    "WITH ep, collect(c.name)[0] AS customer, collect(c.uid)[0] AS customer_uid "
    # the customer's current names (their `name` facts' mirror): the guardrails' "their own name"
    "OPTIONAL MATCH (:Entity {uid: customer_uid})-[:NAMED]->(n:PersonName) "
    "WITH ep, customer, collect(n.name) AS customer_names "
    "OPTIONAL MATCH (r:Episode {episode_id: $reply_id}) "
    f"RETURN {EPISODE_FIELDS}, customer, customer_names, "
    "CASE WHEN r IS NULL THEN null ELSE {episode_id: r.episode_id, text: r.text, speaker: r.speaker, "
    "kind: r.kind, at_ms: r.at_ms, recorded_at_ms: r.recorded_at_ms, session: r.session_id, "
    "reply_to: r.reply_to, ticket_id: r.ticket_id, how_i_know: r.how_i_know} END AS reply",
    read_only=True,
)

EXISTING_EPISODES = Query(
    "desk_existing_episodes",
    "UNWIND $ids AS id MATCH (ep:Episode {episode_id: id}) RETURN ep.episode_id AS episode_id",
    read_only=True,
)

# Per customer uid, the session with the latest turn (null when the customer never talked to us).
LATEST_SESSIONS = Query(
    "desk_latest_sessions",
    "UNWIND $uids AS uid "
    "MATCH (c:Entity {uid: uid}) "
    "OPTIONAL MATCH (c)-[:HAS_SESSION]->(s:Session) "
    "WITH c, s ORDER BY s.last_at_ms DESC, s.session_id DESC "
    "RETURN c.uid AS uid, c.name AS customer, collect(s.session_id)[0] AS session",
    read_only=True,
)

# What the handlers of the resolver need beyond tickets.peek_ticket: to whom it was handed,
# and when its holder was last seen (for taking over from a replica that died).
TICKET_ROUTING = Query(
    "desk_ticket_routing",
    "MATCH (t:Ticket {ticket_id: $id}) "
    "RETURN t.ticket_id AS id, t.stage AS stage, t.version AS version, t.round AS round, "
    "t.handoff_from AS handoff_from, t.handoff_to AS handoff_to, t.waiting_for AS waiting_for, "
    "t.owner AS owner, t.owner_replica AS owner_replica, t.owner_seen_ms AS owner_seen_ms, "
    "t.customer AS customer, t.issue_kind AS issue",
    read_only=True,
)

TICKET_OUTAGES = Query(
    "desk_ticket_outages",
    "MATCH (t:Ticket {ticket_id: $id})-[:CAUSED_BY]->(o:Outage) "
    "RETURN o.outage_id AS outage_id, o.node_id AS node_id, o.open AS open, o.opened_at_ms AS opened_at_ms "
    "ORDER BY o.opened_at_ms, o.outage_id",
    read_only=True,
)

LATEST_OUTAGE_OF_NODE = Query(
    "desk_latest_outage_of_node",
    "MATCH (o:Outage {node_id: $node_id}) "
    "RETURN o.outage_id AS outage_id, o.open AS open "
    "ORDER BY o.opened_at_ms DESC, o.outage_id DESC LIMIT 1",
    read_only=True,
)

OUTAGE_TICKETS = Query(
    "desk_outage_tickets",
    "MATCH (o:Outage {outage_id: $outage_id})<-[:CAUSED_BY]-(t:Ticket) "
    "RETURN t.ticket_id AS id, t.stage AS stage, t.version AS version, t.issue_kind AS issue, "
    "t.customer AS customer ORDER BY t.ticket_id",
    read_only=True,
)

# The agents' edges on a ticket (OPENED, HANDED_OFF, PICKED_UP), oldest first.
TICKET_AGENT_EDGES = Query(
    "desk_ticket_agent_edges",
    "MATCH (t:Ticket {ticket_id: $id})<-[r]-(a:Agent) "
    "RETURN type(r) AS type, a.name AS agent, r.replica AS replica, r.to_role AS to_role, r.at_ms AS at_ms "
    "ORDER BY r.at_ms, type(r)",
    read_only=True,
)
