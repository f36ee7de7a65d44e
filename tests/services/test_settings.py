"""Each agent process has one settings model, and every variable docker-compose.yml or `relay up`
gives the service is one of its fields."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from relay_cli.services import by_name, relay_env_names
from services.intake.settings import IntakeSettings
from services.netops.settings import NetopsSettings
from services.resolver.settings import ResolverSettings

REPO = Path(__file__).resolve().parents[2]
SETTINGS = {"intake": IntakeSettings, "resolver": ResolverSettings, "netops": NetopsSettings}

# A value for each variable and how to read it back from the settings.
SAMPLES = {
    "RELAY_FALKORDB_HOST": ("falkordb.internal", lambda s: s.falkordb_host),
    "RELAY_FALKORDB_PORT": ("6380", lambda s: str(s.falkordb_port)),
    "RELAY_FALKORDB_USER": ("relay-x", lambda s: s.falkordb_user),
    "RELAY_FALKORDB_PASSWORD": ("pw-3f9a", lambda s: s.falkordb_password),
    "RELAY_REPLICA": ("3", lambda s: str(s.replica)),
    "RELAY_MODEL_DIR": ("/opt/relay/model", lambda s: str(s.model_dir)),
    "GROQ_API_KEY": ("gsk-test", lambda s: s.groq_key),
    "OTEL_EXPORTER_OTLP_ENDPOINT": ("http://otel:4318", lambda s: s.otel_exporter_otlp_endpoint),
    "OTEL_SERVICE_NAME": ("relay-x", lambda s: s.otel_service_name),
    "RELAY_METRICS_PORT": ("9464", lambda s: str(s.metrics_port)),
    "RELAY_METRICS_HOST": ("0.0.0.0", lambda s: s.metrics_host),
}


def compose_env(service: str) -> set[str]:
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    return set((compose["services"][service].get("environment") or {}).keys())


@pytest.mark.parametrize("service", sorted(SETTINGS))
def test_every_variable_the_service_is_given_is_a_setting(service, monkeypatch):
    given = compose_env(service) | relay_env_names(by_name(service), embedded=True) \
        | relay_env_names(by_name(service), embedded=False)
    unknown = given - set(SAMPLES)
    assert not unknown, f"{service} is given {sorted(unknown)}: add them to its settings and to SAMPLES"
    for name in given:
        monkeypatch.setenv(name, SAMPLES[name][0])
    settings = SETTINGS[service]()
    for name in given:
        value, read = SAMPLES[name]
        assert read(settings) == value, name


def test_stream_tuning_comes_nested_and_a_key_is_optional(monkeypatch):
    for name in ("GROQ_API_KEY", "RELAY_GROQ_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RELAY_STREAMS__MIN_IDLE_MS", "30000")
    monkeypatch.setenv("RELAY_STREAMS__MAX_DELIVERIES", "7")
    monkeypatch.setenv("RELAY_STEP_DELAY_MS", "250")
    monkeypatch.setenv("RELAY_CLAIM_LEASE_MS", "5000")
    s = ResolverSettings()
    assert (s.streams.min_idle_ms, s.streams.max_deliveries, s.step_delay_ms) == (30000, 7, 250)
    assert s.claim_lease_ms == 5000 and s.groq_key is None
    assert IntakeSettings().step_delay_ms == 250  # shared agent settings


def test_intake_answers_several_turns_at_once_unless_told_otherwise(monkeypatch):
    from services.intake.settings import TURNS_IN_FLIGHT

    assert IntakeSettings().streams.concurrency == TURNS_IN_FLIGHT > 1
    monkeypatch.setenv("RELAY_STREAMS__MIN_IDLE_MS", "30000")  # another stream variable keeps the default
    s = IntakeSettings()
    assert (s.streams.concurrency, s.streams.min_idle_ms) == (TURNS_IN_FLIGHT, 30000)
    monkeypatch.setenv("RELAY_STREAMS__CONCURRENCY", "1")
    assert IntakeSettings().streams.concurrency == 1
