"""Cypher of the desk aggregate: tickets, their timeline, handoffs and claims, fixes and
procedures, technician visits. Every mutation is one statement, so FalkorDB's per-graph write
serialisation makes each one atomic: a conditional SET inside one statement is a compare-and-set.

Conditional writes use `FOREACH (_ IN CASE WHEN cond THEN [1] ELSE [] END | ...)` so that a
statement whose condition fails still returns the ticket (and writes nothing).
Every pattern starts from an indexed node: Ticket.ticket_id, Entity.uid, Procedure.procedure_id /
issue_kind, ProcStep.procedure_id, TechVisit.visit_id, Session.session_id."""

from __future__ import annotations

from relay_graph.runtime.queries import Query

# The columns every ticket-returning statement projects (read by tickets._ticket).
_TICKET = (
    "t.ticket_id AS id, t.stage AS stage, t.version AS version, t.owner AS owner, "
    "t.owner_replica AS owner_replica, t.customer AS customer, t.customer_uid AS customer_uid, "
    "t.issue_kind AS issue, t.summary AS summary, t.session AS session, t.round AS round, "
    "t.opened_at_ms AS opened_at_ms, t.updated_at_ms AS updated_at_ms, t.closed_at_ms AS closed_at_ms"
)


def _event(event: str, detail: str, agent: str = "$agent", customer: str = "null") -> str:
    """Appends one timeline entry; `seq` is the ticket's own counter, so order never depends on
    clocks. Arguments are Cypher expressions written in this module, never caller text. `detail`
    is the staff's words, `customer` the customer's (the workflow's Step)."""
    return (
        "SET t.event_seq = t.event_seq + 1 "
        f"CREATE (t)-[:HAS_EVENT]->(:TicketEvent {{seq: t.event_seq, at_ms: $now, agent: {agent}, "
        f"event: {event}, detail: {detail}, customer: {customer}}})"
    )


_EV_HANDED_OFF = _event("'handed_off'", "$detail", "$giver", "$customer")
_EV_PICKED_UP = _event("'picked_up'", "$detail", customer="$customer")
_EV_RELEASED = _event("'released'", "$detail")
_EV_VISIT_SCHEDULED = _event("'visit_scheduled'", "$tech")


OPEN_TICKET = Query(
    "open_ticket",
    "OPTIONAL MATCH (old:Ticket {ticket_id: $id}) "
    "WITH old "
    "FOREACH (_ IN CASE WHEN old IS NULL THEN [1] ELSE [] END | "
    "  MERGE (c:Entity:Customer {uid: $cuid}) "
    "    ON CREATE SET c.name = $cname, c.name_key = $ckey, c.type = 'Customer', c.created_at_ms = $now "
    "  MERGE (i:Entity:Issue {uid: $iuid}) "
    "    ON CREATE SET i.name = $issue, i.name_key = $issue, i.type = 'Issue', i.created_at_ms = $now "
    "  MERGE (a:Agent {name: $agent}) "
    "  CREATE (c)-[:HAS_TICKET {at_ms: $now}]->(t:Ticket {ticket_id: $id, stage: 'reported', version: 1, "
    "    round: 0, event_seq: 1, opened_at_ms: $now, updated_at_ms: $now, issue_kind: $issue, "
    "    summary: $summary, customer: coalesce(c.name, $cname), customer_uid: $cuid, session: $session, "
    "    opened_by: $agent}) "
    "  CREATE (t)-[:TICKET_ABOUT]->(i) "
    "  CREATE (a)-[:OPENED {at_ms: $now}]->(t) "
    "  CREATE (t)-[:HAS_EVENT]->(:TicketEvent {seq: 1, at_ms: $now, agent: $agent, event: 'opened', "
    "    detail: $summary}) "
    "  FOREACH (sid IN CASE WHEN $session IS NULL THEN [] ELSE [$session] END | "
    "    MERGE (s:Session {session_id: sid}) "
    "    MERGE (c)-[:HAS_SESSION]->(s) "
    "    CREATE (t)-[:OPENED_IN]->(s))"
    ") "
    "WITH old "
    "MATCH (t:Ticket {ticket_id: $id}) "
    f"RETURN {_TICKET}, old IS NULL AS changed",
)

