"""The topology: one FalkorDB server (the default) or a FalkorDB Redis Cluster given by seed
addresses (RELAY_FALKORDB_CLUSTER=host:port,host:port,...), and the clients every process opens on
it. Each graph is one key, so a tenant's graph lives on the shard owning its hash slot; the
cluster's own failover promotes a replica when a primary dies.

Also here: forming a cluster from fresh nodes with CLUSTER ADDSLOTSRANGE / MEET / REPLICATE (what
`relay up --shards N --replicas R` and the tests run), and `EmbeddedCluster`, the nodes on one
machine, each with its own data folder and log."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

import redis
import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.backoff import ExponentialBackoff
from redis.cluster import LoadBalancingStrategy
from redis.exceptions import (
    ClusterDownError,
    ConnectionError,
    RedisClusterException,
    ResponseError,
    SlotNotCoveredError,
    TimeoutError,
)
from redis.retry import Retry

from relay_graph.runtime.config import parse_seeds
from relay_graph.runtime.embedded import EmbeddedFalkorDB

log = logging.getLogger("relay_graph.runtime.cluster")

SLOTS = 16384
# redis-py's cluster client retries a command a few times at once (MOVED, ASK, a lost node),
# reading the slot map again before each; it does not wait between tries, so it cannot ride out
# a promotion (the node timeout, 3 s in CLUSTER_ARGS, plus the election): `through_failover`
# does, with pauses, and one refresh of the map at a time.
FAILOVER_RETRIES = 3
FAILOVER_BACKOFF = ExponentialBackoff(cap=0.5, base=0.05)
REPLICA_MAP_REFRESH_S = 5.0


def free_ports(count: int, *, low: int = 20000, high: int = 45000, host: str = "127.0.0.1") -> list[int]:
    """`count` consecutive free ports whose cluster bus ports (each + 10000) are free too: a
    cluster node refuses a port above 55535."""
    import random
    import socket

    def free(port: int) -> bool:
        with socket.socket() as sock:
            try:
                sock.bind((host, port))
                return True
            except OSError:
                return False

    for _ in range(200):
        base = random.randrange(low, high - count)
        ports = list(range(base, base + count))
        if all(free(p) and free(p + 10000) for p in ports):
            return ports
    raise RuntimeError(f"no {count} free consecutive ports between {low} and {high}")


def is_cluster(client: Any) -> bool:
    return isinstance(client, RedisCluster)


class FailoverCluster(RedisCluster):
    """redis-py's cluster client, with one race of a failover made a lost connection: a connection
    the failover tore down while a command was being sent raises AttributeError ('NoneType' has no
    'writelines') from inside redis-py, before any byte of the command went out, so the command is
    sent once more; failing again, it is the ConnectionError every caller already answers (503)."""

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        for again in (False, True):
            try:
                return await super().execute_command(*args, **kwargs)
            except AttributeError as exc:
                if "writelines" not in str(exc):
                    raise
                if again:
                    raise redis.exceptions.ConnectionError(f"the cluster connection was torn down: {exc}") from exc
                log.warning("a cluster connection was torn down while %s was sent; sending it again", args[:1])


def connect(settings: Any, *, decode_responses: bool, replica_reads: bool = False, **kwargs: Any):
    """A client on the configured topology: `redis.asyncio.Redis` on the one server, or
    `RedisCluster` on the seeds. `replica_reads`: the cluster client's connections to replicas
    say READONLY (reads sent there with `target_nodes` are served by the replica)."""
    seeds = parse_seeds(settings.falkordb_cluster)
    if not seeds:
        return aioredis.Redis(host=settings.falkordb_host, port=settings.falkordb_port,
                              username=settings.falkordb_user, password=settings.falkordb_password,
                              decode_responses=decode_responses, **kwargs)
    kwargs.pop("health_check_interval", None)
    return FailoverCluster(
        startup_nodes=[ClusterNode(h, p) for h, p in seeds],
        username=settings.falkordb_user,
        password=settings.falkordb_password,
        decode_responses=decode_responses,
        require_full_coverage=False,  # one shard failing over must not stop the others
        retry=Retry(FAILOVER_BACKOFF, FAILOVER_RETRIES),
        load_balancing_strategy=LoadBalancingStrategy.ROUND_ROBIN_REPLICAS if replica_reads else None,
        **kwargs,
    )


async def replica_for(client: RedisCluster, key: str) -> Any | None:
    """A replica of the shard owning `key` (round robin over them), or None if it has none."""
    await client.initialize()  # the slot map, once (or again after a failure said it is stale)
    slot = client.keyslot(key)
    node = client.nodes_manager.get_node_from_slot(slot, True, LoadBalancingStrategy.ROUND_ROBIN_REPLICAS)
    if node.server_type == "replica":
        return node
    # No replica in the map (one joined, or came back, after it was read): read it again now
    # and then, not on every read.
    now = time.monotonic()
    if now - getattr(client, "_relay_refreshed", 0.0) > REPLICA_MAP_REFRESH_S:
        client._relay_refreshed = now
        client._initialize = True
    return None


def replicas_known(client: RedisCluster, key: str) -> int:
    """The replicas of key's shard in the client's slot map (read again every few seconds while
    there are none: `replica_for`)."""
    nodes = client.nodes_manager.slots_cache.get(client.keyslot(key)) or []
    count = sum(1 for n in nodes if n.server_type == "replica")
    if not count:
        now = time.monotonic()
        if now - getattr(client, "_relay_refreshed", 0.0) > REPLICA_MAP_REFRESH_S:
            client._relay_refreshed = now
            client._initialize = True
    return count


async def primary_for(client: RedisCluster, key: str) -> Any:
    await client.initialize()
    return client.nodes_manager.get_node_from_slot(client.keyslot(key))


# What the publishers wait for: one replica within 2 s (a notification lost with its primary would
# leave its change unhandled; a graph write waits as GraphSettings.wait_replicas says).
PUBLISH_WAIT_REPLICAS = 1
PUBLISH_WAIT_TIMEOUT_MS = 2000
# Errors after which the slot's owner is looked up again and the command goes once more.
_REDIRECTS = ("MOVED", "ASK", "CLUSTERDOWN", "READONLY", "TRYAGAIN", "MASTERDOWN", "LOADING")


# What a failover looks like to a client until the promoted replica owns the slots: the dead
# node refusing connections (redis-py's own retries of it do not wait, so they end before the
# promotion does), the slot not covered, the cluster saying it is down, a node still loading.
FAILOVER_ERRORS = (ConnectionError, TimeoutError, ClusterDownError, SlotNotCoveredError, RedisClusterException, OSError)


def _passing(exc: BaseException) -> bool:
    if isinstance(exc, ResponseError) and not isinstance(exc, ClusterDownError):
        return str(exc).startswith(_REDIRECTS)
    return isinstance(exc, FAILOVER_ERRORS)


async def through_failover(client: RedisCluster, call, *, what: str, failover_wait_s: float = 30.0):
    """`await call()`, again after a pause while the failure is one a failover causes, until
    `failover_wait_s`; the slot map is read again before each new try."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + failover_wait_s
    delay = 0.05
    while True:
        try:
            return await call()
        except Exception as exc:
            if not _passing(exc) or loop.time() > deadline:
                raise
            log.info("%s: %s; asking the cluster again in %.2fs", what, exc, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)
            await refresh(client)


