"""FalkorDB's ACL users: each Relay process signs in as its own user, allowed only the commands
and keys its work needs, so a process gone wrong (a bug, a leaked password) cannot wipe the
server (FLUSHALL), reconfigure it (CONFIG SET dir: files written anywhere), load code (MODULE
LOAD), stop it (SHUTDOWN), nor, for an agent, delete or copy a tenant's graph.

The `default` user (RELAY_FALKORDB_PASSWORD as `requirepass`) stays whole: it is what `relay up`,
the cluster's replication (`masterauth`) and an operator's own tools (backup, move-tenant, redis-cli)
sign in with, and no service is given it.

The rules, per role:
- every user: the connection's own commands (AUTH, PING, HELLO, CLIENT SETNAME ...), the
  cluster client's topology reads (CLUSTER SLOTS/SHARDS/NODES, READONLY, ASKING, WAIT), nothing
  in @admin or @dangerous (FLUSHALL, CONFIG, MODULE, SHUTDOWN, DEBUG, ACL, KEYS, INFO, ...);
- graph commands (module commands have no ACL category, so each is named) on graph keys only
  (`relay:*`, `relay-truth:*`): GRAPH.QUERY, RO_QUERY, LIST and GRAPH.UDF LOAD/LIST (every process
  loads the relay.* functions, udf.py); the gateway also EXPLAIN and PROFILE (the console);
- the plain data commands (strings, hashes, sets, sorted sets, streams, scripts, MULTI, DEL ...)
  only on the keys that are not graphs (DATA_KEYS, a selector): so no SET, EXPIRE or DEL can
  reach a tenant's graph. The agents read the admin keys (the tenant registry) but do not write
  them; the simulator (a client of the HTTP API) has only its heartbeat;
- the gateway's operations connection (the admin routes: snapshots, reset, delete, stats) adds
  GRAPH.COPY, GRAPH.DELETE, GRAPH.MEMORY USAGE, GRAPH.SLOWLOG, DEL/UNLINK of graphs and snapshots,
  INFO and MEMORY USAGE.

`config_lines` renders them as redis.conf `user` directives (what `relay up` hands each FalkorDB it
starts, on its stdin: a (re)started server has them from its first command); `compose_args` as
the `--user` arguments of docker-compose.yml's REDIS_ARGS; `setuser` as ACL SETUSER arguments, for
a server someone else runs (`python -m relay_graph.runtime.acl apply`).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from dataclasses import dataclass

# Keys: a tenant graph is `relay:<tenant>` (a tenant id has no ':'), the lab's truth
# `relay-truth:<tenant>`, a snapshot `relay-snapshot:{relay:<tenant>}:<name>`. Every other key
# has a second ':' after `relay:` (streams, heartbeats, logs, locks, ...), or one of the
# prefixes below: the admin keys' hash tag (and their names of before it), idempotency records,
# and the regional desks' one hash.
GRAPH_KEYS = ("relay:*", "relay-truth:*", "relay-health")  # relay-health: the gateway's readiness probe
SNAPSHOT_KEYS = ("relay-snapshot:*",)
# FalkorDB's own stream of each graph's queries, removed with its tenant (runtime.tenant_data)
TELEMETRY_KEYS = ("telemetry{relay:*", "telemetry{relay-truth:*", "telemetry{relay-snapshot:*")
DATA_KEYS = ("relay:*:*", "relay:desk-operator", "relay-idem:*")
ADMIN_KEYS = ("{relay-admin}:*", "relay-admin:*")

# Categories first, then what no user may run, then each command by name (module commands have
# no category; a named command is meant, even where its category is refused: INFO is @dangerous).
CONNECTION = ("+@connection",)  # AUTH, PING, HELLO, CLIENT SETNAME/SETINFO, READONLY, ASKING, WAIT ...
DATA = ("+@read", "+@write", "+@keyspace", "+@string", "+@hash", "+@set", "+@sortedset", "+@list",
        "+@stream", "+@transaction", "+@scripting")
# FLUSHALL, FLUSHDB, CONFIG, MODULE, DEBUG, KEYS, RESTORE, MIGRATE, CLIENT KILL are @dangerous;
# SHUTDOWN, SAVE, REPLICAOF, FAILOVER, ACL SETUSER @admin. FUNCTION and SCRIPT FLUSH go too: the
# scripts Relay runs are EVAL/EVALSHA, loaded with SCRIPT LOAD.
NEVER = ("-@dangerous", "-@admin", "-function", "-script")
# The falkordb client asks INFO server (redis_mode) when it is made, to tell a cluster from one server.
CLUSTER = ("+cluster|slots", "+cluster|shards", "+cluster|nodes", "+cluster|info", "+cluster|myid", "+info|server")
GRAPH = ("+graph.query", "+graph.ro_query", "+graph.list", "+graph.udf|load", "+graph.udf|list", "+exists")
CONSOLE = ("+graph.explain", "+graph.profile", "+info|memory")  # the query plans; FalkorDB's memory (/metrics)
OPERATIONS = ("+graph.copy", "+graph.delete", "+graph.memory|usage", "+graph.slowlog", "+graph.info",
              "+del", "+unlink", "+exists", "+type", "+memory|usage", "+info", "+dbsize")
SCRIPTS = ("+script|load", "+script|exists")


@dataclass(frozen=True)
class Role:
    commands: tuple[str, ...]  # named, on the graph keys (and the keyless ones)
    graph_keys: tuple[str, ...]
    data_keys: tuple[str, ...]  # `~pattern`, or `%R~pattern` for read only: where DATA may go


AGENT = Role(CLUSTER + GRAPH, GRAPH_KEYS,
             tuple(f"~{k}" for k in DATA_KEYS) + tuple(f"%R~{k}" for k in ADMIN_KEYS))
GATEWAY = Role(CLUSTER + GRAPH + CONSOLE, GRAPH_KEYS, tuple(f"~{k}" for k in DATA_KEYS + ADMIN_KEYS))
OPS = Role(CLUSTER + GRAPH + CONSOLE + OPERATIONS, GRAPH_KEYS + SNAPSHOT_KEYS + TELEMETRY_KEYS, GATEWAY.data_keys)
SIMULATOR = Role(CLUSTER, (), ("~relay:heartbeat:*",))

# user -> role. A service's user is `relay-<service>` (services.py); the gateway has a second one.
USERS: dict[str, Role] = {
    "relay-intake": AGENT,
    "relay-resolver": AGENT,
    "relay-netops": AGENT,
    "relay-simulator": SIMULATOR,
    "relay-gateway": GATEWAY,
    "relay-gateway-ops": OPS,
}
OPS_USER = "relay-gateway-ops"
SERVICES = ("intake", "resolver", "netops", "simulator", "gateway")  # each signs in as relay-<service>


def user_for(service: str) -> str:
    """The user a service signs in as (KeyError for one without)."""
    if service not in SERVICES:
        raise KeyError(f"no FalkorDB user for {service!r}")
    return f"relay-{service}"


def rules(user: str) -> list[str]:
    """The ACL rules of `user`, without its password: ACL SETUSER's arguments after the name."""
    role = USERS[user]
    out = ["reset", "on", "resetchannels", "&*", *(f"~{k}" for k in role.graph_keys),
           "-@all", *CONNECTION, *NEVER, *role.commands]
    out.append("(" + " ".join([*role.data_keys, "-@all", *DATA, *NEVER, *SCRIPTS]) + ")")
    return out


