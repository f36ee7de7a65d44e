"""The one-off merge of name twins (real FalkorDB): entities that writes by a customer's exact name
made beside that customer, before such writes landed on the customer, move onto the customer with
every fact, slot, mirror edge, conflict and edge; a twin whose single value differs from the
customer's, a customer of its own and a name two customers hold are left as they are, with the
reason; it is recorded and changes nothing when run again.

The "before" state is written with the engine itself (`memory.write_fact` addresses the exact key
it is given: the exact-name rule is the use cases'), as the older gateway did."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from relay_graph.memory import name_twins
from relay_graph.memory.entities import new_customer_id
from relay_graph.memory.models import FactInput
from relay_graph.memory.queries import name_twins as q
from relay_graph.runtime.queries import Query

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
DAY = timedelta(days=1)
TWIN = "Customer|kavya reddy"


async def raw(client, tenant, cypher: str, **params) -> list[dict]:
    return await client.run(tenant, Query("test_twins", cypher), params)


def fact(subject: str, predicate: str, value: str, at: datetime, agent: str = "intake") -> FactInput:
    return FactInput(subject=subject, predicate=predicate, object=value, agent=agent, recorded_at=at)


async def customer(memory, tenant, name: str) -> str:
    cid = new_customer_id()
    await memory.write_fact(tenant, fact(cid, "name", name, T0))
    return cid


async def around(client, tenant, uid: str) -> list[tuple]:
    """Every edge of an entity: (direction, type, the other end, its properties), sorted."""
    rows = await raw(client, tenant, "MATCH (e:Entity {uid: $uid})-[r]-(o) "
                                     "RETURN startNode(r) = e AS out, type(r) AS type, "
                                     "coalesce(o.uid, o.fact_id, o.episode_id, o.task_id) AS other, "
                                     "properties(r) AS props", uid=uid)
    return sorted((r["out"], r["type"], r["other"], sorted(r["props"].items())) for r in rows)


async def twin_state(client, tenant) -> tuple:
    facts = await raw(client, tenant, "MATCH (f:Fact) WHERE f.subject_uid = $uid "
                                      "RETURN f.fact_id AS id, f.slot AS slot, labels(f) AS labels, "
                                      "f.corroborations AS n ORDER BY id", uid=TWIN)
    slots = await raw(client, tenant, "MATCH (s:Slot) WHERE s.subject_uid = $uid "
                                      "RETURN s.key AS key, s.version AS v ORDER BY key", uid=TWIN)
    return facts, slots, await around(client, tenant, TWIN)


async def test_a_twin_moves_onto_its_customer_with_everything_it_holds(memory, graph_client, tenant):
    cid = await customer(memory, tenant, "Kavya Reddy")
    cuid = f"Customer|{cid}"
    # by the id: a plan, a phone, a contact preference
    await memory.write_fact(tenant, fact(cid, "on_plan", "Fiber 300", T0 + DAY))
    await memory.write_fact(tenant, fact(cid, "phone", "+91 98450 12345", T0 + DAY))
    await memory.write_fact(tenant, fact(cid, "prefers_contact", "whatsapp", T0 + 5 * DAY))
    # by the name, as before the rule: a twin beside her
    await memory.write_fact(tenant, fact("Kavya Reddy", "lives_in", "Delhi", T0 + DAY))
    await memory.write_fact(tenant, fact("Kavya Reddy", "lives_in", "Mumbai", T0 + 3 * DAY))  # Delhi ends
    await raw(graph_client, tenant, "CREATE (:Episode {episode_id: 'ep-2'})")
    await memory.write_fact(tenant, fact("Kavya Reddy", "phone", "+91 98450 12345", T0 + 2 * DAY).model_copy(
        update={"source": "ep-2"}))  # hers too, said in a turn
    await memory.write_fact(tenant, fact("Kavya Reddy", "phone", "+91 99000 55555", T0 + 2 * DAY))
    await memory.write_fact(tenant, fact("Kavya Reddy", "prefers_contact", "whatsapp", T0 + 2 * DAY))
    await memory.write_fact(tenant, fact("Kavya Reddy", "has_router", "Nokia G-140W", T0 + 2 * DAY))
    disputed = await memory.write_fact(tenant, fact("Kavya Reddy", "has_router", "TP-Link Archer C6",
                                                    T0 + 3 * DAY, agent="netops"))
    assert disputed.outcome.value == "conflict"
    await raw(graph_client, tenant, "MATCH (t:Entity {uid: $uid}) "
                                    "CREATE (:Episode {episode_id: 'ep-1'})-[:MENTIONS {at_ms: 1}]->(t), "
                                    "(:Task {task_id: 'task-1'})-[:TASK_ABOUT]->(t)", uid=TWIN)
    before = await memory.facts(tenant, "kavya reddy")
    assert {f.subject for f in before} == {"Kavya Reddy"} and len(before) == 5  # the twin's, not hers

    report = await name_twins.migrate_tenant(graph_client, tenant, force=False)

    assert report.left == [] and report.looked_at == 1
    [merged] = report.merged
    assert (merged.twin, merged.customer, merged.folded) == (TWIN, cuid, 2)  # the phone, the preference
    assert merged.facts == 5  # Delhi, Mumbai, the other phone, two router claims
    assert await raw(graph_client, tenant, "MATCH (e:Entity {uid: $uid}) RETURN e", uid=TWIN) == []
    # her facts by her id: her own and the twin's, each value once
    now = {(f.predicate, f.object, f.state.value, f.corroborations) for f in await memory.facts(tenant, cid)}
    assert now == {
        ("name", "Kavya Reddy", "current", 1), ("on_plan", "Fiber 300", "current", 1),
        ("phone", "+919845012345", "current", 2), ("phone", "+919900055555", "current", 1),
        ("prefers_contact", "whatsapp", "current", 2), ("lives_in", "Mumbai", "current", 1),
        ("has_router", "Nokia G-140W", "current", 1),
    }
    history = await memory.history(tenant, cid, "lives_in")
    assert [(f.object, f.state.value) for f in history] == [("Delhi", "superseded"), ("Mumbai", "current")]
    [contact] = await memory.facts(tenant, cid, "prefers_contact")
    assert contact.valid_from == T0 + 2 * DAY  # the twin's said it three days before hers
    claims = await memory.claims(tenant, cid, "has_router")
    assert claims.conflict_id == disputed.conflict_id and len(claims.claims) == 2
    conflicts = await raw(graph_client, tenant, "MATCH (c:Conflict) RETURN c.subject_uid AS s, c.slot AS slot")
    assert conflicts == [{"s": cuid, "slot": f"{cuid}|has_router"}]
    slots = await raw(graph_client, tenant, "MATCH (s:Slot) RETURN s.key AS key, s.subject_uid AS s ORDER BY key")
    assert [r["key"] for r in slots] == sorted(f"{cuid}|{p}" for p in (
        "name", "on_plan", "phone", "prefers_contact", "lives_in", "has_router"))
    assert {r["s"] for r in slots} == {cuid}
    stray = await raw(graph_client, tenant, "MATCH (f:Fact) WHERE f.subject_uid = $t OR f.slot STARTS WITH $t "
                                            "OR f.object_uid = $t RETURN f.fact_id AS id", t=TWIN)
    assert stray == []
    # the mirror edges of current facts, the WAS of the ended one, the mention and the task, from her
    edges = {(out, kind, other) for out, kind, other, _ in await around(graph_client, tenant, cuid)
             if kind not in ("ABOUT",)}
    assert edges == {
        (True, "NAMED", "PersonName|kavya reddy"), (True, "ON_PLAN", "Plan|fiber 300"),
        (True, "HAS_PHONE", "Phone|+919845012345"), (True, "HAS_PHONE", "Phone|+919900055555"),
        (True, "PREFERS_CONTACT", "ContactMethod|whatsapp"), (True, "LIVES_IN", "City|mumbai"),
        (True, "WAS", "City|delhi"), (True, "HAS_ROUTER", "Router|nokia g-140w"),
        (False, "MENTIONS", "ep-1"), (False, "TASK_ABOUT", "task-1"),
    }
    mirrors = await raw(graph_client, tenant, "MATCH (:Entity {uid: $uid})-[r:HAS_PHONE]->() "
                                              "OPTIONAL MATCH (f:Fact:Current {fact_id: r.fact_id}) "
                                              "RETURN f.subject_uid AS s", uid=cuid)
    assert mirrors == [{"s": cuid}, {"s": cuid}]  # each of a current fact of hers
    mention = await raw(graph_client, tenant, "MATCH (:Episode)-[m:MENTIONS]->(:Entity {uid: $uid}) "
                                              "RETURN m.at_ms AS at", uid=cuid)
    assert mention == [{"at": 1}]  # the same edge, properties and all
    derived = await raw(graph_client, tenant, "MATCH (:Episode {episode_id: 'ep-2'})-[:DERIVED]->(f:Fact) "
                                              "RETURN f.subject_uid AS s, f.object_name AS phone, "
                                              "f.corroborations AS n")
    assert derived == [{"s": cuid, "phone": "+919845012345", "n": 2}]  # the turn is a source of hers now
    # a read by her name now finds her, with what the twin held
    answer = await memory.facts_about(tenant, "Kavya Reddy")
    assert answer.matched is not None and answer.matched.id == cid
    assert ("lives_in", "Mumbai") in {(f.predicate, f.object) for f in answer.facts}

    # recorded; running again changes nothing
    record = report.record
    assert record["merged"] == [f"{TWIN} -> {cuid}"] and record["left"] == []
    again = await name_twins.migrate_tenant(graph_client, tenant)
    assert (again.merged, again.left, again.looked_at) == ([], [], 0)
    assert again.record == record
    assert (await name_twins.migrate_tenant(graph_client, tenant, force=False)).skipped


async def test_a_twin_whose_single_value_differs_is_left_as_it_is(memory, graph_client, tenant):
    cid = await customer(memory, tenant, "Kavya Reddy")
    await memory.write_fact(tenant, fact(cid, "lives_in", "Pune", T0 + DAY))
    await memory.write_fact(tenant, fact("Kavya Reddy", "lives_in", "Delhi", T0 + 2 * DAY))
    await memory.write_fact(tenant, fact("Kavya Reddy", "phone", "+91 99000 55555", T0 + 2 * DAY))
    before = await twin_state(graph_client, tenant)
    hers = await around(graph_client, tenant, f"Customer|{cid}")

    report = await name_twins.migrate_tenant(graph_client, tenant, force=False)

    assert report.merged == []
    [left] = report.left
    assert (left.twin, left.customers) == (TWIN, [f"Customer|{cid}"])
    assert "lives_in" in left.why and "'delhi'" in left.why.lower() and "'pune'" in left.why.lower()
    assert await twin_state(graph_client, tenant) == before  # nothing of it moved, not even the phone
    assert await around(graph_client, tenant, f"Customer|{cid}") == hers
    assert report.record["left"] == [f"{TWIN}: {left.why}"] and report.record["merged"] == []
    # once a person settled it (the twin's address ended), the command merges it
    await memory.retire_fact(tenant, __import__("relay_graph.memory.models", fromlist=["RetireInput"]).RetireInput(
        subject="kavya reddy", predicate="lives_in", agent="intake"))
    settled = await name_twins.migrate_tenant(graph_client, tenant)
    assert [m.twin for m in settled.merged] == [TWIN] and settled.left == []
    assert settled.record["left"] == [] and settled.record["merged"] == [f"{TWIN} -> Customer|{cid}"]
    lives = await memory.history(tenant, cid, "lives_in")
    assert sorted((f.object, f.state.value) for f in lives) == [("Delhi", "retired"), ("Pune", "current")]


async def test_customers_of_their_own_and_shared_names_are_left_alone(memory, graph_client, tenant):
    # an older tenant's customer, keyed by her name, with a session: a customer of her own
    await memory.write_fact(tenant, fact("Asha Rao", "lives_in", "Pune", T0 + DAY))
    await raw(graph_client, tenant, "MATCH (c:Entity {uid: 'Customer|asha rao'}) "
                                    "CREATE (c)-[:HAS_SESSION]->(:Session {session_id: 's-1'})")
    asha = await customer(memory, tenant, "Asha Rao")
    # a name two customers hold: which one the write was for is not on file
    ravis = sorted([await customer(memory, tenant, "Ravi Iyer"), await customer(memory, tenant, "Ravi Iyer")])
    await memory.write_fact(tenant, fact("Ravi Iyer", "lives_in", "Chennai", T0 + DAY))
    # a name nobody holds is a subject of its own, not looked at
    await memory.write_fact(tenant, fact("Meera Nair", "lives_in", "Kochi", T0 + DAY))
    kept = {uid: await around(graph_client, tenant, uid)
            for uid in ("Customer|asha rao", "Customer|ravi iyer", "Customer|meera nair")}

    report = await name_twins.migrate_tenant(graph_client, tenant, force=False)

    assert report.merged == [] and report.looked_at == 2
    left = {x.twin: x for x in report.left}
    assert set(left) == {"Customer|asha rao", "Customer|ravi iyer"}
    assert left["Customer|asha rao"].customers == [f"Customer|{asha}"]
    assert "HAS_SESSION" in left["Customer|asha rao"].why
    assert left["Customer|ravi iyer"].customers == [f"Customer|{r}" for r in ravis]
    assert "2 customers" in left["Customer|ravi iyer"].why
    for uid, edges in kept.items():
        assert await around(graph_client, tenant, uid) == edges
    assert len(report.record["left"]) == 2
    # recorded: a later start reads the record and nothing else; the command looks again, the same
    assert (await name_twins.migrate_tenant(graph_client, tenant, force=False)).skipped
    again = await name_twins.migrate_tenant(graph_client, tenant)
    assert again.left == report.left and again.record == report.record


async def test_the_candidates_come_from_the_uid_index(graph_client, tenant):
    plan = await graph_client.explain(tenant, q.CANDIDATES, {
        "record": name_twins.RECORD, "force": True, "ranges": name_twins.RANGES,
        "customers": "Customer|", "names": "PersonName|"})
    assert "Node By Index Scan | (t:Entity)" in plan and "All Node Scan" not in plan, plan
    assert "(n:Entity)" in plan and "Label Scan | (n" not in plan and "Label Scan | (t" not in plan, plan


def test_customer_ids_lie_outside_the_ranges_looked_at():
    def looked_at(key: str) -> bool:
        uid = "Customer|" + key
        return any(lo <= uid < hi for lo, hi in name_twins.RANGES)

    assert not looked_at(new_customer_id())
    assert all(looked_at(k) for k in ("kavya reddy", "asha", "c-ward", "c- rao", "c-@x", "zoë", "ঋতু", "c"))
    assert not looked_at("c-3po")  # a name that begins like an id is not looked at (documented)


async def test_a_write_meanwhile_stops_the_move_and_nothing_of_it_is_done(memory, graph_client, tenant):
    cid = await customer(memory, tenant, "Kavya Reddy")
    cuid = f"Customer|{cid}"
    await memory.write_fact(tenant, fact("Kavya Reddy", "lives_in", "Delhi", T0 + DAY))
    [slot] = await raw(graph_client, tenant, "MATCH (s:Slot {key: $key}) RETURN s.version AS v", key=f"{cuid}|name")
    before = await twin_state(graph_client, tenant)
    stale = {"twin": TWIN, "customer": cuid, "renamed": [[f"{TWIN}|lives_in", f"{cuid}|lives_in"]], "merged": [],
             "guards": [[f"{cuid}|lives_in", -1], [f"{cuid}|name", slot["v"] - 1]]}
    assert await graph_client.run(tenant, q.MOVE_FACTS, stale) == []
    assert await twin_state(graph_client, tenant) == before
    folds = {"guards": stale["guards"], "folds": [["x", "y"]], "bump": [f"{cuid}|name"]}
    assert await graph_client.run(tenant, q.FOLD, folds) == []
    assert await raw(graph_client, tenant, "MATCH (s:Slot {key: $key}) RETURN s.version AS v",
                     key=f"{cuid}|name") == [slot]
    moved = await graph_client.run(tenant, q.MOVE_FACTS, {**stale, "guards": [[f"{cuid}|lives_in", -1]]})
    assert moved[0]["moved"] == 1 and moved[0]["renamed"] == 1


async def test_a_tenants_own_predicates_merge_by_their_cardinality(memory, graph_client, tenant):
    from relay_graph.memory.predicates import ObjectKind, PredicateDefinition
    from relay_graph.memory.registry import Cardinality

    for name, cardinality in (("speaks", Cardinality.MULTI), ("shoe_size", Cardinality.SINGLE)):
        await memory.define_predicate(tenant, name, PredicateDefinition(cardinality=cardinality,
                                                                        object=ObjectKind.TEXT), agent="api")
    cid = await customer(memory, tenant, "Kavya Reddy")
    for subject in (cid, "Kavya Reddy"):
        await memory.write_fact(tenant, fact(subject, "speaks", "Telugu", T0 + DAY))
    await memory.write_fact(tenant, fact("Kavya Reddy", "speaks", "Hindi", T0 + DAY))
    report = await name_twins.migrate_tenant(graph_client, tenant)
    assert [m.folded for m in report.merged] == [1]  # Telugu once, counted twice; Hindi moves
    spoken = {(f.object, f.corroborations) for f in await memory.facts(tenant, cid, "speaks")}
    assert spoken == {("Telugu", 2), ("Hindi", 1)}

    await memory.write_fact(tenant, fact(cid, "shoe_size", "7", T0 + DAY))
    await memory.write_fact(tenant, fact("Kavya Reddy", "shoe_size", "8", T0 + DAY))
    [left] = (await name_twins.migrate_tenant(graph_client, tenant)).left
    assert "shoe_size" in left.why
    assert [f.object for f in await memory.facts(tenant, "kavya reddy", "shoe_size")] == ["8"]
