"""The relay.* database functions (udf.py) word facts, prices and times exactly as the Python side
does: each compared with the Python wording on the same values, and through the reads that use
them (a fact's sentence in `ask`, the catalogue's prices)."""

from __future__ import annotations

from datetime import datetime, timezone

from relay_graph.desk import catalogue as cat
from relay_graph.memory import facts
from relay_graph.runtime import udf
from relay_graph.desk.catalogue import pricing
from relay_graph.memory.models import FactInput
from relay_graph.runtime.queries import Query
from relay_graph.tools.memory_tools import _fact_sentence

AMOUNTS = [0.0, 0.5, 1.5, 2.5, 0.125, 0.375, 1.005, 9.99, 24.99, 99.99, 100.0, 100.5, 589.0, 1234.5, 4299.0, 999999.99, 1234567.891, -12.5]


async def column(client, tenant, cypher, params):
    return [r["v"] for r in await client.run(tenant, Query("test_udf", cypher, True), params)]


async def test_money_is_pricing_display_for_every_currency(graph_client, tenant):
    currencies = sorted(set(pricing.SYMBOLS) | pricing.ZERO_DECIMAL | {"XYZ"})
    cases = [[a, c] for c in currencies for a in AMOUNTS]
    got = await column(graph_client, tenant, "UNWIND $cases AS x RETURN relay.money(x[0], x[1]) AS v",
                       {"cases": cases})
    assert got == [pricing.display(a, c) for a, c in cases]
    assert "₹589" in got and "€24.99" in got and "¥4,299" in got


async def test_ago_is_the_python_wording(graph_client, tenant):
    now = 1_780_000_000_000
    seconds = [0, 59, 60, 61, 119, 120, 3599, 3600, 7199, 7200, 86399, 86400, 172800, 40 * 86400 + 5]
    got = await column(graph_client, tenant, "UNWIND $ds AS d RETURN relay.ago($now - d * 1000, $now) AS v",
                       {"ds": seconds, "now": now})
    assert got == [udf.ago(now - d * 1000, now) for d in seconds]
    assert got[:4] == ["just now", "just now", "1 minute ago", "1 minute ago"] and got[-1] == "40 days ago"


async def test_fact_sentences_read_from_the_database_match_the_python_wording(graph_client, tenant):
    times = [datetime(2026, 3, 1, 9, 30, tzinfo=timezone.utc), datetime(2025, 12, 31, 23, 59, 58, 123000,
                                                                       tzinfo=timezone.utc)]
    await facts.write_fact(graph_client, tenant, FactInput(subject="Asha Verma", predicate="lives_in", object="Pune",
                                                           agent="intake", valid_from=times[0]))
    await facts.write_fact(graph_client, tenant, FactInput(subject="Asha Verma", predicate="has_router",
                                                           object="Nokia XS-2426G-A", agent="netops",
                                                           valid_from=times[1]))
    views = await facts.read_facts(graph_client, tenant, "Asha Verma")
    assert len(views) == 2
    worded = {k: w.sentence for k, w in (await facts.sentences(graph_client, tenant, views)).items()}
    assert worded == {v.fact_id: _fact_sentence(v) for v in views}
    assert "Asha Verma lives in Pune since 2026-03-01T09:30:00+00:00 (on file from intake)" in worded.values()
    assert any(".123000+00:00" in s for s in worded.values())


async def test_how_long_ago_a_fact_was_learnt_is_worded_by_the_read(graph_client, tenant):
    learnt = datetime(2026, 3, 1, 9, 30, tzinfo=timezone.utc)
    await facts.write_fact(graph_client, tenant, FactInput(subject="Asha Verma", predicate="lives_in", object="Pune",
                                                           agent="intake", recorded_at=learnt))
    views = await facts.read_facts(graph_client, tenant, "Asha Verma")
    at_ms = int(learnt.timestamp() * 1000)
    for later_ms, said in ((30_000, "just now"), (3 * 3_600_000 + 5, "3 hours ago"), (12 * 86_400_000, "12 days ago")):
        worded = await facts.sentences(graph_client, tenant, views, now_ms=at_ms + later_ms)
        assert worded[views[0].fact_id].learnt == said == udf.ago(at_ms, at_ms + later_ms)


async def test_the_catalogue_prices_are_worded_by_the_read(graph_client, tenant):
    await cat.ensure_catalogue(graph_client, tenant, "europe")
    plans = await cat.plans_for(graph_client, tenant, "DE")
    extras = await cat.addons_for(graph_client, tenant, "DE") + await cat.services_for(graph_client, tenant, "DE")
    prices = [p.price for p in plans] + [e.price for e in extras]
    assert prices
    for p in prices:
        assert p.display == pricing.display(p.amount, p.currency)
        assert p.display_incl_tax == pricing.display(p.price_incl_tax, p.currency)


async def test_the_library_is_loaded_and_lists_its_functions(graph_client, tenant):
    await column(graph_client, tenant, "RETURN 1 AS v", {})
    listed = await graph_client.redis.execute_command("GRAPH.UDF", "LIST", udf.LIBRARY)
    assert graph_client.udfs
    assert sorted(listed[0]["functions"]) == ["ago", "money", "sentence"]


async def test_the_sentence_read_starts_from_the_fact_id_index(graph_client, tenant):
    from relay_graph.memory.queries import facts as q

    plan = await graph_client.explain(tenant, q.FACT_SENTENCES, {"facts": [{"fact_id": "f1", "subject": "x"}]})
    assert "Node By Index Scan" in plan and "All Node Scan" not in plan


async def test_a_process_loads_the_library_only_when_the_server_lacks_this_very_code(graph_client):
    """A second process finds the same library loaded and replaces nothing (replacing it while other
    queries ran crashed FalkorDB 4.22.1); a different library on the server is replaced."""
    from relay_graph.runtime import udf
    from relay_graph.runtime.db import GraphClient

    await graph_client.ensure_udfs()
    assert udf.loaded(await graph_client.redis.execute_command(*udf.LIST_COMMAND))
    stale = udf.source().replace("'just now'", "'a moment ago'")
    await graph_client.redis.execute_command("GRAPH.UDF", "LOAD", "REPLACE", udf.LIBRARY, stale)
    assert not udf.loaded(await graph_client.redis.execute_command(*udf.LIST_COMMAND))
    fresh = GraphClient(graph_client.settings)
    try:
        await fresh.ensure_udfs()
    finally:
        await fresh.close()
    assert udf.loaded(await graph_client.redis.execute_command(*udf.LIST_COMMAND))
    assert not udf.loaded([{b"library_name": b"relay", b"library_code": b"other"}]) and not udf.loaded(None)
