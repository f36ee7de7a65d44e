"""One trace from the customer's request through every agent that touched the ticket: the agents'
handlers run in this test's event loop under the real consumer runtime (each service's FastStream app on real
streams, the services' bound HANDLERS), with spans kept in memory."""

from __future__ import annotations

import asyncio
import uuid

from opentelemetry import trace

from relay_graph.desk import agent_reads as desk

from relay_graph.desk.tickets import store as tickets
from relay_graph import lab
from relay_graph.runtime.agents.runner import make_app
from relay_graph.desk.tickets.models import TicketStage
from services.intake.handlers import HANDLERS as INTAKE
from services.resolver.handlers import HANDLERS as RESOLVER
from tests import sample_network

from tests.support import span_inside, wipe_stream_keys

from .conftest import eventually


async def test_one_trace_runs_from_the_request_through_intake_to_the_resolver(gateway,
        agent_deps, memory, graph_client, stream_redis, tenant, span_exporter):
    await wipe_stream_keys(stream_redis)  # no process of another test module is running now
    span_exporter.clear()
    run = uuid.uuid4().hex[:6]
    intake = await agent_deps("intake", consumer_name=f"intake-trace-{run}")
    resolver = await agent_deps("resolver", consumer_name=f"resolver-trace-{run}")
    consumers = [make_app("intake", intake, INTAKE), make_app("resolver", resolver, RESOLVER)]
    tasks = [asyncio.create_task(c.run()) for c in consumers]
    try:
        await eventually(lambda: all(c.ready.is_set() for c in consumers), what="consumers ready")
        # the customer on a line with a frozen box: the resolver measures, acts, measures again
        await sample_network.build_sample_network(graph_client, tenant, city="pune", customers=["Trace Customer"])
        await lab.inject(graph_client, tenant, kind=lab.FaultKind.ROUTER_FROZEN, customer="Trace Customer")
        with trace.get_tracer("test").start_as_current_span("POST /v1/tenants/{t}/chat") as request:
            turn = await gateway.say("Trace Customer", "my router is frozen", session="trace-1")
        tid = desk.ticket_id_for(turn.episode_id)

        async def fixed():
            try:
                return (await tickets.peek_ticket(graph_client, tenant, tid)).stage is TicketStage.FIXED
            except Exception:
                return False

        await eventually(fixed, what="ticket fixed")
    finally:
        for c in consumers:
            c.stop()
        await asyncio.gather(*tasks)

    spans = span_exporter.get_finished_spans()
    trace_id = request.get_span_context().trace_id

    under = span_inside(spans)

    def one(name, parent=None, attr=None):
        found = [s for s in spans if s.name == name and (parent is None or under(s, parent))
                 and (attr is None or all(s.attributes.get(k) == v for k, v in attr.items()))]
        assert found, f"no span {name} under {parent}"
        return found[0]

    gateway_publish = one("publish relay:stream:turns", request.get_span_context().span_id)
    intake_handle = one("handle turn_received", gateway_publish.context.span_id)
    intake_publish = one("publish relay:stream:tickets", intake_handle.context.span_id,
                         {"relay.id": tid, "relay.kind": "ticket_changed"})
    resolver_handle = one("handle ticket_changed", intake_publish.context.span_id)
    for s in (gateway_publish, intake_handle, intake_publish, resolver_handle):
        assert s.context.trace_id == trace_id
    assert intake_handle.attributes["messaging.consumer.group.name"] == "intake"
    assert resolver_handle.attributes["messaging.consumer.group.name"] == "resolver"
    # the resolver's own announcements carry the same trace on
    assert any(s.name == "publish relay:stream:tickets" and under(s, resolver_handle.context.span_id)
               and s.context.trace_id == trace_id for s in spans)
