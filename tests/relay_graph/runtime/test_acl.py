"""The services' FalkorDB users (relay_graph.runtime.acl) on a real server: each does its work, and
is refused what only `relay up` (the `default` user) may run; only the gateway's operations user
copies or deletes a graph. The desk's own process tests run their agents as these users too
(tests/services/processes.py), and the admin routes' tests the gateway (tests/gateway/test_admin.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import redis
import yaml
from redis.exceptions import NoPermissionError

from relay_graph.runtime import acl
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port, wait_for_ping
from relay_graph.runtime.tenancy import TENANTS_KEY, graph_name
from relay_graph.usecases import operations as ops

REPO = Path(__file__).resolve().parents[3]
PASSWORDS = {user: f"pw-{user}" for user in acl.USERS}
AGENTS = ("relay-intake", "relay-resolver", "relay-netops")
SERVICES_WITH_GRAPHS = (*AGENTS, "relay-gateway")

# What no service may run: wipe, reconfigure, load code, stop, replicate elsewhere, see every key.
FORBIDDEN = [
    ("FLUSHALL",), ("FLUSHDB",), ("CONFIG", "SET", "dir", "/tmp"), ("CONFIG", "GET", "requirepass"),
    ("MODULE", "LIST"), ("MODULE", "LOAD", "/tmp/x.so"), ("SHUTDOWN", "NOSAVE"), ("DEBUG", "SLEEP", "0"),
    ("ACL", "SETUSER", "someone", "on", "+@all"), ("BGSAVE",), ("REPLICAOF", "NO", "ONE"), ("KEYS", "*"),
    ("CLIENT", "KILL", "ID", "1"), ("FUNCTION", "FLUSH"), ("SCRIPT", "FLUSH"), ("GRAPH.CONFIG", "SET", "TIMEOUT", "1"),
    ("GRAPH.UDF", "FLUSH"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("acl")
    server = EmbeddedFalkorDB(data, free_port(), log_file=data / "server.log", password="root-pw",
                              users=acl.config_lines(PASSWORDS)).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def root(server):
    client = redis.Redis(host=server.host, port=server.port, password="root-pw", decode_responses=True)
    yield client
    client.close()


def sign_in(server, user: str) -> redis.Redis:
    return redis.Redis(host=server.host, port=server.port, username=user, password=PASSWORDS[user],
                       decode_responses=True)


@pytest.fixture
def graph(root, tenant) -> str:
    """A registered tenant's graph with one node in it."""
    root.hset(TENANTS_KEY, tenant, "test")  # as POST /v1/tenants does: graphs are made for registered tenants only
    name = graph_name(tenant)
    root.execute_command("GRAPH.QUERY", name, "CREATE (:Customer {name: 'Asha'})")
    return name


def nodes(root, name: str) -> int:
    return root.execute_command("GRAPH.RO_QUERY", name, "MATCH (n) RETURN count(n)")[1][0][0]


@pytest.mark.parametrize("user", list(acl.USERS))
def test_no_user_may_wipe_reconfigure_load_code_or_stop_the_server(server, root, graph, user):
    client = sign_in(server, user)
    assert client.ping()
    for command in FORBIDDEN:
        # The server refuses MODULE and DEBUG to everyone (enable-*-command), before the ACL is asked.
        with pytest.raises(redis.exceptions.ResponseError if command[0] in ("MODULE", "DEBUG") else NoPermissionError):
            client.execute_command(*command)
        assert root.execute_command("ACL", "DRYRUN", user, *command) != "OK", command
    assert root.execute_command("ACL", "DRYRUN", "default", "MODULE", "LIST") == "OK"  # relay up's own
    assert root.ping() and nodes(root, graph) == 1
    assert root.config_get("dir")["dir"] == str(server.data_dir)


def test_without_its_password_a_user_is_turned_away(server):
    with pytest.raises(redis.exceptions.AuthenticationError):
        redis.Redis(host=server.host, port=server.port, username="relay-intake", password="wrong").ping()
    with pytest.raises(redis.exceptions.AuthenticationError):  # `default` keeps relay up's own password
        redis.Redis(host=server.host, port=server.port, password=PASSWORDS["relay-gateway"]).ping()


