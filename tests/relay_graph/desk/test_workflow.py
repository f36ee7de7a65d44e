"""The ticket workflow's transitions, guards and words, on plain data (no graph)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from pydantic import TypeAdapter, ValidationError

from relay_graph.desk.tickets.models import TechVisit, Ticket, TicketStage
from relay_graph.desk.tickets.work import Act, Check, Work
from relay_graph.desk.tickets import workflow as wf
from relay_graph.runtime.errors import StateConflict

R, CL, FX, FD, TD, C, RO = (TicketStage.REPORTED, TicketStage.CHECKING_LINE, TicketStage.FIXING, TicketStage.FIXED,
                            TicketStage.TECHNICIAN_DISPATCHED, TicketStage.CLOSED, TicketStage.REOPENED)
T0 = datetime(2026, 12, 5, 6, 49, tzinfo=timezone.utc)  # the booking minute of the desk-truth issue
VISIT_AT = datetime(2026, 12, 6, 10, 0, tzinfo=timezone.utc)
INDIA = ZoneInfo("Asia/Kolkata")
IDS = ("rd-1", "act-1", "proc-1", "visit-1", "visit-2", "out-1", "pr-1", "resolver-1")


def t(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def check(at: datetime, passed: bool = True, round_: int = 1) -> Check:
    return Check(round=round_, at=at, readings=["rd-1"], diagnosis=None if passed else "damaged_fibre", passed=passed)


def visit(status: wf.VisitStatus = wf.VisitStatus.SCHEDULED, vid: str = "visit-1") -> wf.Visit:
    return wf.Visit(visit_id=vid, technician="Lena Fischer", at=VISIT_AT, status=status)


def state(stage: TicketStage, **kw) -> wf.TicketState:
    """Round 1, an action at t(1) and a passing check after it at t(2), unless told otherwise."""
    return wf.TicketState(**{"stage": stage, "round": 1, "last_action_at": t(1), "last_check": check(t(2)), **kw})


SAMPLES = {
    wf.Reported: lambda: wf.Reported(at=t(0), issue="slow_speed", summary="very slow since yesterday"),
    wf.HandedOff: lambda: wf.HandedOff(at=t(3), from_agent="intake", to_role="resolver"),
    wf.PickedUp: lambda: wf.PickedUp(at=t(3), agent="resolver", replica="resolver-1"),
    wf.Released: lambda: wf.Released(at=t(3), agent="resolver"),
    wf.LineCheckStarted: lambda: wf.LineCheckStarted(at=t(3)),
    wf.Measured: lambda: wf.Measured(at=t(4), check=check(t(4)), readings=(
        wf.ReadingNote(test="speed_test", reading_id="rd-1", says="wired 973 Mbps"),)),
    wf.Diagnosed: lambda: wf.Diagnosed(at=t(3), diagnosis=None, meaning="every test looks healthy", readings=("rd-1",)),
    wf.FixPlanned: lambda: wf.FixPlanned(at=t(3), procedure_id="proc-1", steps=("restart_ont",), diagnosis="ont_stuck",
                                         source="manual"),
    wf.FixAttempted: lambda: wf.FixAttempted(at=t(3), action="restart_ont", action_id="act-1"),
    wf.FixFailed: lambda: wf.FixFailed(at=t(3), procedure_id="proc-1", steps=("restart_ont",)),
    wf.FixProven: lambda: wf.FixProven(at=t(3), procedure_id="proc-1", steps=("restart_ont",)),
    wf.VisitBooked: lambda: wf.VisitBooked(at=T0, visit_id="visit-2", technician="Lena Fischer", visit_at=VISIT_AT,
                                           reason=wf.VisitReason.HEALTHY_LINE),
    wf.VisitDone: lambda: wf.VisitDone(at=VISIT_AT + timedelta(hours=2), visit_id="visit-1"),
    wf.VisitCancelled: lambda: wf.VisitCancelled(at=t(3), visit_id="visit-1"),
    wf.Escalated: lambda: wf.Escalated(at=t(3), to="billing", reason="a refund is checked by the billing team"),
    wf.WaitingOnNetwork: lambda: wf.WaitingOnNetwork(at=t(3), diagnosis="node_down", outage_ids=("out-1",)),
    wf.WaitingOnOutage: lambda: wf.WaitingOnOutage(at=t(3), outage_ids=("out-1",)),
    wf.OutageLinked: lambda: wf.OutageLinked(at=t(3), outage_id="out-1", node_name="Hyderabad Central exchange",
                                             since=t(-60)),
    wf.AddressRequested: lambda: wf.AddressRequested(at=t(3)),
    wf.AddressPlaced: lambda: wf.AddressPlaced(at=t(3)),
    wf.ConfirmedFixed: lambda: wf.ConfirmedFixed(at=t(3), by="customer"),
    wf.ConfirmedNotFixed: lambda: wf.ConfirmedNotFixed(at=t(3), by="customer"),
    wf.Closed: lambda: wf.Closed(at=t(3), by="staff"),
    wf.Reopened: lambda: wf.Reopened(at=t(3), by="staff"),
    wf.MovedDesk: lambda: wf.MovedDesk(at=t(3), region="Europe"),
    wf.CustomerReading: lambda: wf.CustomerReading(at=t(3), direction="better"),
    wf.Promised: lambda: wf.Promised(at=t(3), promise_id="pr-1", text="A technician will call you", due=t(120)),
    wf.PromiseChased: lambda: wf.PromiseChased(at=t(3), promise_id="pr-1", text="A technician will call you", due=t(2)),
}


def ready(stage: TicketStage | None, cls) -> wf.TicketState | None:
    """A state in `stage` in which `cls`'s guard holds."""
    if stage is None:
        return None
    if stage is TD and cls is wf.FixProven:  # the technician came, and a passing check followed
        done = VISIT_AT + timedelta(hours=2)
        return state(TD, visit=visit(wf.VisitStatus.DONE), last_action_at=done, last_check=check(done + timedelta(hours=1)))
    kw = {"visit": visit()} if stage is TD else {}
    if cls is wf.AddressPlaced:
        kw["waiting"] = wf.Waiting.ADDRESS
    return state(stage, **kw)


