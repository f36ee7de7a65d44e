"""The resolver diagnosing with the fault lab's equipment, through its handler, against the real
FalkorDB and real streams: every fault kind injected on a scripted line, a ticket opened and handed
off by intake from a vague complaint, the resolver's handler run, and the lab's grader saying the
diagnosis was right and the fix proven by measuring again. Then outages first with netops warning
and closing the loop, healthy readings sending a technician, and procedural memory changing the
first fix the resolver tries.

    bb1 <-100- popA -40 (standby)-> bb2 <-100- popB            (popB has no standby)
               popA <-20- oltA <-10- splA -DROP-> ontA (Asha), ontA2 (Arun)
               popB <-20- oltB <-10- splB -DROP-> ontB (Bilal)
"""

from __future__ import annotations

import pytest

from relay_graph.desk import agent_reads as desk

from relay_graph.desk.tickets import store as tickets
from relay_graph import lab
from relay_graph.lab import Action, FaultKind, Test
from relay_graph.runtime.streams import STREAM_NETWORK, STREAM_TICKETS, NetworkChanged, TicketChanged
from relay_graph.desk.tickets.models import TicketStage
from services.intake import agent as intake_agent
from services.netops import agent as netops_agent
from services.resolver import diagnosing
from services.resolver.handlers import handle_ticket_changed
from tests import lab_network, reads

from .conftest import published

WHO: dict[FaultKind, str] = {k: "Asha" for k in FaultKind} | {FaultKind.HUB_LINK_DOWN: "Bilal"}
VAGUE = "Hi, my internet is not working properly since this morning"


async def build(client, tenant):
    await lab_network.build(client, tenant, flat_length_m=1000)


@pytest.fixture(autouse=True)
async def no_unproven_fix(graph_client, tenant):
    """The desk's invariant after every test here: no ticket reached `fixed` without a passing
    reading taken after the last action."""
    yield
    assert await tickets.unproven_fixes(graph_client, tenant) == {}


async def report(intake, gateway, customer: str, text: str = VAGUE, session: str | None = None):
    result = await intake_agent.answer_turn(intake, await gateway.write_turn(customer, text, session=session))
    assert result.change == "handed_off", result
    return result.ticket


async def work(resolver, tenant, ticket, change: str = "handed_off"):
    await handle_ticket_changed(resolver, TicketChanged(tenant=tenant, id=ticket.id, version=ticket.version,
                                                        change=change, actor="intake"))
    return await tickets.get_ticket(resolver.client, tenant, ticket.id)


def fix_steps(ticket) -> list[str]:
    return [e.detail.split(" ", 1)[0] for e in ticket.timeline if e.event == "fix_step"]


