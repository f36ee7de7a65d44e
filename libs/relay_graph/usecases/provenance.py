"""The reads behind the tools' explanations and names: a fact's whole record (how we know it) and
an entity of any registry type by its key. The tools reach the statements only through here."""

from __future__ import annotations

from typing import Any

from relay_graph.memory.queries import provenance as q
from relay_graph.usecases.context import Call


async def fact_provenance(call: Call, fact_id: str) -> dict[str, Any] | None:
    """The fact's record and everything around it (tools.explain.explanation reads it); None: no such fact."""
    client, tenant = call.client, call.tenant
    rows = await client.run(tenant, q.FACT_PROVENANCE, {"fact_id": fact_id})
    return rows[0] if rows else None


async def entity_by_key(call: Call, key: str) -> dict[str, Any] | None:
    """An entity (uid, name, type) whose name key is `key`; None: none."""
    client, tenant = call.client, call.tenant
    rows = await client.run(tenant, q.ENTITY_BY_KEY, {"key": key})
    return rows[0] if rows else None
