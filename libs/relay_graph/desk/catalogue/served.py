"""The served places (cities and their areas) as an in-memory index: exact lookups by folded name
(and alias), typo-tolerant lookups, and the nearest served place to a point."""

from __future__ import annotations

import math
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Iterable

from relay_graph.desk.catalogue.footprint import Footprint
from relay_graph.desk.catalogue.geo import haversine_km, place_key

CITY = "city"
AREA = "area"


@dataclass(frozen=True, slots=True)
class ServedPlace:
    kind: str  # CITY or AREA
    name: str
    city: str  # the served city it belongs to (itself for a city)
    city_uid: str
    country: str
    region: str
    lat: float
    lon: float
    keys: tuple[str, ...]  # place_key of the name and of each alias
    geonameid: int | None = None

    @property
    def area(self) -> str | None:
        return self.name if self.kind == AREA else None


@dataclass(frozen=True, slots=True)
class Nearest:
    city: ServedPlace  # the served city whose place is nearest
    place: ServedPlace  # the nearest served city or area itself
    km: float


def _keys(name: str, aliases: Iterable[str] | None) -> tuple[str, ...]:
    keys = [place_key(name)] + [place_key(a) for a in aliases or () if a]
    return tuple(dict.fromkeys(k for k in keys if k))


def city_place(uid: str, name: str, country: str, region: str, lat: float, lon: float,
               aliases: Iterable[str] | None = None, geonameid: int | None = None) -> ServedPlace:
    return ServedPlace(CITY, name, name, uid, country, region, float(lat), float(lon), _keys(name, aliases), geonameid)


def area_place(city: ServedPlace, name: str, lat: float, lon: float, aliases: Iterable[str] | None = None,
               geonameid: int | None = None) -> ServedPlace:
    return ServedPlace(AREA, name, city.name, city.city_uid, city.country, city.region, float(lat), float(lon),
                       _keys(name, aliases), geonameid)


class ServedIndex:
    def __init__(self, places: Iterable[ServedPlace]) -> None:
        self.places: list[ServedPlace] = []
        self.by_key: dict[str, list[ServedPlace]] = {}
        self.cities: dict[str, ServedPlace] = {}
        seen: set[tuple[str, str, str]] = set()
        for p in places:
            ident = (p.kind, p.city_uid, p.name)
            if ident in seen:
                continue
            seen.add(ident)
            self.places.append(p)
            if p.kind == CITY:
                self.cities[p.city_uid] = p
            for k in p.keys:
                self.by_key.setdefault(k, []).append(p)
        self.max_words = max((k.count(" ") + 1 for k in self.by_key), default=0)
        self._by_shape: dict[tuple[str, int], list[str]] = {}
        for k in self.by_key:
            self._by_shape.setdefault((k[0], len(k)), []).append(k)

    def __len__(self) -> int:
        return len(self.places)

    def exact(self, key: str) -> list[ServedPlace]:
        return list(self.by_key.get(key, ()))

    def fuzzy(self, key: str, threshold: float) -> tuple[float, list[ServedPlace]]:
        """The best-scoring served names for a misspelt key (difflib ratio >= threshold). Only
        names with the same first letter are compared: typos rarely hit the first letter, and it
        keeps a long text cheap."""
        best, hits = 0.0, []
        if not key:
            return best, hits
        sm = SequenceMatcher(None, "", key, autojunk=False)
        n = len(key)
        # ratio <= 2*min(n, m)/(n + m): only names of a near length can reach the threshold
        lo, hi = math.floor(n * threshold / (2 - threshold)), math.ceil(n * (2 - threshold) / threshold)
        for k in (k for m in range(lo, hi + 1) for k in self._by_shape.get((key[0], m), ())):
            places = self.by_key[k]
            sm.set_seq1(k)
            if sm.real_quick_ratio() < threshold or sm.quick_ratio() < threshold:
                continue
            score = sm.ratio()
            if score < threshold or score < best - 1e-9:
                continue
            if score > best + 1e-9:
                best, hits = score, []
            hits.extend(places)
        return best, hits

    def nearest(self, lat: float, lon: float) -> Nearest | None:
        best: tuple[float, ServedPlace] | None = None
        for p in self.places:
            d = haversine_km(lat, lon, p.lat, p.lon)
            if best is None or d < best[0]:
                best = (d, p)
        if best is None:
            return None
        km, place = best
        return Nearest(self.cities.get(place.city_uid, place), place, km)

    def merged(self, other: "ServedIndex") -> "ServedIndex":
        return ServedIndex([*self.places, *other.places])


def index_from_footprint(fp: Footprint, regions: Iterable[str] | None = None) -> ServedIndex:
    wanted = set(regions) if regions is not None else None
    places: list[ServedPlace] = []
    for c in fp.cities:
        if wanted is not None and c.region not in wanted:
            continue
        city = city_place(c.uid, c.name, c.country, c.region, c.lat, c.lon, c.aliases, c.geonameid)
        places.append(city)
        places.extend(area_place(city, a.name, a.lat, a.lon, a.aliases, a.geonameid) for a in c.areas)
    return ServedIndex(places)


def index_from_rows(rows: Iterable[dict]) -> ServedIndex:
    """From SERVED_PLACES rows (one per city, its areas collected)."""
    places: list[ServedPlace] = []
    for r in rows:
        if r.get("lat") is None or r.get("lon") is None:
            continue
        city = city_place(r["uid"], r["name"], r["country"], r["region"], r["lat"], r["lon"], r.get("aliases"),
                          r.get("geonameid"))
        places.append(city)
        for a in r.get("areas") or ():
            if a and a.get("name") and a.get("lat") is not None:
                places.append(area_place(city, a["name"], a["lat"], a["lon"], a.get("aliases"), a.get("geonameid")))
    return ServedIndex(places)


__all__ = ["AREA", "CITY", "Nearest", "ServedIndex", "ServedPlace", "area_place", "city_place",
           "index_from_footprint", "index_from_rows"]
