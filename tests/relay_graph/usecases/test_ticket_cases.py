"""The ticket use cases against the real FalkorDB: each write goes through the ticket workflow
(usecases.tickets), so a step that did not happen cannot be written. A refused event writes
nothing; what a write owes is recorded on the Call, never announced by the use case."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from relay_graph.desk.tickets import store as tk
from relay_graph.desk.tickets import workflow as wf
from relay_graph.desk.tickets.models import TicketStage
from relay_graph.desk.tickets.work import Act, Check, with_act, with_check, with_proof
from relay_graph.memory.facade import Memory
from relay_graph.usecases import tickets as cases
from relay_graph.usecases.context import Call

T0 = datetime(2026, 12, 5, 6, 49, tzinfo=timezone.utc)  # the booking minute of the desk-truth issue
VISIT_AT = datetime(2026, 12, 6, 10, 0, tzinfo=timezone.utc)


def call_at(graph_client, tenant, now: datetime, agent: str = "resolver") -> Call:
    return Call(Memory(graph_client), tenant, agent, clock=lambda: now)


async def in_stage(graph_client, tenant, stage: TicketStage, tid: str = "T-1"):
    t = await tk.open_ticket(graph_client, tenant, customer="Divya Rao", issue_kind="slow_speed",
                             summary="very slow since yesterday", agent="intake", ticket_id=tid, at=T0)
    if stage is not TicketStage.REPORTED:
        t = await tk.set_stage(graph_client, tenant, tid, stage=stage, agent="resolver", at=T0)
    return t


def check(at: datetime, passed: bool, round_: int = 0) -> Check:
    return Check(round=round_, at=at, readings=["rd-1"], diagnosis=None if passed else "damaged_fibre", passed=passed)


async def measured(call: Call, tid: str, at: datetime, passed: bool):
    work = with_check(await tk.get_work(call.client, call.tenant, tid), check(at, passed))
    note = wf.ReadingNote(test="speed_test", reading_id="rd-1", says="wired 973 Mbps" if passed else "no light")
    return await cases.record(call, tid, wf.Measured(at=at, check=check(at, passed), readings=(note,)), work=work)


async def timeline(graph_client, tenant, tid: str = "T-1") -> list:
    return (await tk.get_ticket(graph_client, tenant, tid)).timeline


async def test_booking_a_technician_says_when_they_go_never_that_they_came(graph_client, tenant):
    await in_stage(graph_client, tenant, TicketStage.CHECKING_LINE)
    call = call_at(graph_client, tenant, T0)
    t, visit = await cases.book_visit(call, "T-1", technician="Lena Fischer", visit_at=VISIT_AT,
                                      reason=wf.VisitReason.HEALTHY_LINE)
    assert t.stage is TicketStage.TECHNICIAN_DISPATCHED and visit.at == VISIT_AT and visit.status == "scheduled"
    steps = (await timeline(graph_client, tenant))[-2:]
    assert [s.event for s in steps] == ["visit_scheduled", "technician_dispatched"]
    words = " ".join(s.detail + " " + s.customer for s in steps)
    assert "booked for Sun 6 Dec 2026, 10:00 UTC" in words and "visited" not in words
    assert [type(n).__name__ for n in call.owed] == ["TicketChanged"] and call.owed[0].change == "stage"
    # booked again (a redelivery): the pending visit, nothing written
    before = await timeline(graph_client, tenant)
    again, same = await cases.book_visit(call, "T-1", technician="Lena Fischer", visit_at=VISIT_AT,
                                         reason=wf.VisitReason.HEALTHY_LINE)
    assert not again.changed and same.visit_id == visit.visit_id and await timeline(graph_client, tenant) == before


async def test_a_visit_is_done_only_at_or_after_its_time_then_a_passing_reading_proves_the_fix(graph_client, tenant):
    await in_stage(graph_client, tenant, TicketStage.FIXING)
    call = call_at(graph_client, tenant, T0)
    _, visit = await cases.book_visit(call, "T-1", technician="Lena Fischer", visit_at=VISIT_AT,
                                      reason=wf.VisitReason.IN_HOME_FIBRE)
    before = await timeline(graph_client, tenant)
    with pytest.raises(wf.StepRefused) as refused:
        await cases.visit_done(call, "T-1", visit.visit_id, at=VISIT_AT - timedelta(minutes=1))
    assert refused.value.reason is wf.Refusal.VISIT_NOT_DUE and refused.value.code == "visit_not_due"
    assert await timeline(graph_client, tenant) == before  # nothing written
    assert (await tk.visits_of(graph_client, tenant, "T-1"))[0].status == "scheduled"
    # the fix cannot be proven while the visit is pending
    with pytest.raises(wf.StepRefused, match="visit"):
        await cases.fix_proven(call, "T-1", work=await tk.get_work(graph_client, tenant, "T-1"))

    came = VISIT_AT + timedelta(hours=1)
    work = with_act(await tk.get_work(graph_client, tenant, "T-1"),
                    Act(round=0, action="dispatch_technician", action_id="act-1", at=came))
    done = await cases.visit_done(call, "T-1", visit.visit_id, at=came, work=work)
    assert done.changed and done.stage is TicketStage.TECHNICIAN_DISPATCHED
    assert (await tk.visits_of(graph_client, tenant, "T-1"))[0].status == "done"
    assert "visited at Sun 6 Dec 2026, 11:00 UTC" in (await timeline(graph_client, tenant))[-1].detail
    # a reading taken before the visit proves nothing; a failing one neither; a passing one after it does
    await measured(call, "T-1", came - timedelta(minutes=5), passed=True)
    with pytest.raises(wf.StepRefused) as unproven:
        await cases.fix_proven(call, "T-1", work=await tk.get_work(graph_client, tenant, "T-1"))
    assert unproven.value.reason is wf.Refusal.UNPROVEN
    await measured(call, "T-1", came + timedelta(minutes=2), passed=False)
    with pytest.raises(wf.StepRefused):
        await cases.fix_proven(call, "T-1", work=await tk.get_work(graph_client, tenant, "T-1"))
    await measured(call, "T-1", came + timedelta(minutes=4), passed=True)
    work = with_proof(await tk.get_work(graph_client, tenant, "T-1"), "resolver")
    fixed = await cases.fix_proven(call, "T-1", work=work, issue_kind="slow_speed", steps=["dispatch_technician"])
    assert fixed.stage is TicketStage.FIXED
    assert [e.event for e in (await timeline(graph_client, tenant))[-2:]] == ["fix_verified", "fixed"]
    assert await tk.unproven_fixes(graph_client, tenant) == {}


async def test_a_fix_is_refused_without_a_passing_reading_and_nothing_is_written(graph_client, tenant):
    await in_stage(graph_client, tenant, TicketStage.FIXING)
    call = call_at(graph_client, tenant, T0)
    before = await timeline(graph_client, tenant)
    with pytest.raises(wf.StepRefused) as refused:
        await cases.fix_proven(call, "T-1", work=await tk.get_work(graph_client, tenant, "T-1"),
                               issue_kind="slow_speed", steps=["restart_ont"])
    assert refused.value.reason is wf.Refusal.UNPROVEN
    assert await timeline(graph_client, tenant) == before and call.owed == []
    assert await tk.best_procedures(graph_client, tenant, "slow_speed") == []  # no fix counted either


async def test_a_stale_version_writes_nothing_and_a_step_outside_the_table_is_refused(graph_client, tenant):
    t = await in_stage(graph_client, tenant, TicketStage.CHECKING_LINE)
    call = call_at(graph_client, tenant, T0)
    stale = await cases.record(call, "T-1", wf.AddressRequested(at=T0), version=t.version - 1)
    assert not stale.changed and call.owed == []
    with pytest.raises(wf.StepRefused) as refused:  # a remote step is not taken while checking the line
        await cases.record(call, "T-1", wf.FixAttempted(at=T0, action="restart_ont", action_id="act-1"))
    assert refused.value.reason is wf.Refusal.STEP_NOT_ALLOWED


async def test_claims_and_escalations_write_the_workflows_words_once(graph_client, tenant):
    t = await in_stage(graph_client, tenant, TicketStage.REPORTED)
    call = call_at(graph_client, tenant, T0)
    assert await cases.claim(call, "T-1", replica="resolver-1")
    assert await cases.claim(call, "T-1", replica="resolver-1")  # a redelivery: held, nothing owed again
    assert not await cases.claim(call_at(graph_client, tenant, T0), "T-1", replica="resolver-2")
    assert [(n.change, n.version) for n in call.owed] == [("picked_up", t.version)]
    picked = (await timeline(graph_client, tenant))[-1]
    assert (picked.event, picked.detail) == ("picked_up", "picked up by resolver on resolver-1")
    assert picked.customer == "Our line support team is working on it."
    esc = await cases.escalate(call, "T-1", to="billing", reason="a refund is checked by the billing team")
    again = await cases.escalate(call, "T-1", to="billing", reason="a refund is checked by the billing team")
    assert esc.escalation_id == again.escalation_id
    events = [e.event for e in await timeline(graph_client, tenant)]
    assert events.count("escalated") == 1 and events[-1] == "checking_line"


async def test_confirming_it_works_closes_the_ticket_and_cancels_the_booked_visit(graph_client, tenant):
    await in_stage(graph_client, tenant, TicketStage.CHECKING_LINE)
    call = call_at(graph_client, tenant, T0)
    await cases.book_visit(call, "T-1", technician="Lena Fischer", visit_at=VISIT_AT,
                           reason=wf.VisitReason.HEALTHY_LINE)
    closed = await cases.confirm_fix(call, "T-1", fixed=True, by="customer", at=T0 + timedelta(hours=1))
    assert closed.stage is TicketStage.CLOSED
    assert (await tk.visits_of(graph_client, tenant, "T-1"))[0].status == "cancelled"
    assert [n.change for n in call.owed][-1] == "closed"
