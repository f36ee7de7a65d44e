"""Tickets over HTTP: the list, one ticket, and the customer's confirmation (which announces the
closed or reopened ticket on the real tickets stream)."""

from __future__ import annotations

import pytest

from relay_graph.desk.tickets import store as tickets
from relay_graph.memory.models import FactInput
from relay_graph.runtime.streams import STREAM_TICKETS, TicketChanged
from relay_graph.desk.tickets.models import TicketStage

from .helpers import assert_error, create_tenant
from .stream_helpers import published

LIST_KEYS = {"id", "stage", "owner", "customer", "opened_at"}
DETAIL_KEYS = {"id", "stage", "owner", "customer", "issue", "timeline", "handoffs"}
INTERNAL = {"changed", "owner_replica"}


@pytest.fixture
def base(tenant) -> str:
    return f"/v1/tenants/{tenant}"


async def fixed_ticket(client, tenant: str, customer: str = "alice rao", ticket_id: str = "T-ALICE1"):
    """A ticket opened by intake, handed to the resolver, picked up and fixed."""
    await tickets.open_ticket(client, tenant, customer=customer, issue_kind="no internet", summary="no internet",
                              agent="intake", session="s-1", ticket_id=ticket_id)
    await tickets.hand_off(client, tenant, ticket_id, from_agent="intake", to_role="resolver")
    assert await tickets.claim(client, tenant, ticket_id, agent="resolver", replica="resolver-host-1-abc")
    await tickets.set_stage(client, tenant, ticket_id, stage=TicketStage.FIXING, agent="resolver")
    await tickets.record_fix(client, tenant, ticket_id, issue_kind="no internet", steps=["reboot the ont"],
                             verified=True, agent="resolver")
    return await tickets.set_stage(client, tenant, ticket_id, stage=TicketStage.FIXED, agent="resolver")


async def test_list_and_filter_by_customer(client, base, auth, tenant, memory):
    await fixed_ticket(memory.client, tenant, "alice rao", "T-A1")
    await tickets.open_ticket(memory.client, tenant, customer="Bob Iyer", issue_kind="slow", summary="slow evenings",
                              agent="intake", ticket_id="T-B1")
    r = await client.get(f"{base}/tickets", headers=auth)
    assert r.status_code == 200, r.text
    rows = r.json()["tickets"]
    assert {t["id"] for t in rows} == {"T-A1", "T-B1"}
    for t in rows:
        assert LIST_KEYS <= set(t) and not INTERNAL & set(t)
    r = await client.get(f"{base}/tickets", params={"customer": "  BOB   iyer "}, headers=auth)
    assert [(t["id"], t["customer"], t["stage"], t["owner"]) for t in r.json()["tickets"]] == [
        ("T-B1", "Bob Iyer", "reported", None)]
    r = await client.get(f"{base}/tickets", params={"customer": "nobody here"}, headers=auth)
    assert r.json() == {"tickets": []}


async def test_detail_has_timeline_and_handoffs_and_no_internals(client, base, auth, tenant, memory):
    await fixed_ticket(memory.client, tenant)
    r = await client.get(f"{base}/tickets/T-ALICE1", headers=auth)
    assert r.status_code == 200, r.text
    t = r.json()
    assert DETAIL_KEYS <= set(t) and not INTERNAL & set(t)
    assert (t["id"], t["stage"], t["owner"], t["customer"], t["issue"]) == (
        "T-ALICE1", "fixed", "resolver", "alice rao", "no internet")
    events = [e["event"] for e in t["timeline"]]
    assert events[0] == "opened" and events[-1] == "fixed"
    assert "fixing" in events and events.index("fixing") < events.index("fixed")
    assert all(set(e) == {"at", "agent", "event", "detail", "customer"} for e in t["timeline"])  # customer: its words
    assert [(h["from"], h["to"]) for h in t["handoffs"]] == [("intake", "resolver")]
    assert t["handoffs"][0]["at"].endswith("+00:00")