async def refresh(client: RedisCluster, every_s: float = 0.25) -> None:
    """Reads the slot map again (the promoted replica), once for all the callers that failed at
    the same time: many at once would close the nodes' connections under each other."""
    lock = getattr(client, "_relay_refresh_lock", None)
    if lock is None:
        lock = client._relay_refresh_lock = asyncio.Lock()
    async with lock:
        now = time.monotonic()
        if now - getattr(client, "_relay_refreshed_at", 0.0) < every_s:
            return
        client._relay_refreshed_at = now
        client._initialize = True
        try:
            await client.initialize()
        except FAILOVER_ERRORS as exc:
            log.info("the slot map could not be read yet: %s", exc)
            return
        await heal_default_node(client)


async def heal_default_node(client: RedisCluster) -> bool:
    """redis-py asks its default node which keys a command with moving keys names (XREADGROUP,
    the consumers' read), before any retry: with that node dead every such command fails until
    another is the default. Pings it and, if it is gone, makes a live primary the default (True)."""
    try:
        node = client.get_default_node()
        if node is None:
            return False
        await client.execute_command("PING", target_nodes=node)
        return False
    except FAILOVER_ERRORS:
        client.replace_default_node()
        log.info("the default cluster node was gone; now %s", client.get_default_node().name)
        return True


