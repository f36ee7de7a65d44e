"""The agents' FastStream apps under TestRedisBroker (in memory, no broker loop, no delivery
middleware): each kind reaches its service's plain handler as its model, with the service's Deps.
The delivery guarantees are proven on the real broker (tests/relay_graph/runtime/streams, test_desk_processes)."""

from __future__ import annotations

import asyncio
import uuid

from faststream.redis import TestRedisBroker

from relay_graph.desk import agent_reads as desk

from relay_graph.desk.network import store as network

from relay_graph.desk.tickets import store as tickets
from relay_graph.runtime.agents.runner import make_app
from relay_graph.runtime.streams import (
    STREAM_OUTAGES,
    STREAM_REPLIES,
    STREAM_TICKETS,
    STREAM_TURNS,
    NetworkChanged,
    Publisher,
    StreamApp,
    TicketChanged,
    TurnReceived,
    connect,
    read_dead_letters,
)
from relay_graph.runtime.tenancy import graph_name
from relay_graph.usecases import operations
from relay_graph.desk.tickets.models import TicketStage
from services.intake.handlers import HANDLERS as INTAKE
from services.netops.handlers import HANDLERS as NETOPS
from services.resolver.handlers import HANDLERS as RESOLVER
from tests import reads, sample_network
from tests.support import eventually

from tests.support import STEADY

from .conftest import published



async def test_each_kind_reaches_its_plain_handler_as_its_model(stream_redis):
    seen = []

    async def on_turn(n):
        seen.append(n)

    async def on_ticket(n, delivery):
        seen.append((n, delivery))

    app = StreamApp(stream_redis, group="wiring", handlers={TurnReceived: on_turn, TicketChanged: on_ticket},
                    delivery=False)
    turn = TurnReceived(tenant="acme", episode_id="e1", seq=1, session="s", customer="c")
    ticket = TicketChanged(tenant="acme", ticket_id="T-1", version=2, change="opened", actor="test")
    async with TestRedisBroker(app.broker) as broker:
        await broker.publish(turn.model_dump(mode="json"), stream=TurnReceived.stream)
        await broker.publish(ticket.model_dump(mode="json"), stream=TicketChanged.stream)
    assert seen == [turn, (ticket, None)]  # no delivery middleware: no Delivery either


def test_every_agent_subscribes_to_the_kinds_its_handlers_table_names():
    for service, handlers, stream in (("intake", INTAKE, "relay:stream:turns"),
                                      ("resolver", RESOLVER, "relay:stream:tickets"),
                                      ("netops", NETOPS, "relay:stream:network")):
        app = StreamApp(connect(host="127.0.0.1", port=1), group=service, handlers=handlers)
        subs = app.broker.subscribers
        assert {s.stream_sub.name for s in subs} == {stream}
        assert {s.stream_sub.group for s in subs} == {service}
        assert sorted(s.stream_sub.min_idle_time is not None for s in subs) == [False, True]  # fresh + reclaim


async def test_netops_app_declares_the_outage_of_a_node_down(agent_deps, graph_client, stream_redis, tenant):
    netops = await agent_deps("netops")
    net = await sample_network.build_sample_network(graph_client, tenant, city="pune",
                                                    customers=["Ann Bell", "Ben Cole"])
    node = net.splitters[0]
    change = await network.set_node_status(graph_client, tenant, node, up=False)
    n = NetworkChanged(tenant=tenant, id=node, version=change.version, change="down", actor="lab")
    app = make_app("netops", netops, NETOPS, delivery=False)
    async with TestRedisBroker(app.broker) as broker:
        await broker.publish(n.model_dump(mode="json"), stream=NetworkChanged.stream)
    declared = await published(stream_redis, STREAM_OUTAGES, tenant)
    assert [(d.change, d.node_id) for d in declared] == [("declared", node)]


