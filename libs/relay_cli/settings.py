"""Settings of the `relay` command itself (one pydantic-settings model for this process)."""

from __future__ import annotations

from pydantic import Field, SecretStr

from relay_graph.runtime.config import GraphSettings


class CliSettings(GraphSettings):
    """RELAY_PORT, RELAY_ADMIN_KEY, RELAY_DATA_DIR, RELAY_FALKORDB_PORT, RELAY_MODEL_DIR,
    RELAY_FALKORDB_MAX_RESTARTS, RELAY_FALKORDB_RESTART_WINDOW_S."""

    port: int = 8000
    admin_key: SecretStr | None = None
    ready_timeout_s: float = 180.0
    falkordb_max_restarts: int = Field(default=5, ge=0, description="`relay up` starts its FalkorDB server "
                                       "again when it exits; more exits than this within the window stop Relay")
    falkordb_restart_window_s: float = Field(default=60.0, gt=0, description="the window of "
                                             "falkordb_max_restarts, in seconds")
