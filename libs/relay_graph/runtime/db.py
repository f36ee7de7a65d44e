"""One async connection pool to FalkorDB per process, graphs selected by validated tenant id,
indexes (those the loaded packages declared, queries/schema.py) created as a tenant's statements
first need them (a memory-only tenant, never touched by the desk's statements, carries none of its), known once per tenant per process,
looked at again when a package declared more since. Read-only queries travel on connections of their own
(`graph_wire`: recall's reads, the bulk of the traffic, with less overhead), writes on the
pool in the same text, read by the same parser.

On a cluster (RELAY_FALKORDB_CLUSTER, cluster.py) every graph command goes through redis-py's
cluster client, routed by the graph's key (MOVED, ASK and a lost node handled there, retried
through a failover). A write is acknowledged only once a replica of its shard has it too (WAIT
on the write's own connection, `wait_replicas`): the replica is what a failover promotes, so a
write it had not received would be lost with the primary. Reads go to the primary, or with
RELAY_READ_FROM=replica to one of the shard's replicas (READONLY), falling back to the primary
when the replica cannot answer.

A graph is made here and nowhere else: by the first write to a tenant's graph, after
`_prepare`, which first asks whether the tenant is registered (tenancy.tenant_registration) and
refuses one that is not (TenantNotFound). The answer is trusted for `tenant_check_s`, so the check
costs one HEXISTS per tenant that often, not one per query; deleting a tenant forgets it at once
in the deleting process (`forget_tenant`) and waits out that time for the others."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from typing import Any, Callable, TypeVar

import redis.asyncio as aioredis
from falkordb.asyncio import FalkorDB
from falkordb.asyncio.graph import AsyncGraph
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ClusterDownError, ConnectionError, RedisError, ResponseError, TimeoutError

from relay_graph.runtime import cluster, graph_wire, query_log, tenant_data
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.errors import InvalidInput, TenantNotFound
from relay_graph.runtime.queries import Query
from relay_graph.runtime.queries import schema
from relay_graph.runtime.tenancy import graph_name, tenant_registration, validate_tenant
from relay_graph.runtime.times import now_ms

log = logging.getLogger("relay_graph.runtime.db")


def _plain(value: Any) -> Any:
    """Nodes and edges come back as their property maps; everything else as is."""
    props = getattr(value, "properties", None)
    if props is not None and not isinstance(value, dict):
        return dict(props)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


T = TypeVar("T")


def telemetry_key(graph: str) -> str:
    """The stream FalkorDB (4.x) keeps of a graph's queries, with their parameters."""
    return "telemetry{" + graph + "}"


# A tenant's graph, and FalkorDB's telemetry stream of it (the queries' texts and parameters).
tenant_data.declare(
    tenant_data.Key("graph", graph_name),
    tenant_data.Key("graph telemetry", lambda tenant: telemetry_key(graph_name(tenant))),
)

# A write that writes nothing: it makes an empty graph, which reads of a new tenant then find.
_MAKE_GRAPH = Query("graph_make", "RETURN 0")


class _ClusterDb:
    """What GraphClient uses of falkordb's FalkorDB, on a cluster client (each graph command
    routed by its key)."""

    def __init__(self, redis: RedisCluster):
        self.connection = redis
        self.execute_command = redis.execute_command

    def select_graph(self, name: str) -> AsyncGraph:
        return AsyncGraph(self, name)


class NotReplicated(RedisError):
    """A write reached its shard's primary but no replica acknowledged it in time."""


