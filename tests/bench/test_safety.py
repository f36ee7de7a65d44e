"""The safety bench's counters, on a tiny run against the real FalkorDB: a race counts clean, and a
duplicate or a second current value planted in the graph is counted. The racing replicas part runs
in the suite's smoke test (tests/bench/test_suite.py)."""

from __future__ import annotations

import pytest

from bench import safety
from relay_graph.runtime.queries import Query

PLANT = Query(
    "test_plant_fact",
    "CREATE (f:Fact:Current {fact_id: $id, slot: $slot, object_uid: $object, corroborations: 1})",
)


async def test_a_tiny_race_counts_every_write_and_nothing_wrong(graph_settings, tenant):
    data = await safety.concurrent_writers(graph_settings, 2, tenant=tenant)
    per = data["per_predicate"]
    assert per["lives_in"]["fact_nodes"] == per["name"]["fact_nodes"] == 2 * safety.WRITERS  # one node per value
    assert per["owns_device"]["fact_nodes"] == 2 * len(safety.DEVICES)  # repeats corroborate
    assert per["lives_in"]["outcomes"] == {"created": 2, "conflict": 2 * safety.WRITERS - 2}
    assert sum(per["owns_device"]["outcomes"].values()) == 2 * safety.WRITERS
    assert data["duplicate_fact_nodes"] == data["lost_writes"] == data["slots_with_two_current_at_end"] == 0
    assert data["observations"] > 0 and data["observations_with_two_current"] == 0
    assert data["background_facts_written"] > 0
    assert set(safety.evaluate({"writers": data})) == {"duplicates", "two_current", "lost_writes"}


async def test_a_planted_duplicate_and_second_current_value_are_counted(graph_client, tenant):
    from relay_graph.memory import facts
    from relay_graph.memory.models import FactInput

    customer = "planted customer"
    for predicate, obj in (("lives_in", "Pune"), ("owns_device", "Kindle")):
        await facts.write_fact(graph_client, tenant, FactInput(subject=customer, predicate=predicate, object=obj,
                                                               agent="intake"))
    slots = {p: safety.slot_of(customer, p) for p in ("lives_in", "owns_device")}
    clean = await graph_client.run(tenant, safety.SLOT_FACTS, {"slots": list(slots.values())})
    assert len(clean) == 2  # slot_of finds the slots write_fact wrote
    counts = safety.count_round(clean, slots, {"lives_in": 1, "owns_device": 1})
    assert all(c == {"fact_nodes": 1, "duplicate_fact_nodes": 0, "two_current_at_end": 0, "no_current_at_end": 0,
                     "lost_writes": 0} for c in counts.values())

    await graph_client.run(tenant, PLANT, {"id": "x1", "slot": slots["lives_in"], "object": "City|pune"})
    await graph_client.run(tenant, PLANT, {"id": "x2", "slot": slots["owns_device"], "object": "Device|kindle"})
    rows = await graph_client.run(tenant, safety.SLOT_FACTS, {"slots": list(slots.values())})
    counts = safety.count_round(rows, slots, {"lives_in": 1, "owns_device": 3})
    assert counts["lives_in"]["duplicate_fact_nodes"] == 1 and counts["lives_in"]["two_current_at_end"] == 1
    assert counts["owns_device"]["duplicate_fact_nodes"] == 1
    assert counts["owns_device"]["two_current_at_end"] == 0  # many current values is what multi-valued means
    assert counts["owns_device"]["lost_writes"] == 1  # 3 acknowledged, 2 on file
    assert max(safety.current_per_slot(rows).values()) == 2


def test_owners_per_ticket_are_distinct_pickers():
    rows = [
        {"id": "T1", "stage": "fixed", "replica": "r1", "pickups": 1, "by": ["r1"]},
        {"id": "T2", "stage": "fixed", "replica": "r2", "pickups": 2, "by": ["r2", "r2"]},
        {"id": "T3", "stage": "in_progress", "replica": "r1", "pickups": 2, "by": ["r1", "r3"]},
        {"id": "T4", "stage": "handed_off", "replica": None, "pickups": 0, "by": []},
    ]
    c = safety.count_tickets(rows)
    assert c["owners"] == {"0": 1, "1": 2, ">1": 1}
    assert c["picked_up_edges"] == 5 and c["tickets_with_more_than_one_pickup"] == 2
    assert c["owner_not_the_picker"] == 0 and c["at_final_stage"] == 2 and c["not_final"] == ["T3", "T4"]
    assert c["replicas_that_worked"] == 3
    targets = safety.evaluate({"replicas": {**c, "replicas": 3, "announced_per_ticket": 2}})
    assert targets["one_owner_per_ticket"]["pass"] is False and targets["picked_up_edges"]["pass"] is False


def test_command_line():
    args = safety.parse(["--quick", "--replicas", "3"])
    assert args.sizes == safety.Sizes(rounds=safety.QUICK.rounds, replicas=3, tickets=safety.QUICK.tickets)
    with pytest.raises(SystemExit):
        safety.parse(["--tickets", "5000"])
