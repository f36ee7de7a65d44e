"""The online geocoder placement falls back to when the own list and the offline gazetteer know
nothing, and only when a key is configured: `make_geocoder(None)` is None, and placement never
calls what it was not given.

`OpenCageGeocoder` speaks the OpenCage API (https://opencagedata.com/api) over httpx. Answers are
cached in the process by folded query (LRU, with a time to live) so a place is looked up once;
failures are not cached and surface as `Unavailable`. Tests pass an `httpx.MockTransport`."""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Callable, Protocol, runtime_checkable

import httpx

from relay_graph.runtime.errors import InvalidInput, Unavailable
from relay_graph.desk.catalogue.geo import place_key
from relay_graph.desk.catalogue.models import GeoHit

OPENCAGE_URL = "https://api.opencagedata.com/geocode/v1/json"
# Component names OpenCage uses for a settlement, most specific first.
_PLACE_COMPONENTS = ("city", "town", "village", "municipality", "suburb", "city_district", "county", "state")


@runtime_checkable
class Geocoder(Protocol):
    async def geocode(self, query: str) -> list[GeoHit]: ...


class OpenCageGeocoder:
    def __init__(self, api_key: str, *, base_url: str = OPENCAGE_URL, timeout_s: float = 5.0, limit: int = 5,
                 cache_size: int = 2048, cache_ttl_s: float = 30 * 86400,
                 transport: httpx.AsyncBaseTransport | None = None, clock: Callable[[], float] = time.monotonic):
        if not isinstance(api_key, str) or not api_key.strip():
            raise InvalidInput("a geocoder needs an API key", code="geocoder_key_missing")
        self._key = api_key.strip()
        self._url = base_url
        self._limit = limit
        self._http = httpx.AsyncClient(timeout=timeout_s, transport=transport)
        self._cache: OrderedDict[str, tuple[float, list[GeoHit]]] = OrderedDict()
        self._cache_size = cache_size
        self._ttl = cache_ttl_s
        self._clock = clock
        self.calls = 0  # network requests made (cache hits do not count)

    async def geocode(self, query: str) -> list[GeoHit]:
        key = place_key(query)
        if not key:
            return []
        now = self._clock()
        cached = self._cache.get(key)
        if cached and now - cached[0] < self._ttl:
            self._cache.move_to_end(key)
            return list(cached[1])
        self.calls += 1
        try:
            resp = await self._http.get(self._url, params={
                "q": query, "key": self._key, "limit": self._limit, "no_annotations": 1, "language": "en",
            })
            resp.raise_for_status()
            body = resp.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise Unavailable(f"geocoder unavailable: {type(exc).__name__}", code="geocoder_unavailable") from exc
        hits = parse_opencage(body)
        self._cache[key] = (now, hits)
        self._cache.move_to_end(key)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return list(hits)

    async def aclose(self) -> None:
        await self._http.aclose()


def parse_opencage(body: object) -> list[GeoHit]:
    """Results with a country code and coordinates; anything malformed is skipped."""
    out: list[GeoHit] = []
    results = body.get("results") if isinstance(body, dict) else None
    for r in results or ():
        try:
            comp = r.get("components") or {}
            geom = r["geometry"]
            cc = str(comp.get("country_code") or "").upper()
            if len(cc) != 2:
                continue
            name = (next((comp[k] for k in _PLACE_COMPONENTS if comp.get(k)), None)
                    or str(r.get("formatted", "")).split(",")[0])
            out.append(GeoHit(name=str(name).strip() or cc, country=cc, lat=float(geom["lat"]), lon=float(geom["lng"]),
                              admin1=comp.get("state_code") or None,
                              confidence=float(r["confidence"]) if r.get("confidence") is not None else None))
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return out


def make_geocoder(api_key: str | None, **options) -> Geocoder | None:
    """The configured geocoder, or None when there is no key (then nothing is ever called)."""
    if api_key is None or not str(api_key).strip():
        return None
    return OpenCageGeocoder(str(api_key), **options)


__all__ = ["Geocoder", "OPENCAGE_URL", "OpenCageGeocoder", "make_geocoder", "parse_opencage"]