# ---------------------------------------------------------------- the table, stage by stage

NOTES = {e: None for e in (wf.HandedOff, wf.PickedUp, wf.Released, wf.OutageLinked, wf.MovedDesk,
                           wf.CustomerReading, wf.Promised, wf.PromiseChased)}
CLOSING = {wf.ConfirmedFixed: C, wf.Closed: C}
# stage -> {event: the stage it leads to (None: stays)}; what is not listed is refused
EXPECTED = {
    None: {wf.Reported: R},
    R: {**NOTES, **CLOSING, wf.LineCheckStarted: CL, wf.Measured: None, wf.FixProven: FD, wf.Escalated: CL,
        wf.AddressRequested: CL},
    RO: {**NOTES, **CLOSING, wf.LineCheckStarted: CL, wf.Measured: None, wf.FixProven: FD, wf.Escalated: CL,
         wf.AddressRequested: CL},
    CL: {**NOTES, **CLOSING, wf.Measured: None, wf.Diagnosed: None, wf.FixPlanned: FX, wf.FixProven: FD,
         wf.VisitBooked: TD, wf.Escalated: CL, wf.WaitingOnNetwork: CL, wf.WaitingOnOutage: None,
         wf.AddressRequested: CL, wf.AddressPlaced: None},
    FX: {**NOTES, **CLOSING, wf.LineCheckStarted: CL, wf.Measured: None, wf.Diagnosed: None, wf.FixPlanned: FX,
         wf.FixAttempted: None, wf.FixFailed: None, wf.FixProven: FD, wf.VisitBooked: TD, wf.Escalated: CL,
         wf.WaitingOnNetwork: CL},
    TD: {**NOTES, **CLOSING, wf.Measured: None, wf.FixProven: FD, wf.VisitDone: None, wf.VisitCancelled: CL},
    FD: {**NOTES, **CLOSING, wf.ConfirmedNotFixed: RO},
    C: {wf.ConfirmedNotFixed: RO, wf.Reopened: RO},
}
PAIRS = [(s, e) for s in EXPECTED for e in wf.EVENTS]
ALLOWED = [(s, e) for s, e in PAIRS if e in EXPECTED[s]]


