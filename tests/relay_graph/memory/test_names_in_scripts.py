"""Names in every script on a real FalkorDB: two writes for names one vowel sign apart make two
entities and never supersede each other's facts; reads offer the other spelling as "did you mean",
never as the same name; and the one-off migration moves keys an older rule made (marks turned
into spaces) to the keys of now, never merging two entities, and records what it did."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from relay_graph.memory import entity_refs, facts, name_migration, names
from tests.old_names import old_name_key
from relay_graph.memory.entities import name_key
from relay_graph.memory.facade import Memory
from relay_graph.memory.models import FactInput
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.queries import Query

T0 = datetime(2026, 9, 1, tzinfo=timezone.utc)
T1 = datetime(2026, 9, 2, tzinfo=timezone.utc)

# (script, first person, second person one mark apart)
PAIRS = [
    ("devanagari", "आशा राव", "आशी राव"),
    ("tamil", "கமலா சுந்தர்", "கமலி சுந்தர்"),
    ("bengali", "রাজু দাস", "রাজা দাস"),
    ("thai", "มานี ใจดี", "มานิ ใจดี"),
    ("arabic", "سَمِير خان", "سُمِير خان"),
    ("hebrew", "שָׂרָה כהן", "שֶׂרָה כהן"),
    ("cjk", "はな やま", "ばな やま"),
]


async def raw(client, tenant, cypher: str, **params) -> list[dict]:
    return await client.run(tenant, Query("test", cypher), params)


def lives_in(subject: str, city: str, at: datetime = T0) -> FactInput:
    return FactInput(subject=subject, predicate="lives_in", object=city, agent="intake", recorded_at=at)


@pytest.mark.parametrize("script, a, b", PAIRS, ids=[p[0] for p in PAIRS])
async def test_two_people_one_vowel_sign_apart_stay_two(graph_client, tenant, script, a, b):
    memory = Memory(graph_client)  # the engine's facade (no embedder: facts only)
    first = await memory.write_fact(tenant, lives_in(a, "pune"))
    second = await memory.write_fact(tenant, lives_in(b, "delhi", T1))
    assert first.outcome.value == "created" and second.outcome.value == "created"
    assert second.superseded == []  # the second person's address is not the first person's
    assert [(f.subject, f.object) for f in await memory.facts(tenant, a, "lives_in")] == [(a, "pune")]
    assert [(f.subject, f.object) for f in await memory.facts(tenant, b, "lives_in")] == [(b, "delhi")]
    rows = await raw(memory.client, tenant, "MATCH (e:Customer) RETURN e.uid AS uid, e.name_key AS key ORDER BY uid")
    assert rows == sorted([{"uid": f"Customer|{name_key(a)}", "key": name_key(a)},
                           {"uid": f"Customer|{name_key(b)}", "key": name_key(b)}], key=lambda r: r["uid"])
    # a third write for the first person supersedes only their own address
    third = await memory.write_fact(tenant, lives_in(a, "mumbai", T1))
    assert third.superseded == [first.fact_id]
    assert [f.object for f in await memory.facts(tenant, b, "lives_in")] == ["delhi"]


async def test_a_read_one_mark_off_is_did_you_mean_never_the_same_name(graph_client, tenant):
    await facts.write_fact(graph_client, tenant, lives_in("आशा राव", "pune"))
    exact = await names.match(graph_client, tenant, "आशा  राव")
    assert exact.how == "exact" and exact.matched is None
    off = await names.match(graph_client, tenant, "आशी राव")  # nobody of that name: a spelling alike
    assert off.how == "fuzzy" and off.matched is not None and off.matched.name == "आशा राव"
    await facts.write_fact(graph_client, tenant, lives_in("आशी राव", "delhi"))
    assert (await names.match(graph_client, tenant, "आशी राव")).how == "exact"
    both = await names.match(graph_client, tenant, "आशु राव")  # one mark from each of them
    assert both.ambiguous is not None and {c.name for c in both.ambiguous.candidates} == {"आशा राव", "आशी राव"}


# ------------------------------------------------------------------------------------------------
# The migration, on graphs written by the older rule (the engine run with it, so every stored key,
# slot and conflict is as that rule made it).


@pytest.fixture
def old_rule(monkeypatch):
    """Writes through the engine key names the way rule 1 did."""
    class Switch:
        def on(self):
            monkeypatch.setattr(facts, "name_key", old_name_key)
            monkeypatch.setattr(entity_refs, "name_key", old_name_key)

        def off(self):
            monkeypatch.setattr(facts, "name_key", name_key)
            monkeypatch.setattr(entity_refs, "name_key", name_key)
    return Switch()


async def entity(client, tenant, uid) -> dict | None:
    rows = await raw(client, tenant, "MATCH (e:Entity {uid: $uid}) OPTIONAL MATCH (e)<-[:ABOUT]-(f:Fact) "
                                     "RETURN e.name AS name, e.name_key AS key, collect(f.subject_uid) AS s, "
                                     "collect(f.slot) AS slots", uid=uid)
    return rows[0] if rows and rows[0]["name"] is not None else None


async def test_migration_moves_old_keys_and_writes_then_address_each_person(graph_client, tenant, old_rule):
    await raw(graph_client, tenant, "RETURN 1")  # the tenant's first statement: nothing to move yet
    old_rule.on()
    await facts.write_fact(graph_client, tenant, lives_in("आशा राव", "pune"))
    merged = await facts.write_fact(graph_client, tenant, lives_in("आशी राव", "delhi", T1))
    assert merged.outcome.value == "superseded"  # the failure the rule is for: one key for two people
    await facts.write_fact(graph_client, tenant, FactInput(subject="आशा राव", predicate="on_plan", object="fiber 300",
                                                           agent="intake", recorded_at=T0))
    disagree = await facts.write_fact(graph_client, tenant, FactInput(
        subject="आशा राव", predicate="on_plan", object="fiber 500", agent="billing", recorded_at=T0))
    assert disagree.outcome.value == "conflict"
    await facts.write_fact(graph_client, tenant, lives_in("mary smith", "pune"))  # ASCII: untouched
    old_rule.off()
    await raw(graph_client, tenant, "CREATE (:Ticket {ticket_id: 'tk-1', customer_uid: $u}), "
                                    "(:Speaker {key: $k, name: 'आशा'})", u="Customer|आश र व", k="आश")
    old_uid = "Customer|" + old_name_key("आशा राव")
    assert old_uid == "Customer|आश र व"
    before = await entity(graph_client, tenant, old_uid)
    assert before is not None and set(before["s"]) == {old_uid}

    report = await name_migration.migrate_tenant(graph_client, tenant, force=False)
    new_uid = "Customer|आशा राव"
    assert [(m.old, m.new) for m in report.moved] == [(old_uid, new_uid)]
    assert [(m.old, m.new) for m in report.speakers_moved] == [("आश", "आशा")]
    assert report.left == []
    assert await entity(graph_client, tenant, old_uid) is None
    after = await entity(graph_client, tenant, new_uid)
    assert after["key"] == "आशा राव" and set(after["s"]) == {new_uid}
    assert set(after["slots"]) == {f"{new_uid}|lives_in", f"{new_uid}|on_plan"}
    slots = await raw(graph_client, tenant, "MATCH (s:Slot) WHERE s.subject_uid STARTS WITH 'Customer|आ' "
                                            "RETURN s.key AS key ORDER BY key")
    assert [r["key"] for r in slots] == [f"{new_uid}|lives_in", f"{new_uid}|on_plan"]
    conflicts = await raw(graph_client, tenant, "MATCH (c:Conflict) RETURN c.subject_uid AS s, c.slot AS slot")
    assert conflicts == [{"s": new_uid, "slot": f"{new_uid}|on_plan"}]
    assert await raw(graph_client, tenant, "MATCH (t:Ticket) RETURN t.customer_uid AS u") == [{"u": new_uid}]
    assert await raw(graph_client, tenant, "MATCH (s:Speaker) RETURN s.key AS k") == [{"k": "आशा"}]
    assert (await entity(graph_client, tenant, "Customer|mary smith"))["key"] == "mary smith"

    # reads and writes of now find the moved entity: its merged history stays (not split), and
    # the other person is a new entity whose write supersedes nothing of hers
    [current] = await facts.read_facts(graph_client, tenant, "आशा राव", "lives_in")
    assert current.object == "delhi"
    other = await facts.write_fact(graph_client, tenant, lives_in("आशी राव", "chennai"))
    assert other.outcome.value == "created" and other.superseded == []
    again = await facts.write_fact(graph_client, tenant, lives_in("आशा राव", "delhi"))
    assert again.outcome.value == "corroborated"

    # recorded, and idempotent: skipped by the record; forced, it finds nothing to move
    record = await raw(graph_client, tenant, "MATCH (s:Setting {name: 'name_keys'}) RETURN s.value AS v, s.moved AS m")
    assert record == [{"v": 2, "m": [f"{old_uid} -> {new_uid}", "आश -> आशा"]}]
    assert (await name_migration.migrate_tenant(graph_client, tenant, force=False)).skipped
    forced = await name_migration.migrate_tenant(graph_client, tenant, force=True)
    assert forced.moved == [] and forced.speakers_moved == [] and forced.left == []


async def test_migration_never_merges_keys_that_now_collide(graph_client, tenant, old_rule):
    await raw(graph_client, tenant, "RETURN 1")
    zwnj = "\u200c"
    old_rule.on()  # rule 1 made a space of a joiner: three spellings, three keys
    await facts.write_fact(graph_client, tenant, lives_in(f"زهرا{zwnj}سادات", "tehran"))
    await facts.write_fact(graph_client, tenant, lives_in(f"زه{zwnj}راسادات", "shiraz"))
    await facts.write_fact(graph_client, tenant, lives_in(f"مهر{zwnj}ناز", "tabriz"))
    old_rule.off()
    await facts.write_fact(graph_client, tenant, lives_in("مهرناز", "yazd"))  # rule 2: the joiner goes
    keys = await raw(graph_client, tenant, "MATCH (e:Customer) RETURN e.uid AS uid ORDER BY uid")
    assert len(keys) == 4

    report = await name_migration.migrate_tenant(graph_client, tenant, force=False)
    # two old entities want "زهراسادات": the first by old uid takes it, the other is left
    assert [(m.old, m.new) for m in report.moved] == [("Customer|زه راسادات", "Customer|زهراسادات")]
    assert sorted((x.uid, x.wanted) for x in report.left) == [
        ("Customer|زهرا سادات", "Customer|زهراسادات"),
        ("Customer|مهر ناز", "Customer|مهرناز"),
    ]
    cities = {r["uid"]: r["city"] for r in await raw(
        graph_client, tenant, "MATCH (e:Customer)<-[:ABOUT {role: 'subject'}]-(f:Fact:Current) "
                              "RETURN e.uid AS uid, f.object_name AS city")}
    assert cities == {"Customer|زهراسادات": "shiraz", "Customer|زهرا سادات": "tehran",
                      "Customer|مهر ناز": "tabriz", "Customer|مهرناز": "yazd"}  # four people, four addresses
    record = await raw(graph_client, tenant, "MATCH (s:Setting {name: 'name_keys'}) RETURN s.left AS left")
    assert len(record[0]["left"]) == 2


async def test_a_new_process_moves_old_keys_before_its_first_statement(graph_client, graph_settings, tenant,
                                                                       old_rule):
    await raw(graph_client, tenant, "RETURN 1")
    old_rule.on()
    await facts.write_fact(graph_client, tenant, lives_in("มานี ใจดี", "bangkok"))
    old_rule.off()
    assert await entity(graph_client, tenant, "Customer|" + old_name_key("มานี ใจดี")) is not None
    fresh = GraphClient(graph_settings)  # what a process started after the upgrade has
    try:
        [view] = await facts.read_facts(fresh, tenant, "มานี ใจดี", "lives_in")
        assert view.object == "bangkok"
        assert (await entity(fresh, tenant, "Customer|มานี ใจดี"))["key"] == "มานี ใจดี"
    finally:
        await fresh.close()


async def test_a_tenant_with_nothing_to_move_gets_no_record(graph_client, graph_settings, tenant):
    await facts.write_fact(graph_client, tenant, lives_in("José Müller", "pune"))
    await facts.write_fact(graph_client, tenant, lives_in("आशा राव", "pune"))  # its key has its marks
    await facts.write_fact(graph_client, tenant, lives_in("مهر\u200cناز", "pune"))  # looked at: a joiner
    fresh = GraphClient(graph_settings)
    try:
        await raw(fresh, tenant, "RETURN 1")  # its migration looks, finds nothing, writes nothing
        report = await name_migration.migrate_tenant(fresh, tenant, force=False)
        assert not report.skipped and report.looked_at == 1 and report.moved == [] and report.left == []
        assert await raw(fresh, tenant, "MATCH (s:Setting) RETURN count(s) AS n") == [{"n": 0}]
    finally:
        await fresh.close()
