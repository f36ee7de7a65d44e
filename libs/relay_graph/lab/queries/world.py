"""Cypher of the provider's world setup: finding the exchanges and street cabinets of a city, so a
customer's home box can be hung off a cabinet of their area. Starts from the indexed
NetNode.node_id of the city's hub. Labels and types come from NodeKind / LinkType only."""

from __future__ import annotations

from relay_graph.desk.network_models import LinkType, NodeKind
from relay_graph.runtime.queries import Query

# The exchanges below the given hubs (by their primary or standby uplink) with their cabinets.
HUB_EXCHANGES = Query(
    "world_hub_exchanges",
    "UNWIND $hubs AS hid "
    f"MATCH (h:NetNode {{node_id: hid}})<-[:{LinkType.UPLINK.value}]-(x:{NodeKind.OLT.value}) "
    f"OPTIONAL MATCH (x)<-[:{LinkType.PON.value}]-(s:{NodeKind.SPLITTER.value}) "
    "WITH h, x, s ORDER BY s.node_id "
    "RETURN h.node_id AS hub, x.node_id AS exchange, x.name AS name, collect(s.node_id) AS cabinets "
    "ORDER BY exchange",
    read_only=True,
)

# The seed and city count a region's network was generated with, recorded by the first call that
# seeds it (MERGE: of two concurrent first calls, one record wins and both read it back).
RECORD_SEED = Query(
    "world_record_seed",
    "MERGE (w:WorldSeed {region: $region}) "
    "ON CREATE SET w.seed = $seed, w.max_cities = $max_cities, w.at_ms = $at_ms "
    "RETURN w.seed AS seed, w.max_cities AS max_cities",
)

__all__ = ["HUB_EXCHANGES", "RECORD_SEED"]
