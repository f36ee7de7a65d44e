"""The fault lab against a real FalkorDB: each fault kind injected, measured, diagnosed from the
readings alone, a wrong action leaving it broken, the right one fixing it as a new measurement
shows; the scoreboard's counts; blind faults (seeded); refusals that change nothing.

    bb1 <-100- popA -40 (standby)-> bb2 <-100- popB            (popB has no standby)
               popA <-20- oltA <-10- splA -DROP-> ontA (Asha), ontA2 (Arun)
               popB <-20- oltB <-10- splB -DROP-> ontB (Bilal)
                          oltB <- Esha (straight onto the exchange)
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from relay_graph import lab
from relay_graph.desk.tickets import store as tickets
from relay_graph.desk.network import store as net
from relay_graph.runtime.errors import InvalidInput, NotFound, StateConflict
from relay_graph.lab import Action, FaultKind, Test
from relay_graph.runtime.queries import Query
from relay_graph.runtime.tenancy import TRUTH_PREFIX, graph_name
from tests import lab_network
from tests.support import register

EVENING = datetime(2026, 9, 5, 19, 0, tzinfo=timezone.utc)
ESHA = ("Esha", "oltB")  # a home straight on an OLT, besides the shared network's homes

# who each kind is scripted on, and an action that is not its fix
SCRIPT: dict[FaultKind, tuple[str, Action]] = {
    FaultKind.ROUTER_FROZEN: ("Asha", Action.CHANGE_WIFI_CHANNEL),
    FaultKind.WIFI_INTERFERENCE: ("Asha", Action.RESTART_ONT),
    FaultKind.DAMAGED_FIBRE: ("Asha", Action.RESTART_ONT),
    FaultKind.CUT_STREET_CABLE: ("Asha", Action.DISPATCH_TECHNICIAN),
    FaultKind.HUB_LINK_BACKUP: ("Asha", Action.ADD_HUB_CAPACITY),
    FaultKind.HUB_LINK_DOWN: ("Bilal", Action.RESTART_ONT),
    FaultKind.EVENING_CONGESTION: ("Asha", Action.REPAIR_UPLINK),
    FaultKind.PAYMENT_FAILED: ("Asha", Action.RESTART_ONT),
}


async def build(client, tenant):
    await lab_network.build(client, tenant, flat_length_m=1000)
    await net.attach_customers(client, tenant, [ESHA])


async def network_state(client, tenant):
    nodes = await client.run(tenant, Query("t", "MATCH (n:NetNode) RETURN n.node_id AS n, n:Up AS up ORDER BY n", True))
    links = await client.run(tenant, Query(
        "t", "MATCH (a:NetNode)-[r]->(b:NetNode) RETURN a.node_id AS a, b.node_id AS b, r.up AS up ORDER BY a, b", True))
    return nodes, links


async def diagnose(client, tenant, who, at):
    return lab.diagnose_from_readings(await lab.measure_all(client, tenant, who, at=at))


@pytest.mark.parametrize("kind", list(FaultKind), ids=[k.value for k in FaultKind])
async def test_each_kind_inject_measure_diagnose_act_remeasure(graph_client, tenant, kind):
    who, wrong = SCRIPT[kind]
    await build(graph_client, tenant)
    assert await diagnose(graph_client, tenant, who, EVENING) is None
    injection = await lab.inject(graph_client, tenant, kind=kind, customer=who, seed=1, at=EVENING)
    assert injection.customer == who
    if kind in (FaultKind.CUT_STREET_CABLE, FaultKind.HUB_LINK_BACKUP, FaultKind.HUB_LINK_DOWN):
        assert [v.up for v in injection.visible] == [False]  # physically visible: a node or link is down
    else:
        assert injection.visible == []  # hidden: nothing on the network says what is wrong
    if kind is FaultKind.HUB_LINK_DOWN:  # a hub's own uplink where one can be chosen
        assert (injection.visible[0].source, injection.visible[0].target) == ("popB", "bb2")

    readings = await lab.measure_all(graph_client, tenant, who, at=EVENING)
    assert lab.diagnose_from_readings(readings) is kind
    ticket = await tickets.open_ticket(graph_client, tenant, customer=who, issue_kind="other",
                                       summary="internet trouble", agent="intake", at=EVENING)
    record = await lab.record_diagnosis(graph_client, tenant, ticket.id, who, lab.diagnose_from_readings(readings))
    assert (record.diagnosis, record.faults_linked) == (kind.value, 1)

    await lab.act(graph_client, tenant, who, wrong, ticket=ticket.id, actor="resolver", at=EVENING)
    assert await diagnose(graph_client, tenant, who, EVENING) is kind  # still broken

    fixed_at = EVENING + timedelta(minutes=40)
    result = await lab.act(graph_client, tenant, who, lab.FIX_FOR[kind], ticket=ticket.id, at=fixed_at)
    assert result.action is lab.FIX_FOR[kind] and result.note
    assert [v.up for v in result.visible] == [not v.up for v in injection.visible]
    assert await diagnose(graph_client, tenant, who, fixed_at + timedelta(minutes=1)) is None

    board = await lab.scoreboard(graph_client, tenant)
    assert (board.faults, board.diagnosed_right, board.fixed, board.fixed_proven) == (1, 1, 1, 1)
    row = board.rows[0]
    assert (row.kind, row.customer, row.tickets, row.diagnoses) == (kind, who, [ticket.id], [kind.value])
    assert (row.fixed_by, row.actions, row.wrong_actions, row.minutes_to_fix) == (lab.FIX_FOR[kind], 2, 1, 40.0)


async def test_network_faults_strike_everyone_behind_them(graph_client, tenant):
    await build(graph_client, tenant)
    await lab.inject(graph_client, tenant, kind=FaultKind.CUT_STREET_CABLE, node="splA", at=EVENING)
    for who in ("Asha", "Arun"):
        assert await diagnose(graph_client, tenant, who, EVENING) is FaultKind.CUT_STREET_CABLE
    assert await diagnose(graph_client, tenant, "Bilal", EVENING) is None
    assert (await net.get_node(graph_client, tenant, "splA")).status == "down"
    await lab.act(graph_client, tenant, "Arun", Action.REPAIR_STREET_CABLE, at=EVENING)  # one repair, both fixed
    assert (await net.get_node(graph_client, tenant, "splA")).status == "up"
    assert await diagnose(graph_client, tenant, "Asha", EVENING) is None

    await lab.inject(graph_client, tenant, kind=FaultKind.HUB_LINK_DOWN, node="popB", at=EVENING)
    assert await diagnose(graph_client, tenant, "Bilal", EVENING) is FaultKind.HUB_LINK_DOWN
    assert await diagnose(graph_client, tenant, "Esha", EVENING) is FaultKind.HUB_LINK_DOWN  # no box, same outage
    await lab.inject(graph_client, tenant, kind=FaultKind.HUB_LINK_BACKUP, node="popA", at=EVENING)
    speeds = {r.test: r.values for r in await lab.measure_all(graph_client, tenant, "Arun", at=EVENING)}
    assert speeds[Test.LINE_TEST]["via_backup"] and speeds[Test.LINE_TEST]["reaches_core"]
    assert speeds[Test.SPEED_TEST]["wired_mbps"] < 0.4 * speeds[Test.SPEED_TEST]["plan_mbps"]  # degraded


async def test_scoreboard_counts(graph_client, tenant):
    await build(graph_client, tenant)
    plan = {"Asha": FaultKind.ROUTER_FROZEN, "Arun": FaultKind.WIFI_INTERFERENCE, "Bilal": FaultKind.PAYMENT_FAILED}
    ids = {}
    for who, kind in plan.items():
        await lab.inject(graph_client, tenant, kind=kind, customer=who, at=EVENING)
        t = await tickets.open_ticket(graph_client, tenant, customer=who, issue_kind="other", summary="help",
                                      agent="intake", at=EVENING)
        ids[who] = t.id
    await lab.measure_all(graph_client, tenant, "Bilal", at=EVENING)  # before the fix: proves nothing
    await lab.record_diagnosis(graph_client, tenant, ids["Asha"], "Asha", FaultKind.ROUTER_FROZEN)
    await lab.record_diagnosis(graph_client, tenant, ids["Arun"], "Arun", FaultKind.ROUTER_FROZEN)  # wrong
    await lab.record_diagnosis(graph_client, tenant, ids["Bilal"], "Bilal", "payment_failed")
    await lab.act(graph_client, tenant, "Asha", Action.RESTART_ONT, at=EVENING)
    await lab.measure(graph_client, tenant, "Asha", Test.ONT_STATUS, at=EVENING)  # proven
    await lab.act(graph_client, tenant, "Bilal", Action.RESET_BILLING, at=EVENING)  # fixed, never re-measured
    await lab.act(graph_client, tenant, "Arun", Action.RESTART_ONT, at=EVENING)  # wrong action
    board = await lab.scoreboard(graph_client, tenant)
    assert (board.faults, board.diagnosed_right, board.fixed, board.fixed_proven) == (3, 2, 2, 1)
    rows = {r.customer: r for r in board.rows}
    assert (rows["Asha"].diagnosed_right, rows["Asha"].fixed_proven) == (True, True)
    assert (rows["Arun"].diagnosed_right, rows["Arun"].fixed, rows["Arun"].wrong_actions) == (False, False, 1)
    assert (rows["Bilal"].diagnosed_right, rows["Bilal"].fixed, rows["Bilal"].fixed_proven) == (True, True, False)
    # a later change of mind on the ticket is what counts
    await lab.record_diagnosis(graph_client, tenant, ids["Asha"], "Asha", None)
    assert (await lab.scoreboard(graph_client, tenant)).diagnosed_right == 1


async def test_blind_faults_are_seeded_and_diagnosable(graph_client, tenant):
    other = tenant + "-twin"
    await register(graph_client.redis, other, tenant + "-blind")
    for t in (tenant, other):
        await build(graph_client, t)
    a = await lab.inject(graph_client, tenant, seed=2024, at=EVENING)
    b = await lab.inject(graph_client, other, seed=2024, at=EVENING)
    row = lambda board: [(r.kind, r.customer, r.target) for r in board.rows]  # noqa: E731
    assert row(await lab.scoreboard(graph_client, tenant)) == row(await lab.scoreboard(graph_client, other))
    assert (a.customer, a.visible) == (b.customer, b.visible)

    # one blind fault after another, each diagnosed from readings alone and repaired accordingly
    t = tenant + "-blind"
    await build(graph_client, t)
    seen = []
    for seed in range(24):
        injection = await lab.inject(graph_client, t, seed=seed, at=EVENING)
        found = await diagnose(graph_client, t, injection.customer, EVENING)
        truth = (await lab.scoreboard(graph_client, t)).rows[-1]
        assert found is truth.kind, (seed, truth)
        seen.append(found)
        await lab.act(graph_client, t, injection.customer, lab.FIX_FOR[found], at=EVENING)
        assert await diagnose(graph_client, t, injection.customer, EVENING) is None
    assert len(set(seen)) >= 6
    board = await lab.scoreboard(graph_client, t)
    assert (board.faults, board.fixed, board.fixed_proven) == (24, 24, 24)


async def test_refusals_change_nothing(graph_client, tenant):
    await build(graph_client, tenant)
    await lab.inject(graph_client, tenant, kind=FaultKind.ROUTER_FROZEN, customer="Asha", at=EVENING)
    before = await network_state(graph_client, tenant)
    for call, error, code in [
        (lab.inject(graph_client, tenant, kind="gremlins", customer="Arun"), InvalidInput, "unknown_fault_kind"),
        (lab.inject(graph_client, tenant, kind=FaultKind.DAMAGED_FIBRE, customer="Asha"), StateConflict, "fault_active"),
        (lab.inject(graph_client, tenant, kind=FaultKind.CUT_STREET_CABLE, customer="Esha"), InvalidInput,
         "fault_not_applicable"),
        (lab.inject(graph_client, tenant, customer="Arun", node="splA"), InvalidInput, "invalid_input"),
        (lab.inject(graph_client, tenant, customer="Nobody"), NotFound, "customer_not_found"),
        (lab.inject(graph_client, tenant, kind=FaultKind.HUB_LINK_DOWN, node="splA"), InvalidInput,
         "fault_not_applicable"),
        (lab.measure(graph_client, tenant, "Asha", "smell_test"), InvalidInput, "unknown_test"),
        (lab.act(graph_client, tenant, "Asha", "pray"), InvalidInput, "unknown_action"),
        (lab.record_diagnosis(graph_client, tenant, "T-NONE", "Asha", FaultKind.ROUTER_FROZEN), NotFound,
         "ticket_not_found"),
    ]:
        with pytest.raises(error) as err:
            await call
        assert err.value.code == code
    ticket = await tickets.open_ticket(graph_client, tenant, customer="Arun", issue_kind="other", summary="x",
                                       agent="intake")
    with pytest.raises(NotFound):  # Arun's ticket is not Asha's
        await lab.record_diagnosis(graph_client, tenant, ticket.id, "Asha", FaultKind.ROUTER_FROZEN)
    with pytest.raises(InvalidInput):
        await lab.record_diagnosis(graph_client, tenant, ticket.id, "Arun", "gremlins")
    assert await network_state(graph_client, tenant) == before
    board = await lab.scoreboard(graph_client, tenant)
    assert (board.faults, board.rows[0].actions, board.rows[0].tickets) == (1, 0, [])


async def test_the_truth_stays_out_of_the_tenant_graph(graph_client, tenant):
    await build(graph_client, tenant)
    kinds = {k.value for k in FaultKind}
    for who, kind in (("Asha", FaultKind.ROUTER_FROZEN), ("Bilal", FaultKind.DAMAGED_FIBRE)):
        await lab.inject(graph_client, tenant, kind=kind, customer=who, at=EVENING)
        await lab.measure_all(graph_client, tenant, who, at=EVENING)
        await lab.act(graph_client, tenant, who, Action.CHANGE_WIFI_CHANNEL, at=EVENING)
    nodes = await graph_client.run(tenant, Query("t", "MATCH (n) RETURN labels(n) AS l, properties(n) AS p", True))
    rels = await graph_client.run(tenant, Query("t", "MATCH ()-[r]->() RETURN type(r) AS t, properties(r) AS p", True))
    labels = {x for n in nodes for x in n["l"]} | {r["t"] for r in rels}
    assert not labels & {"Fault", "Action", "Measurement", "Diagnosis", "Counter"}
    values = {str(v) for n in nodes + rels for v in n["p"].values()}
    assert not values & kinds
    assert not any("froze" in v or "cracked" in v for v in values)
    # the truth is a separate key that the tenant's graph name never is
    assert await graph_client.redis.exists(TRUTH_PREFIX + tenant) == 1
    assert graph_name(tenant) != TRUTH_PREFIX + tenant
    assert (await lab.scoreboard(graph_client, tenant)).faults == 2


async def test_a_home_fault_aimed_at_a_node_strikes_a_customer_behind_it(graph_client, tenant):
    await build(graph_client, tenant)
    assert (await lab.scoreboard(graph_client, tenant)).faults == 0
    injection = await lab.inject(graph_client, tenant, kind=FaultKind.ROUTER_FROZEN, node="ontB", seed=3)
    assert injection.customer == "Bilal"
    assert await diagnose(graph_client, tenant, "Bilal", EVENING) is FaultKind.ROUTER_FROZEN
    blind = await lab.inject(graph_client, tenant, node="splA", seed=3)  # any kind that can strike there
    row = (await lab.scoreboard(graph_client, tenant)).rows[-1]
    assert row.fault_id == blind.fault_id
    who = blind.customer or "Asha"
    assert await diagnose(graph_client, tenant, who, EVENING) is row.kind
