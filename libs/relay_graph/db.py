"""One async connection pool to FalkorDB per process, graphs selected by validated tenant id,
indexes ensured once per tenant per process. Read-only queries travel on connections of their own
(`graph_wire`: recall's reads, the bulk of the traffic, with less overhead), writes through the
falkordb client."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Any

import redis.asyncio as aioredis
from falkordb.asyncio import FalkorDB

from . import graph_wire
from .config import GraphSettings
from .queries import Query
from .queries import schema
from .tenancy import graph_name, validate_tenant


def _plain(value: Any) -> Any:
    """Nodes and edges come back as their property maps; everything else as is."""
    props = getattr(value, "properties", None)
    if props is not None and not isinstance(value, dict):
        return dict(props)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class GraphClient:
    """Runs named queries against a tenant's graph and returns rows as dicts."""

    def __init__(self, settings: GraphSettings | None = None, *, pool: aioredis.BlockingConnectionPool | None = None):
        self.settings = settings or GraphSettings()
        self.pool = pool or aioredis.BlockingConnectionPool(
            host=self.settings.falkordb_host,
            port=self.settings.falkordb_port,
            password=self.settings.falkordb_password,
            max_connections=self.settings.max_connections,
            timeout=30,
            decode_responses=True,
        )
        self.db = FalkorDB(connection_pool=self.pool)
        self.redis = aioredis.Redis(connection_pool=self.pool)
        where = self.pool.connection_kwargs  # the reads go where the pool goes
        self.reads = graph_wire.Connections(where.get("host", "localhost"), where.get("port", 6379),
                                            where.get("password"), self.pool.max_connections)
        self._ready: set[str] = set()
        self._schema_lock = asyncio.Lock()
        self.udfs = False  # relay.* functions loaded (udf.py)
        # The last queries this process ran, newest last: what an operator reads to see what a
        # process is doing (GET /v1/admin/queries), bounded so it costs nothing to keep.
        self.recent: deque[dict[str, Any]] = deque(maxlen=self.settings.query_log_size)

    def _graph(self, tenant: str):
        return self.db.select_graph(graph_name(tenant))

    async def ensure_udfs(self) -> None:
        """Loads the relay.* functions (udf.py) once per process, before its first query."""
        if not self.udfs:
            async with self._schema_lock:
                if not self.udfs:
                    from . import udf  # udf reads the catalogue's constants, whose package imports this one

                    await self.redis.execute_command(*udf.load_command())
                    self.udfs = True

    async def ensure_schema(self, tenant: str) -> None:
        validate_tenant(tenant)
        if tenant in self._ready:
            return
        await self.ensure_udfs()
        async with self._schema_lock:
            if tenant in self._ready:
                return
            g = self._graph(tenant)
            have = set()
            try:
                res = await g.ro_query(schema.LIST_INDEXES)
                for label, props, types in res.result_set:
                    for p in props:
                        have.add((label, p, tuple(types.get(p, [])) if isinstance(types, dict) else ()))
            except Exception:  # a graph that does not exist yet has no indexes
                pass
            have_pairs = {(l, p) for l, p, _ in have}
            have_kinds = {(l, p, k) for l, p, ks in have for k in ks}
            for label, prop in schema.RANGE_INDEXES:
                if (label, prop, "RANGE") not in have_kinds and (label, prop) not in have_pairs:
                    await self._create(g, schema.range_index(label, prop))
            for label, prop in schema.FULLTEXT_INDEXES:
                if (label, prop, "FULLTEXT") not in have_kinds:
                    await self._create(g, schema.FULLTEXT_INDEX, {"label": label, "prop": prop})
            for label, prop, dim in schema.VECTOR_INDEXES:
                if (label, prop, "VECTOR") not in have_kinds:
                    await self._create(g, schema.vector_index(label, prop, dim))
            await self._await_operational(g)
            self._ready.add(tenant)

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
    async def _create(g, cypher: str, params: dict | None = None) -> None:
        try:
            await g.query(cypher, params)
        except Exception as exc:  # another process created it first
            if "already" not in str(exc).lower():
                raise

    async def run(self, tenant: str, query: Query, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        started, ok, rows = time.perf_counter(), False, 0
        try:
            result = await self._run(tenant, query, params)
            ok, rows = True, len(result)
            return result
        finally:
            self.recent.append({"query": query.name, "tenant": tenant, "ok": ok, "rows": rows,
                                "ms": round((time.perf_counter() - started) * 1000, 3),
                                "at_ms": int(time.time() * 1000)})

    async def _run(self, tenant: str, query: Query, params: dict[str, Any] | None) -> list[dict[str, Any]]:
        await self.ensure_schema(tenant)
        g = self._graph(tenant)
        if query.read_only:  # the lean way (graph_wire): recall's reads are most of the traffic
            reply = await self.reads.call("GRAPH.RO_QUERY", g.name, graph_wire.params_header(params) + query.cypher,
                                          "--compact")
            return await graph_wire.rows(reply, g, _plain)
        res = await g.query(query.cypher, params)
        cols = [h[1] if isinstance(h, (list, tuple)) else h for h in res.header]
        return [{c: _plain(v) for c, v in zip(cols, row)} for row in res.result_set]

    async def explain(self, tenant: str, query: Query, params: dict[str, Any] | None = None) -> str:
        await self.ensure_schema(tenant)
        plan = await self._graph(tenant).explain(query.cypher, params)
        return str(plan)

    async def graph_exists(self, tenant: str) -> bool:
        return bool(await self.redis.exists(graph_name(tenant)))

    async def ping(self) -> bool:
        return bool(await self.redis.ping())

    async def close(self) -> None:
        self.reads.close()
        await self.pool.disconnect()
