"""Typed views of the catalogue and of an address placement."""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field


class Price(BaseModel):
    """One offer's price in one country, as stored on its `PRICED_IN` edge."""

    country: str
    currency: str
    amount: float  # before tax
    tax_rate: float
    tax_amount: float
    price_incl_tax: float
    period: str  # "month" or "once"
    display: str
    display_incl_tax: str


class PlanOffer(BaseModel):
    offer_id: str
    uid: str  # the Plan entity (the object of an on_plan fact)
    name: str
    down_mbps: int
    up_mbps: int
    description: str
    price: Price


class ExtraOffer(BaseModel):
    """An add-on (monthly) or a service (once)."""

    offer_id: str
    kind: str  # "addon" or "service"
    name: str
    description: str
    price: Price


class FaqAnswer(BaseModel):
    faq_id: str
    topic: str
    question: str
    answer: str
    score: float


class PlaybookStep(BaseModel):
    order: int
    action: str
    instruction: str


class CatalogueSeedResult(BaseModel):
    region: str
    version: int
    seeded: bool  # False: the marker said this version was already there, nothing was written
    countries: int = 0
    cities: int = 0
    areas: int = 0
    plans: int = 0
    addons: int = 0
    services: int = 0
    prices: int = 0
    routers: int = 0
    faqs: int = 0
    playbooks: int = 0


class PlacementStatus(str, Enum):
    SERVED = "served"  # within reach of a served city: `city` (and maybe `area`) says which
    NO_LINE = "no_line"  # a real place, but farther than SERVICE_RADIUS_KM from every line
    AMBIGUOUS = "ambiguous"  # the name fits places in different countries: see `candidates`
    UNKNOWN = "unknown"  # no place of that name in the lists, the gazetteer or the geocoder


class PlacementSource(str, Enum):
    OWN_LIST = "own_list"
    POSTAL_CODE = "postal_code"
    GAZETTEER = "gazetteer"
    GEOCODER = "geocoder"


class PlaceCandidate(BaseModel):
    """One place a text may mean, with what we can offer there."""

    model_config = ConfigDict(frozen=True)

    name: str  # the place as the catalogue, the gazetteer or the geocoder spells it
    country: str  # ISO 3166 alpha-2
    country_name: str | None = None
    admin1: str | None = None
    region: str | None = None  # the desk whose territory it is in
    lat: float
    lon: float
    population: int | None = None
    status: PlacementStatus  # served or no_line
    city: str | None = None  # the served city whose lines reach it
    city_uid: str | None = None
    area: str | None = None
    distance_km: float | None = None  # to the nearest served city or area
    nearest_city: str | None = None
    source: PlacementSource


class Placement(BaseModel):
    """Where a text puts a customer. `city`/`city_uid` are set only when served (the City entity a
    lives_in fact should point at); `place` is what was recognised, served or not."""

    status: PlacementStatus
    query: str
    place: str | None = None
    city: str | None = None
    city_uid: str | None = None
    area: str | None = None
    country: str | None = None
    region: str | None = None
    distance_km: float | None = None
    nearest_city: str | None = None
    candidates: list[PlaceCandidate] = Field(default_factory=list)  # the alternatives when ambiguous
    source: PlacementSource | None = None


class GeoHit(BaseModel):
    """One result of an online geocoder."""

    model_config = ConfigDict(frozen=True)

    name: str
    country: str  # ISO 3166 alpha-2, upper case
    lat: float
    lon: float
    admin1: str | None = None
    confidence: float | None = None


__all__ = [
    "CatalogueSeedResult",
    "ExtraOffer",
    "FaqAnswer",
    "GeoHit",
    "PlaceCandidate",
    "Placement",
    "PlacementSource",
    "PlacementStatus",
    "PlanOffer",
    "PlaybookStep",
    "Price",
]