async def test_unknown_ticket_is_404_and_a_bad_id_422(client, base, auth):
    assert_error(await client.get(f"{base}/tickets/T-NOPE", headers=auth), 404, "not_found")
    assert_error(await client.post(f"{base}/tickets/T-NOPE/confirm", json={"fixed": True}, headers=auth),
                 404, "not_found")
    # any identifier is looked up (an unknown one is 404); one with a control character is refused
    assert_error(await client.get(f"{base}/tickets/bad id!", headers=auth), 404, "not_found")
    assert_error(await client.get(f"{base}/tickets/T-%01", headers=auth), 422, "validation_error")


async def test_another_tenants_ticket_is_not_found_in_mine(client, base, auth, tenant, memory):
    other = tenant + "-b"
    other_auth = await create_tenant(client, other)
    await fixed_ticket(memory.client, other, ticket_id="T-SECRET")
    assert_error(await client.get(f"{base}/tickets/T-SECRET", headers=auth), 404, "not_found")
    assert (await client.get(f"{base}/tickets", headers=auth)).json() == {"tickets": []}
    assert_error(await client.get(f"/v1/tenants/{other}/tickets/T-SECRET", headers=auth), 403, "forbidden")
    assert (await client.get(f"/v1/tenants/{other}/tickets/T-SECRET", headers=other_auth)).status_code == 200


async def test_not_fixed_reopens_and_announces_once(client, base, auth, tenant, memory, stream_redis):
    before = await fixed_ticket(memory.client, tenant)
    r = await client.post(f"{base}/tickets/T-ALICE1/confirm", json={"fixed": False}, headers=auth)
    assert r.status_code == 200, r.text
    assert r.json() == {"id": "T-ALICE1", "stage": "reopened", "version": before.version + 1, "changed": True}
    # The procedure that was credited counts a failure; the owner is cleared for a new claim.
    t = await tickets.get_ticket(memory.client, tenant, "T-ALICE1")
    assert t.owner is None and t.round == 1
    [proc] = await tickets.best_procedures(memory.client, tenant, "no internet") or [None]
    assert proc is not None and proc.failures == 1

    # Confirming into the same stage again writes and announces nothing.
    r = await client.post(f"{base}/tickets/T-ALICE1/confirm", json={"fixed": False}, headers=auth)
    assert r.json()["changed"] is False and r.json()["version"] == before.version + 1

    announced = await published(stream_redis, STREAM_TICKETS, tenant)
    assert [(type(n), n.id, n.change, n.version, n.actor) for n in announced] == [
        (TicketChanged, "T-ALICE1", "reopened", before.version + 1, "customer")]


async def test_fixed_closes_and_announces(client, base, auth, tenant, memory, stream_redis):
    before = await fixed_ticket(memory.client, tenant)
    for issue in ("no internet since 2026-09-01", "slow_speed on the tv"):
        await memory.write_fact(tenant, FactInput(subject="alice rao", predicate="has_issue", object=issue,
                                                  agent="intake"))
    r = await client.post(f"{base}/tickets/T-ALICE1/confirm", json={"fixed": True, "by": "maya"}, headers=auth)
    assert r.status_code == 200, r.text
    assert r.json()["stage"] == "closed" and r.json()["changed"] is True
    detail = (await client.get(f"{base}/tickets/T-ALICE1", headers=auth)).json()
    assert detail["closed_at"] is not None and detail["timeline"][-1]["event"] == "confirmed_fixed"
    announced = await published(stream_redis, STREAM_TICKETS, tenant)
    assert [(n.change, n.version, n.actor) for n in announced] == [("closed", before.version + 1, "maya")]
    # the fixed problem is off the customer's file; another one stays
    assert [f.object for f in await memory.facts(tenant, "alice rao", "has_issue")] == ["slow_speed on the tv"]


@pytest.mark.parametrize("body", [{}, {"fixed": "maybe"}, {"fixed": "no"}, {"fixed": 0}, {"fixed": True, "extra": 1},
                                  {"fixed": True, "by": "a b"}])
async def test_bad_confirm_body_is_422_and_changes_nothing(client, base, auth, tenant, memory, stream_redis, body):
    before = await fixed_ticket(memory.client, tenant)
    r = await client.post(f"{base}/tickets/T-ALICE1/confirm", json=body, headers=auth)
    assert_error(r, 422, "validation_error")
    after = await tickets.peek_ticket(memory.client, tenant, "T-ALICE1")
    assert (after.stage, after.version) == (before.stage, before.version)
    assert await published(stream_redis, STREAM_TICKETS, tenant) == []
