"""The intake process's settings (its one pydantic-settings model), from the environment:
RELAY_FALKORDB_HOST, RELAY_FALKORDB_PORT, RELAY_MODEL_DIR, RELAY_REPLICA, RELAY_STREAMS__*,
GROQ_API_KEY, OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME (see relay_graph.runtime.agents.settings)."""

from __future__ import annotations

from typing import Any

from pydantic import field_validator

from relay_graph.runtime.agents.settings import AgentSettings
from relay_graph.runtime.streams.settings import StreamSettings

SERVICE = "intake"
TURNS_IN_FLIGHT = 4


class IntakeSettings(AgentSettings):
    """Intake reads customer turns. It answers several at once (RELAY_STREAMS__CONCURRENCY, default
    4): a turn spends much of its time waiting on the graph and, after its reply is out, on the
    embedding model, and the next customer should not wait for either. A session's turns still go
    one after another (the delivery runtime's per-session order)."""

    streams: StreamSettings = StreamSettings(concurrency=TURNS_IN_FLIGHT)

    @field_validator("streams", mode="before")
    @classmethod
    def _turns_in_flight(cls, value: Any) -> Any:
        # other RELAY_STREAMS__* variables arrive as a dict: intake's default still applies
        if isinstance(value, dict) and "concurrency" not in value:
            return {**value, "concurrency": TURNS_IN_FLIGHT}
        return value
