"""Cypher of moving a customer's case from one regional desk (tenant graph) to another.

Reads run on the source graph (and the same reads on the target, to see what is there already);
writes run on the target, each MERGEd on the source's own ids (fact_id, episode_id, ticket_id,
conflict_id, session_id, Slot.key, Entity.uid), so a repeated move finds everything in place and
creates nothing. Every read starts from the customer's indexed Entity.uid (or an indexed id).

Shape added by a move:

    source: (:Entity:Customer)-[:CASE_MOVED]->(:CaseMove {move_id, direction: 'out', from_region,
             to_region, at_ms, by}); each open ticket gets a TicketEvent {event: 'moved_desk', move_id}
    target: (:Entity:Customer)-[:CASE_ARRIVED]->(:CaseMove {move_id, direction: 'in', ...})

Labels and relationship types placed into Cypher text come only from code constants: the fact
states, the registry's entity types and mirror edges (as registered when first used), the episode kinds.
"""

from __future__ import annotations

from relay_graph.memory.predicates import OBJECT_TYPES
from relay_graph.memory.registry import REGISTRY, FromRegistry, entity_types
from relay_graph.runtime.queries import Query
from relay_graph.memory.queries.episodes import KINDS

FACT_STATES: dict[str, str] = {"current": "Current", "superseded": "Superseded", "retired": "Retired",
                               "claim": "Claim"}


def mirror_types() -> list[str]:
    """Edges that hang off the customer with a fact_id: a current fact's mirror, or WAS for an ended one."""
    return sorted({p.edge for p in REGISTRY.values()} | {"WAS"})


def movable_entity_types() -> list[str]:
    """Entity labels a moved case may carry (facts' subjects and objects, tickets' issues, topics,
    the objects of a tenant's own predicates; their mirror edges are the source tenant's vocabulary
    and stay behind)."""
    return sorted(entity_types() | {"Customer", "Issue", "Topic"} | set(OBJECT_TYPES.values()))


_STATE = ("CASE WHEN f:Current THEN 'current' WHEN f:Claim THEN 'claim' "
          "WHEN f:Retired THEN 'retired' ELSE 'superseded' END")

# ------------------------------------------------------------------------------------------ reads

CUSTOMER = Query(
    "case_customer",
    "MATCH (c:Entity {uid: $uid}) RETURN properties(c) AS props",
    read_only=True,
)

FACTS = Query(
    "case_facts",
    "MATCH (c:Entity {uid: $uid})<-[:ABOUT {role: 'subject'}]-(f:Fact) "
    "MATCH (f)-[:ABOUT {role: 'object'}]->(o:Entity) "
    "OPTIONAL MATCH (f)-[:SUPERSEDES]->(x:Fact) "
    f"WITH f, o, {_STATE} AS state, collect(x.fact_id) AS supersedes "
    "RETURN properties(f) AS props, state, properties(o) AS object, supersedes",
    read_only=True,
)

SLOTS = Query(
    "case_slots",
    "UNWIND $keys AS k MATCH (s:Slot {key: k}) RETURN properties(s) AS props",
    read_only=True,
)

CONFLICTS = Query(
    "case_conflicts",
    "MATCH (c:Entity {uid: $uid})<-[:ABOUT {role: 'subject'}]-(:Fact)<-[:BETWEEN]-(k:Conflict) "
    "WITH DISTINCT k "
    "OPTIONAL MATCH (k)-[:BETWEEN]->(b:Fact) "
    "WITH k, collect(b.fact_id) AS between "
    "OPTIONAL MATCH (k)-[:SETTLED_FOR]->(w:Fact) "
    "RETURN properties(k) AS props, between, collect(w.fact_id) AS settled_for",
    read_only=True,
)

MIRRORS = Query(
    "case_mirrors",
    "MATCH (c:Entity {uid: $uid})-[r]->(o:Entity) WHERE r.fact_id IS NOT NULL "
    "RETURN type(r) AS type, properties(r) AS props, o.uid AS o_uid",
    read_only=True,
)