async def on_primary(client: RedisCluster, key: str, command: tuple, *, wait_replicas: int, wait_timeout_ms: int,
                     failover_wait_s: float = 30.0) -> tuple[Any, int | None]:
    """`command` (about `key`) on the primary owning key's slot, then WAIT on the same connection
    (a cluster pipeline sends one node's commands on one connection, in order), so the reply
    comes with how many replicas have the write. Through a failover (the primary not answering,
    or no longer owning the slot): the command goes once more, to the promoted replica
    (`through_failover`). Returns (reply, replicas that acknowledged, or None without a WAIT); a
    reply that is an error is returned as the exception, not raised."""

    async def once() -> tuple[Any, int | None]:
        node = await primary_for(client, key)
        # A shard whose replica is gone (promoted after a failover, not yet replaced) has none to
        # wait for: waiting would only slow every write down by the timeout. Such a write
        # reports 0 replicas (the caller counts it).
        wanted = min(wait_replicas, replicas_known(client, key))
        pipe = client.pipeline()
        pipe.execute_command(*command, target_nodes=node)
        if wanted:
            pipe.execute_command("WAIT", wanted, wait_timeout_ms, target_nodes=node)
        replies = await pipe.execute(raise_on_error=False)
        if isinstance(replies[0], Exception) and _passing(replies[0]):
            raise replies[0]
        if not wait_replicas:
            return replies[0], None
        return replies[0], (replies[1] if wanted and isinstance(replies[1], int) else 0)

    return await through_failover(client, once, what=f"{command[0]} on {key}", failover_wait_s=failover_wait_s)


# ------------------------------------------------------------------ forming a cluster


def _client(host: str, port: int, password: str | None) -> redis.Redis:
    return redis.Redis(host=host, port=port, password=password, decode_responses=True, socket_timeout=5)


def _info(client: redis.Redis) -> dict[str, str]:
    text = client.execute_command("CLUSTER", "INFO")
    if isinstance(text, dict):
        return {k: str(v) for k, v in text.items()}
    return dict(line.split(":", 1) for line in str(text).splitlines() if ":" in line)


def slot_ranges(shards: int) -> list[tuple[int, int]]:
    """16384 slots in `shards` contiguous ranges, as even as can be."""
    if shards < 1:
        raise ValueError("a cluster needs at least one shard")
    bounds = [SLOTS * i // shards for i in range(shards + 1)]
    return [(bounds[i], bounds[i + 1] - 1) for i in range(shards)]


def layout(shards: int, replicas: int) -> list[int | None]:
    """For each node (primaries first, then each primary's replicas in turn): the index of the
    primary it replicates, None for a primary."""
    return [None] * shards + [i for i in range(shards) for _ in range(replicas)]


def form(addresses: list[tuple[str, int]], shards: int, replicas: int, *, password: str | None = None,
         timeout: float = 60.0) -> bool:
    """Makes fresh cluster nodes one cluster: slots to the primaries, every node MEETs the first,
    each replica REPLICATEs its primary; waits until the cluster says ok. False (and nothing done)
    if the nodes already form it (a restart: nodes.conf kept their state)."""
    roles = layout(shards, replicas)
    if len(addresses) != len(roles):
        raise ValueError(f"{shards} shards with {replicas} replicas each are {len(roles)} nodes, not {len(addresses)}")
    clients = [_client(h, p, password) for h, p in addresses]
    try:
        first = _info(clients[0])
        if int(first.get("cluster_slots_assigned", 0)) == SLOTS and int(first.get("cluster_known_nodes", 0)) == len(roles):
            return False
        if any(int(_info(c).get("cluster_known_nodes", 1)) > 1 for c in clients):
            raise RuntimeError("the cluster nodes are half-formed (an earlier start was cut short); "
                               "remove their data folders and start again")
        for client, (lo, hi) in zip(clients, slot_ranges(shards)):
            client.execute_command("CLUSTER", "ADDSLOTSRANGE", lo, hi)
        for i, client in enumerate(clients):
            client.execute_command("CLUSTER", "SET-CONFIG-EPOCH", i + 1)
        host0, port0 = addresses[0]
        for client in clients[1:]:
            client.execute_command("CLUSTER", "MEET", _ip(host0), port0)
        deadline = time.monotonic() + timeout
        _wait(lambda: all(int(_info(c).get("cluster_known_nodes", 0)) == len(roles) for c in clients),
              deadline, "the nodes to meet")
        ids = [c.execute_command("CLUSTER", "MYID") for c in clients]
        for client, primary in zip(clients, roles):
            if primary is not None:
                _wait(lambda: _replicate(client, ids[primary]), deadline, "a replica to follow its primary")
        _wait(lambda: all(_info(c).get("cluster_state") == "ok" for c in clients), deadline, "cluster_state ok")
        _wait(lambda: all(_linked(c) for c, r in zip(clients, roles) if r is not None), deadline,
              "the replicas to sync")
        # every node's view has every replica (what a client's slot map is read from)
        _wait(lambda: all(_replicas_seen(c) == replicas * shards for c in clients), deadline,
              "every node to see the replicas")
        return True
    finally:
        for c in clients:
            c.close()


def _ip(host: str) -> str:
    """CLUSTER MEET takes an address, not a name (compose names its containers)."""
    return socket.gethostbyname(host)


def meet_again(addresses: list[tuple[str, int]], *, password: str | None = None, timeout: float = 30.0) -> None:
    """Every node MEETs every other at its address now: after a restart under compose a
    container may come back on another address, which the nodes' nodes.conf does not know (a
    node already known at that address answers the handshake and nothing changes)."""
    clients = [_client(h, p, password) for h, p in addresses]
    try:
        for i, client in enumerate(clients):
            for j, (host, port) in enumerate(addresses):
                if i != j:
                    client.execute_command("CLUSTER", "MEET", _ip(host), port)
        # until the handshakes are over (a node met at an address it is known by ends as that node)
        _wait(lambda: not any("handshake" in str(c.execute_command("CLUSTER", "NODES")) for c in clients),
              time.monotonic() + timeout, "the nodes' handshakes to end")
    finally:
        for c in clients:
            c.close()


def _replicate(client: redis.Redis, primary_id: str) -> bool:
    try:
        client.execute_command("CLUSTER", "REPLICATE", primary_id)
        return True
    except ResponseError as exc:  # "Unknown node": the gossip has not reached this node yet
        if "unknown node" in str(exc).lower():
            return False
        raise


def _replicas_seen(client: redis.Redis) -> int:
    return sum(len(r) - 3 for r in client.execute_command("CLUSTER", "SLOTS"))


def _linked(client: redis.Redis) -> bool:
    return client.info("replication").get("master_link_status") == "up"


def _wait(check, deadline: float, what: str) -> None:
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.1)