def _id(v) -> str:
    return getattr(v, "value", None) or getattr(v, "__name__", None) or "new"


def test_the_table_is_the_one_stated_stage_by_stage():
    flat = {(s, e): to or s for s, moves in EXPECTED.items() for e, to in moves.items()}
    assert wf.TABLE == flat
    assert set(EXPECTED) == {None, *TicketStage} and set(SAMPLES) == set(wf.EVENTS)


@pytest.mark.parametrize(("stage", "cls"), PAIRS, ids=[f"{_id(s)}-{_id(e)}" for s, e in PAIRS])
def test_every_stage_and_event(stage, cls):
    s, event = ready(stage, cls), SAMPLES[cls]()
    if cls in EXPECTED[stage]:
        assert wf.refusal(s, event) is None
        moved = wf.advance(s, event)
        assert moved.before is stage and moved.stage is (EXPECTED[stage][cls] or stage)
        assert moved.steps, "every accepted event leaves a step"
        return
    reason = wf.Refusal.NO_TICKET if stage is None else wf.Refusal.TICKET_CLOSED if stage is C \
        else wf.Refusal.STEP_NOT_ALLOWED
    assert wf.refusal(s, event) is reason
    with pytest.raises(wf.StepRefused) as refused:
        wf.advance(s, event)
    assert (refused.value.reason, refused.value.code, refused.value.stage) == (reason, reason.name.lower(), stage)


def test_a_refusal_is_a_typed_conflict():
    with pytest.raises(StateConflict) as refused:
        wf.advance(state(C), SAMPLES[wf.Measured]())
    assert refused.value.status == 409 and refused.value.code == "ticket_closed"
    assert refused.value.kind == "measured" and "closed" in refused.value.message


def test_a_closed_ticket_accepts_only_a_reopen():
    accepted = {cls for cls in wf.EVENTS if wf.refusal(state(C), SAMPLES[cls]()) is None}
    assert accepted == {wf.Reopened, wf.ConfirmedNotFixed}
    assert all(wf.advance(state(C), SAMPLES[cls]()).stage is RO for cls in accepted)


# ---------------------------------------------------------------- guards, both ways


def _refused(s, event) -> wf.Refusal | None:
    return wf.refusal(s, event)


PROVEN = SAMPLES[wf.FixProven]()


@pytest.mark.parametrize(("last_check", "last_action", "reason"), [
    (check(t(2)), t(1), None),  # a passing check after the last action
    (check(t(1)), t(1), None),  # at the same moment counts
    (check(t(2)), None, None),  # nothing done: the outage is over, the line measures healthy
    (check(t(2), passed=False), t(1), wf.Refusal.UNPROVEN),  # failing
    (check(t(1)), t(2), wf.Refusal.UNPROVEN),  # older than the last action
    (check(t(2), round_=0), t(1), wf.Refusal.UNPROVEN),  # the previous round's
    (None, t(1), wf.Refusal.UNPROVEN),  # never measured
], ids=["after", "same-moment", "no-action", "failing", "older", "other-round", "none"])
def test_a_fix_is_proven_only_by_a_passing_check_after_the_last_action(last_check, last_action, reason):
    s = state(FX, last_check=last_check, last_action_at=last_action)
    assert _refused(s, PROVEN) is reason
    if reason is None:
        assert wf.advance(s, PROVEN).stage is FD


def test_no_fix_is_proven_while_a_booked_visit_is_pending():
    assert _refused(state(TD, visit=visit()), PROVEN) is wf.Refusal.VISIT_PENDING
    assert _refused(state(TD, visit=visit(wf.VisitStatus.CANCELLED)), PROVEN) is None


