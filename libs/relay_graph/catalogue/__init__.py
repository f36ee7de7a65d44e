"""The provider's world: its brand, six regional desks with their served cities and areas (from the
offline gazetteer), plans, add-ons and services priced per country, FAQs and troubleshooting
playbooks, all seeded into each tenant graph on first use; and placing a customer's address.

    await ensure_catalogue(client, tenant, "india")
    await plans_for(client, tenant, "IN")          # prices in INR with GST
    p = await place(client, tenant, "Koramangala, Bengaluru", region="india")
    route_region(p)                                 # which desk handles the case
"""

from __future__ import annotations

from . import brand
from .geo import warm as warm_gazetteer
from .geocoder import Geocoder, OpenCageGeocoder, make_geocoder
from .models import (
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
from .placement import SERVICE_RADIUS_KM, SIGNIFICANT_POPULATION, locate, place, route_region
from .playbooks import ISSUE_KINDS, PlaybookAction
from .reads import addons_for, extraction_context, faq, playbook, playbook_steps, plans_for, services_for
from .regions import REGION_CODES, REGIONS, territory_of
from .seed import CATALOGUE_VERSION, ensure_catalogue, seeded_regions

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
    "locate",
    "make_geocoder",
    "place",
    "playbook",
    "playbook_steps",
    "plans_for",
    "route_region",
    "seeded_regions",
    "services_for",
    "territory_of",
    "warm_gazetteer",
]