def wait_healthy(addresses: list[tuple[str, int]], *, password: str | None = None, timeout: float = 60.0) -> None:
    """Until every reachable node says cluster_state ok (after a restart or a failover)."""
    deadline = time.monotonic() + timeout

    def ok() -> bool:
        for h, p in addresses:
            c = _client(h, p, password)
            try:
                if _info(c).get("cluster_state") != "ok":
                    return False
            except (ConnectionError, TimeoutError, ClusterDownError):
                continue  # a dead node does not vote here
            finally:
                c.close()
        return True

    _wait(ok, deadline, "cluster_state ok")


def nodes(address: tuple[str, int], *, password: str | None = None) -> list[dict[str, Any]]:
    """CLUSTER NODES as seen from one node: id, address, role, primary id, slots, whether failed."""
    c = _client(*address, password=password)
    try:
        text = c.execute_command("CLUSTER", "NODES")
    finally:
        c.close()
    out = []
    for line in str(text).splitlines():
        parts = line.split()
        if len(parts) < 8:
            continue
        host, _, port = parts[1].split("@")[0].rpartition(":")
        flags = parts[2].split(",")
        out.append({"id": parts[0], "host": host, "port": int(port), "primary": "master" in flags,
                    "of": None if parts[3] == "-" else parts[3], "failed": "fail" in flags,
                    "slots": parts[8:]})
    return out


def replaced(addresses: list[tuple[str, int]], address: tuple[str, int], *, password: str | None = None) -> bool:
    """Whether the node at `address` holds no slots in the view of a live node: a replica, or a
    primary whose replica the cluster promoted in its place. A node restarted then rejoins as a
    replica (of the promoted primary: a node coming back to slots another owns with a newer
    epoch follows that owner). False while no live node answers or the node still owns slots (the
    failover has not happened yet, or its shard has no replica to promote)."""
    for other in addresses:
        if other == address:
            continue
        try:
            layout = nodes(other, password=password)
        except (ConnectionError, TimeoutError, ResponseError, OSError):
            continue
        me = [n for n in layout if (n["host"], n["port"]) == address]
        return bool(me) and not me[0]["slots"]
    return False


