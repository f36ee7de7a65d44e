"""One trace runs from the publisher's span through the handler's span."""

from __future__ import annotations

import pytest
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode

from relay_graph.runtime.streams import StreamApp, Publisher, TicketChanged, TurnReceived

from .conftest import FAST, STEADY, eventually, running


async def test_publisher_and_handler_spans_share_one_trace(redis, group, tenant, span_exporter):
    span_exporter.clear()
    inside = []

    async def handler(n):
        inside.append(trace.get_current_span().get_span_context())

    consumer = StreamApp(redis, group=group, handlers={TurnReceived: handler}, settings=STEADY)
    async with running(consumer):
        with trace.get_tracer("test").start_as_current_span("POST /v1/tenants/{t}/chat") as request:
            await Publisher(redis).publish(
                TurnReceived(tenant=tenant, episode_id="e1", seq=1, session="s1", customer="c1")
            )
        await eventually(lambda: inside, what="handled")

    spans = span_exporter.get_finished_spans()
    publish = [s for s in spans if s.name == "publish relay:stream:turns"]
    handle = [s for s in spans if s.name == "handle turn_received"]
    assert len(publish) == 1 and len(handle) == 1
    publish, handle = publish[0], handle[0]
    trace_id = request.get_span_context().trace_id
    assert publish.context.trace_id == handle.context.trace_id == trace_id
    assert publish.parent.span_id == request.get_span_context().span_id
    assert handle.parent.span_id == publish.context.span_id
    assert inside[0].span_id == handle.context.span_id  # the handler runs inside that span
    assert publish.kind is SpanKind.PRODUCER and handle.kind is SpanKind.CONSUMER
    assert handle.attributes["messaging.consumer.group.name"] == group
    assert handle.attributes["relay.tenant"] == tenant


async def test_a_failing_handler_marks_its_span(redis, group, tenant, span_exporter):
    span_exporter.clear()

    async def broken(n):
        raise RuntimeError("boom")

    consumer = StreamApp(redis, group=group, handlers={TicketChanged: broken}, settings=FAST)
    async with running(consumer):
        await Publisher(redis).publish(
            TicketChanged(tenant=tenant, ticket_id="T-1", version=1, change="opened", actor="test")
        )
        await eventually(lambda: consumer.stats.failed >= 1, what="failure")
    handle = next(s for s in span_exporter.get_finished_spans() if s.name == "handle ticket_changed")
    assert handle.status.status_code is StatusCode.ERROR
    assert any(e.name == "exception" and "boom" in e.attributes["exception.message"] for e in handle.events)


async def test_published_many_at_once_each_entry_is_handled_in_the_publishers_trace(redis, group, tenant,
                                                                                     span_exporter):
    from relay_graph.runtime.streams import FactChanged
    from relay_graph.runtime.streams.notifications import InvalidNotification

    span_exporter.clear()
    seen: dict[str, int] = {}

    async def handler(n):
        seen[n.id] = trace.get_current_span().get_span_context().trace_id

    consumer = StreamApp(redis, group=group, handlers={FactChanged: handler}, settings=STEADY)
    facts = [FactChanged(tenant=tenant, id=f"f{i}", version=0, change="created", actor="api") for i in range(50)]
    async with running(consumer):
        with trace.get_tracer("test").start_as_current_span("POST /v1/tenants/{t}/facts/batch") as request:
            ids = await Publisher(redis).publish_many(facts)
        await eventually(lambda: len(seen) == 50, what="all handled")
    assert len(ids) == 50 and ids == sorted(ids, key=lambda i: tuple(map(int, i.split("-"))))
    assert set(seen) == {f.id for f in facts}
    assert set(seen.values()) == {request.get_span_context().trace_id}
    [publish] = [s for s in span_exporter.get_finished_spans() if s.name == "publish relay:stream:facts"]
    assert publish.attributes["messaging.batch.message_count"] == 50
    with pytest.raises(InvalidNotification):
        await Publisher(redis).publish_many([facts[0], TicketChanged(tenant=tenant, ticket_id="T-1", version=1,
                                                                     change="opened", actor="test")])
    assert await Publisher(redis).publish_many([]) == []
