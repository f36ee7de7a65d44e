"""The memory tools against a real FalkorDB (and the real embedding model for recall): each one's
answer, who it records as writer and reader, and the unknown_name shape with nothing else run."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from relay_graph.memory import facts
from relay_graph.desk.network import store as network
from relay_graph.desk.tickets import store as tickets
from relay_graph.memory.models import FactInput
from relay_graph.runtime.streams import FactChanged
from relay_graph.runtime.queries import Query
from relay_graph.tools import Shape, call_tool
from tests import sample_network

from .conftest import RESOLUTION, counts

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


def iso(t: datetime) -> str:
    return t.isoformat()


async def fact(ctx, subject, predicate, obj, **extra):
    r = await call_tool(ctx, "remember_fact", {"subject": subject, "predicate": predicate, "object": obj, **extra})
    assert r.shape is Shape.ANSWERED, r
    return r.data


async def test_remember_fact_writes_as_the_calling_agent_and_announces_it(ctx, announced):
    data = await fact(ctx, "alice rao", "lives_in", "pune", valid_from=iso(T0))
    assert data.outcome.value == "created" and data.asserted_by == "mcp:tester"
    assert [(type(n), n.id, n.change, n.actor) for n in announced] == [
        (FactChanged, data.fact_id, "created", "mcp:tester")]

    r = await call_tool(ctx, "facts_at", {"subject": "Alice  RAO"})
    assert r.shape is Shape.ANSWERED
    [f] = r.data.facts
    assert (f.fact_id, f.object, f.asserted_by, f.valid_from) == (data.fact_id, "pune", "mcp:tester", T0)
    assert r.how_i_know == [f"fact {f.fact_id}: alice rao lives_in = pune (recorded "
                            f"{f.recorded_at.isoformat()} by mcp:tester)"]

    # case and spacing are the same customer: the same fact, corroborated, named as on file
    again = await fact(ctx, "ALICE  rao", "lives_in", "Pune", valid_from=iso(T0))
    assert (again.fact_id, again.outcome.value, again.subject) == (data.fact_id, "corroborated", "alice rao")
    # one letter apart is another person: a write never lands on alice
    other = await fact(ctx, "alcie rao", "lives_in", "Pune", valid_from=iso(T0))
    assert other.fact_id != data.fact_id and other.outcome.value == "created" and other.subject == "alcie rao"


async def session_owner(ctx, session: str) -> str | None:
    rows = await ctx.client.run(ctx.tenant, Query("test", "MATCH (c:Customer)-[:HAS_SESSION]->(:Session "
                                                          "{session_id: $s}) RETURN c.uid AS uid"), {"s": session})
    return rows[0]["uid"] if rows else None


async def test_reads_by_a_misspelt_name_say_what_they_matched_or_that_it_is_ambiguous(ctx):
    await fact(ctx, "asha rao", "lives_in", "pune")
    one = await call_tool(ctx, "facts_at", {"subject": "ashaa rao"})
    assert one.shape is Shape.ANSWERED and [f.object for f in one.data.facts] == ["pune"]
    assert [(m.asked, m.id, m.how) for m in one.matched] == [("ashaa rao", "asha rao", "fuzzy")]
    await fact(ctx, "esha rao", "lives_in", "delhi")
    both = await call_tool(ctx, "facts_at", {"subject": "isha rao"})
    assert both.shape is Shape.AMBIGUOUS and both.data is None
    assert sorted(c.id for c in both.ambiguous[0].candidates) == ["asha rao", "esha rao"]
    assert "did you mean" in both.message
    exact = await call_tool(ctx, "facts_at", {"subject": "esha rao"})
    assert [f.object for f in exact.data.facts] == ["delhi"] and exact.matched == []


async def test_find_customers_lists_namesakes_and_asks_when_two_names_are_close(ctx):
    for cid, name in (("c-00000000000000a1", "Priya Raman"), ("c-00000000000000a2", "Priya Raman"),
                      ("c-00000000000000b1", "Asha Rao"), ("c-00000000000000b2", "Esha Rao")):
        await fact(ctx, cid, "name", name)
    namesakes = await call_tool(ctx, "find_customers", {"name": "priya raman"})
    assert sorted(c.id for c in namesakes.data.customers) == ["c-00000000000000a1", "c-00000000000000a2"]
    misspelt = await call_tool(ctx, "find_customers", {"name": "Priya Ramn"})
    assert len(misspelt.data.customers) == 2 and misspelt.matched[0].name == "Priya Raman"
    close = await call_tool(ctx, "find_customers", {"name": "Isha Rao"})
    assert close.shape is Shape.AMBIGUOUS and close.data.customers == []
    assert sorted(c.id for c in close.ambiguous[0].candidates) == ["c-00000000000000b1", "c-00000000000000b2"]
    assert close.message == "did you mean Asha Rao or Esha Rao?"


async def test_facts_at_reads_either_clock_and_history_keeps_every_version(ctx):
    first = await fact(ctx, "bina shah", "lives_in", "pune", valid_from=iso(T0))
    second = await fact(ctx, "bina shah", "lives_in", "mumbai", valid_from=iso(T0 + timedelta(days=10)))
    assert second.outcome.value == "superseded" and second.superseded == [first.fact_id]

    now = await call_tool(ctx, "facts_at", {"subject": "bina shah", "predicate": "lives_in"})
    assert [f.object for f in now.data.facts] == ["mumbai"]
    then = await call_tool(ctx, "facts_at", {"subject": "bina shah", "as_of": iso(T0 + timedelta(days=1))})
    assert [f.object for f in then.data.facts] == ["pune"] and then.data.clock.value == "world"
    # on file on that day: nothing, we only learnt of both moves today
    belief = await call_tool(ctx, "facts_at", {"subject": "bina shah", "as_of": iso(T0 + timedelta(days=1)),
                                               "clock": "belief"})
    assert belief.shape is Shape.NOT_IN_GRAPH and belief.data.facts == []

    hist = await call_tool(ctx, "history", {"subject": "bina shah"})
    assert [(f.object, f.state.value) for f in hist.data.facts] == [("pune", "superseded"), ("mumbai", "current")]


async def test_claims_rank_two_agents_disagreeing(make_ctx, tenant):
    intake, outside = make_ctx(tenant, "intake"), make_ctx(tenant, "mcp:crm-sync")
    await fact(intake, "chen li", "on_plan", "fiber 300")
    contested = await fact(outside, "chen li", "on_plan", "fiber 500")
    assert contested.outcome.value == "conflict" and contested.conflict_id

    r = await call_tool(intake, "claims", {"subject": "chen li", "predicate": "on_plan"})
    assert r.shape is Shape.ANSWERED
    assert r.data.conflict_id == contested.conflict_id
    assert {(c.object, c.asserted_by) for c in r.data.claims} == {("fiber 300", "intake"),
                                                                   ("fiber 500", "mcp:crm-sync")}
    assert f"conflict {contested.conflict_id} is open" in r.how_i_know


async def test_explain_tells_who_wrote_it_what_it_came_from_and_what_it_replaced(make_ctx, tenant):
    intake, resolver = make_ctx(tenant, "intake"), make_ctx(tenant, "resolver")
    ep = await call_tool(intake, "remember", {"session": "s-dev", "customer": "dev patel", "turns": [
        {"speaker": "dev patel", "text": "I moved to Mumbai last week", "at": iso(T0)}]})
    [episode_id] = ep.data.episode_ids
    old = await fact(intake, "dev patel", "lives_in", "pune", valid_from=iso(T0 - timedelta(days=300)))
    new = await fact(intake, "dev patel", "lives_in", "mumbai", source=episode_id, valid_from=iso(T0))
    claim = await fact(resolver, "dev patel", "lives_in", "delhi")

    r = await call_tool(resolver, "explain", {"fact_id": new.fact_id})
    assert r.shape is Shape.ANSWERED
    [e] = r.data.explanations
    assert (e.fact.subject, e.fact.predicate, e.fact.object, e.fact.state) == ("dev patel", "lives_in", "mumbai",
                                                                               "current")
    assert e.written_by == ["intake"]
    assert [(d.episode_id, d.text) for d in e.derived_from] == [(episode_id, "I moved to Mumbai last week")]
    assert [(s.fact_id, s.object, s.state) for s in e.supersedes] == [(old.fact_id, "pune", "superseded")]
    assert e.superseded_by == []
    assert e.conflict is not None and e.conflict.open and e.conflict.conflict_id == claim.conflict_id
    assert {c.fact_id for c in e.conflict.claims} == {new.fact_id, claim.fact_id}
    assert f"episode {episode_id} DERIVED fact {new.fact_id}: \"I moved to Mumbai last week\" (dev patel, " \
           f"{T0.isoformat()})" in r.how_i_know
    assert f"fact {new.fact_id} SUPERSEDES fact {old.fact_id} (lives_in = pune, by intake)" in r.how_i_know

    # explaining is reading: the explainer is recorded as having consulted it
    again = await call_tool(intake, "explain", {"subject": "dev patel", "predicate": "lives_in"})
    by_id = {x.fact.fact_id: x for x in again.data.explanations}
    assert set(by_id) == {new.fact_id, claim.fact_id}
    assert [(c.agent, c.count) for c in by_id[new.fact_id].consulted_by] == [("resolver", 1)]
    old_view = (await call_tool(intake, "explain", {"fact_id": old.fact_id})).data.explanations[0]
    assert [s.fact_id for s in old_view.superseded_by] == [new.fact_id]
    only = await call_tool(intake, "explain", {"subject": "dev patel", "predicate": "lives_in", "object": "Delhi"})
    assert [x.fact.fact_id for x in only.data.explanations] == [claim.fact_id]


async def test_explain_of_an_unknown_fact_id_is_an_unknown_name(ctx, recorder):
    r = await call_tool(ctx, "explain", {"fact_id": "no-such-fact"})
    assert r.shape is Shape.UNKNOWN_NAME and r.data is None
    assert [(u.argument, u.kind, u.name) for u in r.unknown] == [("fact_id", "fact", "no-such-fact")]
    assert recorder.names() == ["fact_provenance"]


async def test_recall_and_ask_answer_from_the_graph_with_the_path(ctx):
    await call_tool(ctx, "remember", {"session": "s-emma", "customer": "emma stone", "turns": [
        {"speaker": "emma stone", "text": "My router is a TP-Link Archer C6", "at": iso(T0)},
        {"speaker": "agent", "text": "Thanks, noted.", "at": iso(T0 + timedelta(seconds=5))},
    ]})
    await fact(ctx, "emma stone", "has_router", "tp-link archer c6")

    r = await call_tool(ctx, "recall", {"q": "which router does emma have?", "subject": "emma stone", "k": 3})
    assert r.shape is Shape.ANSWERED and r.data.recall_shape.value == "path"
    assert r.data.subject == "emma stone"
    assert any("TP-Link" in i.text for i in r.data.items)
    assert any(f.object == "tp-link archer c6" for f in r.data.facts)
    assert any(line.startswith("episode ") and "subject -> entity 'emma stone'" in line for line in r.how_i_know)

    a = await call_tool(ctx, "ask", {"question": "what router does she use?", "customer": "Emma Stnoe"})
    assert a.shape is Shape.ANSWERED and a.data.customer == "emma stone"
    assert a.data.answered_from == "fact" and "tp-link archer c6" in a.data.answer
    assert a.data.learnt == "just now" and a.data.answer.endswith(", learnt just now")


async def test_ask_says_how_long_ago_the_answering_fact_was_learnt(ctx, graph_client, tenant):
    learnt = (datetime.now(timezone.utc) - timedelta(days=3, hours=2)).replace(microsecond=0)
    await facts.write_fact(graph_client, tenant, FactInput(subject="emma stone", predicate="has_router",
                                                           object="tp-link archer c6", agent="intake",
                                                           recorded_at=learnt))
    a = await call_tool(ctx, "ask", {"question": "what router does she use?", "customer": "emma stone"})
    assert a.data.answered_from == "fact" and a.data.learnt == "3 days ago"
    assert a.data.answer == "emma stone has router tp-link archer c6 since " + learnt.isoformat() + \
        " (on file from intake), learnt 3 days ago"


async def test_recall_customer_gathers_facts_open_tickets_and_open_outages(ctx, graph_client, tenant):
    await sample_network.build_sample_network(graph_client, tenant, city="pune", customers=["farah khan", "gita rao"])
    await fact(ctx, "farah khan", "on_plan", "fiber 100")
    t = await tickets.open_ticket(graph_client, tenant, customer="farah khan", issue_kind="no internet",
                                  summary="no internet since morning", agent="intake")
    closed = await tickets.open_ticket(graph_client, tenant, customer="farah khan", issue_kind="wifi slow",
                                       summary="slow", agent="intake")
    await tickets.confirm(graph_client, tenant, closed.id, fixed=True, by="farah-khan")
    outage = await network.open_outage(graph_client, tenant, "pune-olt-1", cause="fibre cut")

    r = await call_tool(ctx, "recall_customer", {"customer": "farah  khan"})
    assert r.shape is Shape.ANSWERED
    assert r.data.customer == "farah khan"
    assert [(f.predicate, f.object) for f in r.data.facts] == [("on_plan", "fiber 100")]
    assert [x.id for x in r.data.open_tickets] == [t.id]
    assert outage.customers == ["farah khan", "gita rao"]  # both homes hang off pune-olt-1
    assert [o.outage_id for o in r.data.open_outages] == [outage.outage_id]
    assert r.data.open_outages[0].customers == ["farah khan"]  # nobody else's name in her view
    assert f"ticket {t.id}: no internet, stage reported (updated {t.updated_at.isoformat()})" in r.how_i_know


async def test_remember_writes_for_exactly_the_customer_given_and_retire_ends_a_fact(ctx):
    await fact(ctx, "hari om", "owns_device", "smart tv")
    r = await call_tool(ctx, "remember", {"session": "s-hari", "customer": "hari omm",
                                          "turns": [{"speaker": "hari", "text": "the tv is gone"}]})
    assert r.data.customer == "hari omm"  # spelt alike is not hari om: the turns are not his
    r = await call_tool(ctx, "remember", {"session": "s-hari-2", "customer": "HARI  OM",
                                          "turns": [{"speaker": "hari", "text": "the tv is back"}]})
    assert r.shape is Shape.ANSWERED
    assert await session_owner(ctx, "s-hari") == "Customer|hari omm"
    assert await session_owner(ctx, "s-hari-2") == "Customer|hari om"
    # retiring by a misspelt subject finds nobody to retire for: it never ends hari om's fact
    wrong = await call_tool(ctx, "retire_fact", {"subject": "hari omn", "predicate": "owns_device",
                                                 "object": "smart tv"})
    assert wrong.shape is Shape.UNKNOWN_NAME

    gone = await call_tool(ctx, "retire_fact", {"subject": "hari om", "predicate": "owns_device",
                                                "object": "smart tv"})
    assert gone.shape is Shape.ANSWERED and len(gone.data.retired) == 1
    again = await call_tool(ctx, "retire_fact", {"subject": "hari om", "predicate": "owns_device",
                                                 "object": "smart tv"})
    assert again.shape is Shape.NOT_IN_GRAPH and again.data.retired == []
    assert (await call_tool(ctx, "facts_at", {"subject": "hari om"})).data.facts == []


@pytest.mark.parametrize("name, arguments, argument", [
    ("facts_at", {"subject": "nobody known"}, "subject"),
    ("history", {"subject": "nobody known", "predicate": "lives_in"}, "subject"),
    ("claims", {"subject": "nobody known", "predicate": "on_plan"}, "subject"),
    ("explain", {"subject": "nobody known", "predicate": "lives_in"}, "subject"),
    ("retire_fact", {"subject": "nobody known", "predicate": "lives_in"}, "subject"),
    ("recall", {"q": "where does nobody live?", "subject": "nobody known"}, "subject"),
    ("ask", {"question": "where does nobody live?", "customer": "nobody known"}, "customer"),
    ("recall_customer", {"customer": "nobody known"}, "customer"),
])
async def test_an_unknown_name_stops_before_any_query_but_its_lookup(ctx, recorder, graph_client, tenant, name,
                                                                     arguments, argument):
    await fact(ctx, "someone else", "lives_in", "pune")  # the graph is not empty
    before = await counts(graph_client, tenant)
    recorder.ran.clear()

    r = await call_tool(ctx, name, arguments)

    assert r.shape is Shape.UNKNOWN_NAME and r.data is None and r.how_i_know == []
    assert [(u.argument, u.name) for u in r.unknown] == [(argument, "nobody known")]
    assert "nobody known" in r.message
    assert recorder.ran and set(recorder.names()) <= RESOLUTION, recorder.names()
    assert all(q.read_only for q in recorder.ran)
    assert await counts(graph_client, tenant) == before
