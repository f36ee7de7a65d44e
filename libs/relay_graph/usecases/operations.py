"""What an operator does to one tenant's graph: snapshots (GRAPH.COPY), reset, delete, forgetting
one customer, and the server's own figures (GRAPH.SLOWLOG, GRAPH.MEMORY USAGE, counts).

A snapshot is a copy of the tenant's graph under `relay-snapshot:{relay:<tenant>}:<name>`, indexes and
all (GRAPH.COPY copies the schema; the graph's name as hash tag keeps the copy in its slot on a cluster); it is not a tenant graph (the `relay:` prefix is never its start),
so no request reaches it. Restoring replaces the graph by a copy of the snapshot, which stays (a
deleted tenant's kept snapshots come back only this way: create the tenant again, then restore). A
reset takes a snapshot first (`pre-reset-<ms>`), then removes the graph and makes it again, empty,
with its indexes (so every process's index cache stays true).

Deleting a tenant removes everything kept for it, as the modules that keep it declared
(runtime/tenant_data.py): its registration and keys first (no key authenticates, no process makes
its graph again: db.GraphClient.check_tenant), then its graph and FalkorDB's telemetry of it, its
lab's truth, its snapshots (unless kept), its regional desk registration, its agents' keys, customer sessions, site flag, limits,
Idempotency-Key claims, query log, simulator control, the outbox's pending mark and Judge mode's
timer. Every process trusts a registration for `tenant_check_s`, so the removal runs twice, that
long apart: what a process that had not yet heard wrote in between goes too. A tenant created
again under the same name starts clean. Reset and delete need `confirm` equal to the tenant id. Moving a tenant to another
deployment (`move_tenant`, `relay move-tenant`) copies its graph and snapshots with DUMP/RESTORE and
its admin entries, checks the copy and removes the source."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from pydantic import BaseModel
from redis.exceptions import ResponseError

from relay_graph.runtime import query_log, tenant_data, tenancy  # noqa: F401 (query_log declares its key)
from relay_graph.usecases import simulator_control  # noqa: F401 (declares its key)
import relay_graph.lab  # noqa: F401 (its truth module declares the truth graph)
from relay_graph.desk.customers import regional_desks as regional_desks  # noqa: F401 (declares a tenant's desk registration)
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import AlreadyExists, InvalidInput, NotFound, Unavailable
from relay_graph.desk.network.store import customer_identity
from relay_graph.usecases.queries import operations as q
from relay_graph.runtime.times import now_ms
from relay_graph.runtime.tenancy import (
    admin_entries,
    graph_name,
    remove_admin_entries,
    restore_admin_entries,
    tenant_registered,
    validate_tenant,
)

SNAPSHOT_PREFIX = "relay-snapshot:"
SNAPSHOT_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")


class Snapshot(BaseModel):
    name: str
    key: str


class ForgetReceipt(BaseModel):
    customer: str
    episodes: int
    sessions: int
    facts: int
    fact_texts: int
    conflicts: int
    slots: int
    tickets: int
    ticket_parts: int  # ticket events and technician visits
    case_moves: int
    entity: int  # 1 if the customer's node was there
    entity_edges: int  # edges still on the customer's node when it went (mirrors, line, others)
    named_entities: int  # entities only their facts named (their phone number, say), gone with them


class GraphMemory(BaseModel):
    graph: str  # the key: the tenant's graph, or one of its snapshots
    total_mb: float  # GRAPH.MEMORY USAGE total_graph_sz_mb: FalkorDB counts whole MB, so a small graph is 0
    parts_mb: dict[str, float]  # its matrices, node and edge blocks, attributes and indices, as FalkorDB reports them


class ServerMemory(BaseModel):
    used_bytes: int  # INFO memory used_memory: the whole server, every tenant
    dataset_bytes: int | None  # used_memory_dataset: the data, without the server's own overhead
    peak_bytes: int | None


class GraphStats(BaseModel):
    tenant: str
    exists: bool
    nodes: dict[str, int]  # by label (a node with two labels counts under both)
    edges: dict[str, int]  # by type
    memory_mb: float | None  # GRAPH.MEMORY USAGE total_graph_sz_mb (whole MB: 0 means under 1 MB)
    slowlog: list[dict[str, Any]]  # GRAPH.SLOWLOG: the slowest recent queries
    graphs: list[GraphMemory] = []  # per graph: the tenant's, then its snapshots
    server: ServerMemory | None = None  # INFO memory; None when the server refuses INFO


def snapshot_key(tenant: str, name: str) -> str:
    validate_tenant(tenant)
    if not isinstance(name, str) or not SNAPSHOT_NAME_RE.fullmatch(name):
        raise InvalidInput("snapshot name must match ^[a-z0-9][a-z0-9-]{0,62}$")
    return f"{_snapshot_prefix(tenant)}{name}"


def _snapshot_prefix(tenant: str) -> str:
    return SNAPSHOT_PREFIX + "{" + graph_name(tenant) + "}:"


# The tenant's snapshots and FalkorDB's telemetry of them: kept on delete when the operator asks.
tenant_data.declare(
    tenant_data.Keys("snapshots", lambda tenant: _snapshot_prefix(tenant) + "*", optional=True),
    tenant_data.Keys("snapshot telemetry", lambda tenant: "telemetry{" + _snapshot_prefix(tenant) + "*",
                     optional=True),
)


def _confirm(tenant: str, confirm: object) -> None:
    if confirm != tenant:
        raise InvalidInput(f"confirm must be the tenant id ({tenant!r}) to go ahead", code="confirmation_required")


async def all_graphs(client: GraphClient) -> list[str]:
    """Every graph on the server, or on every primary of the cluster."""
    return await client.all_graphs()


COPY_PATIENCE_S = 20.0


async def _copy(client: GraphClient, source: str, target: str) -> None:
    """GRAPH.COPY, which forks: while the server has a child of its own (a background save or AOF
    rewrite) the fork is refused ("could not fork"), so the copy is tried again for a while; after
    that the caller hears 503 and retries (the source is untouched)."""
    loop = asyncio.get_running_loop()
    deadline, delay = loop.time() + COPY_PATIENCE_S, 0.1
    while True:
        try:
            await client.redis.execute_command("GRAPH.COPY", source, target)
            return
        except ResponseError as exc:
            if "could not fork" not in str(exc):
                raise
            if loop.time() > deadline:
                raise Unavailable("FalkorDB could not fork for the copy (a background save is running); "
                                  "retry shortly") from exc
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)


async def create_snapshot(client: GraphClient, tenant: str, name: str) -> Snapshot:
    key = snapshot_key(tenant, name)
    if not await client.graph_exists(tenant):
        raise NotFound(f"tenant {tenant!r} has no graph", code="graph_not_found")
    if await client.redis.exists(key):
        raise AlreadyExists(f"snapshot {name!r} exists", code="snapshot_exists")
    await _copy(client, graph_name(tenant), key)
    return Snapshot(name=name, key=key)


async def list_snapshots(client: GraphClient, tenant: str) -> list[Snapshot]:
    prefix = _snapshot_prefix(tenant)
    return [Snapshot(name=g[len(prefix):], key=g) for g in await all_graphs(client) if g.startswith(prefix)]


async def delete_snapshot(client: GraphClient, tenant: str, name: str) -> None:
    key = snapshot_key(tenant, name)
    if not await client.redis.delete(key):
        raise NotFound(f"no snapshot {name!r}", code="snapshot_not_found")


async def restore_snapshot(client: GraphClient, tenant: str, name: str) -> Snapshot:
    """The tenant's graph becomes a copy of the snapshot (which stays), migrated at once by the
    process that restores it: a snapshot taken before a migration is brought up to this version
    even when that process exits right after (`relay admin restore`), since the services migrate a
    graph once per process. An index the snapshot lacks is made when a statement needs it
    (GraphClient.run finds it missing)."""
    key = snapshot_key(tenant, name)
    if not await client.redis.exists(key):
        raise NotFound(f"no snapshot {name!r}", code="snapshot_not_found")
    await client.check_tenant(tenant)  # a deleted tenant's kept snapshot: create the tenant first
    target = graph_name(tenant)
    try:
        await client.redis.delete(target)
        await _copy(client, key, target)
    finally:  # what this process knew of the graph it replaced is wrong now, whether or not the copy came
        client.forget_tenant(tenant)
    await client.ensure_migrated(tenant)
    return Snapshot(name=name, key=key)


async def reset_tenant(client: GraphClient, tenant: str, confirm: object) -> Snapshot | None:
    """Empties the tenant's graph (indexes kept), after a `pre-reset-<ms>` snapshot; None if there
    was no graph to keep."""
    validate_tenant(tenant)
    _confirm(tenant, confirm)
    snap = None
    if await client.graph_exists(tenant):
        snap = await create_snapshot(client, tenant, f"pre-reset-{now_ms()}")
    await client.redis.delete(graph_name(tenant))
    client.forget_tenant(tenant)
    await client.ensure_schema(tenant)
    return snap


class DeleteReceipt(BaseModel):
    tenant: str
    registered: bool  # False: there was no such tenant (what was left of one is removed all the same)
    removed: list[str]  # keys, and `key#field` for entries in shared hashes and sets
    kept: list[str]  # what was kept on request: ["snapshots"] or nothing


# What `delete_tenant` keeps when asked (`keep_snapshots`).
KEEP_SNAPSHOTS = ("snapshots", "snapshot telemetry")


async def delete_tenant(client: GraphClient, tenant: str, confirm: object, *,
                        keep_snapshots: bool = False) -> DeleteReceipt:
    """Removes everything kept for the tenant (runtime/tenant_data.py), its snapshots too unless
    `keep_snapshots`. Its registration goes first; the rest is removed, `tenant_check_s` waited
    out, and removed again (a process that trusted the registration a moment longer may have
    written meanwhile). Deleting a tenant that is not there removes what is left of it."""
    validate_tenant(tenant)
    _confirm(tenant, confirm)
    registered = await tenancy.unregister(client.redis, tenant)
    client.forget_tenant(tenant)
    keep = KEEP_SNAPSHOTS if keep_snapshots else ()
    gone = [f"{tenancy.TENANTS_KEY}#{tenant}"] if registered else []
    gone += await tenant_data.remove_all(client.redis, tenant, keep=keep)
    if registered:
        await asyncio.sleep(client.settings.tenant_check_s)
        gone += await tenant_data.remove_all(client.redis, tenant, keep=keep)
    client.forget_tenant(tenant)
    await client.shared_log.forget(tenant)  # this process's entries not yet written go too
    return DeleteReceipt(tenant=tenant, registered=registered, removed=list(dict.fromkeys(gone)),
                         kept=["snapshots"] if keep_snapshots else [])


async def forget_customer(client: GraphClient, tenant: str, customer: str) -> ForgetReceipt:
    """Removes every episode, session, fact, ticket and edge about one customer, and the customer,
    and the tenant's query log (a run's kept parameters may hold the customer's values).
    Idempotent: a second call removes nothing and says so."""
    validate_tenant(tenant)
    name, _, uid = customer_identity(customer)
    one = lambda rows, col="removed": int((rows[0][col] if rows else 0) or 0)  # noqa: E731
    p = {"uid": uid}
    episodes = one(await client.run(tenant, q.FORGET_EPISODES, p))
    sessions = one(await client.run(tenant, q.FORGET_SESSIONS, p))
    conflicts = one(await client.run(tenant, q.FORGET_CONFLICTS, p))
    fact_rows = await client.run(tenant, q.FORGET_FACTS, p)
    facts, others = one(fact_rows), sorted(set(fact_rows[0]["others"] if fact_rows else []))
    texts = one(await client.run(tenant, q.FORGET_ORPHAN_TEXTS)) if facts else 0
    slots = one(await client.run(tenant, q.FORGET_SLOTS, {"prefix": uid + "|"}))
    ticket_rows = await client.run(tenant, q.FORGET_TICKETS, p)
    moves = one(await client.run(tenant, q.FORGET_CASE_MOVES, p))
    entity_rows = await client.run(tenant, q.FORGET_ENTITY, p)
    orphans = one(await client.run(tenant, q.FORGET_ORPHANS, {"uids": others})) if others else 0
    await client.shared_log.forget(tenant)
    return ForgetReceipt(customer=name, episodes=episodes, sessions=sessions, facts=facts, fact_texts=texts,
                         conflicts=conflicts, slots=slots, tickets=one(ticket_rows),
                         ticket_parts=one(ticket_rows, "parts"), case_moves=moves, entity=one(entity_rows),
                         entity_edges=one(entity_rows, "edges"), named_entities=orphans)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _flat(value: Any, prefix: str = "") -> dict[str, float]:
    """GRAPH.MEMORY USAGE's reply (a map, maps within for attributes by label) as name -> MB."""
    if isinstance(value, (list, tuple)):  # a flat [key, value, ...] reply without redis-py's map parsing
        value = dict(zip(value[::2], value[1::2]))
    if isinstance(value, dict):
        out: dict[str, float] = {}
        for k, v in value.items():
            out.update(_flat(v, f"{prefix}{_text(k).removesuffix('_sz_mb')}{'.' if isinstance(v, (dict, list)) else ''}"))
        return out
    try:
        return {prefix: float(value)}
    except (TypeError, ValueError):
        return {}