@pytest.mark.parametrize("user", SERVICES_WITH_GRAPHS)
def test_a_service_reads_and_writes_a_graph_but_cannot_copy_delete_or_overwrite_it(server, root, graph, user):
    client = sign_in(server, user)
    client.execute_command("GRAPH.QUERY", graph, "CREATE (:Customer {name: 'Ravi'})")
    assert client.execute_command("GRAPH.RO_QUERY", graph, "MATCH (n) RETURN count(n)")[1][0][0] == 2
    assert graph in client.execute_command("GRAPH.LIST") and client.exists(graph) == 1
    assert client.execute_command("GRAPH.QUERY", "relay-health", "RETURN 1")[1] == [[1]]  # the readiness probe
    refused = [("GRAPH.COPY", graph, f"relay-snapshot:{{{graph}}}:x"), ("GRAPH.DELETE", graph), ("DEL", graph),
               ("UNLINK", graph), ("SET", graph, "x"), ("EXPIRE", graph, "1"), ("RENAME", graph, "relay:other"),
               ("GRAPH.MEMORY", "USAGE", graph), ("GRAPH.SLOWLOG", graph), ("INFO", "keyspace")]
    for command in refused:
        with pytest.raises(NoPermissionError):
            client.execute_command(*command)
    assert nodes(root, graph) == 2 and root.ttl(graph) == -1


@pytest.mark.parametrize("user", AGENTS)
def test_an_agent_reads_the_tenant_registry_but_cannot_write_it(server, root, tenant, user):
    root.hset(TENANTS_KEY, tenant, "digest")
    client = sign_in(server, user)
    assert client.hexists(TENANTS_KEY, tenant)
    for command in [("HSET", TENANTS_KEY, "mine", "x"), ("HDEL", TENANTS_KEY, tenant), ("DEL", TENANTS_KEY)]:
        with pytest.raises(NoPermissionError):
            client.execute_command(*command)
    assert root.hget(TENANTS_KEY, tenant) == "digest"


# A key of each kind the services keep beside the graphs (streams, delivery records, heartbeats,
# logs, locks, the gateway's admin keys and idempotency records), in the shape its module makes it.
DATA_KEYS = ["relay:stream:turns", "relay:dlq:{relay:stream:turns}", "relay:seen:{relay:stream:turns}:g:1",
             "relay:lasterr:{relay:stream:turns}:g:1-0", "relay:heartbeat:intake:host-1", "relay:querylog:acme",
             "relay:outbox:tenants", "relay:simulator:acme", "relay:judge:tenants", "relay:desk-operator",
             "relay:operator:op-1", "relay:lock:catalogue:acme"]
ADMIN_KEYS = [TENANTS_KEY, "{relay-admin}:tenant-keys", "{relay-admin}:customer-session:abc", "relay-idem:acme:x:y"]


@pytest.mark.parametrize("user", SERVICES_WITH_GRAPHS)
def test_a_service_keeps_its_own_keys_beside_the_graphs(server, user):
    client = sign_in(server, user)
    writable = DATA_KEYS + (ADMIN_KEYS if user == "relay-gateway" else ADMIN_KEYS[-1:])
    for key in writable:
        client.set(key + ":acl-test", "1", ex=60)
        assert client.get(key + ":acl-test") == "1" and client.delete(key + ":acl-test") == 1
    client.xadd("relay:stream:acl-test", {"k": "v"})
    client.xgroup_create("relay:stream:acl-test", "g", id="0")
    assert client.xreadgroup("g", "c", {"relay:stream:acl-test": ">"})
    assert client.eval("return redis.call('EXISTS', KEYS[1])", 1, "relay:stream:acl-test") == 1
    assert client.delete("relay:stream:acl-test") == 1


def test_the_simulator_has_only_its_heartbeat(server, root, graph):
    client = sign_in(server, "relay-simulator")
    client.set("relay:heartbeat:simulator:host-1", "1", ex=5)
    assert list(client.scan_iter(match="relay:heartbeat:simulator:*")) == ["relay:heartbeat:simulator:host-1"]
    for command in [("GRAPH.RO_QUERY", graph, "MATCH (n) RETURN n"), ("XADD", "relay:stream:turns", "*", "k", "v"),
                    ("HGET", TENANTS_KEY, "acme")]:
        with pytest.raises(NoPermissionError):
            client.execute_command(*command)


def as_user(server, user: str) -> GraphSettings:
    return GraphSettings(falkordb_host=server.host, falkordb_port=server.port, falkordb_user=user,
                         falkordb_password=PASSWORDS[user], query_log_flush_s=0)


