"""The fault lab's hidden truth: the one module that opens a tenant's truth graph.

The truth graph (TRUTH_PREFIX + tenant) holds each fault's kind, target, start, true cause and
proper fix, every action taken and its verdict, every measurement made, and which ticket's
diagnosis is graded against which fault. It is a separate FalkorDB graph: GraphClient.run only
ever selects `graph_name(tenant)` ("relay:<tenant>"), tenant ids cannot hold ':', so no tenant API
path can name it, and no module outside the lab package imports this one (the lab's tests prove
both). Agents reach the lab only through relay_graph.lab's equipment functions, which hand them
readings, never this module's rows."""

from __future__ import annotations

from typing import Any

from relay_graph.runtime import tenant_data
from relay_graph.runtime.db import GraphClient, telemetry_key
from relay_graph.runtime.queries import Query
from relay_graph.lab.queries import lab as q
from relay_graph.runtime.tenancy import TRUTH_PREFIX, validate_tenant



# The truth graph and FalkorDB's telemetry of it go with the tenant.
tenant_data.declare(
    tenant_data.Key("lab truth", lambda tenant: TRUTH_PREFIX + validate_tenant(tenant)),
    tenant_data.Key("lab truth telemetry", lambda tenant: telemetry_key(TRUTH_PREFIX + validate_tenant(tenant))),
)


def _graph(client: GraphClient, tenant: str):
    return client.db.select_graph(TRUTH_PREFIX + validate_tenant(tenant))


def _plain(value: Any) -> Any:
    props = getattr(value, "properties", None)
    if props is not None and not isinstance(value, dict):
        return dict(props)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


async def _ensure(client: GraphClient, tenant: str) -> None:
    await client.check_tenant(tenant)  # a deleted tenant's truth is not made again
    ready: set[str] = client.kept("lab.truth.ready", set)
    if tenant in ready:
        return
    g = _graph(client, tenant)
    for label, prop in q.TRUTH_INDEXES:
        try:
            await g.query(f"CREATE INDEX FOR (n:{label}) ON (n.{prop})")
        except Exception as exc:  # created before, by this or another process
            if "already" not in str(exc).lower():
                raise
    ready.add(tenant)


async def _run(client: GraphClient, tenant: str, query: Query, params: dict[str, Any] | None = None) -> list[dict]:
    await _ensure(client, tenant)
    g = _graph(client, tenant)
    res = await (g.ro_query(query.cypher, params) if query.read_only else g.query(query.cypher, params))
    cols = [h[1] if isinstance(h, (list, tuple)) else h for h in res.header]
    return [{c: _plain(v) for c, v in zip(cols, row)} for row in res.result_set]


def _props(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


async def record_fault(client: GraphClient, tenant: str, fault: dict[str, Any]) -> int:
    rows = await _run(client, tenant, q.RECORD_FAULT, {"props": _props(fault)})
    return int(rows[0]["seq"])


async def active_faults(client: GraphClient, tenant: str, uid: str) -> list[dict[str, Any]]:
    """The customer's own active faults and every active network fault."""
    return [r["f"] for r in await _run(client, tenant, q.ACTIVE_FAULTS, {"uid": uid})]


async def record_action(
    client: GraphClient, tenant: str, action: dict[str, Any], verdicts: list[dict[str, Any]]
) -> tuple[int, list[str]]:
    """Record an action and its verdict on each relevant fault ({fault_id, repairs}); returns
    (event number, ids of the faults this action turned fixed)."""
    if verdicts:
        rows = await _run(client, tenant, q.RECORD_ACTION, {"props": _props(action), "verdicts": verdicts})
    else:
        rows = await _run(client, tenant, q.RECORD_LONE_ACTION, {"props": _props(action)})
    return int(rows[0]["seq"]), sorted(f for f in rows[0]["fixed"] if f)


async def record_measurement(client: GraphClient, tenant: str, measurement: dict[str, Any]) -> int:
    rows = await _run(client, tenant, q.RECORD_MEASUREMENT,
                      {"props": _props(measurement), "uid": measurement["customer_uid"]})
    return int(rows[0]["seq"])


async def link_diagnosis(
    client: GraphClient, tenant: str, *, ticket_id: str, uid: str, kind: str, fault_ids: list[str], at_ms: int
) -> int:
    rows = await _run(client, tenant, q.LINK_DIAGNOSIS, {"ticket": ticket_id, "uid": uid, "kind": kind,
                                                         "fault_ids": sorted(set(fault_ids)), "at_ms": at_ms})
    return int(rows[0]["linked"]) if rows else 0


async def scoreboard_rows(client: GraphClient, tenant: str) -> list[dict[str, Any]]:
    return await _run(client, tenant, q.SCOREBOARD)
