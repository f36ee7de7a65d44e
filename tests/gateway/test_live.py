"""WS /live through a real uvicorn and a real WebSocket client, fed by the real streams: a tenant's
socket gets that tenant's ticket, handoff, reply, fact and outage events and never another
tenant's; keys by header or ?token=; bad keys close with 4401/4403. Plus the pure pieces (event
shapes, the bounded queue, the reply waiters) and /asyncapi.json."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import datetime, timezone

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from relay_graph.runtime.streams import (
    FactChanged,
    NetworkChanged,
    OutageChanged,
    Publisher,
    ReplyWritten,
    TicketChanged,
    TurnReceived,
)
from services.gateway.live_feed import LiveHub, LiveSubscription, ReplyWaiters, live_event

from .helpers import ADMIN_KEY, create_agent, create_tenant
from .stream_helpers import served

RECV_GUARD_S = 15  # a guard against hanging, not a speed assertion


async def next_event(ws) -> dict:
    return json.loads(await asyncio.wait_for(ws.recv(), RECV_GUARD_S))


async def events_until(ws, last_id: str) -> list[dict]:
    """Events in order until (and including) the one with id `last_id`."""
    got = []
    for _ in range(100):
        event = await next_event(ws)
        got.append(event)
        if event["id"] == last_id:
            return got
    raise AssertionError(f"no event {last_id} in {got}")


async def close_code(url: str, **kwargs) -> int:
    async with connect(url, **kwargs) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), RECV_GUARD_S)
    return closed.value.rcvd.code


@pytest.fixture
async def two_tenants(client, tenant):
    other = tenant + "-b"
    return (tenant, await create_tenant(client, tenant)), (other, await create_tenant(client, other))


async def test_a_tenants_socket_gets_its_events_and_never_anothers(app, client, two_tenants, stream_redis):
    (a, a_auth), (b, b_auth) = two_tenants
    publisher = Publisher(stream_redis)
    async with served(app) as host:
        async with connect(f"ws://{host}/v1/tenants/{a}/live", additional_headers=a_auth) as ws_a, \
                connect(f"ws://{host}/v1/tenants/{b}/live?token={b_auth['Authorization'][7:]}") as ws_b:
            # The canary goes first on the same stream: had it been routed to A, A would see it first.
            await publisher.publish(TicketChanged(tenant=b, id="T-CANARY", version=1, change="opened",
                                                  actor="intake"))
            await publisher.publish(TicketChanged(tenant=a, id="T-1", version=1, change="opened", actor="intake"))
            await publisher.publish(TicketChanged(tenant=a, id="T-1", version=2, change="handed_off",
                                                  actor="intake"))
            await publisher.publish(ReplyWritten(tenant=a, id="r-t-1", session="s-1", reply_to="t-1",
                                                 ticket_id="T-1", version=1, actor="intake"))
            await publisher.publish(OutageChanged(tenant=a, id="out-1", version=3, change="declared",
                                                  node_id="pune-olt-1", actor="netops"))
            # Not on the feed: turns and network changes are the agents' business.
            await publisher.publish(TurnReceived(tenant=a, id="t-2", seq=1, session="s-2", customer="bob"))
            await publisher.publish(NetworkChanged(tenant=a, id="pune-olt-1", version=3, change="down",
                                                   actor="staff"))
            # A fact written through the gateway's own route.
            r = await client.post(f"/v1/tenants/{a}/facts", json={"subject": "alice rao", "predicate": "lives_in",
                                                                  "object": "pune"},
                                  headers=a_auth)
            assert r.status_code == 201, r.text
            fact_id = r.json()["fact_id"]

            got = []
            kinds_wanted = {"ticket", "handoff", "reply", "outage", "fact"}
            while {e["kind"] for e in got} != kinds_wanted:
                got.append(await next_event(ws_a))
            assert all(e["id"] != "T-CANARY" for e in got)

            by_kind = {e["kind"]: e for e in got}
            assert len(got) == 5, got
            assert by_kind["ticket"] == {"kind": "ticket", "id": "T-1", "at": by_kind["ticket"]["at"], "version": 1,
                                         "actor": "intake", "change": "opened"}
            assert by_kind["handoff"]["id"] == "T-1" and by_kind["handoff"]["change"] == "handed_off"
            assert by_kind["handoff"]["version"] == 2
            assert {k: by_kind["reply"][k] for k in ("id", "session", "reply_to", "ticket_id")} == {
                "id": "r-t-1", "session": "s-1", "reply_to": "t-1", "ticket_id": "T-1"}
            assert (by_kind["outage"]["id"], by_kind["outage"]["change"], by_kind["outage"]["node_id"]) == (
                "out-1", "declared", "pune-olt-1")
            assert (by_kind["fact"]["id"], by_kind["fact"]["change"], by_kind["fact"]["actor"]) == (
                fact_id, "created", "api")
            for e in got:
                assert datetime.fromisoformat(e["at"]).tzinfo is not None
            # Tickets keep their stream order.
            assert [e["version"] for e in got if e["id"] == "T-1"] == [1, 2]

            # B's socket got B's canary (so it really was on the feed), and nothing of A's.
            assert (await next_event(ws_b))["id"] == "T-CANARY"
            await publisher.publish(TicketChanged(tenant=b, id="T-B-LAST", version=1, change="opened",
                                                  actor="intake"))
            assert [e["id"] for e in await events_until(ws_b, "T-B-LAST")] == ["T-B-LAST"]


async def test_fact_routes_announce_retire_and_settle(app, client, tenant, stream_redis):
    auth = await create_tenant(client, tenant)
    field_tech = await create_agent(client, tenant, auth, "field-tech")
    base = f"/v1/tenants/{tenant}"
    async with served(app) as host:
        async with connect(f"ws://{host}{base}/live", additional_headers=auth) as ws:
            first = (await client.post(f"{base}/facts", json={"subject": "alice rao", "predicate": "lives_in",
                                                             "object": "pune"},
                                       headers=auth)).json()
            second = (await client.post(f"{base}/facts", json={"subject": "alice rao", "predicate": "lives_in",
                                                              "object": "mumbai"},
                                        headers=field_tech)).json()
            assert second["outcome"] == "conflict", second
            r = await client.post(f"{base}/conflicts/{second['conflict_id']}/settle",
                                  json={"fact_id": second["fact_id"], "by": "maya"}, headers=auth)
            assert r.status_code == 200, r.text
            r = await client.post(f"{base}/facts/retire", json={"subject": "alice rao", "predicate": "lives_in"},
                                  headers=auth)
            retired = r.json()["retired"]
            assert retired
            events = []
            while len(events) < 3 + len(retired):
                events.append(await next_event(ws))
    assert [(e["kind"], e["id"], e["change"]) for e in events] == [
        ("fact", first["fact_id"], "created"), ("fact", second["fact_id"], "conflict"),
        ("fact", second["fact_id"], "settled"), *(("fact", f, "retired") for f in retired)]
    assert events[2]["actor"] == "maya"


async def test_bad_keys_close_with_4401_and_4403(app, two_tenants):
    (a, a_auth), (b, b_auth) = two_tenants
    async with served(app) as host:
        url = f"ws://{host}/v1/tenants/{a}/live"
        assert await close_code(url) == 4401
        assert await close_code(url + "?token=wrong") == 4401
        assert await close_code(url, additional_headers={"Authorization": "Bearer wrong"}) == 4401
        assert await close_code(url, additional_headers={"Authorization": "Token " + a_auth["Authorization"][7:]}) \
            == 4401
        # A wrong header is not rescued by a right token in the query.
        assert await close_code(url + "?token=" + a_auth["Authorization"][7:],
                                additional_headers={"Authorization": "Bearer wrong"}) == 4401
        assert await close_code(url, additional_headers=b_auth) == 4403
        assert await close_code(url, additional_headers={"Authorization": f"Bearer {ADMIN_KEY}"}) == 4403
        assert await close_code(f"ws://{host}/v1/tenants/Not_A_Tenant/live", additional_headers=a_auth) == 4403


async def test_asyncapi_is_served(client):
    r = await client.get("/asyncapi.json")
    assert r.status_code == 200
    doc = r.json()
    assert doc["asyncapi"].startswith("3.")
    assert {"TurnReceived", "TicketChanged", "ReplyWritten", "FactChanged", "OutageChanged", "NetworkChanged"} <= set(
        doc["components"]["schemas"])
    assert all(m["headers"] == {"$ref": "#/components/schemas/EntryHeaders"} for m in doc["components"]["messages"].values())


# ---------------------------------------------------------------- pure pieces (no broker)


def _ticket(tenant: str, change: str = "stage", version: int = 1) -> TicketChanged:
    return TicketChanged(tenant=tenant, id="T-1", version=version, change=change, actor="resolver",
                         at=datetime(2026, 9, 5, 10, tzinfo=timezone.utc))


def test_live_event_shapes():
    assert live_event(_ticket("acme")) == {"kind": "ticket", "id": "T-1", "at": "2026-09-05T10:00:00+00:00",
                                           "version": 1, "actor": "resolver", "change": "stage"}
    assert live_event(_ticket("acme", "handed_off"))["kind"] == "handoff"
    fact = FactChanged(tenant="acme", id="f-1", version=0, change="retired", actor="intake")
    assert live_event(fact)["kind"] == "fact"
    assert live_event(TurnReceived(tenant="acme", id="t-1", seq=1, session="s", customer="c")) is None


async def test_a_slow_socket_loses_its_oldest_events_and_is_told():
    sub = LiveSubscription("acme", size=3)
    for v in range(1, 6):
        sub.put({"kind": "ticket", "id": "T-1", "version": v})
    first = await sub.get()
    assert (first["version"], first["missed"]) == (3, 2)
    assert [(await sub.get())["version"] for _ in range(2)] == [4, 5]
    sub.put({"kind": "ticket", "id": "T-1", "version": 6})
    assert "missed" not in await sub.get()
    assert sub.dropped == 2


async def test_the_hub_routes_by_tenant_and_forgets_closed_sockets():
    hub = LiveHub(queue_size=10)
    with hub.subscribe("acme") as a, hub.subscribe("globex") as g:
        hub.notify(_ticket("acme"))
        assert (a.pending(), g.pending()) == (1, 0)
        assert hub.sockets() == 2
    assert hub.sockets() == 0
    hub.notify(_ticket("acme"))  # nobody listening: nothing kept


async def test_reply_waiters_match_tenant_and_turn():
    waiters = ReplyWaiters()
    with waiters.expect("acme", "t-1") as fut:
        waiters.notify(ReplyWritten(tenant="globex", id="r-1", session="s", reply_to="t-1", actor="intake"))
        waiters.notify(ReplyWritten(tenant="acme", id="r-2", session="s", reply_to="t-2", actor="intake"))
        assert not fut.done()
        waiters.notify(ReplyWritten(tenant="acme", id="r-" + uuid.uuid4().hex[:4], session="s", reply_to="t-1",
                                    actor="intake"))
        assert fut.done() and fut.result().reply_to == "t-1"
    assert len(waiters) == 0


def test_a_key_in_the_query_never_reaches_the_server_log(app, caplog):
    import logging

    with caplog.at_level(logging.INFO, logger="uvicorn.error"):
        logging.getLogger("uvicorn.error").info('%s - "WebSocket %s" [accepted]', "127.0.0.1:5000",
                                                "/v1/tenants/acme/live?token=s3cret-key&x=1")
    assert "s3cret-key" not in caplog.text
    assert "token=***&x=1" in caplog.text
