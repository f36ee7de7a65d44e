
from relay_graph.runtime.queries import Query


async def test_indexes_are_created_once_and_answer(graph_client, tenant):
    await graph_client.ensure_schema(tenant)
    rows = await graph_client.run(tenant, Query("idx", "CALL db.indexes() YIELD label, properties, types RETURN label, properties, types", True))
    kinds = {(r["label"], p, t) for r in rows for p in r["properties"] for t in r["types"][p]}
    assert ("Entity", "uid", "RANGE") in kinds
    assert ("Episode", "embedding", "VECTOR") in kinds
    assert ("Entity", "name", "FULLTEXT") in kinds
    # a second client (another process in real life) finds them and creates nothing twice
    from relay_graph.runtime.db import GraphClient

    other = GraphClient(graph_client.settings)
    await other.ensure_schema(tenant)
    rows2 = await other.run(tenant, Query("idx", "CALL db.indexes() YIELD label RETURN count(label) AS n", True))
    assert rows2[0]["n"] == len({r["label"] for r in rows})
    await other.close()
