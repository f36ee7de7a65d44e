"""The provider's world: its brand, six regional desks with their served cities and areas (from the
offline gazetteer), plans, add-ons and services priced per country, FAQs and troubleshooting
playbooks, all seeded into each tenant graph on first use; and placing a customer's address.

    await ensure_catalogue(client, tenant, "india")
    await plans_for(client, tenant, "IN")          # prices in INR with GST
    p = await place(client, tenant, "Koramangala, Bengaluru", region="india")
    route_region(p)                                 # which desk handles the case
"""

from __future__ import annotations

from relay_graph.desk.catalogue import brand
from relay_graph.desk.catalogue.geo import warm as warm_gazetteer
from relay_graph.desk.catalogue.geocoder import Geocoder, OpenCageGeocoder, make_geocoder
from relay_graph.desk.catalogue.models import (
    CatalogueSeedResult,
    ExtraOffer,
    FaqAnswer,
    GeoHit,
    PlaceCandidate,
    Placement,
    PlacementSource,
    PlacementStatus,
    PlanOffer,
    PlaybookStep,
    Price,
)
from relay_graph.desk.catalogue.placement import (
    SERVICE_RADIUS_KM,
    SIGNIFICANT_POPULATION,
    locate,
    place,
    route_region,
)
from relay_graph.desk.catalogue.playbooks import ISSUE_KINDS, PlaybookAction
from relay_graph.desk.catalogue.reads import (
    addons_for,
    extraction_context,
    faq,
    faq_floor,
    playbook_steps,
    plans_for,
    services_for,
)
from relay_graph.desk.catalogue.regions import REGION_CODES, REGIONS, territory_of
from relay_graph.desk.catalogue.seed import CATALOGUE_VERSION, ensure_catalogue, seeded_regions

__all__ = [
    "CATALOGUE_VERSION",
    "CatalogueSeedResult",
    "ExtraOffer",
    "FaqAnswer",
    "GeoHit",
    "Geocoder",
    "ISSUE_KINDS",
    "OpenCageGeocoder",
    "PlaceCandidate",
    "Placement",
    "PlacementSource",
    "PlacementStatus",
    "PlanOffer",
    "PlaybookAction",
    "PlaybookStep",
    "Price",
    "REGIONS",
    "REGION_CODES",
    "SERVICE_RADIUS_KM",
    "SIGNIFICANT_POPULATION",
    "addons_for",
    "brand",
    "ensure_catalogue",
    "extraction_context",
    "faq",
    "faq_floor",
    "locate",
    "make_geocoder",
    "place",
    "playbook_steps",
    "plans_for",
    "route_region",
    "seeded_regions",
    "services_for",
    "territory_of",
    "warm_gazetteer",
]
