"""The served footprint: six desks, their countries, cities and areas from the gazetteer (pure)."""

from __future__ import annotations

import json

from relay_graph.desk.catalogue import footprint as fpm
from relay_graph.desk.catalogue.geo import haversine_km, world
from relay_graph.desk.catalogue.regions import REGION_CODES, REGIONS, territory_of
from relay_graph.memory.entities import entity_uid, name_key


def test_the_frozen_footprint_is_exactly_what_the_rules_give_for_the_installed_gazetteer() -> None:
    frozen = json.loads(fpm.DATA_FILE.read_text(encoding="utf-8"))
    assert fpm.to_json(fpm.build_footprint()) == frozen, "regenerate: python -m relay_graph.desk.catalogue.footprint"


def test_six_desks_each_serve_countries_with_their_largest_cities_and_areas() -> None:
    fp = fpm.footprint()
    assert set(REGION_CODES) == {"india", "europe", "north-america", "asia-pacific", "middle-east-africa",
                                 "latin-america"}
    for spec in REGIONS.values():
        assert spec.countries
        for cc, n in spec.countries.items():
            cities = [c for c in fp.cities if c.country == cc]
            assert 1 <= len(cities) <= n, cc
            assert all(c.region == spec.code for c in cities)
            for c in cities:
                assert c.uid == entity_uid("City", name_key(c.name))
                districts = [a for a in c.areas if a.kind == "district"]
                assert [a.name for a in districts] == [f"{c.name} {x}" for x, _, _ in fpm.COMPASS]
                assert len({a.uid for a in c.areas}) == len(c.areas)
                for a in c.areas:
                    assert haversine_km(a.lat, a.lon, c.lat, c.lon) <= fpm.LOCALITY_RADIUS_KM
    names = {c.name for c in fp.cities}
    assert {"Mumbai", "Delhi", "London", "Berlin", "New York City", "São Paulo", "Tokyo", "Lagos"} <= names
    assert "Cologne" in names and "Köln" not in names  # English display name, gazetteer name kept as alias
    assert next(c for c in fp.cities if c.name == "Cologne").aliases == ("Köln",)


def test_served_cities_of_a_country_are_distinct_places_not_districts_of_one() -> None:
    fp = fpm.footprint()
    for cc in fp.countries:
        cities = [c for c in fp.cities if c.country == cc]
        for i, a in enumerate(cities):
            for b in cities[i + 1:]:
                assert haversine_km(a.lat, a.lon, b.lat, b.lon) >= fpm.MERGE_RADIUS_KM, (a.name, b.name)
    mumbai = next(c for c in fp.cities if c.name == "Mumbai")
    assert "Navi Mumbai" in {a.name for a in mumbai.areas}


def test_no_area_shares_its_name_with_a_served_city() -> None:
    fp = fpm.footprint()
    city_names = {name_key(c.name) for c in fp.cities}
    assert not [a.name for c in fp.cities for a in c.areas if a.kind == "locality" and name_key(a.name) in city_names]


def test_currencies_come_from_the_gazetteer() -> None:
    fp = fpm.footprint()
    assert (fp.countries["IN"].currency, fp.countries["DE"].currency, fp.countries["GB"].currency,
            fp.countries["JP"].currency) == ("INR", "EUR", "GBP", "JPY")


def test_every_country_in_the_world_has_a_desk_except_antarctica() -> None:
    w = world()
    missing = [c.code for c in w.countries.values() if territory_of(c.code, c.continent) is None]
    assert set(missing) <= {"AQ", "BV", "GS", "HM", "TF"}
    assert territory_of("PK", "AS") == "india"
    assert territory_of("VE", "SA") == "latin-america"
    assert territory_of("AE", "AS") == "middle-east-africa"
    assert territory_of("CA", "NA") == "north-america"
    assert territory_of("CR", "NA") == "latin-america"