SESSIONS = Query(
    "case_sessions",
    "MATCH (c:Entity {uid: $uid})-[:HAS_SESSION]->(s:Session) "
    "OPTIONAL MATCH (s)-[:FOLLOWED_BY]->(n:Session) "
    "RETURN properties(s) AS props, collect(n.session_id) AS next",
    read_only=True,
)

EPISODES = Query(
    "case_episodes",
    "MATCH (c:Entity {uid: $uid})-[:HAS_SESSION]->(s:Session)<-[i:IN]-(ep:Episode) "
    "OPTIONAL MATCH (a:Agent)-[:WROTE]->(ep) "
    "WITH s, i, ep, collect(a.name) AS writers "
    "OPTIONAL MATCH (ep)-[:MENTIONS]->(m:Entity) "
    "WITH s, i, ep, writers, collect(m.uid) AS mentions "
    "OPTIONAL MATCH (ep)-[:DERIVED]->(d:Fact) "
    "WITH s, i, ep, writers, mentions, collect(d.fact_id) AS derived "
    "OPTIONAL MATCH (ep)-[:RETIRED]->(r:Fact) "
    "WITH s, i, ep, writers, mentions, derived, collect(r.fact_id) AS retired "
    "OPTIONAL MATCH (ep)-[:SPOKEN_BY]->(sb:Speaker) "
    "WITH s, i, ep, writers, mentions, derived, retired, "
    "  collect(CASE WHEN sb IS NULL THEN null ELSE [sb.key, sb.name] END) AS spoken_by "
    "OPTIONAL MATCH (ep)-[:NAMES]->(nm:Speaker) "
    "RETURN properties(ep) AS props, ep.kind AS kind, properties(i) AS in_props, s.session_id AS session, "
    "writers, mentions, derived, retired, spoken_by, "
    "collect(CASE WHEN nm IS NULL THEN null ELSE [nm.key, nm.name] END) AS names",
    read_only=True,
)

TICKETS = Query(
    "case_tickets",
    "MATCH (c:Entity {uid: $uid})-[h:HAS_TICKET]->(t:Ticket) "
    "OPTIONAL MATCH (t)-[:TICKET_ABOUT]->(i:Entity) "
    "OPTIONAL MATCH (t)-[:OPENED_IN]->(os:Session) "
    "WITH h, t, i, os "
    "OPTIONAL MATCH (t)-[:HAS_EVENT]->(e:TicketEvent) "
    "WITH h, t, i, os, collect(CASE WHEN e IS NULL THEN null ELSE properties(e) END) AS events "
    "OPTIONAL MATCH (ag:Agent)-[r]->(t) WHERE type(r) IN ['OPENED', 'HANDED_OFF', 'PICKED_UP'] "
    "WITH h, t, i, os, events, "
    "  collect(CASE WHEN r IS NULL THEN null ELSE [type(r), ag.name, properties(r)] END) AS by_agents "
    "OPTIONAL MATCH (tech:Technician)-[:VISITS]->(v:TechVisit)-[:FOR_TICKET]->(t) "
    "RETURN properties(t) AS props, properties(h) AS has, properties(i) AS issue, os.session_id AS opened_in, "
    "events, by_agents, collect(CASE WHEN v IS NULL THEN null ELSE [tech.name, properties(v)] END) AS visits",
    read_only=True,
)

# What the target holds already of the case's ids.
EXISTING = Query(
    "case_existing",
    "CALL { UNWIND $episodes AS id MATCH (e:Episode {episode_id: id}) RETURN collect(id) AS episodes } "
    "CALL { UNWIND $tickets AS id MATCH (t:Ticket {ticket_id: id}) "
    "       RETURN collect([id, t.customer_uid]) AS tickets } "
    "RETURN episodes, tickets",
    read_only=True,
)

# ----------------------------------------------------------------------------------------- writes