def test_a_step_after_the_check_takes_the_proof_away():
    s = wf.advance(state(FX), SAMPLES[wf.FixAttempted]()).state  # acted at t(3), checked at t(2)
    assert s.last_action_at == t(3) and _refused(s, PROVEN) is wf.Refusal.UNPROVEN
    s = wf.advance(s, SAMPLES[wf.Measured]()).state  # measured again at t(4)
    assert s.last_check.at == t(4) and wf.advance(s, PROVEN).stage is FD


def test_an_older_measurement_does_not_replace_the_latest_check():
    s = state(FX, last_check=check(t(9)))
    assert wf.advance(s, SAMPLES[wf.Measured]()).state.last_check.at == t(9)


def test_a_measurement_of_another_round_is_refused():
    old = wf.Measured(at=t(4), check=check(t(4), round_=0), readings=SAMPLES[wf.Measured]().readings)
    assert _refused(state(CL), old) is wf.Refusal.STALE_ROUND


@pytest.mark.parametrize(("done_at", "vid", "status", "reason"), [
    (VISIT_AT, "visit-1", wf.VisitStatus.SCHEDULED, None),  # at its time
    (VISIT_AT + timedelta(hours=2), "visit-1", wf.VisitStatus.SCHEDULED, None),  # after
    (VISIT_AT - timedelta(minutes=1), "visit-1", wf.VisitStatus.SCHEDULED, wf.Refusal.VISIT_NOT_DUE),
    (T0, "visit-1", wf.VisitStatus.SCHEDULED, wf.Refusal.VISIT_NOT_DUE),  # at booking time
    (VISIT_AT, "visit-9", wf.VisitStatus.SCHEDULED, wf.Refusal.NO_VISIT),  # another visit
    (VISIT_AT, "visit-1", wf.VisitStatus.DONE, wf.Refusal.NO_VISIT),  # done already
    (VISIT_AT, "visit-1", wf.VisitStatus.CANCELLED, wf.Refusal.NO_VISIT),
], ids=["at-time", "after", "a-minute-early", "at-booking", "other-visit", "done-already", "cancelled"])
def test_a_visit_is_done_only_at_or_after_its_time(done_at, vid, status, reason):
    s = state(TD, visit=visit(status))
    event = wf.VisitDone(at=done_at, visit_id=vid)
    assert _refused(s, event) is reason
    if reason is None:
        after = wf.advance(s, event).state
        assert after.visit.status is wf.VisitStatus.DONE and after.last_action_at == done_at
        assert _refused(after, PROVEN) is wf.Refusal.UNPROVEN  # the check before the visit proves nothing


def test_no_visit_at_all_is_never_done():
    assert _refused(state(TD), SAMPLES[wf.VisitDone]()) is wf.Refusal.NO_VISIT


@pytest.mark.parametrize(("visit_at", "existing", "reason"), [
    (VISIT_AT, None, None),
    (T0, None, None),  # for right now
    (T0 - timedelta(minutes=1), None, wf.Refusal.VISIT_IN_PAST),
    (VISIT_AT, visit(), wf.Refusal.VISIT_ALREADY_BOOKED),
    (VISIT_AT, visit(wf.VisitStatus.DONE), None),  # a later round may book again
], ids=["tomorrow", "now", "past", "pending", "after-a-done-one"])
def test_a_visit_is_booked_for_a_time_not_past_one_at_a_time(visit_at, existing, reason):
    event = wf.VisitBooked(at=T0, visit_id="visit-2", technician="Lena Fischer", visit_at=visit_at,
                           reason=wf.VisitReason.IN_HOME_FIBRE)
    s = state(FX, visit=existing)
    assert _refused(s, event) is reason
    if reason is None:
        booked = wf.advance(s, event).state
        assert booked.stage is TD and booked.pending_visit == wf.Visit(
            visit_id="visit-2", technician="Lena Fischer", at=visit_at)