async def test_intake_app_answers_a_turn(gateway, agent_deps, memory, stream_redis, tenant):
    intake = await agent_deps("intake")
    n = await gateway.write_turn(
        "Cara Diaz", "Hi, I'm Cara Diaz. My wifi keeps dropping.")
    app = make_app("intake", intake, INTAKE, delivery=False)
    async with TestRedisBroker(app.broker) as broker:
        await broker.publish(n.model_dump(mode="json"), stream=TurnReceived.stream)
    [written] = await published(stream_redis, STREAM_REPLIES, tenant, reply_to=n.episode_id)
    assert written.id == desk.reply_id_for(n.episode_id) and written.ticket_id == desk.ticket_id_for(n.episode_id)


async def test_resolver_app_picks_up_a_ticket_handed_to_it(agent_deps, graph_client, stream_redis, tenant):
    resolver = await agent_deps("resolver")
    t = await tickets.open_ticket(graph_client, tenant, customer="Dev Rao", issue_kind="billing_double_charge",
                                  summary="charged twice", agent="intake", ticket_id="T-APP-1")
    t = await tickets.hand_off(graph_client, tenant, t.id, from_agent="intake", to_role="resolver")
    n = TicketChanged(tenant=tenant, id=t.id, version=t.version, change="handed_off", actor="intake")
    app = make_app("resolver", resolver, RESOLVER, delivery=False)
    async with TestRedisBroker(app.broker) as broker:
        await broker.publish(n.model_dump(mode="json"), stream=TicketChanged.stream)
    done = await tickets.get_ticket(graph_client, tenant, t.id)
    # a double charge is nothing the resolver can measure: it goes to billing, never to `fixed`
    assert done.owner == "resolver" and done.stage is not TicketStage.FIXED
    [raised] = await reads.escalations(graph_client, tenant, t.id)
    assert raised.to == "billing" and raised.agent == "resolver"
    changes = [c.change for c in await published(stream_redis, STREAM_TICKETS, tenant, id=t.id)]
    assert changes[0] == "picked_up"


async def _not_pending(redis, entry) -> bool:
    return not await redis.xpending_range(STREAM_TURNS, "intake", entry, entry, 1)


async def _entries_of_a_missing_tenant_are_dropped(agent_deps, graph_client, stream_redis, tenant: str) -> None:
    """An intake replica given a turn of `tenant` (not registered) acknowledges it and counts it
    dropped: no dead letter, no graph (the handler would have made one)."""
    intake = await agent_deps("intake", streams=STEADY)
    app = make_app("intake", intake, INTAKE)
    task = asyncio.create_task(app.run())
    try:
        await asyncio.wait_for(app.ready.wait(), 20)
        entry = await Publisher(stream_redis).publish(
            TurnReceived(tenant=tenant, episode_id="e1", seq=1, session="s", customer="c"))
        # acknowledged, once its turn came (another test's leftovers for gone tenants may be dropped too)
        await eventually(lambda: app.stats.dropped >= 1, what="the entry dropped")
        await eventually(lambda: _not_pending(stream_redis, entry), what="the entry acknowledged")
    finally:
        app.stop()
        await asyncio.wait_for(task, 20)
    assert not await stream_redis.xpending_range(STREAM_TURNS, "intake", entry, entry, 1)  # acknowledged
    assert not [d for d in await read_dead_letters(stream_redis, STREAM_TURNS) if d.original_id == entry]
    assert not await graph_client.redis.exists(graph_name(tenant))


async def test_an_entry_for_a_tenant_never_created_is_dropped_and_makes_no_graph(agent_deps, graph_client,
                                                                                stream_redis):
    await _entries_of_a_missing_tenant_are_dropped(agent_deps, graph_client, stream_redis,
                                                   "never-" + uuid.uuid4().hex[:10])


async def test_an_entry_for_a_deleted_tenant_is_dropped_and_makes_no_graph(agent_deps, graph_client, stream_redis,
                                                                           tenant):
    await tickets.open_ticket(graph_client, tenant, customer="Dev Rao", issue_kind="billing_double_charge",
                              summary="charged twice", agent="intake", ticket_id="T-GONE-1")
    assert await graph_client.redis.exists(graph_name(tenant))
    receipt = await operations.delete_tenant(graph_client, tenant, confirm=tenant)
    assert receipt.registered and graph_name(tenant) in receipt.removed
    await _entries_of_a_missing_tenant_are_dropped(agent_deps, graph_client, stream_redis, tenant)