ENTITIES: FromRegistry[Query] = FromRegistry(lambda: {
    t: Query(
        f"case_entities:{t}",
        "UNWIND $rows AS e "
        "MERGE (n:Entity {uid: e.uid}) "
        f"  ON CREATE SET n:{t}, n += e.props "
        "RETURN count(n) AS n",
    )
    for t in movable_entity_types()
})

WRITE_SLOTS = Query(
    "case_write_slots",
    "UNWIND $rows AS r MERGE (s:Slot {key: r.key}) ON CREATE SET s += r.props RETURN count(s) AS n",
)

WRITE_FACTS: dict[str, Query] = {
    state: Query(
        f"case_write_facts:{state}",
        "UNWIND $rows AS r "
        "MATCH (s:Entity {uid: r.subject_uid}) "
        "MATCH (o:Entity {uid: r.object_uid}) "
        "MERGE (a:Agent {name: r.agent}) "
        "MERGE (f:Fact {fact_id: r.fact_id}) "
        f"  ON CREATE SET f:{label}, f += r.props "
        "MERGE (f)-[:ABOUT {role: 'subject'}]->(s) "
        "MERGE (f)-[:ABOUT {role: 'object'}]->(o) "
        "MERGE (f)-[:WRITTEN_BY]->(a) "
        "RETURN count(f) AS n",
    )
    for state, label in FACT_STATES.items()
}

WRITE_SUPERSEDES = Query(
    "case_write_supersedes",
    "UNWIND $rows AS r "
    "MATCH (a:Fact {fact_id: r.a}) MATCH (b:Fact {fact_id: r.b}) "
    "MERGE (a)-[:SUPERSEDES]->(b) RETURN count(*) AS n",
)

WRITE_MIRRORS: FromRegistry[Query] = FromRegistry(lambda: {
    t: Query(
        f"case_write_mirrors:{t}",
        "MATCH (s:Entity {uid: $uid}) "
        "UNWIND $rows AS r "
        "MATCH (o:Entity {uid: r.o_uid}) "
        f"MERGE (s)-[e:{t} {{fact_id: r.fact_id}}]->(o) "
        "  ON CREATE SET e += r.props "
        "RETURN count(e) AS n",
    )
    for t in mirror_types()
})

# Conflicts and their links in one statement, phases joined by an aggregate. No per-row CALL
# subquery: FalkorDB 4.16 runs a writing CALL { WITH r ... } for the first outer row only, so the
# links come as their own flat lists (one row per link, carrying its conflict's id).
WRITE_CONFLICTS = Query(
    "case_write_conflicts",
    "UNWIND $rows AS r "
    "MERGE (k:Conflict {conflict_id: r.conflict_id}) ON CREATE SET k += r.props "
    "WITH count(*) AS _ "
    "UNWIND $between AS r "
    "MATCH (k:Conflict {conflict_id: r.conflict}) MATCH (x:Fact {fact_id: r.fact}) "
    "MERGE (k)-[:BETWEEN]->(x) "
    "WITH count(*) AS _ "
    "UNWIND $settled_for AS r "
    "MATCH (k:Conflict {conflict_id: r.conflict}) MATCH (x:Fact {fact_id: r.fact}) "
    "MERGE (k)-[:SETTLED_FOR]->(x) "
    "RETURN count(*) AS n",
)

# Sessions and episodes in one statement (phases joined by an aggregate, as queries/episodes.py).
# An Episode gets its kind label first and its properties and stored vector last, once, when new
# (no text_key yet): FalkorDB 4.16 leaves a stale vector-index entry when a node with a vector is SET
# again. An episode whose vector was deferred and is not there yet moves without one.
_LABEL_ON_CREATE = " ".join(
    f"FOREACH (_ IN CASE WHEN ep.text_key IS NULL AND e.kind = '{kind}' THEN [1] ELSE [] END | SET ep:{kind})"
    for kind in KINDS
)

