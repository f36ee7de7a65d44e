"""The simulator process's settings (its one pydantic-settings model), from RELAY_* variables.

Where Relay is and who we are there:
  RELAY_GATEWAY_URL   the gateway's base URL (compose: http://gateway:8000; `relay up` sets it)
  RELAY_ADMIN_KEY     creates the simulator's tenant
  RELAY_TENANT        the tenant to play in (default "demo")
  RELAY_TENANT_KEY    that tenant's key, when it exists already (a tenant key is shown only once)
  RELAY_KEY_FILE      optional: a file (mode 0600) where the simulator keeps the keys of the
                      tenants it created, so a restart plays on in the same tenant

What to play:
  RELAY_SEED, RELAY_CUSTOMERS, RELAY_DAYS   the storylines (same seed: same customers and words)
  RELAY_SPEED         simulated hours per wall second, 0.5 to 8
  RELAY_ONCE          play one round and exit (default: round after round until SIGTERM)
  RELAY_FAULTS        "network" (mark nodes down through the API) or "words" (faults only in words)
  RELAY_CHAT_WAIT_S   seconds each chat turn waits for the desk's reply
  RELAY_CONTROL_EVERY_S  how often it reads the console's control (start, stop, speed: GET
                      /v1/console/tenants/{t}/simulator) and reports what it is doing (default 1)

Liveness (docker-compose's healthcheck, `python -m relay_graph.runtime.heartbeat simulator --this-host`):
  RELAY_FALKORDB_HOST, RELAY_FALKORDB_PORT, RELAY_FALKORDB_PASSWORD   where the heartbeat key goes
  (the Redis side of the FalkorDB server; the simulator never opens a graph)

Metrics: RELAY_METRICS_PORT (GET /metrics, Prometheus text; 0, the default: none), RELAY_METRICS_HOST
  (default 127.0.0.1; compose sets 0.0.0.0)

Given by `relay up` to every service and accepted here so that none is silently ignored:
  RELAY_MODEL_DIR (the simulator loads no model), RELAY_REPLICA."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from .clock import MAX_SPEED, MIN_SPEED
from .storylines import MAX_CUSTOMERS, MAX_DAYS

SERVICE = "simulator"
TENANT_PATTERN = r"^[a-z0-9][a-z0-9-]{1,62}$"


class SimulatorSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RELAY_", extra="ignore")

    gateway_url: str = "http://127.0.0.1:8000"
    admin_key: SecretStr | None = None
    tenant: str = Field(default="demo", pattern=TENANT_PATTERN)
    tenant_key: SecretStr | None = None
    key_file: Path | None = None

    seed: int = 7
    customers: int = Field(default=12, ge=1, le=MAX_CUSTOMERS)
    days: float = Field(default=14.0, gt=0, le=MAX_DAYS)
    speed: float = Field(default=1.0, ge=MIN_SPEED, le=MAX_SPEED, description="simulated hours per second")
    once: bool = False
    faults: Literal["network", "words"] = "network"
    chat_wait_s: float = Field(default=20.0, gt=0, le=30)
    control_every_s: float = Field(default=1.0, gt=0, le=60, description="how often the console's control is read")
    ready_timeout_s: float = Field(default=180.0, gt=0)

    falkordb_host: str = "127.0.0.1"
    falkordb_port: int = 6390
    falkordb_cluster: str = ""  # RELAY_FALKORDB_CLUSTER: a cluster's seeds (relay_graph.runtime.cluster)
    falkordb_user: str | None = None  # its ACL user (relay_graph.runtime.acl); unset: `default`
    falkordb_password: SecretStr | None = None
    heartbeat: bool = True
    heartbeat_every_s: float = Field(default=5.0, gt=0)
    heartbeat_ttl_s: int = Field(default=15, ge=1)

    metrics_port: int = Field(default=0, ge=0, le=65535)
    metrics_host: str = "127.0.0.1"

    model_dir: Path | None = None
    replica: int = Field(default=0, ge=0)
    log_level: str = "INFO"

    @field_validator("gateway_url")
    @classmethod
    def _url(cls, v: str) -> str:
        if not v.startswith(("http://", "https://")):
            raise ValueError("gateway_url must start with http:// or https://")
        return v.rstrip("/")