async def test_only_the_operations_user_snapshots_restores_and_deletes_a_tenant(server, root, graph, tenant):
    gateway, operations = GraphClient(as_user(server, "relay-gateway")), GraphClient(as_user(server, acl.OPS_USER))
    try:
        with pytest.raises(NoPermissionError):
            await ops.create_snapshot(gateway, tenant, "before")
        snap = await ops.create_snapshot(operations, tenant, "before")
        assert [s.name for s in await ops.list_snapshots(operations, tenant)] == ["before"]
        stats = await ops.graph_stats(operations, tenant)
        assert stats.memory_mb is not None and stats.nodes == {"Customer": 1}
        with pytest.raises(NoPermissionError):
            await ops.graph_stats(gateway, tenant)  # GRAPH.MEMORY USAGE
        root.execute_command("GRAPH.QUERY", graph, "MATCH (n) DELETE n")
        await ops.restore_snapshot(operations, tenant, "before")
        assert nodes(root, graph) == 1
        removed = (await ops.delete_tenant(operations, tenant, confirm=tenant)).removed
        assert graph in removed and snap.key in removed and not root.exists(graph, snap.key)
    finally:
        await gateway.close()
        await operations.close()


async def test_an_agents_graph_client_runs_named_statements_as_its_user(server, root, tenant):
    root.hset(TENANTS_KEY, tenant, "test")
    from relay_graph.memory.facade import Memory
    from relay_graph.memory.models import FactInput

    root.execute_command("ACL", "LOG", "RESET")
    client = GraphClient(as_user(server, "relay-intake"))
    try:
        memory = Memory(client)
        await memory.write_fact(tenant, FactInput(subject="Asha Verma", predicate="lives_in", object="Pune",
                                                  agent="intake"))
        assert await client.graph_exists(tenant) and graph_name(tenant) in await client.all_graphs()
        facts = await memory.facts(tenant, "Asha Verma")
        assert [f.object for f in facts] == ["Pune"]
    finally:
        await client.close()
    assert not root.execute_command("ACL", "LOG")  # nothing it ran was refused on the way


def test_a_restarted_server_has_the_users_again(tmp_path):
    server = EmbeddedFalkorDB(tmp_path, free_port(), password="root-pw", users=acl.config_lines(PASSWORDS))
    server.start()
    try:
        sign_in(server, "relay-netops").set("relay:heartbeat:netops:h", "1")
        server.stop()
        server.start()  # what `relay up` does for a FalkorDB that died
        client = sign_in(server, "relay-netops")
        assert client.get("relay:heartbeat:netops:h") == "1"
        with pytest.raises(NoPermissionError):
            client.flushall()
    finally:
        server.stop()


def test_the_compose_file_makes_the_same_users_on_the_same_redis_server(tmp_path):
    """docker-compose.yml's REDIS_ARGS, split on spaces as the image's run.sh does, on the
    redis-server the embedded mode runs: each user there has exactly the rules `relay up` gives."""
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    args = compose["services"]["falkordb"]["environment"]["REDIS_ARGS"]
    env = {"RELAY_FALKORDB_PASSWORD": "root-pw", **{acl.env_name(u): pw for u, pw in PASSWORDS.items()}}
    for name, value in env.items():
        args = args.replace(f"${{{name}:?set {name}}}", value)
        args = args.replace(f"${{{name}:?set {name} to FalkorDB's password}}", value)
    assert "${" not in args, "a variable of REDIS_ARGS this test does not know"
    embedded = EmbeddedFalkorDB(tmp_path / "a", free_port(), password="root-pw", users=acl.config_lines(PASSWORDS))
    port = free_port()
    composed = subprocess.Popen([embedded.command()[0], *args.split(), "--port", str(port), "--bind", "127.0.0.1",
                                 "--dir", str(tmp_path), "--loadmodule", str(embedded.module)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    embedded.start()
    try:
        wait_for_ping("127.0.0.1", port, 20, composed, password="root-pw")
        a = redis.Redis(port=embedded.port, password="root-pw", decode_responses=True)
        b = redis.Redis(port=port, password="root-pw", decode_responses=True)
        assert sorted(b.acl_users()) == sorted(["default", *acl.USERS])
        for user in acl.USERS:
            assert b.acl_getuser(user) == a.acl_getuser(user), user
        assert redis.Redis(port=port, username="relay-gateway", password=PASSWORDS["relay-gateway"]).ping()
    finally:
        composed.terminate()
        composed.wait(10)
        embedded.stop()


def test_every_service_has_a_user_and_the_gateway_a_second_one():
    from relay_cli.services import SERVICES

    assert {acl.user_for(s.name) for s in SERVICES} | {acl.OPS_USER} == set(acl.USERS)