# A handoff identical to the ticket's latest one is a redelivery and writes nothing. Handing off
# releases the ticket if the giving role held it, so the receiving role can claim it.
HAND_OFF = Query(
    "hand_off",
    "MATCH (t:Ticket {ticket_id: $id}) "
    "WITH t, t.stage <> 'closed' AND NOT (coalesce(t.handoff_from, '') = $giver "
    "  AND coalesce(t.handoff_to, '') = $to) AS apply, t.owner = $giver AS giver_owns "
    "FOREACH (_ IN CASE WHEN apply THEN [1] ELSE [] END | "
    "  MERGE (a:Agent {name: $giver}) "
    "  SET t.handoff_seq = coalesce(t.handoff_seq, 0) + 1 "
    "  SET t.version = t.version + 1, t.updated_at_ms = $now, t.handoff_from = $giver, t.handoff_to = $to, "
    "    t.waiting_for = $to, "
    "    t.owner = CASE WHEN giver_owns THEN null ELSE t.owner END, "
    "    t.owner_replica = CASE WHEN giver_owns THEN null ELSE t.owner_replica END "
    "  CREATE (a)-[:HANDED_OFF {at_ms: $now, to_role: $to, seq: t.handoff_seq}]->(t) "
    f"  {_EV_HANDED_OFF}"
    ") "
    f"RETURN {_TICKET}, apply AS changed",
)

# The compare-and-set of the desk. `won`: the caller owns the ticket after this statement;
# `picked`: this statement took it (a new PICKED_UP edge). The same replica claiming again is a
# redelivery (won, not picked). A replica of the owning role may take the ticket over from a named
# dead replica ($take_over) or from one not seen for $lease_ms.
CLAIM = Query(
    "claim",
    "MATCH (t:Ticket {ticket_id: $id}) "
    "WITH t, t.owner = $agent AND t.owner_replica = $replica AS mine, "
    "  t.stage <> 'closed' AND (t.owner IS NULL OR (t.owner = $agent AND t.owner_replica <> $replica AND ("
    "    ($take_over IS NOT NULL AND t.owner_replica = $take_over) OR "
    "    ($lease_ms IS NOT NULL AND coalesce(t.owner_seen_ms, 0) <= $now - $lease_ms)))) AS take, "
    "  t.owner_replica AS before "
    "FOREACH (_ IN CASE WHEN take THEN [1] ELSE [] END | "
    "  MERGE (a:Agent {name: $agent}) "
    "  SET t.owner = $agent, t.owner_replica = $replica, t.owner_since_ms = $now, t.owner_seen_ms = $now, "
    "    t.waiting_for = null "
    "  CREATE (a)-[:PICKED_UP {at_ms: $now, replica: $replica, took_over_from: before}]->(t) "
    f"  {_EV_PICKED_UP}"
    ") "
    "FOREACH (_ IN CASE WHEN mine THEN [1] ELSE [] END | SET t.owner_seen_ms = $now) "
    "RETURN mine OR take AS won, take AS picked, t.owner AS owner, t.owner_replica AS owner_replica",
)

RELEASE = Query(
    "release",
    "MATCH (t:Ticket {ticket_id: $id}) "
    "WITH t, t.owner = $agent AND ($replica IS NULL OR t.owner_replica = $replica) AS apply "
    "FOREACH (_ IN CASE WHEN apply THEN [1] ELSE [] END | "
    "  SET t.owner = null, t.owner_replica = null, t.owner_seen_ms = null, t.updated_at_ms = $now "
    f"  {_EV_RELEASED}"
    ") "
    "RETURN apply AS released",
)

ADD_EVENT = Query(
    "add_event",
    "MATCH (t:Ticket {ticket_id: $id}) "
    "SET t.updated_at_ms = $now, "
    "  t.owner_seen_ms = CASE WHEN t.owner = $agent THEN $now ELSE t.owner_seen_ms END "
    f"{_event('$event', '$detail')} "
    "RETURN t.event_seq AS seq",
)