@pytest.mark.parametrize(("existing", "vid", "reason"), [
    (visit(), "visit-1", None), (visit(), "visit-2", wf.Refusal.NO_VISIT),
    (visit(wf.VisitStatus.DONE), "visit-1", wf.Refusal.NO_VISIT), (None, "visit-1", wf.Refusal.NO_VISIT),
], ids=["pending", "other", "done", "none"])
def test_only_the_pending_visit_is_cancelled(existing, vid, reason):
    s = state(TD, visit=existing)
    event = wf.VisitCancelled(at=t(3), visit_id=vid)
    assert _refused(s, event) is reason
    if reason is None:
        moved = wf.advance(s, event)
        assert moved.stage is CL and moved.state.visit.status is wf.VisitStatus.CANCELLED


def test_a_technician_s_work_is_not_a_remote_step():
    event = wf.FixAttempted(at=t(3), action="dispatch_technician", action_id="act-2")
    assert _refused(state(FX), event) is wf.Refusal.VISIT_IS_NOT_AN_ACTION
    assert _refused(state(FX), SAMPLES[wf.FixAttempted]()) is None


@pytest.mark.parametrize(("cls", "waiting", "reason", "after"), [
    (wf.AddressRequested, None, None, wf.Waiting.ADDRESS),
    (wf.AddressRequested, wf.Waiting.ADDRESS, wf.Refusal.ALREADY_WAITING, None),
    (wf.AddressPlaced, wf.Waiting.ADDRESS, None, None),
    (wf.AddressPlaced, None, wf.Refusal.NOT_WAITING, None),
    (wf.AddressPlaced, wf.Waiting.NETWORK, wf.Refusal.NOT_WAITING, None),
    (wf.WaitingOnNetwork, None, None, wf.Waiting.NETWORK),
    (wf.WaitingOnNetwork, wf.Waiting.NETWORK, wf.Refusal.ALREADY_WAITING, None),
], ids=["ask", "ask-twice", "placed", "placed-unasked", "placed-while-network", "network", "network-twice"])
def test_what_a_round_waits_for(cls, waiting, reason, after):
    s = state(CL, waiting=waiting)
    assert _refused(s, SAMPLES[cls]()) is reason
    if reason is None:
        assert wf.advance(s, SAMPLES[cls]()).state.waiting is after


def test_a_proven_fix_ends_the_wait_for_the_network():
    assert wf.advance(state(CL, waiting=wf.Waiting.NETWORK), PROVEN).state.waiting is None


@pytest.mark.parametrize(("last_check", "reason"), [
    (check(t(2)), None), (check(t(2), passed=False), wf.Refusal.UNPROVEN), (None, wf.Refusal.UNPROVEN)],
    ids=["healthy", "failing", "unmeasured"])
def test_waiting_on_an_outage_says_healthy_only_when_measured_healthy(last_check, reason):
    assert _refused(state(CL, last_check=last_check), SAMPLES[wf.WaitingOnOutage]()) is reason


@pytest.mark.parametrize(("due", "reason"), [(t(120), None), (t(3), None), (t(2), wf.Refusal.DUE_IN_PAST)],
                         ids=["later", "now", "past"])
def test_a_promise_is_due_in_the_future(due, reason):
    event = wf.Promised(at=t(3), promise_id="pr-1", text="A technician will call you", due=due)
    assert _refused(state(TD, visit=visit()), event) is reason


@pytest.mark.parametrize("cls", [wf.ConfirmedNotFixed, wf.Reopened])
def test_a_reopen_starts_a_new_round_with_nothing_proven(cls):
    s = state(C if cls is wf.Reopened else FD, waiting=wf.Waiting.NETWORK)
    after = wf.advance(s, SAMPLES[cls]()).state
    assert (after.stage, after.round, after.waiting, after.last_check, after.last_action_at) == (RO, 2, None, None, None)
    assert _refused(after.model_copy(update={"stage": CL}), PROVEN) is wf.Refusal.UNPROVEN


