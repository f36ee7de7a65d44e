"""A tenant's own predicates on the real FalkorDB: defined at run time, kept in the tenant's graph,
written, superseded, contested, retired and read exactly like the built-in ones, invisible to other
tenants, and seen by another process (another GraphClient) on its next write."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from relay_graph.memory import facts, predicates
from relay_graph.memory.models import Clock, FactInput, FactState, Outcome, RetireInput
from relay_graph.memory.predicates import ConflictChoice, ObjectKind, PredicateDefinition
from relay_graph.memory.registry import Cardinality
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import AlreadyExists, InvalidInput, InvalidValue, NotFound, StateConflict, UnknownPredicate
from relay_graph.runtime.queries import Query
from tests.support import register

SINGLE, MULTI = Cardinality.SINGLE, Cardinality.MULTI


def at(day: int, hour: int = 0) -> datetime:
    return datetime(2026, 9, day, hour, tzinfo=timezone.utc)


def fact(predicate, obj, subject="alice rao", agent="planner", *, vf=None, rec=None):
    return FactInput(subject=subject, predicate=predicate, object=obj, agent=agent, valid_from=vf, recorded_at=rec)


def definition(cardinality=SINGLE, obj=ObjectKind.TEXT, conflict=ConflictChoice.SUPERSEDE, description=None):
    return PredicateDefinition(cardinality=cardinality, object=obj, conflict=conflict, description=description)


async def define(client, tenant, name, *args, **kwargs):
    return await predicates.define(client, tenant, name, definition(*args, **kwargs), agent="api")


async def edges(client: GraphClient, tenant: str, subject: str = "Customer|alice rao") -> list[list[str]]:
    rows = await client.run(tenant, Query("test_edges", "MATCH (:Entity {uid: $uid})-[e]->(o:Entity) "
                                          "RETURN type(e) AS type, o.name AS name ORDER BY type, name",
                                          read_only=True), {"uid": subject})
    return [[r["type"], r["name"]] for r in rows]


async def test_defining_is_idempotent_and_new_only_once(graph_client, tenant):
    view, created = await define(graph_client, tenant, "prefers_language", description="the language to write in")
    assert created and view.builtin is False and view.object is ObjectKind.TEXT and view.edge is None
    again, created = await define(graph_client, tenant, "prefers_language", description="the language to write in")
    assert not created and again == view
    listed = await predicates.list_predicates(graph_client, tenant)
    own = [p for p in listed.predicates if not p.builtin]
    assert [p.name for p in own] == ["prefers_language"] and listed.version == 1
    assert {"lives_in", "phone"} <= {p.name for p in listed.predicates if p.builtin}


async def test_a_single_valued_predicate_supersedes_and_keeps_both_clocks(graph_client, tenant):
    await define(graph_client, tenant, "prefers_language")
    first = await facts.write_fact(graph_client, tenant, fact("prefers_language", "Tamil", vf=at(1), rec=at(1)))
    repeat = await facts.write_fact(graph_client, tenant, fact("prefers_language", "tamil", vf=at(2), rec=at(2)))
    second = await facts.write_fact(graph_client, tenant, fact("prefers_language", "Hindi", vf=at(5), rec=at(6)))
    assert first.outcome is Outcome.CREATED and repeat.outcome is Outcome.CORROBORATED
    assert second.outcome is Outcome.SUPERSEDED and second.superseded == [first.fact_id]

    now = await facts.read_facts(graph_client, tenant, "alice rao", "prefers_language")
    assert [(f.object, f.state) for f in now] == [("Hindi", FactState.CURRENT)]
    # true in the world on the 5th already; on file only from the 6th
    world = await facts.read_facts(graph_client, tenant, "alice rao", "prefers_language", as_of=at(5, 12))
    belief = await facts.read_facts(graph_client, tenant, "alice rao", "prefers_language", as_of=at(5, 12),
                                    clock=Clock.BELIEF)
    assert [f.object for f in world] == ["Hindi"] and [f.object for f in belief] == ["Tamil"]
    # a read of all the subject's facts has the tenant's own predicates beside the built-in ones
    await facts.write_fact(graph_client, tenant, fact("lives_in", "pune", agent="intake"))
    assert sorted(f.predicate for f in await facts.read_facts(graph_client, tenant, "alice rao")) == [
        "lives_in", "prefers_language"]
    assert [e for e in await edges(graph_client, tenant) if e[0] != "LIVES_IN"] == []  # text: not mirrored


async def test_multi_values_stand_side_by_side_and_retire_one_by_one(graph_client, tenant):
    await define(graph_client, tenant, "speaks", MULTI, ObjectKind.ENTITY)
    for lang in ("tamil", "english"):
        assert (await facts.write_fact(graph_client, tenant, fact("speaks", lang))).outcome is Outcome.CREATED
    assert sorted(f.object for f in await facts.read_facts(graph_client, tenant, "alice rao", "speaks")) == [
        "english", "tamil"]
    assert await edges(graph_client, tenant) == [["SPEAKS", "english"], ["SPEAKS", "tamil"]]
    retired = await facts.retire_fact(graph_client, tenant, RetireInput(subject="alice rao", predicate="speaks",
                                                                        object="english", agent="planner"))
    assert len(retired) == 1
    assert [f.object for f in await facts.read_facts(graph_client, tenant, "alice rao", "speaks")] == ["tamil"]
    assert await edges(graph_client, tenant) == [["SPEAKS", "tamil"], ["WAS", "english"]]


async def test_keep_both_opens_a_conflict_between_two_agents(graph_client, tenant):
    await define(graph_client, tenant, "favourite_team", SINGLE, ObjectKind.ENTITY, ConflictChoice.KEEP_BOTH)
    mine = await facts.write_fact(graph_client, tenant, fact("favourite_team", "rovers", agent="scout"))
    theirs = await facts.write_fact(graph_client, tenant, fact("favourite_team", "united", agent="analyst"))
    assert theirs.outcome is Outcome.CONFLICT and theirs.conflict_id
    claims = await facts.claims(graph_client, tenant, "alice rao", "favourite_team")
    assert sorted(c.object for c in claims.claims) == ["rovers", "united"]
    assert claims.conflict_id == theirs.conflict_id
    settled = await facts.settle(graph_client, tenant, theirs.conflict_id, theirs.fact_id, "dana")
    assert settled.losers == [mine.fact_id]
    assert await edges(graph_client, tenant) == [["FAVOURITE_TEAM", "united"], ["WAS", "rovers"]]
    # the same agent changing its own mind supersedes
    again = await facts.write_fact(graph_client, tenant, fact("favourite_team", "city", agent="analyst"))
    assert again.outcome is Outcome.SUPERSEDED


async def test_numbers_and_times_are_checked_and_stored_in_one_form(graph_client, tenant):
    await define(graph_client, tenant, "seats", SINGLE, ObjectKind.NUMBER)
    await define(graph_client, tenant, "renews_at", SINGLE, ObjectKind.TIME)
    a = await facts.write_fact(graph_client, tenant, fact("seats", "12.50"))
    b = await facts.write_fact(graph_client, tenant, fact("seats", "1.25e1"))
    assert b.outcome is Outcome.CORROBORATED and b.fact_id == a.fact_id
    await facts.write_fact(graph_client, tenant, fact("renews_at", "2026-10-01T12:00:00+05:30"))
    same = await facts.write_fact(graph_client, tenant, fact("renews_at", "2026-10-01T06:30:00+00:00"))
    assert same.outcome is Outcome.CORROBORATED
    read = {f.predicate: f.object for f in await facts.read_facts(graph_client, tenant, "alice rao")}
    assert read == {"seats": "12.5", "renews_at": "2026-10-01T06:30:00+00:00"}
    for predicate, bad, words in [("seats", "twelve", "not a number"), ("seats", "1e999", "too large"),
                                  ("renews_at", "next tuesday", "ISO 8601"),
                                  ("renews_at", "2026-10-01T12:00:00", "no offset"),
                                  ("renews_at", "2400-01-01T00:00:00+00:00", "years")]:
        with pytest.raises(InvalidValue, match=words):
            await facts.write_fact(graph_client, tenant, fact(predicate, bad))
    assert predicates.check_number("-0.0") == "0" and predicates.check_number("1e3") == "1000"


async def test_cardinality_cannot_change_while_facts_exist(graph_client, tenant):
    await define(graph_client, tenant, "speaks", MULTI)
    # with no facts yet, anything may change
    await define(graph_client, tenant, "speaks", SINGLE, ObjectKind.ENTITY)
    view, created = await define(graph_client, tenant, "speaks", MULTI, ObjectKind.ENTITY, description="langs")
    assert not created and view.cardinality is MULTI and view.description == "langs"
    await facts.write_fact(graph_client, tenant, fact("speaks", "tamil"))
    await facts.write_fact(graph_client, tenant, fact("speaks", "hindi", subject="bob shah"))
    with pytest.raises(StateConflict, match="has 2 facts") as refused:
        await define(graph_client, tenant, "speaks", SINGLE, ObjectKind.ENTITY)
    assert refused.value.code == "cardinality_in_use"
    # the object type and policy apply to later writes and may change
    view, _ = await define(graph_client, tenant, "speaks", MULTI, ObjectKind.TEXT, ConflictChoice.KEEP_BOTH)
    assert view.object is ObjectKind.TEXT and view.edge is None
    # retiring and defining again does not get round it
    assert await predicates.retire(graph_client, tenant, "speaks") is True
    with pytest.raises(StateConflict, match="has 2 facts"):
        await define(graph_client, tenant, "speaks", SINGLE)
    _, created = await define(graph_client, tenant, "speaks", MULTI)
    assert created  # back from retirement


async def test_retiring_refuses_later_writes_and_keeps_the_facts(graph_client, tenant):
    await define(graph_client, tenant, "prefers_language")
    written = await facts.write_fact(graph_client, tenant, fact("prefers_language", "tamil"))
    assert await predicates.retire(graph_client, tenant, "prefers_language") is True
    assert await predicates.retire(graph_client, tenant, "prefers_language") is False
    with pytest.raises(UnknownPredicate, match="retired"):
        await facts.write_fact(graph_client, tenant, fact("prefers_language", "hindi"))
    with pytest.raises(UnknownPredicate):
        await facts.write_facts(graph_client, tenant, [fact("prefers_language", "hindi")])
    kept = await facts.read_facts(graph_client, tenant, "alice rao", "prefers_language")
    assert [f.fact_id for f in kept] == [written.fact_id]
    assert [f.predicate for f in await facts.read_facts(graph_client, tenant, "alice rao")] == ["prefers_language"]
    listed = (await predicates.list_predicates(graph_client, tenant)).predicates
    assert [(p.name, p.retired) for p in listed if not p.builtin] == [("prefers_language", True)]
    with pytest.raises(NotFound):
        await predicates.retire(graph_client, tenant, "never_defined")


async def test_names_that_cannot_be_defined(graph_client, tenant):
    with pytest.raises(AlreadyExists, match="built-in") as builtin:
        await define(graph_client, tenant, "lives_in")
    assert builtin.value.code == "builtin_predicate"
    with pytest.raises(AlreadyExists):
        await predicates.retire(graph_client, tenant, "lives_in")
    for bad in ("Prefers", "x", "has space", "a" * 49, "1st"):
        with pytest.raises(InvalidInput, match="must match"):
            await define(graph_client, tenant, bad)
    for reserved in ("about", "supersedes", "has_ticket"):
        with pytest.raises(InvalidInput, match="relationship the graph uses"):
            await define(graph_client, tenant, reserved)
    assert [p for p in (await predicates.list_predicates(graph_client, tenant)).predicates if not p.builtin] == []


async def test_an_unknown_predicate_says_how_to_register_it(graph_client, tenant):
    with pytest.raises(UnknownPredicate) as refused:
        await facts.write_fact(graph_client, tenant, fact("prefers_language", "tamil"))
    assert "PUT /v1/tenants/{t}/predicates/prefers_language" in refused.value.message
    assert '"cardinality": "single"|"multi"' in refused.value.message


async def test_two_tenants_define_one_name_differently(graph_client, tenant):
    other, third = tenant + "-b", tenant + "-c"
    await register(graph_client.redis, other, third)
    await define(graph_client, tenant, "rating", SINGLE, ObjectKind.NUMBER)
    await define(graph_client, other, "rating", MULTI, ObjectKind.ENTITY)
    await facts.write_fact(graph_client, tenant, fact("rating", "4.0"))
    with pytest.raises(InvalidValue):
        await facts.write_fact(graph_client, tenant, fact("rating", "good"))
    await facts.write_fact(graph_client, other, fact("rating", "good"))
    await facts.write_fact(graph_client, other, fact("rating", "kind"))
    assert [f.object for f in await facts.read_facts(graph_client, tenant, "alice rao", "rating")] == ["4"]
    assert sorted(f.object for f in await facts.read_facts(graph_client, other, "alice rao", "rating")) == [
        "good", "kind"]
    with pytest.raises(UnknownPredicate):
        await facts.write_fact(graph_client, third, fact("rating", "4"))
    assert [p for p in (await predicates.list_predicates(graph_client, third)).predicates if not p.builtin] == []


async def test_a_batch_mixes_built_in_and_own_predicates(graph_client, tenant):
    await define(graph_client, tenant, "speaks", MULTI, ObjectKind.ENTITY)
    await define(graph_client, tenant, "seats", SINGLE, ObjectKind.NUMBER)
    results = await facts.write_facts(graph_client, tenant, [
        fact("speaks", "tamil"), fact("lives_in", "pune", agent="intake"), fact("seats", "3"),
        fact("seats", "4", vf=at(1)),  # older than now: takes its place in history
        fact("speaks", "tamil", subject="bob shah"),
    ])
    assert [r.outcome for r in results] == [Outcome.CREATED] * 4 + [Outcome.CREATED]
    read = sorted((f.predicate, f.object) for f in await facts.read_facts(graph_client, tenant, "alice rao"))
    assert read == [("lives_in", "pune"), ("seats", "3"), ("speaks", "tamil")]
    history = await facts.history(graph_client, tenant, "alice rao", "seats")
    assert [(f.object, f.state) for f in history] == [("4", FactState.SUPERSEDED), ("3", FactState.CURRENT)]
    assert await edges(graph_client, tenant) == [["LIVES_IN", "pune"], ["SPEAKS", "tamil"]]


async def test_another_process_sees_a_new_predicate_on_its_next_write(graph_settings, graph_client, tenant,
                                                                      monkeypatch):
    other = GraphClient(graph_settings)  # another process's client: a cache of its own
    try:
        with pytest.raises(UnknownPredicate):  # it has read the vocabulary before the definition
            await facts.write_fact(other, tenant, fact("prefers_language", "tamil"))
        await define(graph_client, tenant, "prefers_language")
        assert (await facts.write_fact(other, tenant, fact("prefers_language", "tamil"))).outcome is Outcome.CREATED
        # a retirement elsewhere is seen once the copy is checked against the stamp
        await predicates.retire(graph_client, tenant, "prefers_language")
        monkeypatch.setattr(predicates, "CHECK_EVERY_S", 0.0)
        with pytest.raises(UnknownPredicate, match="retired"):
            await facts.write_fact(other, tenant, fact("prefers_language", "hindi"))
        # and defining it again, on its next write
        monkeypatch.setattr(predicates, "CHECK_EVERY_S", 3600.0)
        await define(graph_client, tenant, "prefers_language")
        assert (await facts.write_fact(other, tenant, fact("prefers_language", "hindi"))).outcome \
            is Outcome.SUPERSEDED
    finally:
        await other.close()


async def test_a_built_in_write_reads_no_vocabulary(graph_client, tenant):
    started = len(graph_client.recent)
    await facts.write_fact(graph_client, tenant, fact("lives_in", "pune", agent="intake"))
    ran = [e["query"] for e in list(graph_client.recent)[started:]]
    assert not any(name.startswith("vocabulary") for name in ran), ran


async def test_recall_finds_a_fact_of_an_own_predicate(memory, tenant):
    await predicates.define(memory.client, tenant, "prefers_language", definition(), agent="api")
    await memory.write_fact(tenant, fact("prefers_language", "tamil"), embed=True)
    await memory.write_fact(tenant, fact("lives_in", "pune", agent="intake"), embed=True)
    found = await memory.recall(tenant, "which language does she prefer?", subject="alice rao", k=3)
    assert found.facts and found.facts[0].predicate == "prefers_language" and found.facts[0].object == "tamil"


async def test_a_conflict_of_an_unmirrored_predicate_is_settled_like_any(graph_client, tenant):
    await define(graph_client, tenant, "seats", SINGLE, ObjectKind.NUMBER, ConflictChoice.KEEP_BOTH)
    first = await facts.write_fact(graph_client, tenant, fact("seats", "3", agent="scout"))
    other = await facts.write_fact(graph_client, tenant, fact("seats", "4", agent="analyst"))
    assert other.outcome is Outcome.CONFLICT
    assert [f.object for f in await facts.read_facts(graph_client, tenant, "alice rao", "seats")] == ["3"]
    await facts.settle(graph_client, tenant, other.conflict_id, other.fact_id, "dana")
    history = await facts.history(graph_client, tenant, "alice rao", "seats")
    assert [(f.fact_id, f.state) for f in history if f.state is FactState.CURRENT] == [(other.fact_id,
                                                                                          FactState.CURRENT)]
    assert first.fact_id in [f.fact_id for f in history if f.state is FactState.SUPERSEDED]
    assert await edges(graph_client, tenant) == []  # a number is not mirrored, before or after