async def _graph_memory(client: GraphClient, key: str) -> GraphMemory:
    parts = _flat(await client.redis.execute_command("GRAPH.MEMORY", "USAGE", key))
    return GraphMemory(graph=key, total_mb=parts.pop("total_graph", 0.0), parts_mb=parts)


async def _server_memory(client: GraphClient) -> ServerMemory | None:
    try:
        info = await client.redis.info("memory")
    except ResponseError:  # a user without +info
        return None
    return ServerMemory(used_bytes=int(info.get("used_memory", 0)), dataset_bytes=info.get("used_memory_dataset"),
                        peak_bytes=info.get("used_memory_peak"))


async def graph_stats(client: GraphClient, tenant: str, slowlog: int = 10) -> GraphStats:
    validate_tenant(tenant)
    if not await client.graph_exists(tenant):
        return GraphStats(tenant=tenant, exists=False, nodes={}, edges={}, memory_mb=None, slowlog=[],
                          server=await _server_memory(client))
    nodes = {r["label"]: r["n"] for r in await client.run(tenant, q.NODE_COUNTS)}
    edges = {r["type"]: r["n"] for r in await client.run(tenant, q.EDGE_COUNTS)}
    name = graph_name(tenant)
    graphs = [await _graph_memory(client, name)]
    for snap in await list_snapshots(client, tenant):
        graphs.append(await _graph_memory(client, snap.key))
    log = await client.redis.execute_command("GRAPH.SLOWLOG", name)
    entries = [{"at": int(e[0]), "command": e[1], "query": e[2], "ms": float(e[3])} for e in log]
    entries.sort(key=lambda e: -e["ms"])
    entries = entries[:slowlog]
    return GraphStats(tenant=tenant, exists=True, nodes=nodes, edges=edges, memory_mb=graphs[0].total_mb,
                      slowlog=entries, graphs=graphs, server=await _server_memory(client))


