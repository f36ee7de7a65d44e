from relay_graph.runtime.queries import Query
from relay_graph.runtime.queries import schema

import relay_graph.memory  # noqa: F401 (the engine declares its indexes when imported)

INDEXES = Query("idx", "CALL db.indexes() YIELD label, properties, types RETURN label, properties, types", True)


async def test_indexes_are_created_once_and_answer(graph_client, tenant):
    await graph_client.ensure_schema(tenant)
    rows = await graph_client.run(tenant, INDEXES)
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


async def test_indexes_a_package_declares_later_reach_a_tenant_already_ready(graph_client, tenant):
    await graph_client.ensure_schema(tenant)
    schema.declare("tests.late_package", schema.Indexes(range=(("LateThing", "thing_id"),),
                                                        fulltext=(("LateThing", "words"),)))
    try:
        await graph_client.ensure_schema(tenant)
        rows = await graph_client.run(tenant, INDEXES)
        kinds = {(r["label"], p, t) for r in rows for p in r["properties"] for t in r["types"][p]}
        assert {("LateThing", "thing_id", "RANGE"), ("LateThing", "words", "FULLTEXT")} <= kinds
        assert ("Entity", "uid", "RANGE") in kinds
    finally:
        schema._declared.pop("tests.late_package")  # the session's other tenants need not carry it


def test_a_declaration_with_an_unsafe_label_is_refused():
    import pytest

    with pytest.raises(ValueError):
        schema.declare("tests.bad", schema.Indexes(range=(("Bad) DETACH DELETE (n", "x"),)))
