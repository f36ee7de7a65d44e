"""Background work that follows the changes (relay_graph.memory.changes): communities are computed
again for a tenant whose facts changed and not for one nobody wrote to; retention reads only the
tenants that have a setting; replicas claiming the same tenant compute it once."""

from __future__ import annotations

from relay_graph.memory import changes, entity_graph as eg, retention
from relay_graph.memory.models import FactInput
from relay_graph.runtime.queries import Query
from tests.support import register

COMMUNITIES = Query("t_communities", "MATCH (c:Community) RETURN count(c) AS n", read_only=True)
# An entity graph written straight into the graph, not through the memory engine: no change marked.
BUILD = Query("t_entities", "UNWIND range(0, 5) AS i CREATE (a:Entity {uid: 'x' + i})-[:KNOWS]->"
              "(b:Entity {uid: 'y' + i})-[:KNOWS]->(a)")


def knows(a: str, b: str) -> FactInput:
    return FactInput(subject=a, predicate="knows", object=b, agent="planner")


async def communities(client, tenant: str) -> int:
    return (await client.run(tenant, COMMUNITIES))[0]["n"]


async def test_a_changed_tenant_gets_its_communities_and_an_unchanged_one_does_not(graph_client, memory, tenant):
    await graph_client.redis.set(changes.SEEDED, "1")  # the tenants of other tests are not this test's
    quiet = tenant + "-quiet"
    await register(graph_client.redis, quiet)
    await graph_client.run(quiet, BUILD)
    await graph_client.redis.zrem(changes.COMMUNITIES, quiet)
    # a group whose links point one way round, as label propagation finds one (test_entity_graph.py)
    await memory.write_facts(tenant, [knows("ann", "bob"), knows("bob", "cy"), knows("cy", "dee"), knows("dee", "ann"),
                                      knows("ann", "cy"), knows("bob", "dee")])
    assert await graph_client.redis.zscore(changes.COMMUNITIES, tenant) is not None  # the write marked it

    done = await eg.refresh_changed(graph_client, settle_s=0, batch=10_000)
    assert tenant in done and quiet not in done
    assert await communities(graph_client, tenant) >= 1
    assert await communities(graph_client, quiet) == 0  # nobody wrote to it: never computed
    assert await graph_client.redis.zscore(changes.COMMUNITIES, tenant) is None

    assert tenant not in await eg.refresh_changed(graph_client, settle_s=0, batch=10_000)  # no change since
    await memory.write_fact(tenant, knows("eve", "ann"))
    assert tenant not in await eg.refresh_changed(graph_client, settle_s=3600, batch=10_000)  # not settled yet
    assert tenant in await eg.refresh_changed(graph_client, settle_s=0, batch=10_000)


async def test_a_tenant_is_claimed_by_one_replica_only(graph_client, tenant):
    await graph_client.redis.zadd(changes.COMMUNITIES, {tenant: 5})
    assert await changes._claim(graph_client, changes.COMMUNITIES, tenant, 5, None) is True
    assert await changes._claim(graph_client, changes.COMMUNITIES, tenant, 5, None) is False  # taken already
    await graph_client.redis.zadd(changes.COMMUNITIES, {tenant: 9})  # changed again since it was read at 5
    assert await changes._claim(graph_client, changes.COMMUNITIES, tenant, 5, None) is False
    assert await graph_client.redis.zscore(changes.COMMUNITIES, tenant) == 9


async def test_retention_reads_only_the_tenants_with_a_setting(graph_client, tenant):
    await graph_client.redis.set(changes.SEEDED, "1")
    other = tenant + "-none"
    await register(graph_client.redis, other)
    await retention.get_retention(graph_client, other)  # its graph exists; it has no setting
    await retention.set_retention(graph_client, tenant, 30)
    assert await graph_client.redis.zscore(changes.RETENTION, other) is None
    graph_client.recent.clear()
    done = await retention.compact_due(graph_client, every_s=3600, batch=10_000)
    assert tenant in {r.tenant for r in done}
    assert not [r for r in graph_client.recent if r["tenant"] == other]  # never read
    due = await graph_client.redis.zscore(changes.RETENTION, tenant)
    assert due is not None and due > changes.now_ms() + 3_000_000  # next in an hour
    assert tenant not in {r.tenant for r in await retention.compact_due(graph_client, every_s=3600, batch=10_000)}
    await retention.set_retention(graph_client, tenant, None)
    assert await graph_client.redis.zscore(changes.RETENTION, tenant) is None
