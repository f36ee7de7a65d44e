"""Cypher of the outbox (outbox.py): announcements kept in a tenant's graph until they are on their
stream. An `Outbox` node holds one notification: its id and its payload (the JSON that travels on
the stream). A chat turn's node is written by the statement that numbers the turn
(queries/chat.py ASSIGN_SEQ) and carries the turn's fields instead of a payload, because its
version (the turn's number) is only known inside that statement.

Every pattern starts from the Outbox label (a handful of nodes at most: each leaves as soon as it
is published) or from its indexed notification_id."""

from __future__ import annotations

from relay_graph.runtime.queries import Query
from relay_graph.runtime.queries.schema import Indexes, declare

declare("relay_graph.runtime.outbox", Indexes(range=(("Outbox", "notification_id"),)))  # announcements kept until published

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
)

# Published: the announcements leave the outbox.
DONE = Query(
    "outbox_done",
    "UNWIND $ids AS id "
    "MATCH (o:Outbox {notification_id: id}) DELETE o",
)
