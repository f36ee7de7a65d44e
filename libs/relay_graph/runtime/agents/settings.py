"""What every desk agent process reads from its environment.

Each service's own settings class (services/<name>/settings.py) subclasses `AgentSettings`, so a
process still has exactly one pydantic-settings model. `RELAY_*` variables as for the graph
(`RELAY_FALKORDB_HOST`, `RELAY_FALKORDB_PORT`, `RELAY_MODEL_DIR`, ...), plus:

- `RELAY_REPLICA`: the replica's index (set by `relay up`; compose tells replicas apart by hostname).
- `RELAY_STREAMS__<FIELD>`: the delivery runtime's tuning, e.g. `RELAY_STREAMS__MIN_IDLE_MS=30000`.
- `GROQ_API_KEY`: optional; without it the rules extractor and templated replies do the LLM's jobs.
- `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_SERVICE_NAME`: read so that compose's environment is all
  accounted for; traces are exported only when an OTLP exporter package is installed.
- `RELAY_EMBED_THREADS`: the embedding model's onnxruntime threads (default 1).
- `RELAY_METRICS_PORT`, `RELAY_METRICS_HOST`: where the process serves `GET /metrics` (Prometheus
  text; port 0, the default, serves none; host 127.0.0.1 unless set, compose sets 0.0.0.0).
- `RELAY_STEP_DELAY_MS`: a pause between a resolver's fix steps. Tests use it to kill a replica
  in the middle of a ticket; it is 0 in production.
"""

from __future__ import annotations

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import SettingsConfigDict

from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.streams.settings import StreamSettings


class AgentSettings(GraphSettings):
    model_config = SettingsConfigDict(env_prefix="RELAY_", extra="ignore", env_nested_delimiter="__")

    replica: int = Field(default=0, ge=0)
    streams: StreamSettings = StreamSettings()
    groq_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("GROQ_API_KEY", "RELAY_GROQ_API_KEY")
    )
    otel_exporter_otlp_endpoint: str | None = Field(
        default=None, validation_alias=AliasChoices("OTEL_EXPORTER_OTLP_ENDPOINT", "RELAY_OTEL_EXPORTER_OTLP_ENDPOINT")
    )
    otel_service_name: str | None = Field(
        default=None, validation_alias=AliasChoices("OTEL_SERVICE_NAME", "RELAY_OTEL_SERVICE_NAME")
    )
    log_level: str = "INFO"
    heartbeat_every_s: float = Field(default=5.0, gt=0)
    heartbeat_ttl_s: int = Field(default=15, ge=1)
    # Load the embedding model before joining the group, so the first reply is not the slow one.
    preload_model: bool = True
    # onnxruntime threads of the embedding model (None: one per core). An agent embeds one short
    # text at a time (a reply) beside FalkorDB and the other processes on a small machine, where
    # one thread is about twice as fast as two fighting for the cores (bench/fact_writes.py).
    embed_threads: int | None = Field(default=1, ge=1)
    # After SIGTERM the process is gone within this, whatever state its connections are in
    # (compose gives 15 s before SIGKILL).
    stop_within_s: float = Field(default=5.0, gt=0)
    step_delay_ms: int = Field(default=0, ge=0, description="tests only: pause between fix steps")
    # How often this replica's outbox relay publishes announcements kept but not published
    # (relay_graph.runtime.outbox; every gateway and agent replica runs one).
    outbox_every_s: float = Field(default=1.0, gt=0)
    # GET /metrics of this replica (relay_graph.runtime.metrics); `relay up` gives each its own port.
    metrics_port: int = Field(default=0, ge=0, le=65535)
    metrics_host: str = "127.0.0.1"
    metrics_every_s: float = Field(default=10.0, gt=0)  # how often its group's stream state is read

    @property
    def groq_key(self) -> str | None:
        return self.groq_api_key.get_secret_value() if self.groq_api_key else None
