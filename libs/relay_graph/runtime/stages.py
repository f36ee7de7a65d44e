"""Named spans around the steps of one piece of work (a chat turn's store, announcement and wait in
the gateway; intake's read, extraction, writes and reply), so that a trace says where a turn's time
went: `python -m bench.desk` collects them and prints the turn stage by stage.

Spans are recorded only where a process exports them (runtime.agents.tracing.setup_tracing); with
no exporter each `stage` is OpenTelemetry's no-op span.

May use: opentelemetry."""

from __future__ import annotations

from typing import Any, ContextManager

from opentelemetry import trace

TRACER_NAME = "relay_graph.stages"


def stage(name: str) -> ContextManager[Any]:
    """A span named `name` around a step, a child of the current span (the request's, the handled
    notification's)."""
    return trace.get_tracer(TRACER_NAME).start_as_current_span(name, record_exception=False)
