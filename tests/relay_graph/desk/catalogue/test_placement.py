"""Placing an address (pure: the frozen footprint and the offline gazetteer, no database)."""

from __future__ import annotations

import pytest

from relay_graph.desk.catalogue import postal
from relay_graph.desk.catalogue.footprint import footprint
from relay_graph.desk.catalogue.geo import haversine_km, offset, world
from relay_graph.desk.catalogue.models import GeoHit, PlacementSource, PlacementStatus
from relay_graph.desk.catalogue.placement import (
    SERVICE_RADIUS_KM,
    footprint_index,
    locate,
    locate_hits,
    route_region,
)
from relay_graph.desk.catalogue.served import ServedIndex, city_place, index_from_footprint

SERVED, NO_LINE = PlacementStatus.SERVED, PlacementStatus.NO_LINE
AMBIGUOUS, UNKNOWN = PlacementStatus.AMBIGUOUS, PlacementStatus.UNKNOWN
OWN, GAZ = PlacementSource.OWN_LIST, PlacementSource.GAZETTEER


def own(*regions: str) -> ServedIndex:
    return index_from_footprint(footprint(), regions)


def where(text: str, *, own_list: ServedIndex | None = None, region: str | None = None, country: str | None = None):
    return locate(text, own=own_list if own_list is not None else own("india"), served=footprint_index(),
                  world_=world(), region=region, country=country)


# ---------------------------------------------------------------- own list


@pytest.mark.parametrize("text", ["Pune", "pune", "  PUNE ", "I live in Pune now"])
def test_own_list_exact_whatever_the_case_and_spacing(text: str) -> None:
    p = where(text)
    assert (p.status, p.city, p.city_uid, p.country, p.region, p.source) == (
        SERVED, "Pune", "City|pune", "IN", "india", OWN)
    assert p.distance_km == 0.0


@pytest.mark.parametrize(("text", "city"), [("Bengalooru", "Bengaluru"), ("Coimbatre", "Coimbatore"),
                                            ("Ahmedabd", "Ahmedabad")])
def test_own_list_tolerates_misspellings(text: str, city: str) -> None:
    p = where(text)
    assert (p.status, p.city, p.source) == (SERVED, city, OWN)


def test_a_real_place_name_is_never_read_as_a_typo_of_a_served_one() -> None:
    # "Cambridge" is one letter-pattern away from Coatbridge (an area of Glasgow), but a real town
    p = where("Cambridge", own_list=own("europe"), region="europe")
    assert (p.status, p.place, p.country, p.source) == (NO_LINE, "Cambridge", "GB", GAZ)


@pytest.mark.parametrize(
    ("text", "area", "city"),
    [("Navi Mumbai", "Navi Mumbai", "Mumbai"), ("North Delhi", "Delhi North", "Delhi"),
     ("Flat 4, 12 MG Road, Pimpri, Pune 411018", "Pimpri", "Pune"), ("salford", "Salford", "Manchester")],
)
def test_an_area_name_places_the_customer_in_its_city(text: str, area: str, city: str) -> None:
    p = where(text, own_list=own("india", "europe"))
    assert (p.status, p.area, p.city, p.source) == (SERVED, area, city, OWN)


def test_two_names_of_one_served_place_corroborate_each_other() -> None:
    # "Richmond" alone is ambiguous (Richmond BC, Virginia, California); with Vancouver it is not
    na = own("north-america")
    assert where("Richmond", own_list=na, region="north-america").status is AMBIGUOUS
    p = where("Richmond, Vancouver", own_list=na)
    assert (p.status, p.area, p.city, p.country) == (SERVED, "Richmond", "Vancouver", "CA")


# ---------------------------------------------------------------- gazetteer


def test_a_gazetteer_place_near_a_served_city_is_served_by_that_city() -> None:
    p = where("Thane")  # not on our list; 6 km from Mumbai's nearest area
    assert (p.status, p.city, p.city_uid, p.source) == (SERVED, "Mumbai", "City|mumbai", GAZ)
    assert p.place.startswith("Th") and 0 < p.distance_km <= SERVICE_RADIUS_KM
    assert where("I moved to Gurgaon last week").city == "Delhi"


