"""The online geocoder: used only with a key, its answers cached (httpx.MockTransport, no network)."""

from __future__ import annotations

import httpx
import pytest

from relay_graph.desk.catalogue.geocoder import OpenCageGeocoder, make_geocoder, parse_opencage
from relay_graph.runtime.errors import InvalidInput, Unavailable

PUNE_NEARBY = {
    "results": [
        {"components": {"_type": "village", "village": "Qwertyvadi", "country_code": "in", "state_code": "MH"},
         "confidence": 8, "formatted": "Qwertyvadi, Maharashtra, India", "geometry": {"lat": 18.60, "lng": 73.90}},
        {"components": {"_type": "road"}, "geometry": {"lat": 1, "lng": 2}},  # no country: skipped
    ],
    "status": {"code": 200, "message": "OK"},
}


class Recorder:
    """A MockTransport handler that answers with a fixed body and remembers the requests."""

    def __init__(self, body: dict | None = None, status: int = 200) -> None:
        self.body, self.status, self.requests = body or PUNE_NEARBY, status, []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(self.status, json=self.body)


def test_no_key_no_geocoder() -> None:
    assert make_geocoder(None) is None
    assert make_geocoder("   ") is None
    with pytest.raises(InvalidInput):
        OpenCageGeocoder("")


async def test_results_are_parsed_and_the_key_is_sent() -> None:
    rec = Recorder()
    geo = make_geocoder("k-123", transport=httpx.MockTransport(rec))
    hits = await geo.geocode("Qwertyvadi near Pune")
    assert [(h.name, h.country, h.lat, h.lon, h.admin1) for h in hits] == [("Qwertyvadi", "IN", 18.6, 73.9, "MH")]
    (req,) = rec.requests
    assert req.url.params["key"] == "k-123" and req.url.params["q"] == "Qwertyvadi near Pune"
    await geo.aclose()


async def test_a_place_is_looked_up_once_then_served_from_the_cache() -> None:
    rec = Recorder()
    geo = OpenCageGeocoder("k", transport=httpx.MockTransport(rec))
    first = await geo.geocode("Qwertyvadi")
    again = await geo.geocode("  qwertyvadi ")  # same folded query
    assert first == again and len(rec.requests) == 1 and geo.calls == 1
    await geo.aclose()


async def test_a_cached_answer_expires() -> None:
    rec, now = Recorder(), [0.0]
    geo = OpenCageGeocoder("k", transport=httpx.MockTransport(rec), cache_ttl_s=60, clock=lambda: now[0])
    await geo.geocode("Qwertyvadi")
    now[0] = 61.0
    await geo.geocode("Qwertyvadi")
    assert len(rec.requests) == 2
    await geo.aclose()


async def test_failures_raise_unavailable_and_are_not_cached() -> None:
    rec = Recorder(body={"status": {"code": 401}}, status=401)
    geo = OpenCageGeocoder("bad", transport=httpx.MockTransport(rec))
    for _ in range(2):
        with pytest.raises(Unavailable):
            await geo.geocode("Qwertyvadi")
    assert len(rec.requests) == 2
    await geo.aclose()


def test_malformed_bodies_give_no_hits() -> None:
    assert parse_opencage(None) == []
    assert parse_opencage({"results": [{"geometry": {"lat": "x"}}]}) == []