# Not fixed: the procedures credited with this round's fix each count a failure (their FIXED_BY
# edges stay, marked failed), the owner is cleared and a new round begins, so a later fix of the
# reopened ticket is counted afresh. Confirming a ticket already in the target stage writes nothing.
CONFIRM = Query(
    "confirm",
    "MATCH (t:Ticket {ticket_id: $id}) "
    "WITH t, t.stage <> $target AS apply "
    "OPTIONAL MATCH (t)-[fb:FIXED_BY]->(p:Procedure) WHERE fb.round = t.round "
    "WITH t, apply, collect(fb) AS fbs, collect(p) AS ps "
    "FOREACH (p IN CASE WHEN apply AND NOT $fixed THEN ps ELSE [] END | "
    "  SET p.failures = p.failures + 1, p.last_failure_ms = $now) "
    "FOREACH (r IN CASE WHEN apply AND NOT $fixed THEN fbs ELSE [] END | SET r.failed_at_ms = $now) "
    "FOREACH (_ IN CASE WHEN apply THEN [1] ELSE [] END | "
    "  SET t.stage = $target, t.version = t.version + 1, t.updated_at_ms = $now, "
    "    t.closed_at_ms = CASE WHEN $fixed THEN $now ELSE null END, "
    "    t.owner = CASE WHEN $fixed THEN t.owner ELSE null END, "
    "    t.owner_replica = CASE WHEN $fixed THEN t.owner_replica ELSE null END, "
    "    t.round = t.round + CASE WHEN $fixed THEN 0 ELSE 1 END "
    f"  {_event('$event', '$detail', '$by')}"
    ") "
    f"RETURN {_TICKET}, apply AS changed, "
    "[p IN ps | p.procedure_id] AS procedures",
)

# A fix attempt. The procedure is the same node for the same issue kind and step list
# ($pid is derived from both); its FIRST/NEXT chain is built once, when the node is new.
# Per ticket and round a procedure's outcome counts once: a verified fix once (+1 success,
# FIXED_BY), a failed attempt once and only if nothing was recorded for it in this round.
RECORD_FIX = Query(
    "record_fix",
    "MATCH (t:Ticket {ticket_id: $id}) "
    "OPTIONAL MATCH (old:Procedure {procedure_id: $pid}) "
    "WITH t, old IS NULL AS fresh "
    "MERGE (p:Procedure {procedure_id: $pid}) "
    "  ON CREATE SET p.issue_kind = $issue, p.steps = $steps, p.successes = 0, p.failures = 0, "
    "    p.created_at_ms = $now, p.created_by = $agent "
    "FOREACH (i IN CASE WHEN fresh THEN range(0, size($steps) - 1) ELSE [] END | "
    "  CREATE (:ProcStep {procedure_id: $pid, order: i, action: $steps[i]})) "
    "WITH t, p, fresh "
    "OPTIONAL MATCH (s:ProcStep {procedure_id: $pid}) WHERE fresh "
    "WITH t, p, s ORDER BY s.order "
    "WITH t, p, collect(s) AS ss "
    "FOREACH (i IN range(0, size(ss) - 2) | "
    "  FOREACH (a IN [ss[i]] | FOREACH (b IN [ss[i + 1]] | CREATE (a)-[:NEXT]->(b)))) "
    "FOREACH (a IN ss[0..1] | CREATE (p)-[:FIRST]->(a)) "
    "WITH t, p "
    "OPTIONAL MATCH (t)-[tf:TRIED_FIX]->(p) WHERE tf.round = t.round "
    "WITH t, p, collect(tf.outcome) AS outcomes "
    "WITH t, p, CASE WHEN $verified THEN NOT 'verified' IN outcomes ELSE size(outcomes) = 0 END AS count_it "
    "FOREACH (_ IN CASE WHEN count_it AND $verified THEN [1] ELSE [] END | "
    "  SET p.successes = p.successes + 1, p.last_success_ms = $now "
    "  CREATE (t)-[:FIXED_BY {round: t.round, at_ms: $now, agent: $agent}]->(p)) "
    "FOREACH (_ IN CASE WHEN count_it AND NOT $verified THEN [1] ELSE [] END | "
    "  SET p.failures = p.failures + 1, p.last_failure_ms = $now) "
    "FOREACH (_ IN CASE WHEN count_it THEN [1] ELSE [] END | "
    "  CREATE (t)-[:TRIED_FIX {round: t.round, at_ms: $now, agent: $agent, "
    "    outcome: CASE WHEN $verified THEN 'verified' ELSE 'failed' END}]->(p) "
    "  SET t.updated_at_ms = $now "
    "  FOREACH (_e IN CASE WHEN $event IS NULL THEN [] ELSE [1] END | "
    f"    {_event('$event', '$fix_detail')})"
    ") "
    "RETURN p.procedure_id AS procedure_id, p.issue_kind AS issue_kind, p.steps AS steps, "
    "p.successes AS successes, p.failures AS failures, count_it AS counted",
)