@pytest.mark.parametrize("cls", [wf.ConfirmedFixed, wf.Closed])
def test_closing_cancels_a_pending_visit(cls):
    moved = wf.advance(state(TD, visit=visit()), SAMPLES[cls]())
    assert moved.stage is C and moved.state.visit.status is wf.VisitStatus.CANCELLED
    assert [s.event for s in moved.steps] == ["visit_cancelled", SAMPLES[cls]().kind]
    done = wf.advance(state(TD, visit=visit(wf.VisitStatus.DONE)), SAMPLES[cls]())
    assert [s.event for s in done.steps] == [SAMPLES[cls]().kind] and done.state.visit.status is wf.VisitStatus.DONE


def test_a_new_ticket_is_reported_and_nothing_else_happens_before():
    opened = wf.advance(None, SAMPLES[wf.Reported]())
    assert opened.before is None and opened.state == wf.TicketState(stage=R)
    assert [s.event for s in opened.steps] == ["opened"]
    assert _refused(state(R), SAMPLES[wf.Reported]()) is wf.Refusal.STEP_NOT_ALLOWED


# ---------------------------------------------------------------- the words


def _all_steps():
    for stage, cls in ALLOWED:
        yield cls, wf.advance(ready(stage, cls), SAMPLES[cls](), zone=INDIA)


def test_only_a_visit_done_says_a_technician_visited():
    for cls, moved in _all_steps():
        for step in moved.steps:
            said = f"{step.staff} {step.customer}".lower()
            assert ("visited" in said) is (cls is wf.VisitDone), (cls.__name__, step)
            assert "visited" not in said or step.event == "visit_done"


def test_customers_read_no_ids():
    for cls, moved in _all_steps():
        for step in moved.steps:
            assert not [i for i in IDS if i in step.customer], (cls.__name__, step.customer)


def test_a_stage_move_is_a_step_named_after_the_stage():
    for cls, moved in _all_steps():
        if moved.before is None:
            assert [s.event for s in moved.steps] == ["opened"]  # the store's name for a new ticket's step
        elif moved.moved:
            assert moved.steps[-1].event in (moved.stage.value, "confirmed_fixed", "confirmed_not_fixed"), cls
        else:
            assert moved.stage.value not in [s.event for s in moved.steps], cls


def test_a_booked_visit_shows_its_own_time_in_the_customer_s_zone():
    moved = wf.advance(state(CL), SAMPLES[wf.VisitBooked](), zone=INDIA)
    assert [s.event for s in moved.steps] == ["visit_scheduled", "technician_dispatched"]
    for step in moved.steps:
        assert "Sun 6 Dec 2026, 15:30 IST" in step.customer and "10:00 UTC" in step.staff
        assert "Sat 5 Dec" not in step.customer + step.staff  # never the booking time
        assert "visit-2" in step.staff and "visited" not in step.staff + step.customer


def test_a_visit_done_says_when_it_was_done():
    moved = wf.advance(state(TD, visit=visit()), SAMPLES[wf.VisitDone](), zone=INDIA)
    (step,) = moved.steps
    assert step.event == "visit_done" and moved.stage is TD
    assert step.customer == "Our technician Lena Fischer visited your home on Sun 6 Dec 2026, 17:30 IST."
    assert "visit-1" in step.staff and "booked for Sun 6 Dec 2026, 10:00 UTC" in step.staff


def test_a_measurement_is_a_step_per_reading_named_after_its_test():
    event = wf.Measured(at=t(4), check=check(t(4)), readings=(
        wf.ReadingNote(test="speed_test", reading_id="rd-1", says="rd-1 lab time: wired_mbps=973",
                       plain="973 Mbps to the box"),
        wf.ReadingNote(test="light_level", reading_id="rd-2", says="rd-2 lab time: rx_dbm=-19")))
    steps = wf.advance(state(CL), event, zone=ZoneInfo("Asia/Kolkata")).steps
    assert [s.event for s in steps] == ["speed_test", "light_level"]
    assert steps[0].customer == "We measured your line (speed test) on Sat 5 Dec 2026, 12:23 IST: 973 Mbps to the box."
    assert "rd-1" in steps[0].staff and "rd-2" not in steps[1].customer and "lab time" not in steps[1].customer


