"""Cypher of the fault lab.

Two sections. The first runs on the tenant's graph through GraphClient.run, like every other
aggregate: the diagnosis an agent records on a ticket, and the customers the lab may aim at. The
second is the lab's hidden truth (faults, the actions taken against them, the measurements made and
the diagnoses graded). Those queries are only ever run by relay_graph/lab/truth.py on the separate
truth graph (the text here holds no graph name; which graph a query runs on is the runner's
choice, and only truth.py picks the truth graph).

Every event in the truth graph takes the next number of one counter, so "measured after the fix"
is decided by order of events, not by clocks that the simulator may run at any speed."""

from __future__ import annotations

from relay_graph.runtime.queries import Query

# ---------------------------------------------------------------- tenant graph

RECORD_DIAGNOSIS = Query(
    "lab_record_diagnosis",
    "MATCH (t:Ticket {ticket_id: $id}) WHERE t.customer_uid = $uid "
    "SET t.diagnosis = $kind, t.diagnosed_at_ms = $at_ms "
    "RETURN t.ticket_id AS ticket_id, t.customer AS customer",
)

TICKET_DIAGNOSES = Query(
    "lab_ticket_diagnoses",
    "UNWIND $ids AS id MATCH (t:Ticket {ticket_id: id}) RETURN t.ticket_id AS ticket_id, t.diagnosis AS diagnosis",
    read_only=True,
)

# Every connected customer: the pool a blind fault is drawn from (a tenant-wide read on purpose).
CONNECTED_CUSTOMERS = Query(
    "lab_connected_customers",
    "MATCH (c:Customer)-[:CONNECTED_VIA]->(a:NetNode) "
    "RETURN c.name AS customer, c.uid AS uid, a.node_id AS access ORDER BY c.uid",
    read_only=True,
)

# ---------------------------------------------------------------- truth graph (lab/truth.py only)

TRUTH_INDEXES: tuple[tuple[str, str], ...] = (
    ("Fault", "fault_id"),
    ("Fault", "customer_uid"),
    ("Fault", "status"),
    ("Action", "customer_uid"),
    ("Measurement", "customer_uid"),
    ("Diagnosis", "ticket_id"),
    ("Counter", "key"),
)

_NEXT = "MERGE (k:Counter {key: 'events'}) SET k.value = coalesce(k.value, 0) + 1 "

RECORD_FAULT = Query(
    "truth_record_fault",
    _NEXT + "CREATE (f:Fault) SET f += $props, f.status = 'active', f.started_seq = k.value "
    "RETURN f.fault_id AS fault_id, f.started_seq AS seq",
)

# The customer's own active faults and every active network fault (few at a time); the caller
# keeps the network ones that sit on this customer's line.
ACTIVE_FAULTS = Query(
    "truth_active_faults",
    "MATCH (f:Fault {status: 'active'}) WHERE f.customer_uid = $uid OR f.network = true "
    "RETURN f ORDER BY f.started_seq",
    read_only=True,
)

# An action, and its verdict on each fault that was active for the customer when it was taken:
# a fault it repairs turns fixed (only once, however many replicas race to repair it).
RECORD_ACTION = Query(
    "truth_record_action",
    _NEXT + "CREATE (a:Action) SET a += $props, a.seq = k.value "
    "WITH a "
    "UNWIND $verdicts AS v "
    "MATCH (f:Fault {fault_id: v.fault_id}) "
    "WITH a, f, v, f.status = 'active' AND v.repairs AS fixes "
    "CREATE (a)-[:ON {correct: v.repairs}]->(f) "
    "SET f.status = CASE WHEN fixes THEN 'fixed' ELSE f.status END, "
    "f.fixed_seq = CASE WHEN fixes THEN a.seq ELSE f.fixed_seq END, "
    "f.fixed_at_ms = CASE WHEN fixes THEN a.at_ms ELSE f.fixed_at_ms END, "
    "f.fixed_by = CASE WHEN fixes THEN a.action ELSE f.fixed_by END, "
    "f.fixed_by_uid = CASE WHEN fixes THEN a.customer_uid ELSE f.fixed_by_uid END "
    "RETURN a.seq AS seq, collect(CASE WHEN fixes THEN f.fault_id END) AS fixed",
)

RECORD_LONE_ACTION = Query(
    "truth_record_lone_action",
    _NEXT + "CREATE (a:Action) SET a += $props, a.seq = k.value RETURN a.seq AS seq, [] AS fixed",
)

RECORD_MEASUREMENT = Query(
    "truth_record_measurement",
    _NEXT + "CREATE (m:Measurement) SET m += $props, m.seq = k.value "
    "WITH m OPTIONAL MATCH (a:Action {customer_uid: $uid}) "
    "WITH m, max(a.seq) AS last "
    "SET m.after_action_seq = last "
    "RETURN m.seq AS seq",
)

LINK_DIAGNOSIS = Query(
    "truth_link_diagnosis",
    "MERGE (d:Diagnosis {ticket_id: $ticket}) "
    "SET d.customer_uid = $uid, d.kind = $kind, d.at_ms = $at_ms "
    "WITH d UNWIND $fault_ids AS fid "
    "MATCH (f:Fault {fault_id: fid}) "
    "MERGE (d)-[:ABOUT]->(f) "
    "RETURN count(f) AS linked",
)

SCOREBOARD = Query(
    "truth_scoreboard",
    "MATCH (f:Fault) "
    "OPTIONAL MATCH (d:Diagnosis)-[:ABOUT]->(f) "
    "WITH f, collect(DISTINCT d.ticket_id) AS tickets "
    "OPTIONAL MATCH (a:Action)-[o:ON]->(f) "
    "WITH f, tickets, count(a) AS actions, "
    "sum(CASE WHEN a IS NULL OR o.correct THEN 0 ELSE 1 END) AS wrong "
    "OPTIONAL MATCH (m:Measurement {customer_uid: f.fixed_by_uid}) WHERE m.seq > f.fixed_seq "
    "RETURN f, tickets, actions, wrong, count(m) > 0 AS proven ORDER BY f.started_seq",
    read_only=True,
)
