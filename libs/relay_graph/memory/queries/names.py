"""Cypher for reading by name: which entity (which customer) a name a reader gave stands for.
Read-only, and only ever run by reads (`names.py`): a write addresses its exact key and never
comes here.

One statement answers all three steps at once, the caller picks the first that found something:
the entity whose key is the name itself (`$own_uid`: an old tenant's customers are keyed by their
name), the customers whose current `name` fact is exactly this name (`$name_uid`, through the
NAMED mirror edge), and the names spelt alike (full-text candidates of `$types` for `$search`, a
`facts.search_text` query; null skips it), each with the customers it names. At most 200 index
hits are looked at and the 50 best scored go back; Python keeps those within the fuzzy threshold."""

from __future__ import annotations

from relay_graph.runtime.queries import Query

NAME_MATCH = Query(
    "names_match",
    """
OPTIONAL MATCH (own:Entity {uid: $own_uid})
CALL {
    // The name by its index first, then its customers: in one pattern the planner may start from
    // a scan of every Customer instead.
    OPTIONAL MATCH (n:Entity {uid: $name_uid})
    OPTIONAL MATCH (n)<-[:NAMED]-(c:Customer)
    RETURN collect([c.uid, c.name]) AS named, collect(CASE WHEN c IS NULL THEN null ELSE n.name END)[0] AS named_as
}
CALL {
    WITH own
    WITH own WHERE own IS NULL AND $search IS NOT NULL
    CALL db.idx.fulltext.queryNodes('Entity', $search) YIELD node, score
    WITH node, score WHERE node.type IN $types
    WITH node, score LIMIT 200
    WITH node, score ORDER BY score DESC LIMIT 50
    OPTIONAL MATCH (node)<-[:NAMED]-(c:Customer)
    WITH node, collect([c.uid, c.name]) AS customers
    RETURN collect([node.uid, node.name, node.type, customers]) AS close
}
RETURN own.uid AS own_uid, own.name AS own_name, named, named_as, close
""".strip(),
    read_only=True,
)

# The current names of some customers (for answers that list customers by id).
CUSTOMER_NAMES = Query(
    "names_of_customers",
    """
UNWIND $uids AS uid
MATCH (c:Entity {uid: uid})
OPTIONAL MATCH (c)-[:NAMED]->(n:PersonName)
RETURN c.uid AS uid, c.name AS id, collect(n.name) AS names
""".strip(),
    read_only=True,
)

# For writes by name: of each asked name, the customer keyed by it (an older tenant's) and the
# customers whose current `name` fact is it. Exact keys only (a write never matches a spelling alike).
CUSTOMERS_NAMED = Query(
    "names_customers_named",
    """
UNWIND $asks AS ask
OPTIONAL MATCH (own:Customer {uid: ask[0]})
OPTIONAL MATCH (:PersonName {uid: ask[1]})<-[:NAMED]-(c:Customer)
RETURN ask[0] AS own_uid, own.uid AS own, own.name AS own_name, collect([c.uid, c.name]) AS named
""".strip(),
    read_only=True,
)