class EmbeddedCluster:
    """`shards` primaries with `replicas` replicas each, on consecutive ports from `port` (primaries
    first), node k's data in `data_dir/node-k` and its log in `log_dir/falkordb-k.log`."""

    def __init__(self, data_dir: Path, port: int, *, shards: int = 3, replicas: int = 1, host: str = "127.0.0.1",
                 log_dir: Path | None = None, module: str | None = None, password: str | None = None,
                 node_class: type[EmbeddedFalkorDB] = EmbeddedFalkorDB, ports: list[int] | None = None,
                 users: str = ""):
        self.shards, self.replicas, self.host, self.password = shards, replicas, host, password or None
        count = len(layout(shards, replicas))
        ports = ports or [port + k for k in range(count)]
        log_dir = Path(log_dir) if log_dir else None
        self.nodes = [
            node_class(Path(data_dir) / f"node-{k}", p, host=host, module=module, password=self.password,
                       cluster=True, users=users, log_file=(log_dir / f"falkordb-{k}.log") if log_dir else None)
            for k, p in enumerate(ports)
        ]

    @property
    def addresses(self) -> list[tuple[str, int]]:
        return [(n.host, n.port) for n in self.nodes]

    @property
    def seeds(self) -> str:
        """RELAY_FALKORDB_CLUSTER for the processes on this cluster."""
        return ",".join(f"{h}:{p}" for h, p in self.addresses)

    def start(self, timeout: float = 60.0) -> "EmbeddedCluster":
        if self.nodes and self.nodes[0].log_file:
            self.nodes[0].log_file.parent.mkdir(parents=True, exist_ok=True)
        started = []
        try:
            for node in self.nodes:
                node.start()
                started.append(node)
            if not form(self.addresses, self.shards, self.replicas, password=self.password, timeout=timeout):
                wait_healthy(self.addresses, password=self.password, timeout=timeout)
        except BaseException:
            for node in reversed(started):
                node.stop(compact_timeout=5)
            raise
        return self

    def stop(self) -> None:
        for node in reversed(self.nodes):
            node.stop()

    def __enter__(self) -> "EmbeddedCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    """`python -m relay_graph.runtime.cluster form SEEDS --shards N --replicas R`: the one-shot that
    forms a cluster of fresh nodes (the compose cluster profile's init service), or, on nodes that
    already form it (a restart), has them meet again at their addresses now and waits until it is
    healthy. The password is RELAY_FALKORDB_PASSWORD."""
    parser = argparse.ArgumentParser(prog="python -m relay_graph.runtime.cluster")
    commands = parser.add_subparsers(dest="command", required=True)
    form_cmd = commands.add_parser("form", help="form the cluster (or, formed already, rejoin it)")
    form_cmd.add_argument("seeds", help="every node, host:port,... primaries first, then each primary's replicas")
    form_cmd.add_argument("--shards", type=int, required=True)
    form_cmd.add_argument("--replicas", type=int, default=1)
    form_cmd.add_argument("--timeout", type=float, default=120.0, help="seconds for the nodes to answer and agree")
    args = parser.parse_args(argv)
    password = os.environ.get("RELAY_FALKORDB_PASSWORD") or None
    try:
        addresses = parse_seeds(args.seeds)
        deadline = time.monotonic() + args.timeout
        for host, port in addresses:  # every node up and resolvable first
            _wait(lambda: _answers(host, port, password), deadline, f"{host}:{port} to answer")
        if form(addresses, args.shards, args.replicas, password=password, timeout=args.timeout):
            print(f"formed a cluster of {args.shards} primaries with {args.replicas} replica(s) each")
        else:
            meet_again(addresses, password=password, timeout=args.timeout)
            wait_healthy(addresses, password=password, timeout=args.timeout)
            print("the nodes already form the cluster; they met again at their addresses and it is healthy")
    except (ValueError, RuntimeError, redis.RedisError, OSError) as exc:
        print(f"cluster: {exc}", file=sys.stderr)
        return 1
    for n in nodes(addresses[0], password=password):
        print(f"  {n['host']}:{n['port']} {'primary' if n['primary'] else 'replica'} {' '.join(n['slots'])}")
    return 0


def _answers(host: str, port: int, password: str | None) -> bool:
    try:
        c = _client(host, port, password)
        try:
            return bool(c.ping())
        finally:
            c.close()
    except (redis.RedisError, OSError):
        return False


if __name__ == "__main__":
    sys.exit(main())
