"""The intake process's settings (its one pydantic-settings model), from the environment:
RELAY_FALKORDB_HOST, RELAY_FALKORDB_PORT, RELAY_MODEL_DIR, RELAY_REPLICA, RELAY_STREAMS__*,
GROQ_API_KEY, OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME (see relay_graph.agents.settings)."""

from __future__ import annotations

from relay_graph.agents.settings import AgentSettings

SERVICE = "intake"


class IntakeSettings(AgentSettings):
    """Intake reads customer turns; nothing beyond the shared agent settings yet."""