@pytest.mark.parametrize(("event", "names"), [
    (wf.FixProven(at=t(3), procedure_id="proc-1", steps=("restart_ont",)), ["fix_verified", "fixed"]),
    (wf.FixProven(at=t(3), outage_ids=("out-1",)), ["outage_over", "fixed"]),
], ids=["procedure", "outage-over"])
def test_a_proven_fix_says_it_was_measured_healthy(event, names):
    steps = wf.advance(state(FX), event).steps
    assert [s.event for s in steps] == names
    assert "re-measured healthy at Sat 5 Dec 2026, 06:51 UTC" in steps[-1].staff
    assert "tests healthy" in steps[-1].customer


def test_the_plan_moves_into_fixing_once():
    first = wf.advance(state(CL), SAMPLES[wf.FixPlanned]())
    again = wf.advance(state(FX), SAMPLES[wf.FixPlanned]())
    assert [s.event for s in first.steps] == ["plan", "fixing"] and [s.event for s in again.steps] == ["plan"]
    assert first.steps[0].customer == "We are trying a fix: restart ont."


# ---------------------------------------------------------------- reading the store's state and parsing


def test_the_state_is_read_from_the_ticket_its_work_and_its_visits():
    ticket = Ticket(id="T-1", stage=FX, version=4, customer="Divya Rao", issue="slow_speed", summary="slow",
                    opened_at=T0, updated_at=T0, round=1)
    work = Work(round=1, needs="waiting_on_network",
                checks=[check(t(9), round_=0), check(t(2)), check(t(5), passed=False)],
                actions=[Act(round=0, action="restart_ont", action_id="act-0", at=t(8)),
                         Act(round=1, action="restart_ont", action_id="act-1", at=t(4))])
    visits = [TechVisit(visit_id=v, ticket_id="T-1", technician="Lena Fischer", at=at, scheduled_at=T0, status=st)
              for v, at, st in [("visit-0", t(-600), "scheduled"), ("visit-1", VISIT_AT, "scheduled"),
                                ("visit-2", VISIT_AT + timedelta(days=1), "cancelled")]]
    s = wf.state_of(ticket, work, visits)
    assert (s.stage, s.round, s.waiting, s.last_action_at) == (FX, 1, wf.Waiting.NETWORK, t(4))
    assert s.last_check.at == t(5) and not s.last_check.passed and not s.proven()
    assert s.pending_visit.visit_id == "visit-0"  # the earliest still booked
    s = wf.state_of(ticket.model_copy(update={"round": 2}), work, visits[2:])
    assert (s.round, s.waiting, s.last_check, s.last_action_at) == (2, None, None, None)
    assert s.visit.visit_id == "visit-2" and s.pending_visit is None
    assert wf.state_of(ticket, None) == wf.TicketState(stage=FX, round=1)


def test_every_event_parses_from_its_json():
    adapter = TypeAdapter(wf.Event)
    for make in SAMPLES.values():
        event = make()
        assert adapter.validate_json(event.model_dump_json()) == event


@pytest.mark.parametrize("bad", [
    {"kind": "visit_done", "visit_id": "visit-1", "at": "2026-12-06T10:00:00"},  # no zone: not comparable
    {"kind": "measured", "at": "2026-12-05T06:53:00Z", "readings": [], "check": check(t(4)).model_dump(mode="json")},
    {"kind": "technician_visited", "at": "2026-12-05T06:53:00Z"},
    {"kind": "customer_reading", "at": "2026-12-05T06:53:00Z", "direction": "sideways"},
], ids=["naive-time", "no-readings", "unknown-kind", "bad-direction"])
def test_a_malformed_event_is_refused_before_the_machine(bad):
    with pytest.raises(ValidationError):
        TypeAdapter(wf.Event).validate_python(bad)

