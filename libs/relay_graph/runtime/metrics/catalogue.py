"""Every series Relay records, in one place (docs/operations.md, "Metrics to watch", lists them, and the
Grafana dashboard infra/grafana/relay.json queries them).

Names carry the `relay_` prefix; the exporter adds the unit's suffix (`s` -> `_seconds`, `By` ->
`_bytes`) and `_total` to counters. Labels are code constants only (a route's template, a stream,
a group, a limiter): never a raw path, a tenant or a customer.

Counters a dashboard divides by are started at 0 for each label set a process will use (see
`zero`), so a series exists before its first event and `rate()` sees its first increase."""

from __future__ import annotations

from typing import Iterable, Mapping

from . import METER

# Seconds: a request or a recall is milliseconds to seconds; a chat turn waits for the agents (30 s at most).
REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
TURN_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)

# -- the gateway's HTTP requests (labels: route, method, status_class) ----------------------------
HTTP_REQUESTS = METER.create_counter(
    "relay_http_requests", unit="{request}",
    description="HTTP requests answered, by route template, method and status class (2xx, 4xx, 5xx)")
HTTP_DURATION = METER.create_histogram(
    "relay_http_request_duration", unit="s",
    description="Time from a request's arrival to the end of its answer, by route template, method and status class",
    explicit_bucket_boundaries_advisory=REQUEST_BUCKETS)
RATE_LIMIT_REFUSALS = METER.create_counter(
    "relay_rate_limit_refusals", unit="{request}",
    description="Requests refused with 429 by a rate limiter (tenant, keyless, site_sessions, judge_runs)")

# -- chat and recall ---------------------------------------------------------------------------
CHAT_TURN_DURATION = METER.create_histogram(
    "relay_chat_turn_duration", unit="s",
    description="A chat turn through the streams: from the customer's turn stored to the desk's reply seen "
                "by the gateway that waits for it",
    explicit_bucket_boundaries_advisory=TURN_BUCKETS)
CHAT_TURNS = METER.create_counter(
    "relay_chat_turns", unit="{turn}",
    description="Chat turns taken, by outcome: replied (within the wait), timed_out (no reply within the "
                "wait), not_waited (answered 202 at once)")
RECALL_DURATION = METER.create_histogram(
    "relay_recall_duration", unit="s", description="Recall (ranked episodes and facts for a question), by outcome",
    explicit_bucket_boundaries_advisory=REQUEST_BUCKETS)

# -- the streams, as this process's consumers see them (labels: stream, group) -------------------
STREAM_HANDLED = METER.create_counter(
    "relay_stream_handled_messages", unit="{message}", description="Entries handled and acknowledged")
STREAM_FAILED = METER.create_counter(
    "relay_stream_failed_deliveries", unit="{delivery}",
    description="Deliveries whose handler failed (the entry stays pending, to be retried or dead-lettered)")
STREAM_RECLAIMED = METER.create_counter(
    "relay_stream_reclaimed_messages", unit="{message}",
    description="Entries claimed from another consumer after min_idle_ms (a dead or stuck replica's, or a retry)")
STREAM_DEAD_LETTERED = METER.create_counter(
    "relay_stream_dead_lettered_messages", unit="{message}", description="Entries this process moved to the dead letters")
HANDLER_DURATION = METER.create_histogram(
    "relay_stream_handler_duration", unit="s", description="A handler's run on one entry (retries included)",
    explicit_bucket_boundaries_advisory=REQUEST_BUCKETS)

# -- the outbox ---------------------------------------------------------------------------------
OUTBOX_PENDING = METER.create_gauge(
    "relay_outbox_pending_announcements", unit="{announcement}",
    description="Announcements this process's last outbox relay pass found kept past their writer's publish "
                "(older than older_than_s; at most 200 per tenant a pass)")
OUTBOX_RELAYED = METER.create_counter(
    "relay_outbox_relayed_announcements", unit="{announcement}",
    description="Announcements the outbox relay published because their writer had not")

# -- the simulator: the public API as its simulated customers meet it --------------------------
SIMULATOR_REQUESTS = METER.create_counter(
    "relay_simulator_requests", unit="{request}",
    description="The simulator's requests to the gateway, by method and status class (retries counted each)")
SIMULATOR_CHAT_DURATION = METER.create_histogram(
    "relay_simulator_chat_duration", unit="s",
    description="A simulated customer's chat turn, as the client sees it (POST /chat with wait, round trip)",
    explicit_bucket_boundaries_advisory=TURN_BUCKETS)

# What snapshot.py exports from Redis (observable gauges; the names are here so that the list is whole).
STREAM_LENGTH = "relay_stream_length_messages"
STREAM_PENDING = "relay_stream_pending_messages"
STREAM_LAG = "relay_stream_lag_messages"
STREAM_CONSUMERS = "relay_stream_consumers"
DEAD_LETTERS = "relay_stream_dead_letter_messages"
FALKORDB_USED_MEMORY = "relay_falkordb_used_memory"
FALKORDB_GRAPHS = "relay_falkordb_graphs"
OUTBOX_MARKED_TENANTS = "relay_outbox_marked_tenants"
SNAPSHOT_AGE = "relay_metrics_snapshot_age"


def zero(counter, label_sets: Iterable[Mapping[str, str]]) -> None:
    """Start `counter`'s series for these label sets at 0 (see the module doc)."""
    for labels in label_sets:
        counter.add(0, dict(labels))


def zero_stream_counters(streams: Iterable[str], group: str) -> None:
    """The stream counters of a consumer group, at 0 for each stream it reads."""
    sets = [{"stream": s, "group": group} for s in streams]
    for counter in (STREAM_HANDLED, STREAM_FAILED, STREAM_RECLAIMED, STREAM_DEAD_LETTERED):
        zero(counter, sets)
