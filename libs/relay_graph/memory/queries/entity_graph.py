"""Cypher of the entity graph's algorithms: salience (algo.pageRank) and communities
(algo.labelPropagation, written back as Community nodes). Both run over Entity nodes and every
relationship between two of them (a current fact's mirrored edge: LIVES_IN, HAS_PLAN, ...); an
entity's edges to anything else (episodes, facts, network nodes) are not part of it."""

from __future__ import annotations

from relay_graph.runtime.queries import Query

# algo.pageRank(label, relationshipType): null takes every type between nodes of the label.
ENTITY_SALIENCE = Query(
    "entity_salience",
    "CALL algo.pageRank('Entity', null) YIELD node, score "
    "RETURN node.uid AS uid, node.name AS name, score ORDER BY score DESC, uid LIMIT $top",
    read_only=True,
)

ENTITY_PAGERANK_ALL = Query(
    "entity_pagerank_all",
    "CALL algo.pageRank('Entity', null) YIELD node, score RETURN node.uid AS uid, score",
    read_only=True,
)

# The previous run's communities go first (a label scan over Community nodes, few by nature).
CLEAR_COMMUNITIES = Query(
    "communities_clear",
    "MATCH (c:Community) DETACH DELETE c RETURN count(c) AS removed",
)

# The server's community id is the id of one member node: it names a community within one run
# only, so every run replaces the last one's nodes. Communities of one entity are not written.
# The algorithm runs in a read-only query and its result is written by a second one: run inside a
# write query, the procedure's parallel work crashed FalkorDB 4.22.1 (an assertion in redis'
# blocked.c, `server.also_propagate.numops == 0`, seen once in a full test run).
READ_COMMUNITIES = Query(
    "communities_read",
    "CALL algo.labelPropagation({nodeLabels: ['Entity'], maxIterations: $iterations}) "
    "YIELD node, communityId "
    "WITH communityId, collect(node.uid) AS members "
    "WHERE size(members) >= $min_size "
    "RETURN communityId AS community_id, members",
    read_only=True,
)

WRITE_COMMUNITIES = Query(
    "communities_write",
    "UNWIND $communities AS found "
    "CREATE (c:Community {community_id: found.community_id, size: size(found.members), computed_at_ms: $at_ms}) "
    "WITH c, found UNWIND found.members AS uid "
    "MATCH (m:Entity {uid: uid}) "
    "CREATE (m)-[:IN_COMMUNITY]->(c) "
    "RETURN count(DISTINCT c) AS communities, count(m) AS members",
)

# An entity's community and the other members, from the entity's index.
ENTITY_COMMUNITY = Query(
    "entity_community",
    "MATCH (e:Entity {uid: $uid})-[:IN_COMMUNITY]->(c:Community)<-[:IN_COMMUNITY]-(m:Entity) "
    "RETURN c.community_id AS community_id, c.size AS size, collect(m.uid) AS members",
    read_only=True,
)
