"""Intake's ticket writes (usecases.ticket_opening) on the real FalkorDB, each through the ticket
workflow: an opening hands the ticket to the resolver and owes its TicketChanged (again on a
redelivery, since that announcement may be what was lost); a closed ticket is not handed off again
(the workflow refuses it: nothing written, nothing owed); a reading and a promise are timeline steps
in the workflow's words, a promise due in the past is refused; a ticket still waiting for the
resolver is owed again on a redelivered turn."""

from __future__ import annotations

from datetime import timedelta

from relay_graph.desk.tickets import store as tickets
from relay_graph.desk.tickets.models import TicketStage
from relay_graph.usecases import ticket_opening
from relay_graph.usecases.context import Call

CUSTOMER = "Ivy Chen"


async def _open(memory, tenant) -> tuple[Call, object]:
    call = Call(memory, tenant, "intake")
    t = await ticket_opening.open_and_hand_off(call, customer=CUSTOMER, issue_kind="no_connection",
                                               summary="no internet since morning", ticket_id="T-0A1B2C",
                                               session=None, detail="no internet (from the customer's message m-1)")
    return call, t


def changes(call: Call) -> list[tuple[str, str, str]]:
    return [(n.kind, n.id, n.change) for n in call.owed]


async def test_an_opening_hands_off_and_owes_it_again_on_a_redelivery(graph_client, memory, tenant):
    call, t = await _open(memory, tenant)
    assert changes(call) == [("ticket_changed", "T-0A1B2C", "handed_off")] and call.told == []
    detail = await tickets.get_ticket(graph_client, tenant, t.id)
    assert [e.event for e in detail.timeline] == ["opened", "handed_off"]
    assert detail.timeline[0].detail == "no internet since morning" and detail.handoffs[-1].to == "resolver"
    again, same = await _open(memory, tenant)  # the turn's notification came again
    assert same.version == t.version and changes(again) == changes(call)
    assert len((await tickets.get_ticket(graph_client, tenant, t.id)).timeline) == 2  # nothing written anew


async def test_a_closed_ticket_is_not_handed_off_again(graph_client, memory, tenant):
    _, t = await _open(memory, tenant)
    await tickets.confirm(graph_client, tenant, t.id, fixed=True, by="customer")
    call, closed = await _open(memory, tenant)
    assert closed.stage is TicketStage.CLOSED and call.owed == [] and call.told == []
    assert (await tickets.get_ticket(graph_client, tenant, t.id)).handoffs[-1].to == "resolver"


async def test_a_reading_and_a_promise_are_steps_in_the_workflows_words(graph_client, memory, tenant):
    call, t = await _open(memory, tenant)
    call.owed.clear()
    assert await ticket_opening.note_reading(call, t.id, None, "better")
    due = call.now() + timedelta(hours=2)
    promise = await ticket_opening.promise_callback(call, t.id, t.stage, "A technician will call you", due,
                                                    source="m-2")
    assert promise is not None and promise.due_at == due.replace(microsecond=due.microsecond // 1000 * 1000)
    late = call.now() - timedelta(hours=1)
    assert await ticket_opening.promise_callback(call, t.id, t.stage, "Call me back", late, source="m-3") is None
    assert not await ticket_opening.note_reading(call, "T-FFFFFF", None, "worse")  # no such ticket here
    steps = [(e.event, e.detail) for e in (await tickets.get_ticket(graph_client, tenant, t.id)).timeline][2:]
    assert steps[0] == ("customer_reading", "the customer says it is better now")
    assert steps[1][0] == "promised" and steps[1][1].startswith("A technician will call you before ")
    assert steps[1][1].endswith(f"(promise {promise.promise_id})") and len(steps) == 2
    assert call.owed == [] and call.told == []


async def test_a_ticket_waiting_for_the_resolver_is_owed_again_on_a_redelivered_turn(graph_client, memory, tenant):
    _, t = await _open(memory, tenant)
    call = Call(memory, tenant, "intake")
    await ticket_opening.remind_waiting(call, CUSTOMER)
    assert changes(call) == [("ticket_changed", t.id, "handed_off")]
    await tickets.claim(graph_client, tenant, t.id, agent="resolver", replica="r-1")
    held = Call(memory, tenant, "intake")
    await ticket_opening.remind_waiting(held, CUSTOMER)
    assert held.owed == []  # someone holds it: nothing was lost