# Smoothed success rate (s+1)/(s+f+2): one success on one try (2/3) ranks above an untried
# procedure would (1/2) and below ten successes out of eleven (11/13). Only procedures that
# fixed something at least once are offered.
BEST_PROCEDURES = Query(
    "best_procedures",
    "MATCH (p:Procedure {issue_kind: $issue}) WHERE p.successes > 0 "
    "WITH p, (p.successes + 1.0) / (p.successes + p.failures + 2.0) AS score "
    "RETURN p.procedure_id AS procedure_id, p.issue_kind AS issue_kind, p.steps AS steps, "
    "p.successes AS successes, p.failures AS failures, score "
    "ORDER BY score DESC, p.successes DESC, p.procedure_id LIMIT $limit",
    read_only=True,
)

# The step list as the FIRST/NEXT chain holds it (the model's source of truth for steps).
PROCEDURE = Query(
    "procedure",
    "MATCH (p:Procedure {procedure_id: $pid}) "
    "OPTIONAL MATCH (p)-[:FIRST]->(f:ProcStep) "
    "OPTIONAL MATCH path = (f)-[:NEXT*0..]->(s:ProcStep) "
    "WITH p, s, length(path) AS d ORDER BY d "
    "RETURN p.procedure_id AS procedure_id, p.issue_kind AS issue_kind, p.successes AS successes, "
    "p.failures AS failures, (p.successes + 1.0) / (p.successes + p.failures + 2.0) AS score, "
    "collect(s.action) AS steps",
    read_only=True,
)

SCHEDULE_VISIT = Query(
    "schedule_visit",
    "MATCH (t:Ticket {ticket_id: $id}) "
    "OPTIONAL MATCH (old:TechVisit {visit_id: $vid}) "
    "WITH t, old IS NULL AS fresh "
    "FOREACH (_ IN CASE WHEN fresh THEN [1] ELSE [] END | "
    "  MERGE (tech:Technician {name: $tech}) "
    "  CREATE (tech)-[:VISITS]->(v:TechVisit {visit_id: $vid, ticket_id: $id, technician: $tech, "
    "    at_ms: $at, scheduled_at_ms: $now, status: 'scheduled', booked_by: $agent})-[:FOR_TICKET]->(t) "
    "  SET t.updated_at_ms = $now "
    "  FOREACH (_e IN CASE WHEN $note THEN [1] ELSE [] END | "
    f"    {_EV_VISIT_SCHEDULED})"
    ") "
    "WITH t, fresh "
    "MATCH (v:TechVisit {visit_id: $vid}) "
    "RETURN v.visit_id AS visit_id, v.ticket_id AS ticket_id, v.technician AS technician, v.at_ms AS at_ms, "
    "v.scheduled_at_ms AS scheduled_at_ms, v.status AS status, fresh AS changed",
)

