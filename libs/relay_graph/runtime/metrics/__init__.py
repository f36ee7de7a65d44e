"""Metrics of a Relay process, in Prometheus' text format (`GET /metrics`).

Every series is recorded through OpenTelemetry's metrics SDK (`catalogue.py` names them all, with
a `relay_` prefix and a unit) and exported by its Prometheus exporter into a registry of this
process's own. The gateway serves that registry at `/metrics` on its port; an agent or the
simulator on `RELAY_METRICS_PORT` (0: off) with prometheus_client's HTTP server, in a thread of its
own. The provider is not the global one: FastAPI, redis-py and FastStream record metrics of their
own whenever a global provider is set, with raw paths (tenants, customers' names) among them.

What is read from Redis (stream lag, pending, dead letters, FalkorDB's memory) is read by an async
task into a snapshot (snapshot.py); a scrape reads the snapshot only, so scraping never waits on,
nor adds load to, the database.

No series carries a tenant: at 10,000 tenants per-tenant labels would be 10,000 series each, and
/metrics needs no key.
"""

from __future__ import annotations

import threading
from typing import Any

from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk.metrics import MeterProvider
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, ProcessCollector, generate_latest
from prometheus_client.exposition import start_http_server

REGISTRY = CollectorRegistry(auto_describe=True)
# Scope labels (otel_scope_name, ...) would only repeat "relay" on every line; `job` and
# `instance` (added by Prometheus) say which process a series came from.
_READER = PrometheusMetricReader(disable_target_info=True, scope_info_enabled=False, registry=REGISTRY)
PROVIDER = MeterProvider(metric_readers=[_READER])
METER = PROVIDER.get_meter("relay")
ProcessCollector(registry=REGISTRY)  # process_cpu_seconds_total, process_resident_memory_bytes, ...

CONTENT_TYPE = CONTENT_TYPE_LATEST


def exposition() -> bytes:
    """The current metrics in Prometheus' text format. Runs the observable gauges' callbacks (they
    read the snapshot only): call it from a thread, not the event loop, as a scrape may take a
    few milliseconds."""
    return generate_latest(REGISTRY)


class MetricsServer:
    """prometheus_client's HTTP server on this process's registry, in a daemon thread."""

    def __init__(self, server: Any, thread: threading.Thread) -> None:
        self.server, self.thread = server, thread

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def serve(port: int, host: str = "127.0.0.1") -> MetricsServer | None:
    """`GET /metrics` (any path, as prometheus_client serves it) on host:port; port 0: off."""
    if not port:
        return None
    server, thread = start_http_server(port, addr=host, registry=REGISTRY)
    return MetricsServer(server, thread)
