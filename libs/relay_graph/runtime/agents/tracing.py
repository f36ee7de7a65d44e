"""Tracing for a Relay process (the agents, and the gateway through services.gateway.tracing).
The trace context always travels (the streams runtime injects and extracts it whatever the
provider); spans are *recorded and exported* only when an OTLP endpoint is configured and the
OTLP/HTTP exporter is installed (opentelemetry-exporter-otlp-proto-http, pinned in
requirements.lock; without it this logs once and leaves the no-op provider in place)."""

from __future__ import annotations

import importlib
import logging
import os
from typing import Protocol

from opentelemetry import trace

log = logging.getLogger("relay_graph.runtime.agents")


class TracingSettings(Protocol):
    """What setup_tracing reads: AgentSettings and GatewaySettings both have it."""

    otel_exporter_otlp_endpoint: str | None
    otel_service_name: str | None


def _exporter_kwargs(endpoint: str) -> dict[str, str]:
    # The exporter reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT itself (appending /v1/traces to the
    # base); the endpoint came from RELAY_OTEL_EXPORTER_OTLP_ENDPOINT only when neither is set.
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        return {}
    return {"endpoint": endpoint.rstrip("/") + "/v1/traces"}


def setup_tracing(settings: TracingSettings, service: str):
    """The provider that exports spans (shut it down on exit to flush), or None."""
    endpoint = settings.otel_exporter_otlp_endpoint
    if not endpoint:
        return None
    try:
        module = importlib.import_module("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    except ImportError:
        log.warning("OTEL_EXPORTER_OTLP_ENDPOINT is set but no OTLP exporter is installed; "
                    "trace context still propagates, spans are not exported")
        return None
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: settings.otel_service_name or f"relay-{service}"}))
    provider.add_span_processor(BatchSpanProcessor(module.OTLPSpanExporter(**_exporter_kwargs(endpoint))))
    trace.set_tracer_provider(provider)
    return provider