# The workflow's steps (desk/tickets/workflow: what a transition returns), written in order in one
# statement with the stage move (when $stage is set) and the working state (when $work is set).
# With $expected a ticket whose version moved on is left alone; a closed ticket moves only to
# `reopened`. Nothing is written then (changed false), the steps neither.
WRITE_STEPS = Query(
    "write_steps",
    "MATCH (t:Ticket {ticket_id: $id}) "
    "WITH t, t.event_seq AS base, ($expected IS NULL OR t.version = $expected) AND ($stage IS NULL OR "
    "  (t.stage <> $stage AND (t.stage <> 'closed' OR $stage = 'reopened'))) AS apply "
    "FOREACH (_ IN CASE WHEN apply AND $stage IS NOT NULL THEN [1] ELSE [] END | "
    "  SET t.stage = $stage, t.version = t.version + 1, "
    "    t.closed_at_ms = CASE $stage WHEN 'closed' THEN $now WHEN 'reopened' THEN null ELSE t.closed_at_ms END, "
    "    t.owner = CASE $stage WHEN 'reopened' THEN null ELSE t.owner END, "
    "    t.owner_replica = CASE $stage WHEN 'reopened' THEN null ELSE t.owner_replica END, "
    "    t.round = t.round + CASE $stage WHEN 'reopened' THEN 1 ELSE 0 END) "
    "FOREACH (i IN CASE WHEN apply THEN range(0, size($events) - 1) ELSE [] END | "
    "  CREATE (t)-[:HAS_EVENT]->(:TicketEvent {seq: base + i + 1, at_ms: $now, agent: $agent, event: $events[i], "
    "    detail: $staff[i], customer: $customer[i]})) "
    "FOREACH (_ IN CASE WHEN apply THEN [1] ELSE [] END | "
    "  SET t.event_seq = base + size($events), t.updated_at_ms = $now, "
    "    t.owner_seen_ms = CASE WHEN t.owner = $agent THEN $now ELSE t.owner_seen_ms END, "
    "    t.work = CASE WHEN $work IS NULL THEN t.work ELSE $work END) "
    f"RETURN {_TICKET}, apply AS changed",
)

# A booked visit done or cancelled (only a `scheduled` one moves; a repeat writes nothing).
SET_VISIT_STATUS = Query(
    "set_visit_status",
    "MATCH (v:TechVisit {visit_id: $vid}) WHERE v.ticket_id = $id "
    "WITH v, v.status = 'scheduled' AS apply "
    "FOREACH (_ IN CASE WHEN apply THEN [1] ELSE [] END | "
    "  SET v.status = $status, v.settled_at_ms = $at, v.settled_by = $agent) "
    "RETURN v.visit_id AS visit_id, v.ticket_id AS ticket_id, v.technician AS technician, v.at_ms AS at_ms, "
    "v.scheduled_at_ms AS scheduled_at_ms, v.status AS status, apply AS changed",
)

# A ticket's visits, for the workflow's state (without reading its timeline).
TICKET_VISITS = Query(
    "ticket_visits",
    "MATCH (t:Ticket {ticket_id: $id})<-[:FOR_TICKET]-(v:TechVisit) "
    "RETURN v.visit_id AS visit_id, v.ticket_id AS ticket_id, v.technician AS technician, v.at_ms AS at_ms, "
    "v.scheduled_at_ms AS scheduled_at_ms, v.status AS status ORDER BY v.at_ms, v.visit_id",
    read_only=True,
)

# One escalation by its id (a ticket's for a round), to tell a repeat from a new one.
ESCALATION = Query(
    "escalation",
    "MATCH (t:Ticket {ticket_id: $id})-[:ESCALATED]->(e:Escalation {escalation_id: $eid}) "
    "RETURN e.escalation_id AS escalation_id, e.ticket_id AS ticket_id, e.round AS round, e.reason AS reason, "
    "e.to AS to, e.agent AS agent, e.at_ms AS at_ms, t.priority AS priority",
    read_only=True,
)

PEEK_TICKET = Query(
    "peek_ticket",
    f"MATCH (t:Ticket {{ticket_id: $id}}) RETURN {_TICKET}",
    read_only=True,
)

