"""POST /facts for names one vowel sign (or vowel point, or tone mark) apart, over HTTP on a real
FalkorDB: two people, neither write supersedes the other's; a read one mark off says what it
matched; a name spelt with a joiner is the name without it; a name of emoji only is refused."""

from __future__ import annotations

import pytest

from .helpers import assert_error

PAIRS = [
    ("devanagari", "आशा राव", "आशी राव"),
    ("tamil", "கமலா சுந்தர்", "கமலி சுந்தர்"),
    ("bengali", "রাজু দাস", "রাজা দাস"),
    ("thai", "มานี ใจดี", "มานิ ใจดี"),
    ("arabic", "سَمِير خان", "سُمِير خان"),
    ("hebrew", "שָׂרָה כהן", "שֶׂרָה כהן"),
    ("cjk", "はな やま", "ばな やま"),
]


@pytest.fixture
def api(client, tenant, auth):
    base = f"/v1/tenants/{tenant}"

    class Api:
        async def write(self, subject, city, status=201):
            r = await client.post(f"{base}/facts", headers=auth,
                                  json={"subject": subject, "predicate": "lives_in", "object": city})
            assert r.status_code == status, r.text
            return r.json()

        async def read(self, subject):
            r = await client.get(f"{base}/facts", params={"subject": subject, "predicate": "lives_in"}, headers=auth)
            assert r.status_code == 200, r.text
            return r.json()

    return Api()


@pytest.mark.parametrize("script, a, b", PAIRS, ids=[p[0] for p in PAIRS])
async def test_two_writes_one_mark_apart_are_two_people(api, script, a, b):
    first = await api.write(a, "pune")
    second = await api.write(b, "delhi")
    assert (first["outcome"], second["outcome"], second["superseded"]) == ("created", "created", [])
    assert [(f["subject"], f["object"]) for f in (await api.read(a))["facts"]] == [(a, "pune")]
    assert [(f["subject"], f["object"]) for f in (await api.read(b))["facts"]] == [(b, "delhi")]
    again = await api.write(a, "pune")  # the same person again: the same fact, corroborated
    assert (again["outcome"], again["fact_id"]) == ("corroborated", first["fact_id"])


async def test_a_read_one_mark_off_says_what_it_matched(api):
    await api.write("आशा राव", "pune")
    r = await api.read("आशी राव")
    assert [f["object"] for f in r["facts"]] == ["pune"]
    assert r["matched"]["how"] == "fuzzy" and r["matched"]["name"] == "आशा राव"
    exact = await api.read("  आशा   राव ")
    assert exact["matched"] is None and [f["object"] for f in exact["facts"]] == ["pune"]


async def test_joiners_are_taken_and_do_not_make_another_name(api):
    sri = "ශ්\u200dරී ලංකා"  # Sinhala "Sri" is spelt with a zero-width joiner
    first = await api.write(sri, "colombo")
    assert first["outcome"] == "created"
    without = await api.write("ශ්රී ලංකා", "colombo")
    assert (without["outcome"], without["fact_id"]) == ("corroborated", first["fact_id"])
    persian = await api.write("مهر\u200cناز", "tehran")
    assert (await api.write("مهرناز", "tehran"))["fact_id"] == persian["fact_id"]


async def test_a_name_of_emoji_only_is_refused_and_bidi_overrides_too(api, client, tenant, auth):
    r = await client.post(f"/v1/tenants/{tenant}/facts", headers=auth,
                          json={"subject": "🌸🌸", "predicate": "lives_in", "object": "pune"})
    assert "no letters or digits" in assert_error(r, 422, "invalid_value")["error"]["message"]
    r = await client.post(f"/v1/tenants/{tenant}/facts", headers=auth,
                          json={"subject": "asha\u202erao", "predicate": "lives_in", "object": "pune"})
    assert r.status_code == 422, r.text
    assert (await api.read("asha rao"))["facts"] == []
