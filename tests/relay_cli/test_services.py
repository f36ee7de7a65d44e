"""The service table, `--scale` parsing and the environment each embedded replica gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from relay_cli.services import MANAGED_ENV, SERVICES, ServiceSpec, by_name, parse_scale, relay_env_names, service_env

from relay_graph.runtime import acl
from tests.infra.settings_env import assert_reads

by_spec = pytest.mark.parametrize("spec", SERVICES, ids=[s.name for s in SERVICES])


def _env(spec: ServiceSpec, replica: int = 1, base: dict | None = None) -> dict[str, str]:
    return service_env(
        spec,
        replica,
        base=base if base is not None else {"PATH": "/usr/bin"},
        falkordb_port=6390,
        falkordb_password="pw",
        admin_key="k3y",
        gateway_port=8123,
        model_dir=Path("/m"),
    )


def test_table_order_starts_agents_before_the_gateway_and_its_clients_after():
    names = [s.name for s in SERVICES]
    gateway = names.index("gateway")
    for spec in SERVICES:
        if spec.uses_gateway:
            assert names.index(spec.name) > gateway, f"{spec.name} is a gateway client; start it after"
        elif not spec.serves_http:
            assert names.index(spec.name) < gateway
    assert sum(s.serves_http for s in SERVICES) == 1, "exactly one process owns the HTTP port"


def test_parse_scale():
    default = parse_scale(None)
    assert default == {s.name: s.replicas for s in SERVICES}
    assert parse_scale(["resolver=3", "simulator=0"])["resolver"] == 3
    assert parse_scale(["resolver=3", "simulator=0"])["simulator"] == 0


@pytest.mark.parametrize(
    "item, message",
    [
        ("resolver", "SERVICE=COUNT"),
        ("resolver=x", "SERVICE=COUNT"),
        ("resolver=-1", "SERVICE=COUNT"),
        ("nosuch=2", "unknown service 'nosuch'"),
        ("gateway=2", "cannot be scaled"),
        ("gateway=0", "cannot be scaled"),
    ],
)
def test_parse_scale_refuses(item, message):
    with pytest.raises(ValueError, match=message):
        parse_scale([item])


def test_by_name():
    assert by_name("resolver").module == "services.resolver"
    with pytest.raises(KeyError):
        by_name("nope")


def test_exists_needs_a_main_module(tmp_path):
    assert ServiceSpec("x", "venv").exists()  # the stdlib's venv package has a __main__.py
    assert not ServiceSpec("x", "json").exists()  # a package without one
    assert not ServiceSpec("x", "no_such_package_here").exists()
    assert not ServiceSpec("x", "no_such_parent.child").exists()


def test_gateway_env():
    env = _env(by_name("gateway"))
    assert env["RELAY_PORT"] == "8123"
    assert env["RELAY_ADMIN_KEY"] == "k3y"
    assert env["RELAY_FALKORDB_HOST"] == "127.0.0.1" and env["RELAY_FALKORDB_PORT"] == "6390"
    assert env["RELAY_MODEL_DIR"] == "/m"
    assert "RELAY_REPLICA" not in env, "the gateway is one process"
    assert env["PYTHONUNBUFFERED"] == "1"
    assert env["OTEL_SERVICE_NAME"] == "relay-gateway"


def test_agent_env_does_not_leak_the_callers_managed_variables():
    base = {"PATH": "/usr/bin", "RELAY_PORT": "9999", "RELAY_ADMIN_KEY": "from-shell", "RELAY_REPLICA": "7",
            "RELAY_FALKORDB_PORT": "1", "RELAY_FALKORDB_PASSWORD": "stale", "GROQ_API_KEY": "gsk", "RELAY_LOG_LEVEL": "debug"}
    env = _env(by_name("resolver"), replica=3, base=base)
    assert "RELAY_PORT" not in env, "only the gateway listens on RELAY_PORT"
    assert "RELAY_ADMIN_KEY" not in env, "agents never need the admin key"
    assert env["RELAY_REPLICA"] == "3"
    assert env["RELAY_FALKORDB_PORT"] == "6390"
    assert env["RELAY_FALKORDB_PASSWORD"] == "pw", "the password the server was started with"
    assert env["GROQ_API_KEY"] == "gsk", "passed through"
    assert env["RELAY_LOG_LEVEL"] == "debug", "unmanaged tuning is passed through"
    assert env["PATH"] == "/usr/bin"


@by_spec
def test_every_service_gets_the_falkordb_password(spec: ServiceSpec):
    assert _env(spec)["RELAY_FALKORDB_PASSWORD"] == "pw"


@by_spec
def test_with_the_acl_every_service_signs_in_as_its_own_user_and_none_gets_the_default_password(spec: ServiceSpec):
    users = {user: f"pw-{user}" for user in acl.USERS}
    env = service_env(spec, 1, base={"RELAY_FALKORDB_USER": "default", "RELAY_FALKORDB_OPS_USER": "x"},
                      falkordb_port=6390, falkordb_password="root", falkordb_users=users, admin_key="k",
                      gateway_port=8123, model_dir=Path("/m"))
    user = f"relay-{spec.name}"
    assert (env["RELAY_FALKORDB_USER"], env["RELAY_FALKORDB_PASSWORD"]) == (user, users[user])
    if spec.serves_http:  # the admin routes' connection
        assert (env["RELAY_FALKORDB_OPS_USER"], env["RELAY_FALKORDB_OPS_PASSWORD"]) == (acl.OPS_USER, users[acl.OPS_USER])
    else:
        assert "RELAY_FALKORDB_OPS_USER" not in env
    assert "root" not in env.values()


def test_simulator_is_a_client_of_the_gateway():
    env = _env(by_name("simulator"))
    assert env["RELAY_GATEWAY_URL"] == "http://127.0.0.1:8123"
    assert env["RELAY_ADMIN_KEY"] == "k3y"


@by_spec
def test_managed_names_are_exactly_the_tables(spec: ServiceSpec):
    env = _env(spec, base={n: "shell" for n in MANAGED_ENV})
    assert {k for k in env if k.startswith("RELAY_")} == relay_env_names(spec, embedded=True)


@by_spec
def test_every_relay_variable_relay_up_gives_is_a_settings_field(spec: ServiceSpec):
    assert_reads(spec.name, relay_env_names(spec, embedded=True), "`relay up`")
