"""The one table of Relay's processes. `relay up` starts from it, docker-compose.yml is checked
against it (tests/infra/test_compose.py), so the two ways of running Relay cannot drift apart.

Order matters: `relay up` starts services top to bottom and stops them bottom to top. The agents
come first so the gateway finds their groups when it answers /readyz; the simulator comes after
the gateway because it talks to Relay only through the gateway's HTTP API.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from relay_graph.runtime import acl


@dataclass(frozen=True)
class ServiceSpec:
    name: str
    module: str
    replicas: int = 1
    # One gateway owns the HTTP port; agents scale as consumer-group replicas.
    scalable: bool = True
    # Gets RELAY_PORT (the gateway's listening port).
    serves_http: bool = False
    # Gets RELAY_ADMIN_KEY. Only what creates tenants or checks the admin key needs it.
    needs_admin_key: bool = False
    # Gets RELAY_GATEWAY_URL (it is a client of the public HTTP API).
    uses_gateway: bool = False
    # docker compose profile that must be enabled to run it (None: always on).
    compose_profile: str | None = None

    @property
    def package_dir(self) -> Path | None:
        try:
            spec = importlib.util.find_spec(self.module)
        except ImportError:  # a parent package is missing
            return None
        if spec is None or not spec.submodule_search_locations:
            return None
        return Path(list(spec.submodule_search_locations)[0])

    def exists(self) -> bool:
        """Startable: its package has a __main__.py (`python -m services.<name>` works)."""
        pkg = self.package_dir
        return pkg is not None and (pkg / "__main__.py").is_file()

    def command(self, python: str) -> list[str]:
        return [python, "-m", self.module]


SERVICES: tuple[ServiceSpec, ...] = (
    ServiceSpec("intake", "services.intake"),
    ServiceSpec("resolver", "services.resolver"),
    ServiceSpec("netops", "services.netops"),
    ServiceSpec("gateway", "services.gateway", scalable=False, serves_http=True, needs_admin_key=True),
    # Off by default, as under compose (profile "sim"): `relay up --scale simulator=1` plays customers.
    ServiceSpec("simulator", "services.simulator", replicas=0, needs_admin_key=True, uses_gateway=True,
                compose_profile="sim"),
)

# Environment names `relay up` owns: it sets them per service (or removes them where a service
# must not get them), whatever the calling shell has.
MANAGED_ENV = (
    "RELAY_FALKORDB_HOST",
    "RELAY_FALKORDB_PORT",
    "RELAY_FALKORDB_USER",
    "RELAY_FALKORDB_PASSWORD",
    "RELAY_FALKORDB_OPS_USER",
    "RELAY_FALKORDB_OPS_PASSWORD",
    "RELAY_FALKORDB_CLUSTER",
    "RELAY_ADMIN_KEY",
    "RELAY_PORT",
    "RELAY_REPLICA",
    "RELAY_MODEL_DIR",
    "RELAY_GATEWAY_URL",
    "RELAY_METRICS_PORT",
)


def by_name(name: str) -> ServiceSpec:
    for spec in SERVICES:
        if spec.name == name:
            return spec
    raise KeyError(f"unknown service {name!r}; known: {', '.join(s.name for s in SERVICES)}")


def relay_env_names(spec: ServiceSpec, *, embedded: bool) -> set[str]:
    """The RELAY_* variables a service is given; the same names in compose and in `relay up`,
    except where the two worlds differ:
    - compose only: RELAY_HOST=0.0.0.0 for the gateway, RELAY_METRICS_HOST=0.0.0.0 for the others
      (a container must listen beyond loopback, for Prometheus; embedded they keep 127.0.0.1);
    - every process but the gateway (which serves /metrics on its own port): RELAY_METRICS_PORT;
    - embedded only: RELAY_MODEL_DIR (the image sets it in infra/Dockerfile) and RELAY_REPLICA for
      scalable services (compose replicas are told apart by their hostname).
    Each signs in to FalkorDB as its own user (relay_graph.runtime.acl); the gateway's admin routes
    as a second one (RELAY_FALKORDB_OPS_*)."""
    names = {"RELAY_FALKORDB_HOST", "RELAY_FALKORDB_PORT", "RELAY_FALKORDB_USER", "RELAY_FALKORDB_PASSWORD"}
    if spec.serves_http:
        names |= {"RELAY_PORT", "RELAY_FALKORDB_OPS_USER", "RELAY_FALKORDB_OPS_PASSWORD"}
        if not embedded:
            names.add("RELAY_HOST")
    else:
        names.add("RELAY_METRICS_PORT")
        if not embedded:
            names.add("RELAY_METRICS_HOST")
    if spec.needs_admin_key:
        names.add("RELAY_ADMIN_KEY")
    if spec.uses_gateway:
        names.add("RELAY_GATEWAY_URL")
    if embedded:
        names.add("RELAY_MODEL_DIR")
        if spec.scalable:
            names.add("RELAY_REPLICA")
    return names


def service_env(
    spec: ServiceSpec,
    replica: int,
    *,
    base: dict[str, str],
    falkordb_port: int,
    admin_key: str,
    gateway_port: int,
    model_dir: Path,
    falkordb_password: str = "",
    falkordb_cluster: str = "",
    metrics_port: int = 0,
    falkordb_users: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment of one embedded replica: the caller's environment (PATH, GROQ_API_KEY,
    OTEL_*, other RELAY_* tuning) with the managed names set exactly as the table says. An empty
    `falkordb_password` is a server without one (the benchmarks' own servers); it still replaces
    whatever the caller's environment had. `metrics_port`: where a process other than the gateway
    serves /metrics (0: none). `falkordb_users` (user -> password, acl.USERS): each service signs in
    as its own user (acl.user_for) instead of with `falkordb_password`."""
    env = {k: v for k, v in base.items() if k not in MANAGED_ENV}
    env["PYTHONUNBUFFERED"] = "1"  # logs reach the log file as they happen
    env["OTEL_SERVICE_NAME"] = base.get("OTEL_SERVICE_NAME") or f"relay-{spec.name}"
    # A service the ACL does not know (a test's stand-in) signs in as `default`.
    user = acl.user_for(spec.name) if falkordb_users and spec.name in acl.SERVICES else ""
    values = {
        "RELAY_FALKORDB_HOST": "127.0.0.1",
        "RELAY_FALKORDB_PORT": str(falkordb_port),
        "RELAY_FALKORDB_USER": user,
        "RELAY_FALKORDB_PASSWORD": falkordb_users[user] if user else falkordb_password,
        "RELAY_FALKORDB_OPS_USER": acl.OPS_USER if falkordb_users else "",
        "RELAY_FALKORDB_OPS_PASSWORD": falkordb_users[acl.OPS_USER] if falkordb_users else "",
        "RELAY_PORT": str(gateway_port),
        "RELAY_ADMIN_KEY": admin_key,
        "RELAY_GATEWAY_URL": f"http://127.0.0.1:{gateway_port}",
        "RELAY_REPLICA": str(replica),
        "RELAY_MODEL_DIR": str(model_dir),
        "RELAY_METRICS_PORT": str(metrics_port),
    }
    for name in relay_env_names(spec, embedded=True):
        env[name] = values[name]
    if falkordb_cluster and "RELAY_FALKORDB_HOST" in env:  # whoever opens FalkorDB opens the cluster
        env["RELAY_FALKORDB_CLUSTER"] = falkordb_cluster
    return env


def parse_scale(items: list[str] | None) -> dict[str, int]:
    """`--scale resolver=3 --scale simulator=0` -> replicas per service (0 leaves it off)."""
    replicas = {s.name: s.replicas for s in SERVICES}
    for item in items or []:
        name, sep, count = item.partition("=")
        name = name.strip()
        if not sep or not count.strip().isdigit():
            raise ValueError(f"--scale takes SERVICE=COUNT (e.g. resolver=3), got {item!r}")
        try:
            spec = by_name(name)
        except KeyError as exc:
            raise ValueError(exc.args[0]) from None
        n = int(count)
        if n != 1 and not spec.scalable:
            raise ValueError(f"{name} runs as exactly one process (it owns the HTTP port); it cannot be scaled to {n}")
        replicas[name] = n
    return replicas