def digest(password: str) -> str:
    """A password as the server keeps it (`#<sha256>`): the plain one never has to reach it."""
    return "#" + hashlib.sha256(password.encode()).hexdigest()


def setuser(user: str, password: str) -> list[str]:
    """`ACL SETUSER` with its arguments for `user`, signing in with `password`."""
    return ["ACL", "SETUSER", user, *rules(user), digest(password)]


def config_lines(passwords: dict[str, str]) -> str:
    """redis.conf `user` directives for the users in `passwords` (user -> password)."""
    return "".join(f"user {user} {' '.join(rules(user))} {digest(pw)}\n" for user, pw in passwords.items())


def env_name(user: str) -> str:
    """The compose variable holding `user`'s password: relay-gateway-ops -> RELAY_FALKORDB_GATEWAY_OPS_PASSWORD."""
    return "RELAY_FALKORDB_" + user.removeprefix("relay-").replace("-", "_").upper() + "_PASSWORD"


def compose_args() -> str:
    """The `--user` arguments of docker-compose.yml's REDIS_ARGS (split on spaces by the image's
    run.sh, the password from the environment: set hex passwords, without spaces)."""
    return " ".join(f"--user {user} {' '.join(rules(user))} >${{{env_name(user)}:?set {env_name(user)}}}"
                    for user in USERS)


def apply(client, passwords: dict[str, str]) -> None:
    """Creates (or resets) the users on a running server; `client` signs in as a user allowed ACL
    (the default one)."""
    for user, password in passwords.items():
        client.execute_command(*setuser(user, password))


def main(argv: list[str] | None = None) -> int:
    """`python -m relay_graph.runtime.acl apply`: the users on the server of RELAY_FALKORDB_*, as
    `default` (RELAY_FALKORDB_PASSWORD), each password from its RELAY_FALKORDB_<USER>_PASSWORD (an
    operator's own Redis; ACL SETUSER does not outlive a restart unless the server saves an aclfile).
    `... compose`: the users' arguments for docker-compose.yml, after a change of the rules."""
    import os

    import redis

    from relay_graph.runtime.config import GraphSettings

    parser = argparse.ArgumentParser(prog="python -m relay_graph.runtime.acl")
    parser.add_argument("action", choices=["apply", "compose"], help="apply: the users on the server; "
                        "compose: print the --user arguments of docker-compose.yml's REDIS_ARGS")
    args = parser.parse_args(argv)
    if args.action == "compose":
        print(compose_args())
        return 0
    missing = [env_name(u) for u in USERS if not os.environ.get(env_name(u))]
    if missing:
        print(f"set {', '.join(missing)}", file=sys.stderr)
        return 2
    s = GraphSettings()
    client = redis.Redis(host=s.falkordb_host, port=s.falkordb_port, password=s.falkordb_password)
    apply(client, {u: os.environ[env_name(u)] for u in USERS})
    print(f"{len(USERS)} users set on {s.falkordb_host}:{s.falkordb_port}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
