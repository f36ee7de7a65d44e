"""Cypher of the provider's world setup: finding the exchanges and street cabinets of a city, so a
customer's home box can be hung off a cabinet of their area. Starts from the indexed
NetNode.node_id of the city's hub. Labels and types come from NodeKind / LinkType only."""

from __future__ import annotations

from relay_graph.runtime.queries import Query

# The seed and city count a region's network was generated with, recorded by the first call that
# seeds it (MERGE: of two concurrent first calls, one record wins and both read it back).
RECORD_SEED = Query(
    "world_record_seed",
    "MERGE (w:WorldSeed {region: $region}) "
    "ON CREATE SET w.seed = $seed, w.max_cities = $max_cities, w.at_ms = $at_ms "
    "RETURN w.seed AS seed, w.max_cities AS max_cities",
)

__all__ = ["RECORD_SEED"]
