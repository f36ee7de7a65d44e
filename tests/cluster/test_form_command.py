"""`python -m relay_graph.runtime.cluster form` (the compose cluster profile's one-shot) on six fresh
nodes: it forms 3 primaries with a replica each; run again on the formed nodes (a restart) it forms
nothing new, has them meet again and finds the cluster healthy."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from relay_graph.runtime import cluster
from relay_graph.runtime.embedded import EmbeddedFalkorDB
from tests.conftest import REPO
from tests.markers import needs

PASSWORD = "form-command-test"


@pytest.fixture
@needs("cluster", "falkordb")
def fresh_nodes(tmp_path):
    nodes = [EmbeddedFalkorDB(tmp_path / f"node-{k}", port, password=PASSWORD, cluster=True,
                              log_file=tmp_path / f"node-{k}.log")
             for k, port in enumerate(cluster.free_ports(6))]
    try:
        for n in nodes:
            n.start()
        yield nodes
    finally:
        for n in reversed(nodes):
            n.stop()


def _form(seeds: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "relay_graph.runtime.cluster", "form", "--shards", "3",
                           "--replicas", "1", "--timeout", "60", seeds], cwd=REPO, capture_output=True, text=True,
                          env=dict(os.environ, RELAY_FALKORDB_PASSWORD=PASSWORD), timeout=120)


def test_form_makes_the_cluster_and_a_second_run_rejoins_it(fresh_nodes):
    addresses = [(n.host, n.port) for n in fresh_nodes]
    seeds = ",".join(f"localhost:{p}" for _, p in addresses)  # names, as compose gives them
    first = _form(seeds)
    assert first.returncode == 0, first.stderr
    assert "formed a cluster of 3 primaries with 1 replica(s) each" in first.stdout
    layout = {n["port"]: n for n in cluster.nodes(addresses[0], password=PASSWORD)}
    ranges = ["%d-%d" % r for r in cluster.slot_ranges(3)]
    assert [layout[p]["slots"] for _, p in addresses[:3]] == [[r] for r in ranges]
    ids = [layout[p]["id"] for _, p in addresses]
    assert [layout[p]["of"] for _, p in addresses[3:]] == ids[:3]  # each replica follows its primary

    again = _form(seeds)
    assert again.returncode == 0, again.stderr
    assert "already form the cluster" in again.stdout
    assert {n["id"] for n in cluster.nodes(addresses[0], password=PASSWORD)} == set(ids)  # no node twice
    cluster.wait_healthy(addresses, password=PASSWORD, timeout=30)


def test_form_says_what_is_wrong_and_exits_1(fresh_nodes):
    done = _form(",".join(f"127.0.0.1:{n.port}" for n in fresh_nodes[:4]))  # 4 nodes for 3 x 2
    assert done.returncode == 1 and "3 shards with 1 replicas each are 6 nodes, not 4" in done.stderr