class MoveReceipt(BaseModel):
    tenant: str
    graphs: list[str]  # the tenant's graph and its snapshots, as they were copied
    nodes: int  # in the tenant's graph, counted on both sides
    admin_entries: int  # registry, key index, agents, limits, site entries copied
    removed_from_source: bool


async def move_tenant(source: GraphClient, target: GraphClient, tenant: str, confirm: object, *,
                      keep_source: bool = False) -> MoveReceipt:
    """Moves a tenant to another deployment (one server to a cluster, a cluster to another, ...):
    its graph and snapshots (DUMP/RESTORE: the graph with its indexes, one key each, so each
    lands on the target shard of its slot) and its admin entries (tenancy.admin_entries), checks
    the graph's node count on both sides, then removes it from the source (unless
    `keep_source`). The target must not have the tenant. Stop what writes to the tenant first:
    a write during the move stays at the source."""
    validate_tenant(tenant)
    _confirm(tenant, confirm)
    if not await source.graph_exists(tenant):
        raise NotFound(f"tenant {tenant!r} has no graph at the source", code="graph_not_found")
    if await target.graph_exists(tenant) or await tenant_registered(target.redis, tenant):
        raise AlreadyExists(f"tenant {tenant!r} is already at the target", code="tenant_exists")
    keys = [graph_name(tenant)] + [s.key for s in await list_snapshots(source, tenant)]
    src, dst = source.raw(), target.raw()
    try:
        for key in keys:
            await dst.restore(key, 0, await src.dump(key))
        entries = await admin_entries(src, tenant)
        await restore_admin_entries(dst, entries)
    finally:
        await src.aclose()
        await dst.aclose()
    counted = [(await c.run(tenant, q.COUNT_NODES))[0]["n"] for c in (source, target)]
    if counted[0] != counted[1]:
        raise RuntimeError(f"the copy of {tenant!r} has {counted[1]} nodes, the source {counted[0]}; source kept")
    if not keep_source:
        await delete_tenant(source, tenant, tenant)
        await remove_admin_entries(source.redis, entries)  # what the source's registry had, as copied
    return MoveReceipt(tenant=tenant, graphs=keys, nodes=counted[0], admin_entries=len(entries),
                       removed_from_source=not keep_source)
