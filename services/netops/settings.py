"""The netops process's settings (its one pydantic-settings model), from the environment:
RELAY_FALKORDB_HOST, RELAY_FALKORDB_PORT, RELAY_MODEL_DIR, RELAY_REPLICA, RELAY_STREAMS__*,
GROQ_API_KEY, RELAY_RETENTION_EVERY_S, RELAY_COMMUNITIES_EVERY_S, OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME (see relay_graph.runtime.agents.settings)."""

from __future__ import annotations

from relay_graph.runtime.agents.settings import AgentSettings

SERVICE = "netops"


class NetopsSettings(AgentSettings):
    """RELAY_RETENTION_EVERY_S: how often netops applies the retention of a tenant that has a setting
    (relay_graph.memory.retention); RELAY_COMMUNITIES_EVERY_S: how long after a tenant's facts
    changed it computes that tenant's entity communities again, which recall ranks by
    (relay_graph.memory.entity_graph); a tenant not written to is not read (memory/changes.py)."""

    retention_every_s: float = 3600.0
    communities_every_s: float = 900.0