WRITE_EPISODES = Query(
    "case_write_episodes",
    "MATCH (c:Entity {uid: $uid}) "
    "UNWIND $sessions AS so "
    "MERGE (s:Session {session_id: so.session_id}) ON CREATE SET s += so "
    "MERGE (c)-[:HAS_SESSION]->(s) "
    "WITH count(*) AS _ "
    "UNWIND $follows AS fl "
    "MATCH (a:Session {session_id: fl.a}) MATCH (b:Session {session_id: fl.b}) "
    "MERGE (a)-[:FOLLOWED_BY]->(b) "
    "WITH count(*) AS _ "
    "UNWIND $episodes AS e "
    "MATCH (s:Session {session_id: e.session}) "
    "MERGE (ep:Episode {episode_id: e.id}) "
    f"{_LABEL_ON_CREATE} "
    "FOREACH (_ IN CASE WHEN ep.text_key IS NULL THEN [1] ELSE [] END | "
    "  SET ep += e.props, ep.embedding = CASE WHEN e.vec IS NULL THEN null ELSE vecf32(e.vec) END) "
    "MERGE (ep)-[i:IN]->(s) ON CREATE SET i += e.in_props "
    "FOREACH (w IN e.writers | MERGE (ag:Agent {name: w}) MERGE (ag)-[:WROTE]->(ep)) "
    "WITH count(*) AS _ "
    "UNWIND $mentions AS mn "
    "MATCH (ep:Episode {episode_id: mn.ep}) MATCH (m:Entity {uid: mn.uid}) "
    "MERGE (ep)-[:MENTIONS]->(m) "
    "WITH count(*) AS _ "
    "UNWIND $derived AS d "
    "MATCH (ep:Episode {episode_id: d.ep}) MATCH (f:Fact {fact_id: d.fact}) "
    "MERGE (ep)-[:DERIVED]->(f) "
    "WITH count(*) AS _ "
    "UNWIND $retired AS d "
    "MATCH (ep:Episode {episode_id: d.ep}) MATCH (f:Fact {fact_id: d.fact}) "
    "MERGE (ep)-[:RETIRED]->(f) "
    # who said them and which speakers their words name (Speaker.key, as queries/episodes.py)
    "WITH count(*) AS _ "
    "UNWIND $speakers AS sk "
    "MERGE (sp:Speaker {key: sk.key}) ON CREATE SET sp.name = sk.name "
    "WITH count(*) AS _ "
    "UNWIND $spoken AS sb "
    "MATCH (ep:Episode {episode_id: sb.ep}) MATCH (sp:Speaker {key: sb.key}) "
    "MERGE (ep)-[:SPOKEN_BY]->(sp) "
    "WITH count(*) AS _ "
    "UNWIND $names AS nm "
    "MATCH (ep:Episode {episode_id: nm.ep}) MATCH (sp:Speaker {key: nm.key}) "
    "MERGE (ep)-[:NAMES]->(sp) "
    "RETURN count(*) AS n",
)

