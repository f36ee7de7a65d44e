"""The resolver process's settings (its one pydantic-settings model), from the environment:
RELAY_FALKORDB_HOST, RELAY_FALKORDB_PORT, RELAY_MODEL_DIR, RELAY_REPLICA, RELAY_STREAMS__*,
GROQ_API_KEY, OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, and for tests RELAY_STEP_DELAY_MS
(see relay_graph.runtime.agents.settings)."""

from __future__ import annotations

from pydantic import Field

from relay_graph.runtime.agents.settings import AgentSettings

SERVICE = "resolver"


class ResolverSettings(AgentSettings):
    # A replica that still beats but has not touched a ticket it holds for this long (its handler
    # failed) loses it to a replica that reclaimed the ticket's notification (RELAY_CLAIM_LEASE_MS).
    claim_lease_ms: int = Field(default=60_000, ge=1)
