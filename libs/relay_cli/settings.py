"""Settings of the `relay` command itself (one pydantic-settings model for this process)."""

from __future__ import annotations

from pydantic import SecretStr

from relay_graph.runtime.config import GraphSettings


class CliSettings(GraphSettings):
    """RELAY_PORT, RELAY_ADMIN_KEY, RELAY_DATA_DIR, RELAY_FALKORDB_PORT, RELAY_MODEL_DIR."""

    port: int = 8000
    admin_key: SecretStr | None = None
    ready_timeout_s: float = 180.0
