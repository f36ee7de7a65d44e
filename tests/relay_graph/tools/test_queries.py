"""The catalogue's own Cypher (queries/provenance.py) starts from an index, as the hot reads must."""

from __future__ import annotations

import pytest

from relay_graph.memory.queries import provenance as q


@pytest.mark.parametrize("query, params, start", [
    (q.FACT_PROVENANCE, {"fact_id": "f"}, "Node By Index Scan | (f:Fact)"),
    (q.ENTITY_BY_KEY, {"key": "pune"}, "Node By Index Scan | (e:Entity)"),
])
async def test_lookups_start_from_an_index(graph_client, tenant, query, params, start):
    plan = await graph_client.explain(tenant, query, params)
    assert start in plan, plan
    assert "Label Scan" not in plan and "All Node Scan" not in plan, plan
