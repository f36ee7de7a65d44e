"""The simulator's settings: every RELAY_* variable compose and `relay up` give it is a field
(also checked from the other side in tests/infra and tests/relay_cli), and bad values are refused."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from relay_cli.services import by_name, relay_env_names
from services.simulator.__main__ import main, parse_args
from services.simulator.settings import SimulatorSettings
from tests.infra.settings_env import env_names


def test_every_variable_compose_and_relay_up_pass_is_read():
    read = env_names(SimulatorSettings)
    spec = by_name("simulator")
    assert relay_env_names(spec, embedded=True) <= read
    assert relay_env_names(spec, embedded=False) <= read
    assert {"RELAY_SEED", "RELAY_SPEED", "RELAY_CUSTOMERS", "RELAY_DAYS", "RELAY_TENANT", "RELAY_ONCE"} <= read


def test_values_from_the_environment(monkeypatch):
    monkeypatch.setenv("RELAY_GATEWAY_URL", "http://gateway:8000/")
    monkeypatch.setenv("RELAY_ADMIN_KEY", "k")
    monkeypatch.setenv("RELAY_SPEED", "0.5")
    monkeypatch.setenv("RELAY_SEED", "99")
    monkeypatch.setenv("RELAY_MODEL_DIR", "/opt/relay/model")
    s = SimulatorSettings()
    assert s.gateway_url == "http://gateway:8000" and s.admin_key.get_secret_value() == "k"
    assert s.speed == 0.5 and s.seed == 99 and s.tenant == "demo" and not s.once


@pytest.mark.parametrize("field, value", [("speed", 0.25), ("speed", 9), ("customers", 0), ("days", 0),
                                          ("tenant", "Bad Tenant"), ("gateway_url", "gateway:8000"),
                                          ("faults", "lab")])
def test_bad_values_are_refused(field, value):
    with pytest.raises(ValidationError):
        SimulatorSettings(**{field: value})


def test_the_command_line_overrides_and_refuses(capsys):
    assert parse_args(["--once", "--speed", "4", "--seed", "3"]) == {"once": True, "speed": 4.0, "seed": 3}
    assert parse_args([]) == {}
    assert main(["--speed", "20"]) == 2
    assert "speed" in capsys.readouterr().err