@pytest.mark.parametrize("kind", list(FaultKind), ids=[k.value for k in FaultKind])
async def test_each_fault_kind_is_diagnosed_and_its_fix_proven_through_the_handler(
        kind, intake, resolver, gateway, graph_client, stream_redis, tenant):
    who = WHO[kind]
    await build(graph_client, tenant)
    injection = await lab.inject(graph_client, tenant, kind=kind, customer=who, seed=1)
    t = await report(intake, gateway, who, session=f"{who}-1")
    done = await work(resolver, tenant, t)

    assert done.stage is TicketStage.FIXED, [(e.event, e.detail) for e in done.timeline]
    board = await lab.scoreboard(graph_client, tenant)
    (row,) = board.rows
    assert (row.kind, row.tickets, row.diagnoses) == (kind, [t.id], [kind.value])
    assert (board.diagnosed_right, board.fixed, board.fixed_proven) == (1, 1, 1)
    assert row.fixed_by is lab.FIX_FOR[kind] and row.wrong_actions == 0
    assert row.minutes_to_fix > 0  # on the lab's clock: measuring and repairing take field time

    # every reading and step is on the timeline: measure, diagnose, plan, act, measure again
    events = [e.event for e in done.timeline]
    tests = [x.value for x in Test]
    first = events.index("diagnosis")
    assert events[first - len(tests):first] == tests
    assert events[first + 1:first + 3] == ["plan", "fixing"]
    technician = kind is FaultKind.DAMAGED_FIBRE  # the fix is a technician's visit: done at its time
    act = events.index("visit_done" if technician else "fix_step")
    assert events[act + 1:act + 1 + len(tests)] == tests and events[-2:] == ["fix_verified", "fixed"]
    diagnosis = next(e.detail for e in done.timeline if e.event == "diagnosis")
    assert diagnosis.startswith(kind.value + ":")
    billing = next(e.detail for e in done.timeline if e.event == "billing_status")
    assert "account=" in billing and "lab time" in billing  # the reading's values
    said = next(e.customer for e in done.timeline if e.event == "billing_status")  # the customer's words: no field names
    assert "account" in said and "account=" not in said and "lab time" not in said
    assert fix_steps(done) == ([] if technician else [lab.FIX_FOR[kind].value])
    assert all(e.agent == "resolver" for e in done.timeline[first - len(tests):])
    # the resolver's working state is typed data on the ticket: the plan, the step reached, every
    # check and action on the lab's clock, and the proof the move to `fixed` rests on
    state = await tickets.get_work(graph_client, tenant, t.id)
    assert (state.diagnosis, state.plans, state.step) == (kind.value, [[lab.FIX_FOR[kind].value]], 1)
    assert [c.passed for c in state.checks] == [False, True] and [a.action for a in state.actions][-1:] == [
        lab.FIX_FOR[kind].value]
    (proof,) = state.proofs
    assert proof.check == state.checks[-1] and proof.check.at >= proof.last_action_at == state.actions[-1].at
    last_line_test = [e.detail for e in done.timeline if e.event == "line_test"][-1]
    assert len(proof.check.readings) == len(tests) and any(r in last_line_test for r in proof.check.readings)

    # the verified fix is a procedure for the customer's kind of problem
    (proc,) = await tickets.best_procedures(graph_client, tenant, t.issue)
    assert proc.steps == [lab.FIX_FOR[kind].value] and (proc.successes, proc.failures) == (1, 0)
    assert done.fixed_by == [proc.procedure_id]
    if technician:  # booked, then done at its booked time (the lab's clock), then measured, then proven
        (visit,) = done.visits
        assert visit.status == "done"
        assert events[first + 3:act + 1] == ["visit_scheduled", "technician_dispatched", "visit_done"]
        booked, came = done.timeline[first + 3], done.timeline[act]
        assert "booked for" in booked.detail and "visited" not in booked.detail + booked.customer
        assert "visited" in came.detail and state.actions[-1].at >= visit.at
    # a node the repair brought back is announced for netops
    for change in injection.visible:
        if change.node_id:
            ups = await published(stream_redis, STREAM_NETWORK, tenant, id=change.node_id, change="up")
            assert [(n.actor, n.version) for n in ups] == [("resolver", change.version + 1)]
    last = (await reads.transcript(graph_client, tenant, f"{who}-1"))[-1]
    assert last.speaker == "resolver" and "measured your line again" in last.text


async def test_an_outage_comes_first_netops_warns_and_closes_it_after_the_proven_repair(
        intake, resolver, netops, gateway, graph_client, stream_redis, tenant):
    await build(graph_client, tenant)
    injection = await lab.inject(graph_client, tenant, kind=FaultKind.CUT_STREET_CABLE, node="splA", seed=0)
    (down,) = injection.visible
    assert (down.node_id, down.up) == ("splA", False)
    # netops hears of the cabinet going down (the gateway's lab endpoint announces it) and warns
    declared = await netops_agent.node_down(netops, NetworkChanged(tenant=tenant, id="splA", version=down.version,
                                                                   change="down", actor="lab"))
    assert declared.status == "declared" and sorted(declared.notified) == ["Arun", "Asha"]

    t = await report(intake, gateway, "Asha", session="asha-out")
    done = await work(resolver, tenant, t)
    assert done.stage is TicketStage.FIXED
    events = [e.event for e in done.timeline]
    # outages first: linked and said before anything was measured
    assert events.index("checking_line") < events.index("line_test")
    assert events.index("outage_linked") < events.index("checking_line")
    assert declared.outage.outage_id in next(e.detail for e in done.timeline if e.event == "outage_linked")
    assert [o.outage_id for o in await desk.ticket_outages(graph_client, tenant, t.id)] == [declared.outage.outage_id]
    assert fix_steps(done) == ["repair_street_cable"]
    board = await lab.scoreboard(graph_client, tenant)
    assert (board.diagnosed_right, board.fixed_proven) == (1, 1)

    # the repair's NetworkChanged lets netops close the outage and tell everyone behind it
    (up,) = await published(stream_redis, STREAM_NETWORK, tenant, id="splA", change="up")
    resolved = await netops_agent.node_up(netops, up)
    assert resolved.status == "resolved" and sorted(resolved.notified) == ["Arun", "Asha"]
    assert resolved.tickets == []  # Asha's ticket was fixed by the resolver, not by the outage's end


async def test_healthy_readings_with_a_customer_who_says_it_is_broken_get_a_technician(
        intake, resolver, gateway, graph_client, tenant):
    await build(graph_client, tenant)
    t = await report(intake, gateway, "Arun", "my wifi keeps dropping all the time")
    done = await work(resolver, tenant, t)
    assert done.stage is TicketStage.TECHNICIAN_DISPATCHED and len(done.visits) == 1
    assert next(e.detail for e in done.timeline if e.event == "diagnosis").startswith("healthy:")
    # booked for its time, and nothing says anyone came: the visit is pending, the customer can still
    # say it works (the booking is cancelled with the ticket)
    assert not [e for e in done.timeline if e.event in ("fix_step", "technician", "visit_done")]
    (booked,) = [e for e in done.timeline if e.event == "visit_scheduled"]
    assert "booked for" in booked.detail and "visited" not in booked.detail + booked.customer
    assert done.visits[0].status == "scheduled" and done.visits[0].at > done.visits[0].scheduled_at
    assert not await tickets.best_procedures(graph_client, tenant, t.issue)  # nothing was fixed


