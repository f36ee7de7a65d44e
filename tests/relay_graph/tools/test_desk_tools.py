"""The desk tools against a real FalkorDB: tickets, handing one to a role as the calling agent,
who worked a ticket, the fixes that worked; unknown tickets and issue kinds stop at resolution."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from relay_graph.desk.tickets import store as tickets
from relay_graph.runtime.streams import TicketChanged
from relay_graph.desk.tickets.models import TicketStage
from relay_graph.tools import Shape, call_tool

from .conftest import RESOLUTION, counts

T0 = datetime(2026, 9, 5, 10, 0, tzinfo=timezone.utc)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


async def worked_ticket(client, tenant, customer="ira sen", issue="no internet"):
    """Opened by intake, handed to the resolver, picked up by one of its replicas, being checked."""
    t = await tickets.open_ticket(client, tenant, customer=customer, issue_kind=issue, summary="no internet",
                                  agent="intake", at=at(0))
    await tickets.hand_off(client, tenant, t.id, from_agent="intake", to_role="resolver", at=at(1))
    assert await tickets.claim(client, tenant, t.id, agent="resolver", replica="resolver-1", at=at(2))
    await tickets.set_stage(client, tenant, t.id, stage=TicketStage.CHECKING_LINE, agent="resolver", at=at(3))
    return t


async def test_tickets_lists_and_shows_one(ctx, graph_client, tenant):
    mine = await worked_ticket(graph_client, tenant)
    other = await tickets.open_ticket(graph_client, tenant, customer="jai roy", issue_kind="wifi slow",
                                      summary="slow upstairs", agent="intake", at=at(10))

    everyone = await call_tool(ctx, "tickets", {})
    assert [t.id for t in everyone.data.tickets] == [other.id, mine.id]
    hers = await call_tool(ctx, "tickets", {"customer": "Ira Sen"})
    assert [t.id for t in hers.data.tickets] == [mine.id] and hers.shape is Shape.ANSWERED

    one = await call_tool(ctx, "tickets", {"ticket_id": mine.id})
    assert one.data.tickets == [] and one.data.ticket.id == mine.id
    assert [e.event for e in one.data.ticket.timeline] == ["opened", "handed_off", "picked_up", "checking_line"]
    assert [(h.from_, h.to) for h in one.data.ticket.handoffs] == [("intake", "resolver")]
    assert one.to_json()["data"]["ticket"]["handoffs"][0]["from"] == "intake"  # the contract's field name
    assert "ticket " + mine.id + " handed from intake to resolver at " + at(1).isoformat() in one.how_i_know

    wrong_owner = await call_tool(ctx, "tickets", {"ticket_id": mine.id, "customer": "jai roy"})
    assert wrong_owner.shape is Shape.NOT_IN_GRAPH and wrong_owner.data.ticket is None


async def test_handoff_is_recorded_as_the_calling_agent_and_announced_once(make_ctx, graph_client, tenant,
                                                                          announced):
    t = await tickets.open_ticket(graph_client, tenant, customer="kavi das", issue_kind="no internet",
                                  summary="down", agent="intake", at=at(0))
    ctx = make_ctx(tenant, "mcp:field-app")

    r = await call_tool(ctx, "handoff", {"ticket_id": t.id, "to_role": "resolver", "detail": "customer called"})
    assert r.shape is Shape.ANSWERED and r.data.changed and r.data.announced
    assert r.data.ticket.version == t.version + 1
    [n] = announced
    assert (type(n), n.id, n.change, n.version, n.actor) == (TicketChanged, t.id, "handed_off", t.version + 1,
                                                             "mcp:field-app")
    detail = await tickets.get_ticket(graph_client, tenant, t.id)
    assert [(h.from_, h.to) for h in detail.handoffs] == [("mcp:field-app", "resolver")]
    assert detail.timeline[-1].event == "handed_off" and detail.timeline[-1].detail == "customer called"

    again = await call_tool(ctx, "handoff", {"ticket_id": t.id, "to_role": "resolver"})
    assert not again.data.changed and not again.data.announced and len(announced) == 1


async def test_who_handled_lists_every_agent_in_order(make_ctx, graph_client, tenant):
    t = await worked_ticket(graph_client, tenant)
    await call_tool(make_ctx(tenant, "mcp:noc-bot"), "handoff", {"ticket_id": t.id, "to_role": "netops"})

    r = await call_tool(make_ctx(tenant, "api"), "who_handled", {"ticket_id": t.id})
    assert r.shape is Shape.ANSWERED
    assert [a.agent for a in r.data.agents] == ["intake", "resolver", "mcp:noc-bot"]
    by = {a.agent: a for a in r.data.agents}
    assert {"OPENED", "HANDED_OFF", "opened", "handed_off"} <= set(by["intake"].did)
    assert {"PICKED_UP", "picked_up", "checking_line"} <= set(by["resolver"].did)
    assert {"HANDED_OFF", "handed_off"} <= set(by["mcp:noc-bot"].did)
    assert by["intake"].first_at == at(0) and by["resolver"].first_at == at(2)
    assert [(h.from_, h.to) for h in r.data.handoffs] == [("intake", "resolver"), ("mcp:noc-bot", "netops")]
    assert f"(resolver)-[:PICKED_UP]->(ticket {t.id}) at {at(2).isoformat()}" in r.how_i_know


async def test_past_fixes_ranks_procedures_by_smoothed_success(ctx, graph_client, tenant):
    good, meh = ["restart ont", "check light level"], ["reprovision ont"]
    for i, (steps, verified) in enumerate([(good, True), (good, True), (meh, True), (meh, False)]):
        t = await tickets.open_ticket(graph_client, tenant, customer=f"customer {i}", issue_kind="No Internet",
                                      summary="down", agent="intake", at=at(i))
        await tickets.record_fix(graph_client, tenant, t.id, issue_kind="no internet", steps=steps,
                                 verified=verified, agent="resolver", at=at(i + 1))

    r = await call_tool(ctx, "past_fixes", {"issue_kind": "no  internet"})
    assert r.shape is Shape.ANSWERED and r.data.issue_kind == "no internet"
    assert [(p.steps, p.successes, p.failures) for p in r.data.procedures] == [(good, 2, 0), (meh, 1, 1)]
    assert r.data.procedures[0].score == pytest.approx(0.75)

    await tickets.open_ticket(graph_client, tenant, customer="lata", issue_kind="wifi slow", summary="slow",
                              agent="intake")
    none_yet = await call_tool(ctx, "past_fixes", {"issue_kind": "wifi slow"})
    assert none_yet.shape is Shape.NOT_IN_GRAPH and none_yet.data.procedures == []


@pytest.mark.parametrize("name, arguments, unknown", [
    ("tickets", {"ticket_id": "T-NOPE"}, [("ticket_id", "ticket", "T-NOPE")]),
    ("tickets", {"customer": "nobody known"}, [("customer", "customer", "nobody known")]),
    ("handoff", {"ticket_id": "T-NOPE", "to_role": "resolver"}, [("ticket_id", "ticket", "T-NOPE")]),
    ("who_handled", {"ticket_id": "T-NOPE"}, [("ticket_id", "ticket", "T-NOPE")]),
    ("past_fixes", {"issue_kind": "alien abduction"}, [("issue_kind", "issue", "alien abduction")]),
])
async def test_unknown_tickets_customers_and_issues_stop_at_resolution(ctx, recorder, graph_client, tenant, name,
                                                                        arguments, unknown):
    await worked_ticket(graph_client, tenant)
    before = await counts(graph_client, tenant)
    recorder.ran.clear()

    r = await call_tool(ctx, name, arguments)

    assert r.shape is Shape.UNKNOWN_NAME and r.data is None
    assert [(u.argument, u.kind, u.name) for u in r.unknown] == unknown
    assert set(recorder.names()) <= RESOLUTION and all(q.read_only for q in recorder.ran)
    assert await counts(graph_client, tenant) == before