def test_alternate_names_from_the_gazetteer() -> None:
    assert (where("Bombay").city, where("Bombay").source) == ("Mumbai", GAZ)
    p = where("München")
    assert (p.status, p.city, p.region) == (SERVED, "Munich", "europe")


@pytest.mark.parametrize(("text", "country", "region"),
                         [("Ushuaia", "AR", "latin-america"), ("Alice Springs", "AU", "asia-pacific"),
                          ("Kharagpur", "IN", "india")])
def test_a_place_far_from_every_line_gets_no_line_not_a_guess(text: str, country: str, region: str) -> None:
    p = where(text)
    assert (p.status, p.country, p.region, p.city, p.city_uid, p.source) == (NO_LINE, country, region, None, None, GAZ)
    assert p.distance_km > SERVICE_RADIUS_KM
    assert p.nearest_city  # the nearest line is named, for an honest answer


def test_a_smaller_homonym_is_no_doubt() -> None:
    p = where("Paris")  # Paris, Texas is a town of 25,000
    assert (p.status, p.city, p.country) == (SERVED, "Paris", "FR")


@pytest.mark.parametrize("text", ["asdfgh", "i moved to a nice flat", "!!!"])
def test_text_without_a_place_is_unknown(text: str) -> None:
    p = where(text)
    assert (p.status, p.city, p.source, p.candidates) == (UNKNOWN, None, None, [])


# ---------------------------------------------------------------- ambiguity


def test_a_name_shared_by_two_countries_is_ambiguous_with_both_candidates() -> None:
    p = where("Hyderabad")
    assert p.status is AMBIGUOUS and p.city is None
    got = {(c.country, c.status) for c in p.candidates}
    assert got == {("IN", SERVED), ("PK", NO_LINE)}
    india = next(c for c in p.candidates if c.country == "IN")
    assert (india.city, india.city_uid, india.source) == ("Hyderabad", "City|hyderabad", OWN)


def test_the_desk_context_disambiguates() -> None:
    p = where("Hyderabad", region="india")
    assert (p.status, p.city, p.country) == (SERVED, "Hyderabad", "IN")


def test_london_is_england_or_ontario_until_something_says_which() -> None:
    eu = own("europe")
    p = where("London", own_list=eu)
    assert p.status is AMBIGUOUS
    assert {(c.country, c.status) for c in p.candidates} == {("GB", SERVED), ("CA", NO_LINE)}
    assert where("London", own_list=eu, region="europe").city == "London"
    assert where("London", own_list=eu, country="GB").city == "London"
    assert where("London, UK", own_list=eu).city == "London"
    ontario = where("London, Ontario", own_list=eu)
    assert (ontario.status, ontario.country, ontario.region) == (NO_LINE, "CA", "north-america")
    assert where("London", own_list=eu, region="north-america").status is NO_LINE


def test_valencia_spain_or_venezuela() -> None:
    eu = own("europe")
    p = where("Valencia", own_list=eu)
    assert p.status is AMBIGUOUS and {"ES", "VE"} <= {c.country for c in p.candidates}
    assert (where("Valencia", own_list=eu, region="europe").country, where("Valencia", own_list=eu,
                                                                           region="europe").status) == ("ES", SERVED)
    ve = where("Valencia, Venezuela", own_list=eu)
    assert (ve.status, ve.country, ve.region) == (NO_LINE, "VE", "latin-america")


# ---------------------------------------------------------------- routing


def test_a_city_of_another_region_routes_to_that_desk() -> None:
    p = where("Berlin")  # talking to the India desk
    assert (p.status, p.city, p.region) == (SERVED, "Berlin", "europe")
    assert route_region(p, current="india") == "europe"
    far = where("Karachi")
    assert (far.status, far.region) == (NO_LINE, "india")  # no line, answered by the desk for Pakistan
    assert route_region(far, current="europe") == "india"


def test_ambiguous_or_unknown_stays_with_the_current_desk() -> None:
    assert route_region(where("Hyderabad"), current="india") == "india"
    assert route_region(where("asdfgh"), current="europe") == "europe"
    assert route_region(where("asdfgh")) is None


# ---------------------------------------------------------------- the threshold, on a hand-made list