class GraphClient:
    """Runs named queries against a tenant's graph and returns rows as dicts."""

    def kept(self, key: str, make: Callable[[], T]) -> T:
        """State another layer keeps with this client (made by `make` the first time), under a key
        naming its owner ("lab.truth.ready"): two clients never share it, and it goes with the
        client. The runtime knows nothing of what is kept."""
        try:
            return self._kept[key]
        except KeyError:
            return self._kept.setdefault(key, make())

    def __init__(self, settings: GraphSettings | None = None, *, pool: aioredis.BlockingConnectionPool | None = None):
        self.settings = settings or GraphSettings()
        # tenant -> (the schema generation its indexes were ensured at, until when (monotonic) its
        # registration is trusted, the registration seen: another one is a tenant created anew)
        self._ready: dict[str, tuple[int, float, str]] = {}
        self._migrated: dict[str, set[str]] = {}  # tenant -> the migrations run on it in this process
        # tenant -> the indexes (schema.Indexes entries) this process knows its graph has
        self._indexed: dict[str, set[tuple]] = {}
        self._needs: dict[tuple[str, bool], schema.Indexes] = {}  # (statement, read-only) -> indexes it needs
        self._schema_lock = asyncio.Lock()
        self.udfs = False  # relay.* functions loaded (udf.py)
        self._kept: dict[str, Any] = {}
        # The last queries this process ran, newest last: what an operator reads to see what a
        # process is doing (GET /v1/admin/queries), bounded so it costs nothing to keep.
        self.recent: deque[dict[str, Any]] = deque(maxlen=self.settings.query_log_size)
        self.replica_reads = 0  # reads a replica answered (cluster, read_from=replica)
        self.unreplicated = 0  # writes no replica acknowledged within wait_timeout_ms
        self.cluster = pool is None and bool(cluster.parse_seeds(self.settings.falkordb_cluster))
        if self.cluster:
            self.pool = None
            self.redis = cluster.connect(self.settings, decode_responses=True,
                                         max_connections=self.settings.max_connections)
            self.replicas = (cluster.connect(self.settings, decode_responses=True, replica_reads=True,
                                             max_connections=self.settings.max_connections)
                             if self.settings.read_from == "replica" else None)
            self.db = _ClusterDb(self.redis)
            self.reads = None
            self.shared_log = self._shared_log()
            return
        self.replicas = None
        self.pool = pool or aioredis.BlockingConnectionPool(
            host=self.settings.falkordb_host,
            port=self.settings.falkordb_port,
            username=self.settings.falkordb_user,
            password=self.settings.falkordb_password,
            max_connections=self.settings.max_connections,
            timeout=30,
            decode_responses=True,
        )
        self.db = FalkorDB(connection_pool=self.pool)
        self.redis = aioredis.Redis(connection_pool=self.pool)
        where = self.pool.connection_kwargs  # the reads go where the pool goes
        self.reads = graph_wire.Connections(where.get("host", "localhost"), where.get("port", 6379),
                                            where.get("password"), self.pool.max_connections,
                                            username=where.get("username"))
        self.shared_log = self._shared_log()

    def _shared_log(self) -> query_log.SharedQueryLog:
        """Every process's queries, per tenant, where the console reads them (query_log.py)."""
        return query_log.SharedQueryLog(self.redis, size=self.settings.query_log_size,
                                        flush_s=self.settings.query_log_flush_s)

    def _graph(self, tenant: str):
        return self.db.select_graph(graph_name(tenant))

    async def ensure_udfs(self) -> None:
        """Loads the relay.* functions (udf.py) once per process, before its first query."""
        if not self.udfs:
            async with self._schema_lock:
                if not self.udfs:
                    from relay_graph.runtime import udf  # udf reads the catalogue's constants, whose package imports this one

                    if self.cluster:  # functions are per node: every primary, and its replicas by replication
                        await self.redis.initialize()
                        await self.redis.execute_command(*udf.load_command(), target_nodes=self.redis.get_primaries())
                    elif not udf.loaded(await self.redis.execute_command(*udf.LIST_COMMAND)):
                        await self.redis.execute_command(*udf.load_command())
                    self.udfs = True

    async def check_tenant(self, tenant: str) -> None:
        """TenantNotFound unless the tenant is registered (asked again after `tenant_check_s`)."""
        validate_tenant(tenant)
        ready = self._ready.get(tenant)
        if ready is not None and time.monotonic() < ready[1]:
            return
        until = time.monotonic() + self.settings.tenant_check_s
        try:
            seen = await tenant_registration(self.redis, tenant)
        except cluster.FAILOVER_ERRORS:
            if ready is None:
                raise
            # the registry's shard is failing over: a tenant registered a moment ago still is (its
            # writes ride out the failover themselves)
            self._ready[tenant] = (ready[0], until, ready[2])
            return
        if seen is None:
            self.forget_tenant(tenant)
            raise TenantNotFound(f"no tenant {tenant!r}: it was never created or it was deleted; "
                                 "create it with POST /v1/tenants (admin key)")
        if ready is not None and ready[2] != seen:  # deleted and created again: nothing of the old one holds
            self.forget_tenant(tenant)
            ready = None
        self._ready[tenant] = (ready[0] if ready is not None else -1, until, seen)

    async def is_registered(self, tenant: str) -> bool:
        """check_tenant as a yes or no (the stream consumers drop a deleted tenant's entries)."""
        try:
            await self.check_tenant(tenant)
        except TenantNotFound:
            return False
        return True

    def forget_tenant(self, tenant: str) -> None:
        """What this process knows of a tenant (its indexes, the migrations it ran on it, its
        registration, and its entry in what other layers keep here by tenant id, `kept`), after a
        delete, a reset or a restore: a tenant created again under the same name, or a graph put
        back from a snapshot, starts from nothing."""
        self._ready.pop(tenant, None)
        self._indexed.pop(tenant, None)
        self._migrated.pop(tenant, None)
        for value in self._kept.values():
            if isinstance(value, set):
                value.discard(tenant)
            elif isinstance(value, dict):
                value.pop(tenant, None)

    async def ensure_schema(self, tenant: str) -> None:
        """The tenant ready, with every declared index (a statement run needs only its own:
        `run` creates those as it goes, schema.needed)."""
        await self._prepare(tenant, None)

    async def ensure_migrated(self, tenant: str) -> None:
        """The tenant ready (registration checked, functions loaded, migrations run) and no index
        made: the statements run make theirs as they need them."""
        await self._prepare(tenant, _MAKE_GRAPH)

    async def _prepare(self, tenant: str, query: Query | None) -> None:
        """Registration checked, functions loaded and migrations run once, then the indexes the
        statement needs (every declared one for None) that this process has not seen on the
        tenant's graph yet."""
        validate_tenant(tenant)
        ready = self._ready.get(tenant)
        wanted = schema.generation()
        if ready is None or ready[0] != wanted or time.monotonic() >= ready[1]:
            await self.check_tenant(tenant)
            if self._ready[tenant][0] != wanted:
                await self.ensure_udfs()
                async with self._schema_lock:
                    if self._ready[tenant][0] != wanted:
                        self._indexed.pop(tenant, None)  # a package declared more: look again
                        if not await self.graph_exists(tenant):  # made empty: a read of it finds nothing
                            await self._run(tenant, _MAKE_GRAPH, None)
                            # nothing in it to migrate; run, a migration's statements would stay
                            # in FalkorDB's plan cache of the graph for nothing
                            self._migrated.setdefault(tenant, set()).update(name for name, _ in schema.migrations())
                        await self._migrate(tenant)
                        _, until, seen = self._ready[tenant]  # check_tenant made the entry
                        self._ready[tenant] = (wanted, until, seen)
        if query is None:
            indexes = schema.declared()
        else:
            indexes = self._needs.get((query.cypher, query.read_only))
            if indexes is None:
                indexes = self._needs.setdefault((query.cypher, query.read_only),
                                                 schema.needed(query.cypher, query.read_only))
        have = self._indexed.setdefault(tenant, set())
        missing = [i for i in (*indexes.range, *indexes.fulltext, *indexes.vector) if i not in have]
        if missing:
            async with self._schema_lock:
                await self._create_indexes(tenant, indexes, have)

    async def _create_indexes(self, tenant: str, indexes: schema.Indexes, have: set) -> None:
        g = self._graph(tenant)
        found = set()
        try:
            res = await g.ro_query(schema.LIST_INDEXES)
            for label, props, types in res.result_set:
                for p in props:
                    found.add((label, p, tuple(types.get(p, [])) if isinstance(types, dict) else ()))
        except Exception:  # a graph that does not exist yet has no indexes
            pass
        pairs = {(l, p) for l, p, _ in found}
        kinds = {(l, p, k) for l, p, ks in found for k in ks}
        created = False
        for label, prop in indexes.range:
            if (label, prop, "RANGE") not in kinds and (label, prop) not in pairs:
                created = await self._create(g, schema.range_index(label, prop)) or created
            have.add((label, prop))
        for label, prop in indexes.fulltext:
            if (label, prop, "FULLTEXT") not in kinds:
                created = await self._create(g, schema.FULLTEXT_INDEX, {"label": label, "prop": prop}) or created
            have.add((label, prop))
        for label, prop, dim in indexes.vector:
            if (label, prop, "VECTOR") not in kinds:
                created = await self._create(g, schema.vector_index(label, prop, dim)) or created
            have.add((label, prop, dim))
        if created:
            await self._await_operational(g)

    async def _migrate(self, tenant: str) -> None:
        """The packages' declared migrations (schema.declare_migration), once per tenant per process.
        One that fails is logged and tried again by the next process: the tenant keeps working."""
        done = self._migrated.setdefault(tenant, set())
        for name, migrate in schema.migrations():
            if name in done:
                continue
            done.add(name)
            try:
                await migrate(lambda query, params=None: self._run(tenant, query, params), tenant)
            except Exception:  # noqa: BLE001 - a migration must not take the tenant down
                log.exception("migration %s of tenant %s failed; the next start tries again", name, tenant)

    @staticmethod
    async def _await_operational(g, timeout_s: float = 10.0) -> None:
        # FalkorDB builds indexes in the background; until one is OPERATIONAL the planner ignores it
        # and a hot query scans. Under load that window is long enough to matter.
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            res = await g.ro_query(schema.INDEX_STATUS)
            if all(status == "OPERATIONAL" for (status,) in res.result_set) or loop.time() > deadline:
                return
            await asyncio.sleep(0.02)

    @staticmethod
    async def _create(g, cypher: str, params: dict | None = None) -> bool:
        try:
            await g.query(cypher, params)
            return True
        except Exception as exc:  # another process created it first
            if "already" not in str(exc).lower():
                raise
            return False

    async def run(self, tenant: str, query: Query, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        await self._prepare(tenant, query)  # first: a refused tenant leaves no entry in any log
        started, ok, rows = time.perf_counter(), False, 0
        try:
            try:
                result = await self._run(tenant, query, params)
            except ResponseError as exc:
                if "db.idx." not in str(exc) or not self._indexed.pop(tenant, None):
                    raise
                # An index this process saw on the graph is gone (the graph was restored from a
                # snapshot, copied or replaced by another process): look again, then run once more.
                await self._prepare(tenant, query)
                result = await self._run(tenant, query, params)
            ok, rows = True, len(result)
            return result
        finally:
            entry = {"query": query.name, "tenant": tenant, "ok": ok, "rows": rows,
                     "ms": round((time.perf_counter() - started) * 1000, 3), "at_ms": now_ms()}
            self.recent.append(entry)
            self.shared_log.record(tenant, entry, read_only=query.read_only, params=params,
                                   housekeeping=query.housekeeping)

    async def _run(self, tenant: str, query: Query, params: dict[str, Any] | None) -> list[dict[str, Any]]:
        g = self._graph(tenant)
        # every statement in graph_wire's text, its reply read by graph_wire (for a big write batch
        # the falkordb client's parameter text and parser cost more than the server's work)
        text = graph_wire.params_header(params) + query.cypher
        if self.cluster:
            reply = await (self._cluster_read if query.read_only else self._cluster_write)(g.name, text)
        elif query.read_only:  # on connections of their own: recall's reads are most of the traffic
            reply = await self.reads.call("GRAPH.RO_QUERY", g.name, text, "--compact")
        else:
            reply = await self.redis.execute_command("GRAPH.QUERY", g.name, text, "--compact")
        return await graph_wire.rows(reply, g, _plain)

    async def _cluster_read(self, key: str, text: str) -> Any:
        if self.replicas is not None:
            try:
                node = await cluster.replica_for(self.replicas, key)
                if node is not None:
                    reply = await self.replicas.execute_command("GRAPH.RO_QUERY", key, text, "--compact",
                                                                target_nodes=node)
                    self.replica_reads += 1
                    return reply
            except (ConnectionError, TimeoutError, ClusterDownError) as exc:
                log.debug("replica read of %s failed (%s); asking the primary", key, exc)
            except ResponseError as exc:
                if not str(exc).startswith(("MOVED", "ASK", "LOADING", "MASTERDOWN")):
                    raise
                log.debug("replica read of %s refused (%s); asking the primary", key, exc)
        return await cluster.through_failover(
            self.redis, lambda: self.redis.execute_command("GRAPH.RO_QUERY", key, text, "--compact"),
            what=f"a read of {key}", failover_wait_s=self.settings.failover_wait_s)

    async def _cluster_write(self, key: str, text: str) -> Any:
        """On the shard's primary, acknowledged once `wait_replicas` replicas have it (WAIT), and
        carried through a failover (cluster.on_primary). Going again after a lost connection is
        safe: writes are idempotent (MERGE, versions)."""
        s = self.settings
        reply, acked = await cluster.on_primary(self.redis, key, ("GRAPH.QUERY", key, text, "--compact"),
                                                wait_replicas=s.wait_replicas, wait_timeout_ms=s.wait_timeout_ms,
                                                failover_wait_s=s.failover_wait_s)
        graph_wire.raise_for_errors(reply)
        if s.wait_replicas and acked is not None and acked < s.wait_replicas:
            self.unreplicated += 1  # on the primary, not yet on a replica: a failover now would lose it
            if s.require_replica_ack:
                raise NotReplicated(f"no replica of {key}'s shard acknowledged the write within {s.wait_timeout_ms} ms")
        return reply

    async def explain(self, tenant: str, query: Query, params: dict[str, Any] | None = None) -> str:
        await self._prepare(tenant, query)
        try:
            plan = await self._graph(tenant).explain(query.cypher, params)
        except ResponseError as exc:  # a value the planner needs (a LIMIT's) was not given
            raise InvalidInput(f"FalkorDB cannot plan {query.name} with these values: {exc}",
                               code="not_plannable") from None
        return str(plan)

    async def profile(self, tenant: str, query: Query, params: dict[str, Any] | None = None) -> str:
        """GRAPH.PROFILE: runs the statement and returns its plan with each operation's records
        and time. Only for read-only statements (a write would be done again)."""
        if not query.read_only:
            raise ValueError(f"{query.name} writes; only read-only statements are profiled")
        await self._prepare(tenant, query)
        # The raw reply: falkordb's ExecutionPlan drops the records and times from its text.
        reply = await self.redis.execute_command("GRAPH.PROFILE", graph_name(tenant),
                                                 graph_wire.params_header(params) + query.cypher)
        return "\n".join(line.decode() if isinstance(line, bytes) else str(line) for line in reply)

    async def graph_exists(self, tenant: str) -> bool:
        return bool(await self.redis.exists(graph_name(tenant)))

    async def all_graphs(self) -> list[str]:
        """Every graph on the server, or on every primary of the cluster (each lists its slots')."""
        if cluster.is_cluster(self.redis):
            await self.redis.initialize()
            per_node = await self.redis.execute_command("GRAPH.LIST", target_nodes=self.redis.get_primaries())
            lists = per_node.values() if isinstance(per_node, dict) else [per_node]
            names = {g for found in lists for g in found}
        else:
            names = set(await self.redis.execute_command("GRAPH.LIST"))
        return sorted(n.decode() if isinstance(n, bytes) else n for n in names)

    def raw(self):
        """A new client on the same server or cluster that answers bytes (DUMP, RESTORE); the
        caller closes it."""
        return cluster.connect(self.settings if self.cluster else self.settings.model_copy(update={
            "falkordb_host": self.pool.connection_kwargs.get("host", self.settings.falkordb_host),
            "falkordb_port": self.pool.connection_kwargs.get("port", self.settings.falkordb_port),
            "falkordb_cluster": ""}), decode_responses=False)

    async def ping(self) -> bool:
        return bool(await self.redis.ping())

    async def close(self) -> None:
        await self.shared_log.close()
        if self.cluster:
            await self.redis.aclose()
            if self.replicas is not None:
                await self.replicas.aclose()
            return
        self.reads.close()
        await self.pool.disconnect()
