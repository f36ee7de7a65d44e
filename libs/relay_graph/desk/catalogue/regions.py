"""The six regional desks: which countries each one serves (with how many cities), and which desk
is responsible for every other country in the world (a customer there has no line yet, but a desk
still answers them).

The served cities themselves are not listed here: they are the largest cities of each served
country in the offline gazetteer (see footprint.py), so this module only says how many, plus the
few data quirks of the gazetteer that a top-N-by-population rule gets wrong."""

from __future__ import annotations

from dataclasses import dataclass, field

from relay_graph.runtime.errors import InvalidInput

INDIA = "india"
EUROPE = "europe"
NORTH_AMERICA = "north-america"
ASIA_PACIFIC = "asia-pacific"
MIDDLE_EAST_AFRICA = "middle-east-africa"
LATIN_AMERICA = "latin-america"


@dataclass(frozen=True)
class RegionSpec:
    code: str
    name: str
    desk: str  # the name the regional desk signs with
    # served country (ISO 3166 alpha-2) -> how many of its largest cities we serve
    countries: dict[str, int] = field(default_factory=dict)


REGIONS: dict[str, RegionSpec] = {
    r.code: r
    for r in (
        RegionSpec(INDIA, "India", "India desk", {"IN": 16}),
        RegionSpec(
            EUROPE, "Europe", "Europe desk",
            {"GB": 6, "IE": 3, "FR": 6, "DE": 6, "ES": 6, "PT": 3, "IT": 6, "NL": 4, "BE": 3, "CH": 3,
             "AT": 3, "SE": 3, "NO": 3, "DK": 3, "FI": 3, "PL": 4},
        ),
        RegionSpec(NORTH_AMERICA, "North America", "North America desk", {"US": 16, "CA": 8}),
        RegionSpec(
            ASIA_PACIFIC, "Asia-Pacific", "Asia-Pacific desk",
            {"AU": 6, "NZ": 3, "SG": 1, "JP": 6, "KR": 4, "MY": 3, "ID": 5, "PH": 4, "TH": 3},
        ),
        RegionSpec(
            MIDDLE_EAST_AFRICA, "Middle East & Africa", "Middle East & Africa desk",
            {"AE": 3, "SA": 4, "QA": 1, "EG": 3, "ZA": 4, "KE": 2, "NG": 4, "MA": 4},
        ),
        RegionSpec(LATIN_AMERICA, "Latin America", "Latin America desk",
                   {"MX": 6, "BR": 8, "AR": 5, "CL": 3, "CO": 4, "PE": 3}),
    )
}
REGION_CODES: tuple[str, ...] = tuple(REGIONS)

SERVED_COUNTRIES: dict[str, str] = {cc: r.code for r in REGIONS.values() for cc in r.countries}

# Gazetteer quirks the top-N rule would get wrong. SKIP: entries whose population is a district's
# or a municipality's rather than a city's. PREFER: taken before larger neighbours within the
# merge radius (Metro Manila's fibre is sold as Manila, not Quezon City).
SKIP_CITIES: dict[str, frozenset[str]] = {
    "PH": frozenset({"Budta", "Malingao"}),
    "KE": frozenset({"Kakamega"}),
}
PREFER_CITIES: dict[str, tuple[str, ...]] = {
    "PH": ("Manila",),
}
# English names customers use, where the gazetteer's primary name is the local one. The gazetteer
# name stays an alias of the city, so both are recognised.
DISPLAY_NAMES: dict[str, str] = {
    "Köln": "Cologne",
    "Frankfurt am Main": "Frankfurt",
    "León de los Aldama": "León",
    "Santiago de Querétaro": "Querétaro",
    "Makkah": "Mecca",
    "Madinah": "Medina",
    "Århus": "Aarhus",
    "Sevilla": "Seville",
    "Gent": "Ghent",
}

# ---------------------------------------------------------------- territory: every country's desk

# Continent (geonames continent code) -> desk, refined by the sets below. Antarctica has no desk.
_BY_CONTINENT: dict[str, str] = {
    "EU": EUROPE,
    "AF": MIDDLE_EAST_AFRICA,
    "AS": ASIA_PACIFIC,
    "OC": ASIA_PACIFIC,
    "SA": LATIN_AMERICA,
    "NA": LATIN_AMERICA,  # Mexico, Central America and the Caribbean; see _NORTH_AMERICA
}
_SOUTH_ASIA = frozenset({"IN", "PK", "BD", "LK", "NP", "BT", "MV"})
_MIDDLE_EAST = frozenset({"AE", "SA", "QA", "KW", "BH", "OM", "YE", "IQ", "IR", "JO", "LB", "SY", "IL", "PS"})
_NORTH_AMERICA = frozenset({"US", "CA", "GL", "PM", "BM", "UM"})
_EUROPE_EXTRA = frozenset({"TR", "GE", "AM", "AZ"})  # geonames files these under Asia


def territory_of(country: str, continent: str | None) -> str | None:
    """The desk responsible for a country (served or not). None only for Antarctica and codes
    without a continent."""
    cc = country.upper()
    if cc in SERVED_COUNTRIES:
        return SERVED_COUNTRIES[cc]
    if cc in _SOUTH_ASIA:
        return INDIA
    if cc in _MIDDLE_EAST:
        return MIDDLE_EAST_AFRICA
    if cc in _NORTH_AMERICA:
        return NORTH_AMERICA
    if cc in _EUROPE_EXTRA:
        return EUROPE
    return _BY_CONTINENT.get((continent or "").upper())


def region_spec(region: object) -> RegionSpec:
    """The spec of a region code, or InvalidInput naming the known codes."""
    if not isinstance(region, str) or region.strip().lower() not in REGIONS:
        raise InvalidInput(f"unknown region {region!r}; known: {', '.join(REGION_CODES)}", code="unknown_region")
    return REGIONS[region.strip().lower()]


__all__ = [
    "ASIA_PACIFIC",
    "DISPLAY_NAMES",
    "EUROPE",
    "INDIA",
    "LATIN_AMERICA",
    "MIDDLE_EAST_AFRICA",
    "NORTH_AMERICA",
    "PREFER_CITIES",
    "REGIONS",
    "REGION_CODES",
    "RegionSpec",
    "SERVED_COUNTRIES",
    "SKIP_CITIES",
    "region_spec",
    "territory_of",
]
