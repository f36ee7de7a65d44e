"""A memory-only tenant (created with `"world": false`, what the client and the examples make)
holds what it uses: after facts and episodes, no node, label or index of the desk, and no vector
index but the episodes' (queries/schema.py `needed`)."""

from __future__ import annotations

from datetime import datetime, timezone

import relay_graph.desk.queries  # noqa: F401 - the desk's indexes declared, as in the gateway's process
from relay_graph.memory.models import EpisodeInput, FactInput
from relay_graph.runtime.queries import Query
from relay_graph.runtime.queries import schema

LABELS = Query("t_labels", "CALL db.labels() YIELD label RETURN collect(label) AS labels", read_only=True)
NODE_LABELS = Query("t_node_labels", "MATCH (n) UNWIND labels(n) AS l RETURN collect(DISTINCT l) AS labels",
                    read_only=True)
INDEXES = Query("t_indexes", "CALL db.indexes() YIELD label, properties, types RETURN label, properties, types",
                read_only=True)


def desk_labels() -> set[str]:
    return {i[0] for owner, d in schema._declared.items() if owner.startswith("relay_graph.desk")
            for i in (*d.range, *d.fulltext, *d.vector)}


async def test_a_memory_only_tenant_has_no_desk_nodes_labels_or_indexes(graph_client, memory, tenant):
    assert {"Ticket", "NetNode", "Faq"} <= desk_labels()
    await memory.write_facts(tenant, [FactInput(subject="asha rao", predicate="lives_in", object="pune", agent="planner"),
                                      FactInput(subject="asha rao", predicate="has_pet", object="a cat", agent="crm")],
                             embed=True)
    await memory.write_episodes(tenant, [EpisodeInput(session="s1", speaker="Asha", text="We moved to Pune.",
                                                      at=datetime(2026, 3, 2, tzinfo=timezone.utc))])
    assert (await memory.recall(tenant, "where does asha live?")).items
    nodes = set((await graph_client.run(tenant, NODE_LABELS))[0]["labels"])
    labels = set((await graph_client.run(tenant, LABELS))[0]["labels"])
    assert {"Fact", "Episode", "Entity"} <= nodes
    assert not labels & desk_labels(), f"no desk label, not even an empty one an index would make: {labels & desk_labels()}"
    kinds = {(r["label"], p, t) for r in await graph_client.run(tenant, INDEXES) for p in r["properties"]
             for t in r["types"][p]}
    assert ("Fact", "fact_id", "RANGE") in kinds and ("Entity", "name", "FULLTEXT") in kinds
    assert {(label, prop) for label, prop, t in kinds if t == "VECTOR"} == {("Episode", "embedding")}
    assert not {label for label, _, _ in kinds} & desk_labels()


async def test_a_new_tenant_reads_as_empty_before_any_write(graph_client, memory, tenant):
    assert (await memory.recall(tenant, "anything?")).items == []
    assert await memory.facts(tenant, "nobody") == []
    assert await graph_client.graph_exists(tenant)


def test_a_statement_needs_the_indexes_of_what_it_writes_and_queries():
    w = schema.needed("MERGE (t:Ticket {ticket_id: $id}) SET t.x = 1", read_only=False)
    assert ("Ticket", "ticket_id") in w.range and not w.vector
    r = schema.needed("MATCH (e:Episode {episode_id: $id}) RETURN e.embedding", read_only=True)
    assert ("Episode", "episode_id") in r.range and not r.vector  # a read names no vector to write
    v = schema.needed("CALL db.idx.vector.queryNodes('Episode', 'embedding', 5, vecf32($v)) YIELD node RETURN node",
                      read_only=True)
    assert [i[:2] for i in v.vector] == [("Episode", "embedding")]
    e = schema.needed("MATCH (e:Episode {episode_id: $id}) SET e.text_key = $k", read_only=False)
    assert not e.vector  # the vector index waits for the first vector
    assert schema.needed("MATCH (e:Episode {episode_id: $id}) SET e.embedding = vecf32($v)", read_only=False).vector


RELATION_TYPES = Query("t_types", "CALL db.relationshipTypes() YIELD relationshipType AS t RETURN collect(t) AS types",
                       read_only=True)


async def test_a_batch_of_some_predicates_leaves_no_label_or_type_of_the_others(graph_client, memory, tenant):
    # FalkorDB learns a label or a relationship type from any statement that names it, and keeps
    # the statement's plan per graph: a batch statement names only its own predicates'
    await memory.write_facts(tenant, [FactInput(subject="asha rao", predicate="lives_in", object="pune", agent="crm"),
                                      FactInput(subject="asha rao", predicate="has_pet", object="a cat", agent="crm")])
    types = set((await graph_client.run(tenant, RELATION_TYPES))[0]["types"])
    labels = set((await graph_client.run(tenant, LABELS))[0]["labels"])
    assert {"LIVES_IN", "HAS_PET"} <= types
    assert not types & {"ON_PLAN", "HAS_ROUTER", "OWNS_DEVICE", "HAS_ISSUE", "WANTS_PLAN"}, types
    assert not labels & {"Plan", "Router", "Device", "Issue"}, labels


async def test_a_batch_statement_names_the_batchs_predicates_and_no_other(graph_client, memory, tenant, monkeypatch):
    sent: list[str] = []
    run = graph_client.run

    async def spy(t, query, params=None):
        if query.name.startswith("facts_batch_create"):
            sent.append(query.cypher)
        return await run(t, query, params)

    monkeypatch.setattr(graph_client, "run", spy)
    await memory.write_facts(tenant, [FactInput(subject=f"person {i}", predicate=p, object=o, agent="crm")
                                      for i in range(3) for p, o in (("lives_in", "pune"), ("has_pet", "a cat"))])
    assert len(sent) == 1 and "LIVES_IN" in sent[0] and "HAS_PET" in sent[0]  # six rows, one statement
    assert not any(edge in sent[0] for edge in ("ON_PLAN", "HAS_ROUTER", "OWNS_DEVICE", "WANTS_PLAN"))


async def test_a_graph_made_now_skips_the_migrations_an_older_graph_gets(graph_settings, tenant):
    from relay_graph.runtime.db import GraphClient
    from relay_graph.runtime.tenancy import graph_name
    from tests.support import register

    ran: list[str] = []

    async def migrate(run, t):
        ran.append(t)

    schema.declare_migration("tests.lean.recorder", migrate)
    older = tenant + "-old"
    try:
        client = GraphClient(graph_settings)
        try:
            await register(client.redis, older)
            await client.redis.execute_command("GRAPH.QUERY", graph_name(older), "CREATE (:Note {n: 1})")
            await client.run(tenant, Query("t_one", "RETURN 1 AS one", read_only=True))
            await client.run(older, Query("t_one", "RETURN 1 AS one", read_only=True))
        finally:
            await client.close()
        assert ran == [older]  # the graph made by this client had nothing to migrate
    finally:
        schema._migrations.pop("tests.lean.recorder", None)
