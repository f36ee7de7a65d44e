"""`relay admin` as a real process on the session's FalkorDB: snapshot, stats, reset refused
without the tenant id and done with it, restore, forget, delete."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import relay_graph.desk.vocabulary  # noqa: F401 (the facts below are the desk's)
from relay_graph.memory import facts
from relay_graph.memory.models import FactInput
from relay_graph.runtime.queries import Query
from services.gateway.customer_sessions import SITE_TENANTS_KEY
from services.gateway.limits import LIMITS_KEY


# a data folder of its own: the password a developer's `relay up` keeps in .relay/data is not the
# session FalkorDB's
DATA_DIR = tempfile.TemporaryDirectory(prefix="relay-admin-cli-")


def relay(server, *args, stdin: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "RELAY_FALKORDB_HOST": server.host, "RELAY_FALKORDB_PORT": str(server.port),
           "RELAY_DATA_DIR": DATA_DIR.name}
    return subprocess.run([sys.executable, "-m", "relay_cli.main", "admin", *args], input=stdin, env=env,
                          capture_output=True, text=True, timeout=60)


async def test_admin_commands(falkordb_server, graph_client, tenant):
    await facts.write_fact(graph_client, tenant, FactInput(subject="Asha Verma", predicate="lives_in",
                                                           object="Pune", agent="intake"))
    assert relay(falkordb_server, "snapshot", tenant, "one").returncode == 0
    stats = json.loads(relay(falkordb_server, "stats", tenant).stdout)
    assert stats["nodes"]["Fact"] == 1
    refused = relay(falkordb_server, "reset", tenant, stdin="no\n")
    assert refused.returncode == 1 and "confirmation_required" in refused.stderr
    assert json.loads(relay(falkordb_server, "stats", tenant).stdout)["nodes"] == stats["nodes"]
    done = relay(falkordb_server, "reset", tenant, stdin=f"{tenant}\n")
    assert done.returncode == 0, done.stderr
    assert json.loads(relay(falkordb_server, "stats", tenant).stdout)["nodes"] == {}
    assert relay(falkordb_server, "restore", tenant, "one").returncode == 0
    receipt = json.loads(relay(falkordb_server, "forget", tenant, "asha verma").stdout)
    assert (receipt["facts"], receipt["entity"]) == (1, 1)
    # what the gateway keeps for it goes too, though no gateway runs the delete
    await graph_client.redis.hset(LIMITS_KEY, tenant, '{"burst": 3}')
    await graph_client.redis.sadd(SITE_TENANTS_KEY, tenant)
    gone = relay(falkordb_server, "delete", tenant, "--confirm", tenant)
    assert gone.returncode == 0, gone.stderr
    out = json.loads(gone.stdout)
    assert out["api_key_revoked"] is True and out["kept"] == []
    assert not await graph_client.redis.hexists(LIMITS_KEY, tenant)
    assert not await graph_client.redis.sismember(SITE_TENANTS_KEY, tenant)
    assert json.loads(relay(falkordb_server, "snapshots", tenant).stdout) == []
    assert not await graph_client.graph_exists(tenant)


async def test_admin_retention_sets_shows_and_compacts(falkordb_server, graph_client, tenant):
    await facts.write_fact(graph_client, tenant, FactInput(subject="Asha Verma", predicate="lives_in",
                                                           object="Pune", agent="intake"))
    assert json.loads(relay(falkordb_server, "retention", tenant).stdout)["retention_days"] is None
    assert json.loads(relay(falkordb_server, "retention", tenant, "--days", "30").stdout)["retention_days"] == 30
    receipt = json.loads(relay(falkordb_server, "compact", tenant).stdout)
    assert (receipt["retention_days"], receipt["episodes"]) == (30, 0)
    bad = relay(falkordb_server, "retention", tenant, "--days", "0")
    assert bad.returncode == 1 and "invalid_retention" in bad.stderr
    assert json.loads(relay(falkordb_server, "retention", tenant, "--off").stdout)["retention_days"] is None


async def test_admin_communities_computes_them_now(falkordb_server, graph_client, tenant):
    for who in ("Asha Verma", "Ravi Iyer"):
        await facts.write_fact(graph_client, tenant, FactInput(subject=who, predicate="lives_in", object="Pune",
                                                               agent="intake"))
    receipt = json.loads(relay(falkordb_server, "communities", tenant).stdout)
    assert receipt["communities"] == 1 and receipt["members"] >= 2 and receipt["removed"] == 0
    assert json.loads(relay(falkordb_server, "communities", tenant).stdout)["removed"] == 1  # replaced


async def test_admin_migrate_names_shows_what_the_first_start_moved(falkordb_server, graph_client, tenant,
                                                                    monkeypatch):
    from relay_graph.memory import entity_refs, facts as engine
    from tests.old_names import old_name_key

    await graph_client.run(tenant, Query("t_first", "RETURN 1"), {})  # this process: nothing to move yet
    monkeypatch.setattr(engine, "name_key", old_name_key)  # a graph of the rule before
    monkeypatch.setattr(entity_refs, "name_key", old_name_key)
    await facts.write_fact(graph_client, tenant, FactInput(subject="आशा राव", predicate="lives_in",
                                                           object="Pune", agent="intake"))
    monkeypatch.undo()
    done = relay(falkordb_server, "migrate-names", tenant)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["moved"] == [] and report["left"] == []  # the process's first statement moved it...
    assert report["record"]["moved"] == ["Customer|आश र व -> Customer|आशा राव"]  # ...and recorded it
    rows = await graph_client.run(tenant, Query("t_keys", "MATCH (e:Customer) RETURN e.uid AS uid"), {})
    assert rows == [{"uid": "Customer|आशा राव"}]


async def test_admin_merge_name_twins_shows_what_the_first_start_merged(falkordb_server, graph_client, tenant):
    from relay_graph.memory.entities import new_customer_id

    cid = new_customer_id()
    await facts.write_fact(graph_client, tenant, FactInput(subject=cid, predicate="name", object="Kavya Reddy",
                                                           agent="intake"))  # this process: no twin yet
    for subject, city in (("Kavya Reddy", "Pune"), ("Ravi Iyer", "Chennai")):  # as writes by name did before
        await facts.write_fact(graph_client, tenant, FactInput(subject=subject, predicate="lives_in", object=city,
                                                               agent="intake"))
    for _ in range(2):
        await facts.write_fact(graph_client, tenant, FactInput(subject=new_customer_id(), predicate="name",
                                                               object="Ravi Iyer", agent="intake"))
    done = relay(falkordb_server, "merge-name-twins", tenant)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["merged"] == []  # the process's first statement merged it...
    assert report["record"]["merged"] == [f"Customer|kavya reddy -> Customer|{cid}"]  # ...and recorded it
    [left] = report["left"]  # a name two customers hold, listed with why, again
    assert left["twin"] == "Customer|ravi iyer" and "2 customers" in left["why"]
    assert report["record"]["left"] == [f"Customer|ravi iyer: {left['why']}"]
    rows = await graph_client.run(tenant, Query("t_city", "MATCH (c:Customer)-[:LIVES_IN]->(x) "
                                                          "RETURN c.uid AS uid, x.name AS city ORDER BY uid"), {})
    assert rows == [{"uid": f"Customer|{cid}", "city": "Pune"}, {"uid": "Customer|ravi iyer", "city": "Chennai"}]
