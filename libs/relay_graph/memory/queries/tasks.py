"""Cypher of tasks: work any agent opens, hands to another and claims.

(:Agent {name})-[:OPENED {at_ms}]->(:Task {task_id, title, about, state, owner, owner_replica,
waiting_for, version, opened_at_ms, updated_at_ms, done_at_ms, handoff_seq})-[:TASK_ABOUT]->(:Entity),
(:Agent)-[:HANDED_OFF {at_ms, to_role, seq}]->(:Task), (:Agent)-[:PICKED_UP {at_ms, replica}]->(:Task):
the same edges the desk's tickets carry, so "who handed what to whom" reads alike for both.

A claim is one statement (FalkorDB runs a graph's writes one at a time): of N racing claims, the
first to run finds no owner and takes the task; the others find it taken."""

from __future__ import annotations

from relay_graph.runtime.queries import Query
from relay_graph.runtime.queries.schema import Indexes, declare

declare("relay_graph.memory.tasks", Indexes(range=(("Task", "task_id"), ("Task", "state"))))

_TASK = (
    "t.task_id AS task_id, t.title AS title, t.about AS about, t.state AS state, t.owner AS owner, "
    "t.owner_replica AS replica, t.waiting_for AS waiting_for, t.version AS version, "
    "t.opened_at_ms AS opened_at_ms, t.updated_at_ms AS updated_at_ms, t.done_at_ms AS done_at_ms, "
    "t.opened_by AS opened_by"
)

# `about` links the task to the subject it names ($about_uid: the entity a fact about it would be
# about), when that subject is on file; otherwise it stays text only.
OPEN = Query(
    "task_open",
    "MERGE (a:Agent {name: $agent}) "
    "CREATE (a)-[:OPENED {at_ms: $now}]->(t:Task {task_id: $id, title: $title, about: $about, state: 'open', "
    "  owner: null, waiting_for: $for, version: 1, opened_at_ms: $now, updated_at_ms: $now, opened_by: $agent, "
    "  handoff_seq: CASE WHEN $for IS NULL THEN 0 ELSE 1 END}) "
    # opened for an agent: handed to it at once, an edge as a later handoff is
    "FOREACH (_ IN CASE WHEN $for IS NULL THEN [] ELSE [1] END | "
    "  CREATE (a)-[:HANDED_OFF {at_ms: $now, to_role: $for, seq: 1}]->(t)) "
    "WITH t "
    "OPTIONAL MATCH (e:Entity {uid: $about_uid}) "
    "FOREACH (_ IN CASE WHEN e IS NULL THEN [] ELSE [1] END | CREATE (t)-[:TASK_ABOUT]->(e)) "
    f"RETURN {_TASK}, e.name AS about_id",
)

GET = Query(
    "task_get",
    "MATCH (t:Task {task_id: $id}) "
    "OPTIONAL MATCH (t)-[:TASK_ABOUT]->(e:Entity) "
    f"RETURN {_TASK}, e.name AS about_id",
    read_only=True,
)

# The task's trail: who opened, handed off and picked it up, oldest first.
TRAIL = Query(
    "task_trail",
    "MATCH (t:Task {task_id: $id})<-[r:OPENED|HANDED_OFF|PICKED_UP]-(a:Agent) "
    "RETURN type(r) AS kind, a.name AS agent, r.at_ms AS at_ms, r.to_role AS to, r.replica AS replica "
    "ORDER BY r.at_ms, coalesce(r.seq, 0)",
    read_only=True,
)

LIST = Query(
    "task_list",
    "MATCH (t:Task) "
    "WHERE ($state IS NULL OR t.state = $state) AND ($for IS NULL OR t.waiting_for = $for OR t.owner = $for) "
    "OPTIONAL MATCH (t)-[:TASK_ABOUT]->(e:Entity) "
    f"RETURN {_TASK}, e.name AS about_id ORDER BY t.updated_at_ms DESC LIMIT $limit",
    read_only=True,
)

# Handing off releases the task (a handoff is "yours now, not mine"); a done task stays done, and a
# claimed one is its owner's to hand on. A handoff to the agent it already waits for is a repeat.
HAND_OFF = Query(
    "task_hand_off",
    "MATCH (t:Task {task_id: $id}) "
    "WITH t, t.state <> 'done' AND coalesce(t.waiting_for, '') <> $to "
    "  AND (t.owner IS NULL OR t.owner = $agent) AS apply "
    "FOREACH (_ IN CASE WHEN apply THEN [1] ELSE [] END | "
    "  MERGE (a:Agent {name: $agent}) "
    "  SET t.handoff_seq = t.handoff_seq + 1, t.version = t.version + 1, t.updated_at_ms = $now, "
    "    t.waiting_for = $to, t.owner = null, t.owner_replica = null, t.state = 'open' "
    "  CREATE (a)-[:HANDED_OFF {at_ms: $now, to_role: $to, seq: t.handoff_seq}]->(t)) "
    "WITH t, apply "
    "OPTIONAL MATCH (t)-[:TASK_ABOUT]->(e:Entity) "
    f"RETURN {_TASK}, e.name AS about_id, apply AS changed",
)

# The compare-and-set. `won`: the caller holds the task after this statement; `picked`: this
# statement took it. A task handed to an agent is that agent's to take; an open one anybody's.
CLAIM = Query(
    "task_claim",
    "MATCH (t:Task {task_id: $id}) "
    "WITH t, t.owner = $agent AND coalesce(t.owner_replica, '') = $replica AS mine, "
    "  t.state = 'open' AND t.owner IS NULL AND (t.waiting_for IS NULL OR t.waiting_for = $agent) AS take "
    "FOREACH (_ IN CASE WHEN take THEN [1] ELSE [] END | "
    "  MERGE (a:Agent {name: $agent}) "
    "  SET t.owner = $agent, t.owner_replica = $replica, t.state = 'claimed', t.waiting_for = null, "
    "    t.version = t.version + 1, t.updated_at_ms = $now "
    "  CREATE (a)-[:PICKED_UP {at_ms: $now, replica: $replica}]->(t)) "
    "WITH t, mine, take "
    "OPTIONAL MATCH (t)-[:TASK_ABOUT]->(e:Entity) "
    f"RETURN {_TASK}, e.name AS about_id, mine OR take AS won, take AS picked",
)

DONE = Query(
    "task_done",
    "MATCH (t:Task {task_id: $id}) "
    "WITH t, t.state = 'claimed' AND t.owner = $agent AS apply "
    "FOREACH (_ IN CASE WHEN apply THEN [1] ELSE [] END | "
    "  SET t.state = 'done', t.done_at_ms = $now, t.version = t.version + 1, t.updated_at_ms = $now) "
    "WITH t, apply "
    "OPTIONAL MATCH (t)-[:TASK_ABOUT]->(e:Entity) "
    f"RETURN {_TASK}, e.name AS about_id, apply AS changed",
)