# Tickets and everything hanging off them in one statement (atomic), phases joined by an aggregate.
# Each kind of link is its own flat list, one row per link carrying its ticket's id, and each phase
# starts from the indexed Ticket.ticket_id: FalkorDB 4.16 runs a writing CALL { WITH x, t ... }
# subquery for the first outer row only, which lost every later ticket's timeline and handoffs.
WRITE_TICKETS = Query(
    "case_write_tickets",
    "MATCH (c:Entity {uid: $uid}) "
    "UNWIND $tickets AS x "
    "MERGE (t:Ticket {ticket_id: x.id}) ON CREATE SET t += x.props "
    "MERGE (c)-[h:HAS_TICKET]->(t) ON CREATE SET h += x.has "
    "WITH count(*) AS _ "
    "UNWIND $issues AS r "
    "MATCH (t:Ticket {ticket_id: r.ticket}) MATCH (i:Entity {uid: r.uid}) "
    "MERGE (t)-[:TICKET_ABOUT]->(i) "
    "WITH count(*) AS _ "
    "UNWIND $opened_in AS r "
    "MATCH (t:Ticket {ticket_id: r.ticket}) MATCH (s:Session {session_id: r.session}) "
    "MERGE (t)-[:OPENED_IN]->(s) "
    "WITH count(*) AS _ "
    "UNWIND $events AS r "
    "MATCH (t:Ticket {ticket_id: r.ticket}) "
    "MERGE (t)-[:HAS_EVENT]->(e:TicketEvent {seq: r.props.seq}) ON CREATE SET e += r.props "
    "WITH count(*) AS _ "
    "UNWIND $opened AS r "
    "MATCH (t:Ticket {ticket_id: r.ticket}) MERGE (a:Agent {name: r.agent}) "
    "MERGE (a)-[e:OPENED]->(t) ON CREATE SET e += r.props "
    "WITH count(*) AS _ "
    "UNWIND $handoffs AS r "
    "MATCH (t:Ticket {ticket_id: r.ticket}) MERGE (a:Agent {name: r.agent}) "
    "MERGE (a)-[e:HANDED_OFF {seq: r.key}]->(t) ON CREATE SET e += r.props "
    "WITH count(*) AS _ "
    "UNWIND $pickups AS r "
    "MATCH (t:Ticket {ticket_id: r.ticket}) MERGE (a:Agent {name: r.agent}) "
    "MERGE (a)-[e:PICKED_UP {at_ms: r.key}]->(t) ON CREATE SET e += r.props "
    "WITH count(*) AS _ "
    "UNWIND $visits AS r "
    "MATCH (t:Ticket {ticket_id: r.ticket}) "
    "MERGE (v:TechVisit {visit_id: r.props.visit_id}) ON CREATE SET v += r.props "
    "MERGE (tech:Technician {name: r.tech}) "
    "MERGE (tech)-[:VISITS]->(v) "
    "MERGE (v)-[:FOR_TICKET]->(t) "
    "RETURN count(*) AS n",
)

# The marks. A move's id is derived from (source, target, customer), so marking again finds it.
MARK_ARRIVED = Query(
    "case_mark_arrived",
    "MATCH (c:Entity {uid: $uid}) "
    "MERGE (m:CaseMove {move_id: $move_id}) "
    "  ON CREATE SET m.direction = 'in', m.customer_uid = $uid, m.from_region = $from_region, "
    "    m.to_region = $to_region, m.at_ms = $now, m.by = $by "
    "MERGE (c)-[:CASE_ARRIVED]->(m) "
    "RETURN m.at_ms AS at_ms",
)

MARK_MOVED = Query(
    "case_mark_moved",
    "MATCH (c:Entity {uid: $uid}) "
    "MERGE (m:CaseMove {move_id: $move_id}) "
    "  ON CREATE SET m.direction = 'out', m.customer_uid = $uid, m.from_region = $from_region, "
    "    m.to_region = $to_region, m.at_ms = $now, m.by = $by "
    "MERGE (c)-[:CASE_MOVED]->(m) "
    "WITH c, m "
    "OPTIONAL MATCH (c)-[:HAS_TICKET]->(t:Ticket) "
    "WITH m, t, t IS NOT NULL AND t.stage <> 'closed' AND coalesce(t.move_id, '') <> $move_id AS apply "
    "FOREACH (_ IN CASE WHEN apply THEN [1] ELSE [] END | "
    "  SET t.move_id = $move_id, t.moved_to_region = $to_region, t.updated_at_ms = $now, "
    "    t.event_seq = t.event_seq + 1 "
    "  CREATE (t)-[:HAS_EVENT]->(:TicketEvent {seq: t.event_seq, at_ms: $now, agent: $by, event: 'moved_desk', "
    "    detail: $detail, move_id: $move_id})) "
    "RETURN m.at_ms AS at_ms, sum(CASE WHEN apply THEN 1 ELSE 0 END) AS marked",
)

# A customer's move marks, newest first (source: out, target: in).
MOVES_OF = Query(
    "case_moves_of",
    "MATCH (c:Entity {uid: $uid})-[r:CASE_MOVED|CASE_ARRIVED]->(m:CaseMove) "
    "RETURN properties(m) AS props ORDER BY m.at_ms DESC",
    read_only=True,
)
