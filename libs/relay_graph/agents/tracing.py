"""Tracing for an agent process. The trace context always travels (the streams runtime injects
and extracts it whatever the provider); spans are *recorded and exported* only when an OTLP
endpoint is configured and an OTLP exporter package is installed (none is pinned in
requirements.lock today, so this logs once and leaves the no-op provider in place)."""

from __future__ import annotations

import importlib
import logging

from opentelemetry import trace

from .settings import AgentSettings

log = logging.getLogger("relay_graph.agents")


def setup_tracing(settings: AgentSettings, service: str):
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
    provider.add_span_processor(BatchSpanProcessor(module.OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return provider
