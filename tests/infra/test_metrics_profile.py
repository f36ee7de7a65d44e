"""docker-compose.yml's `metrics` profile and what it reads: Prometheus (its image pinned, a local
stand-in buildable from Debian's package of the same version), its scrape configuration in
infra/prometheus/ reaching every process's /metrics where compose serves it, and the Grafana
dashboard infra/grafana/relay.json (valid JSON, PromQL over Relay's series only; that every series
it queries is exported is checked against the real processes in
tests/services/test_metrics_processes.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from relay_cli.services import SERVICES
from tests.metrics_text import series

REPO = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((REPO / "docker-compose.yml").read_text())
SVC = COMPOSE["services"]
SCRAPE = yaml.safe_load((REPO / "infra" / "prometheus" / "prometheus.yml").read_text())
DASHBOARD = json.loads((REPO / "infra" / "grafana" / "relay.json").read_text())


def _targets(job: dict) -> set[str]:
    found = {t for c in job.get("static_configs", []) for t in c["targets"]}
    found |= {f"{name}:{c['port']}" for c in job.get("dns_sd_configs", []) for name in c["names"]}
    return found


def test_prometheus_is_optional_pinned_and_configured():
    prom = SVC["prometheus"]
    assert prom["profiles"] == ["metrics"]
    image, _, tag = prom["image"].partition(":")
    assert image == "prom/prometheus" and re.fullmatch(r"v\d+\.\d+\.\d+", tag), "a pinned version, never latest"
    config = next(a.split("=", 1)[1] for a in prom["command"] if a.startswith("--config.file="))
    mounts = {v.split(":")[1]: v.split(":")[0] for v in prom["volumes"]}
    assert mounts[config] == "./infra/prometheus/prometheus.yml"
    assert "ports" not in prom
    standin = (REPO / "infra" / "standins" / "prometheus" / "Dockerfile").read_text()
    assert "prometheus" in standin and f"({tag[1:]}," in standin, "the stand-in names the version compose pins"


def test_every_process_is_scraped_where_compose_serves_its_metrics():
    targets = set().union(*(_targets(job) for job in SCRAPE["scrape_configs"]))
    for spec in SERVICES:
        env = SVC[spec.name]["environment"]
        port = env["RELAY_PORT"] if spec.serves_http else env["RELAY_METRICS_PORT"]
        if not spec.serves_http:
            assert env["RELAY_METRICS_HOST"] == "0.0.0.0", "a container's /metrics must be reachable from Prometheus"
        assert f"{spec.name}:{port}" in targets, spec.name
    gateway = next(j for j in SCRAPE["scrape_configs"] if "gateway:8000" in _targets(j))
    assert gateway.get("metrics_path", "/metrics") == "/metrics"


def test_the_dashboard_is_promql_over_relays_series():
    panels = DASHBOARD["panels"]
    assert DASHBOARD["title"] and DASHBOARD["uid"] and len(panels) >= 10
    assert len({p["id"] for p in panels}) == len(panels)
    for panel in panels:
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            names = series(target["expr"])
            assert names, target["expr"]
            assert all(n.startswith(("relay_", "process_")) for n in names), target["expr"]
            assert target["expr"].count("(") == target["expr"].count(")"), target["expr"]
    titles = " ".join(p["title"].lower() for p in panels)
    for topic in ("lag", "pending", "dead letters", "chat", "recall", "falkordb", "outbox", "rate-limit", "reclaimed"):
        assert topic in titles, topic