def test_the_service_radius_is_the_line_between_served_and_no_line() -> None:
    hub = city_place("City|testville", "Testville", "IN", "india", 20.0, 75.0)
    served = ServedIndex([hub])
    inside = offset(20.0, 75.0, SERVICE_RADIUS_KM - 1, 0)
    outside = offset(20.0, 75.0, SERVICE_RADIUS_KM + 1, 0)
    assert haversine_km(20.0, 75.0, *inside) < SERVICE_RADIUS_KM < haversine_km(20.0, 75.0, *outside)
    near = locate_hits("somewhere", [GeoHit(name="Near", country="IN", lat=inside[0], lon=inside[1])],
                       served=served, world_=None)
    far = locate_hits("somewhere", [GeoHit(name="Far", country="IN", lat=outside[0], lon=outside[1])],
                      served=served, world_=None)
    assert (near.status, near.city, near.source) == (SERVED, "Testville", PlacementSource.GEOCODER)
    assert (far.status, far.city, far.nearest_city) == (NO_LINE, None, "Testville")


def test_geocoder_hits_in_two_countries_are_ambiguous() -> None:
    hits = [GeoHit(name="London", country="GB", lat=51.5072, lon=-0.1276),
            GeoHit(name="London", country="CA", lat=42.9834, lon=-81.2330)]
    p = locate_hits("London", hits, served=footprint_index(), world_=world())
    assert p.status is AMBIGUOUS and {c.country for c in p.candidates} == {"GB", "CA"}
    assert locate_hits("London", hits, served=footprint_index(), world_=world(), region="europe").city == "London"


@pytest.mark.parametrize("zone, country", [
    ("Europe/Lisbon", "PT"), ("Asia/Kolkata", "IN"), ("Asia/Calcutta", "IN"),  # Chrome's older name
    ("America/Sao_Paulo", "BR"), ("Europe/Kiev", "UA"), ("UTC", None), ("Mars/Olympus", None), ("", None),
])
def test_the_country_of_a_browsers_time_zone(zone, country):
    assert world().country_of_zone(zone) == country


# ---------------------------------------------------------------- postal codes


@pytest.mark.parametrize(("text", "codes"), [
    ("I live at 560034", ["560034"]), ("my pin code is 560 034", ["560034"]),
    ("Flat 2, 12th Main, HSR Layout 560102", ["560102"]),
    ("my OTP is 560034", []), ("I paid 560034 rupees", []), ("call me on 9845056003", []), ("560034", []),
    ("order 411001 never arrived at my address", []),
])
def test_a_postal_code_counts_only_when_the_text_gives_it_as_an_address(text, codes):
    assert postal.codes_in(text) == codes


def test_a_pin_code_alone_places_the_home_by_its_position():
    places = [postal.lookup(c) for c in postal.codes_in("I live at 560034")]
    assert places[0].name == "Koramangala" and places[0].district == "Bengaluru Urban"
    p = locate("I live at 560034", own=own("india"), served=footprint_index(), world_=world(), region="india",
               postal_places=places)
    assert (p.status, p.city, p.country, p.source) == (SERVED, "Bengaluru", "IN", PlacementSource.POSTAL_CODE)
    assert p.area == "Bengaluru South"  # the served area nearest to Koramangala's post offices
    # a served city named in the words is the own list's, and wins over the code
    p = locate("Pune 560034", own=own("india"), served=footprint_index(), world_=world(), postal_places=places)
    assert (p.city, p.source) == ("Pune", OWN)
    assert postal.lookup("999999") is None


@pytest.mark.parametrize("text, city", [
    ("Hi, my name is Ana Ruiz and I live in Madrid.", "Madrid"),  # "Name" is an alternate of Namur
    ("The LOS light is red and we live in Leeds", "Leeds"),  # THE: Teresina, LOS: Lagos, we: Huế
    ("Good evening, for two days nothing loads and we're based in Paris", "Paris"),  # FOR: Fortaleza
])
def test_everyday_words_and_airport_codes_are_no_places(text: str, city: str) -> None:
    p = where(text)
    named = {p.city, p.place, *(c.name for c in p.candidates)} - {None}
    assert city in named and not named & {"Namur", "Teresina", "Lagos", "Huế", "Fortaleza"}, (p.status, named)
