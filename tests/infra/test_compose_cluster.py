"""Static checks of the cluster profile, docker-compose.cluster.yml on top of docker-compose.yml (no
Docker engine needed; `docker-compose config` where the tool is installed): six FalkorDB nodes as the
embedded cluster runs them, the one-shot that forms it naming them as every service does, and every
service of the table on the cluster once it is formed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from relay_cli.services import SERVICES, ServiceSpec
from relay_graph.runtime.cluster import layout
from relay_graph.runtime.config import parse_seeds
from relay_graph.runtime.embedded import CLUSTER_ARGS
from relay_graph.runtime import acl

from tests.infra.settings_env import assert_reads
from tests.infra.test_compose import COMPOSE, _env

REPO = Path(__file__).resolve().parents[2]
CLUSTER = yaml.safe_load((REPO / "docker-compose.cluster.yml").read_text())
SVC = CLUSTER["services"]
NODES = ["falkordb"] + [f"falkordb-{k}" for k in range(2, 7)]
INIT = "falkordb-cluster"

by_spec = pytest.mark.parametrize("spec", SERVICES, ids=[s.name for s in SERVICES])


def _args(node: str) -> str:
    return _env(SVC[node])["REDIS_ARGS"]


def test_the_profile_is_six_nodes_the_init_and_the_tables_services():
    assert set(SVC) == set(NODES) | {INIT} | {s.name for s in SERVICES}
    assert len(NODES) == len(layout(3, 1))


def test_each_node_is_the_server_of_docker_compose_yml_as_a_cluster_node():
    single = _env(COMPOSE["services"]["falkordb"])["REDIS_ARGS"]
    for node in NODES:
        args = _args(node)
        assert args.startswith(single), f"{node}: the single server's settings (AOF, password) first"
        assert " ".join(CLUSTER_ARGS) in args, f"{node}: the cluster settings the embedded cluster runs"
        assert re.search(r"--masterauth \$\{RELAY_FALKORDB_PASSWORD:\?.+?\}", args), "a replica signs in to its primary"
        # clients are told the container's name, which the compose network resolves wherever it runs
        assert f"--cluster-announce-hostname {node} --cluster-preferred-endpoint-type hostname" in args
        if node != "falkordb":  # the first is docker-compose.yml's, merged: image, healthcheck, restart
            assert SVC[node]["image"] == COMPOSE["services"]["falkordb"]["image"]
            assert SVC[node]["healthcheck"] == COMPOSE["services"]["falkordb"]["healthcheck"]
            assert SVC[node]["restart"] == "unless-stopped"


def test_each_node_keeps_its_data_on_a_volume_of_its_own():
    mounts = [SVC[n]["volumes"] for n in NODES]
    assert all(len(m) == 1 and m[0].endswith(":/var/lib/falkordb/data") for m in mounts)
    volumes = [m[0].split(":")[0] for m in mounts]
    assert len(set(volumes)) == len(NODES) and set(volumes) <= set(CLUSTER["volumes"])
    assert "falkordb-data" not in volumes, "a single server's data is not a cluster node's"


def test_the_init_forms_the_cluster_of_the_six_once_they_are_healthy():
    init = SVC[INIT]
    assert init["image"] == COMPOSE["services"]["gateway"]["image"] and init["restart"] == "no"
    cmd = init["command"]
    assert cmd[:4] == ["python", "-m", "relay_graph.runtime.cluster", "form"]
    seeds = cmd[-1]
    assert cmd[cmd.index("--shards") + 1] == "3" and cmd[cmd.index("--replicas") + 1] == "1"
    assert [h for h, _ in parse_seeds(seeds)] == NODES and {p for _, p in parse_seeds(seeds)} == {6379}
    assert init["depends_on"] == {n: {"condition": "service_healthy"} for n in NODES}
    assert re.fullmatch(r"\$\{RELAY_FALKORDB_PASSWORD:\?.+\}", init["environment"]["RELAY_FALKORDB_PASSWORD"])


@by_spec
def test_every_service_runs_on_the_cluster_once_it_is_formed(spec: ServiceSpec):
    env = _env(SVC[spec.name])
    assert env == {"RELAY_FALKORDB_CLUSTER": SVC[INIT]["command"][-1]}
    assert SVC[spec.name]["depends_on"] == {INIT: {"condition": "service_completed_successfully"}}
    assert_reads(spec.name, set(env), "docker-compose.cluster.yml")


@pytest.mark.skipif(not shutil.which("docker-compose"), reason="docker-compose is not installed")
def test_docker_compose_accepts_the_two_files_together():
    env = dict(os.environ, RELAY_ADMIN_KEY="k", RELAY_FALKORDB_PASSWORD="p",
               **{acl.env_name(user): "p-" + user for user in acl.USERS})
    done = subprocess.run(["docker-compose", "-f", "docker-compose.yml", "-f", "docker-compose.cluster.yml",
                           "--profile", "sim", "config"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    merged = yaml.safe_load(done.stdout)["services"]
    assert merged["falkordb"]["volumes"] == ["falkordb-1-data:/var/lib/falkordb/data:rw"]
    for spec in SERVICES:
        assert merged[spec.name]["environment"]["RELAY_FALKORDB_HOST"] == "falkordb"  # docker-compose.yml's, kept
        assert set(merged[spec.name]["depends_on"]) >= {"falkordb", INIT}