async def test_procedural_memory_changes_the_first_step(intake, resolver, gateway, graph_client, tenant):
    await build(graph_client, tenant)
    issue = "router_frozen"

    async def frozen(who: str, session: str):
        await lab.inject(graph_client, tenant, kind=FaultKind.ROUTER_FROZEN, customer=who)
        t = await report(intake, gateway, who, "my router is frozen, nothing loads", session=session)
        assert t.issue == issue
        return await work(resolver, tenant, t)

    # nothing learnt yet: the manual's usual fix
    first = await frozen("Asha", "asha-1")
    assert first.stage is TicketStage.FIXED and fix_steps(first) == ["restart_ont"]
    assert "(manual, for" in next(e.detail for e in first.timeline if e.event == "plan")
    await intake_agent.answer_turn(intake, await gateway.write_turn("Asha", "yes it works now, thanks",
                                                                    session="asha-1"))

    # another fix that was verified twice for this kind of problem now goes first
    for i in range(2):
        seed = await tickets.open_ticket(graph_client, tenant, customer=f"seed {i}", issue_kind=issue,
                                         summary="frozen", agent="intake", ticket_id=f"T-SEED-OK-{i}")
        await tickets.record_fix(graph_client, tenant, seed.id, issue_kind=issue, steps=["reprovision"],
                                 verified=True, agent="resolver")
    second = await frozen("Arun", "arun-1")
    assert second.stage is TicketStage.FIXED and fix_steps(second) == ["reprovision"]
    assert "(learnt, for" in next(e.detail for e in second.timeline if e.event == "plan")

    # the customer says it did not hold: confirm counts the failure, the ticket is measured again
    # (healthy now), and healthy readings with a customer who says it is broken get a technician
    reopened = await intake_agent.answer_turn(intake, await gateway.write_turn("Arun", "no, still broken",
                                                                               session="arun-1"))
    assert reopened.change == "reopened"
    procs = {tuple(p.steps): p for p in await tickets.best_procedures(graph_client, tenant, issue)}
    assert (procs[("reprovision",)].successes, procs[("reprovision",)].failures) == (3, 1)
    again = await work(resolver, tenant, reopened.ticket, change="reopened")
    assert again.stage is TicketStage.TECHNICIAN_DISPATCHED and again.round == 1

    # failures pile up (fixes that did not prove out): the manual's fix goes first again
    for i in range(3):
        seed = await tickets.open_ticket(graph_client, tenant, customer=f"seed {i}", issue_kind=issue,
                                         summary="frozen", agent="intake", ticket_id=f"T-SEED-KO-{i}")
        await tickets.record_fix(graph_client, tenant, seed.id, issue_kind=issue, steps=["reprovision"],
                                 verified=False, agent="resolver")
    procs = {tuple(p.steps): p for p in await tickets.best_procedures(graph_client, tenant, issue)}
    assert procs[("reprovision",)].score < procs[("restart_ont",)].score
    third = await frozen("Bilal", "bilal-1")
    assert third.stage is TicketStage.FIXED and fix_steps(third) == ["restart_ont"]


def test_ranking_prefers_the_record_then_the_manual():
    k = FaultKind.ROUTER_FROZEN
    fresh = diagnosing.rank(k, [diagnosing.Candidate(s) for s in diagnosing.manual(k)])
    assert [c.steps for c in fresh] == [(Action.RESTART_ONT,), (Action.REPROVISION,)]
    learnt = diagnosing.Candidate((Action.REPROVISION,), successes=1, learnt=True)
    assert diagnosing.rank(k, fresh + [learnt])[0].steps == (Action.REPROVISION,)
    sunk = diagnosing.Candidate((Action.REPROVISION,), successes=1, failures=2)
    assert diagnosing.rank(k, [sunk, *fresh])[0].steps == (Action.RESTART_ONT,)
    # a learnt procedure fits a diagnosis only when it repairs that kind with otherwise safe steps
    assert diagnosing.applicable(["restart_ont"], FaultKind.WIFI_INTERFERENCE) is None
    assert diagnosing.applicable(["restart_ont", "change_wifi_channel"], FaultKind.WIFI_INTERFERENCE)
    assert diagnosing.applicable(["reset_billing", "restart_ont"], k) is None  # takes money for a frozen box
    assert diagnosing.applicable(["reboot the box"], k) is None