GET_TICKET = Query(
    "get_ticket",
    "MATCH (t:Ticket {ticket_id: $id}) "
    "OPTIONAL MATCH (t)-[:HAS_EVENT]->(e:TicketEvent) "
    "WITH t, e ORDER BY e.seq "
    "WITH t, collect({seq: e.seq, at_ms: e.at_ms, agent: e.agent, event: e.event, detail: e.detail, "
    "  customer: e.customer}) AS events "
    "OPTIONAL MATCH (t)<-[h:HANDED_OFF]-(a:Agent) "
    "WITH t, events, h, a ORDER BY h.seq "
    "WITH t, events, collect({seq: h.seq, giver: a.name, to: h.to_role, at_ms: h.at_ms}) AS handoffs "
    "OPTIONAL MATCH (t)<-[:FOR_TICKET]-(v:TechVisit) "
    "WITH t, events, handoffs, collect({visit_id: v.visit_id, ticket_id: v.ticket_id, technician: v.technician, "
    "  at_ms: v.at_ms, scheduled_at_ms: v.scheduled_at_ms, status: v.status}) AS visits "
    "OPTIONAL MATCH (t)-[fb:FIXED_BY]->(p:Procedure) WHERE fb.round = t.round AND fb.failed_at_ms IS NULL "
    f"RETURN {_TICKET}, events, handoffs, visits, collect(p.procedure_id) AS fixed_by",
    read_only=True,
)

_SUMMARY = (
    "t.ticket_id AS id, t.stage AS stage, t.version AS version, t.owner AS owner, t.customer AS customer, "
    "t.issue_kind AS issue, t.opened_at_ms AS opened_at_ms, t.updated_at_ms AS updated_at_ms"
)

LIST_TICKETS = Query(
    "list_tickets",
    "MATCH (t:Ticket) WHERE NOT $open_only OR t.stage <> 'closed' "
    f"RETURN {_SUMMARY} ORDER BY t.opened_at_ms DESC, t.ticket_id LIMIT $limit",
    read_only=True,
)

LIST_TICKETS_FOR_CUSTOMER = Query(
    "list_tickets_for_customer",
    "MATCH (c:Entity {uid: $cuid})-[:HAS_TICKET]->(t:Ticket) WHERE NOT $open_only OR t.stage <> 'closed' "
    f"RETURN {_SUMMARY} ORDER BY t.opened_at_ms DESC, t.ticket_id LIMIT $limit",
    read_only=True,
)

# The resolver's working state (relay_graph.desk.tickets.work.Work as JSON): read and written whole by
# the ticket's holder; `work_fixed` counts the proofs, so the invariant finds tickets cheaply.
TICKET_WORK = Query(
    "ticket_work",
    "MATCH (t:Ticket {ticket_id: $id}) RETURN t.work AS work",
    read_only=True,
)

SET_TICKET_WORK = Query(
    "set_ticket_work",
    "MATCH (t:Ticket {ticket_id: $id}) SET t.work = $work RETURN t.ticket_id AS id",
)

# An escalation is graph state: an Escalation node per ticket and round, the ticket's priority raised.
ESCALATE = Query(
    "escalate_ticket",
    "MATCH (t:Ticket {ticket_id: $id}) "
    "MERGE (e:Escalation {escalation_id: $eid}) "
    "ON CREATE SET e.ticket_id = t.ticket_id, e.round = t.round, e.reason = $reason, e.to = $to, "
    "e.agent = $agent, e.at_ms = $now "
    "MERGE (t)-[:ESCALATED]->(e) "
    "SET t.priority = $priority "
    "RETURN e.escalation_id AS escalation_id, e.ticket_id AS ticket_id, e.round AS round, e.reason AS reason, "
    "e.to AS to, e.agent AS agent, e.at_ms AS at_ms, t.priority AS priority",
)

# Every ticket with the rounds in which it moved to `fixed` and its working state (the invariant).
FIXED_TICKETS = Query(
    "fixed_tickets",
    "MATCH (t:Ticket)-[:HAS_EVENT]->(ev:TicketEvent {event: 'fixed'}) "
    "WITH t, collect(ev.seq) AS fixed_seqs "
    "OPTIONAL MATCH (t)-[:HAS_EVENT]->(r:TicketEvent) WHERE r.event IN ['reopened', 'confirmed_not_fixed'] "
    "RETURN t.ticket_id AS id, fixed_seqs, collect(r.seq) AS round_seqs, t.work AS work",
    read_only=True,
)
