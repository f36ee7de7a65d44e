"""Intake reads the names its extractor matches from the tenant's catalogue
(catalogue.extraction_context, cached per tenant for a short time): a city the catalogue serves is
recognised with the catalogue's spelling, one the built-in lists do not know at all included."""

from __future__ import annotations


from relay_graph.desk.catalogue import ensure_catalogue
from services.intake import agent as intake_agent
from services.intake.handlers import handle_turn_received



async def test_the_catalogues_cities_reach_the_extractor(gateway, intake, memory, stream_redis, graph_client, tenant):
    await handle_turn_received(intake, await gateway.write_turn("Ola Nowak", "Hi, I live in Łódź now."))
    assert not [f for f in await memory.facts(tenant, "Ola Nowak") if f.predicate == "lives_in"]

    await ensure_catalogue(graph_client, tenant, "europe")
    intake_agent.extraction_contexts(intake).clear()  # the cache would know the new region within CONTEXT_TTL_S anyway
    await handle_turn_received(intake, await gateway.write_turn("Ola Nowak", "Hi, I live in Łódź now."))
    lives = [f.object for f in await memory.facts(tenant, "Ola Nowak") if f.predicate == "lives_in"]
    assert lives == ["Łódź"]
    await handle_turn_received(intake, await gateway.write_turn("Jan Kowalski", "We moved to Kraków last week"))
    lives = [f.object for f in await memory.facts(tenant, "Jan Kowalski") if f.predicate == "lives_in"]
    assert lives == ["Kraków"]  # the catalogue's spelling, not the built-in list's "Krakow"
