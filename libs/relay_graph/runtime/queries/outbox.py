"""Cypher of the outbox (outbox.py): announcements kept in a tenant's graph until they are on their
stream. An `Outbox` node holds one notification: its id and its payload (the JSON that travels on
the stream). A chat turn's node is written by the statement that numbers the turn
(queries/chat.py ASSIGN_SEQ) and carries the turn's fields instead of a payload, because its
version (the turn's number) is only known inside that statement.

Every pattern starts from the Outbox label: a handful of nodes at most, each leaving as soon as it
is published. They carry no index: a node made and deleted with every write would leave garbage in
one in every tenant written to, and FalkorDB collects an index's garbage in a forked process (a
fork of the whole server)."""

from __future__ import annotations

from relay_graph.runtime.queries import Query

# The announcements of one write, kept before they are published; the same statement takes out
# those this process published since its last write ($done), so a published announcement costs no
# graph write of its own.
KEEP = Query(
    "outbox_keep",
    "OPTIONAL MATCH (d:Outbox) WHERE d.notification_id IN $done "
    "FOREACH (x IN CASE WHEN d IS NULL THEN [] ELSE [d] END | DELETE x) "
    "WITH count(*) AS _ "
    "UNWIND $items AS item "
    "CREATE (:Outbox {notification_id: item.notification_id, payload: item.payload, at_ms: $at_ms})",
)

# Announcements not yet published, oldest first (only those older than $before_ms: a fresh one is
# being published by the process that kept it).
PENDING = Query(
    "outbox_pending",
    "MATCH (o:Outbox) WHERE o.at_ms <= $before_ms "
    "RETURN o.notification_id AS notification_id, o.payload AS payload, o.episode_id AS episode_id, "
    "o.session AS session, o.seq AS seq, o.customer AS customer, o.at_ms AS at_ms "
    "ORDER BY o.at_ms, o.seq LIMIT $limit",
    read_only=True,
    housekeeping=True,  # every process's relay polls it
)

# Published: the announcements leave the outbox.
DONE = Query(
    "outbox_done",
    "MATCH (o:Outbox) WHERE o.notification_id IN $ids DELETE o",
)

# How many announcements the tenant keeps, of any age: none, and its mark can go.
COUNT = Query("outbox_count", "MATCH (o:Outbox) RETURN count(o) AS kept", read_only=True, housekeeping=True)
