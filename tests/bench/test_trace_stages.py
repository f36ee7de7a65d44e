"""A turn's stages from its spans (bench.trace_stages): which span is which stage, the gaps between
processes, and what is missing when a trace is not complete. Pure logic on made-up spans; the
receiver and the real processes' spans are exercised by tests/bench/test_desk_smoke.py."""

from __future__ import annotations

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanProto

from bench import trace_stages as ts

INTERNAL, SERVER, PRODUCER, CONSUMER = (SpanProto.SPAN_KIND_INTERNAL, SpanProto.SPAN_KIND_SERVER,
                                         SpanProto.SPAN_KIND_PRODUCER, SpanProto.SPAN_KIND_CONSUMER)
MS = 1_000_000


def span(name: str, service: str, start_ms: float, end_ms: float, kind: int = INTERNAL) -> ts.SpanRecord:
    return ts.SpanRecord("t1", name, "", name, f"relay-{service}", kind, int(start_ms * MS), int(end_ms * MS))


def a_turn() -> list[ts.SpanRecord]:
    """A turn of 60 ms as the gateway served it."""
    return [
        span("POST /v1/tenants/{t}/chat", "gateway", 0, 60, SERVER),
        span("chat.store", "gateway", 2, 12),
        span("chat.announce", "gateway", 12, 15),
        span("publish relay:stream:facts", "gateway", 12, 13, PRODUCER),  # a new customer's name, told first
        span("publish relay:stream:turns", "gateway", 13, 14, PRODUCER),
        span("handle turn_received", "intake", 17, 70, CONSUMER),
        span("intake.read_turn", "intake", 17, 19),
        span("intake.read", "intake", 19, 24),
        span("intake.extract", "intake", 19, 20),
        span("intake.write", "intake", 24, 34),
        span("intake.talk", "intake", 34, 35),
        span("intake.reply", "intake", 35, 40),
        span("call.flush", "intake", 40, 46),
        span("publish relay:stream:tickets", "intake", 41, 42, PRODUCER),  # the ticket's change goes first
        span("publish relay:stream:replies", "intake", 44, 45, PRODUCER),
        span("chat.wait", "gateway", 15, 47),
        span("chat.read_reply", "gateway", 47, 50),
        span("intake.embed", "intake", 46, 68),
        span("call.flush", "intake", 67, 68),  # the vectors' unit of work: not the reply's announcement
        span("handle ticket_changed", "resolver", 50, 90, CONSUMER),  # the same trace goes on elsewhere
    ]


def test_a_turn_reads_as_its_path():
    got = ts.turn_stages(a_turn())
    assert got == pytest.approx({
        "store": 10, "announce": 3, "to_intake": 3, "read_turn": 2, "read": 5, "extract": 1, "write": 10,
        "talk": 1, "reply": 5, "announce_reply": 6, "to_gateway": 2, "read_reply": 3, "embed": 22,
        "total": 60, "gateway_rest": 60 - 10 - 3 - 3 - 32,
    })


def test_a_trace_without_its_publish_spans_measures_from_the_stages_themselves():
    got = ts.turn_stages([s for s in a_turn() if s.kind != PRODUCER])
    assert got["to_intake"] == pytest.approx(2) and got["to_gateway"] == pytest.approx(1)


@pytest.mark.parametrize("missing", ["POST /v1/tenants/{t}/chat", "chat.wait", "chat.read_reply",
                                     "handle turn_received"])
def test_a_trace_not_complete_is_no_turn(missing):
    assert ts.turn_stages([s for s in a_turn() if s.name != missing]) is None


def test_the_summary_says_what_the_slowest_turns_are_made_of():
    turns = [{"total": float(t), "write": float(t) / 2} for t in range(1, 101)]
    got = ts.summarise(turns)
    assert got["n"] == 100 and got["tail_n"] == 6  # the turns at or above the 95th percentile
    assert got["stages"]["total"]["p50_ms"] == 50.0 and got["stages"]["total"]["p95_ms"] == 95.0
    assert got["stages"]["write"]["tail_mean_ms"] == pytest.approx(sum(range(95, 101)) / 6 / 2)
    assert ts.summarise([]) == {"n": 0, "stages": {}}


def test_the_receiver_keeps_only_the_traces_it_wants():
    collector = ts.SpanCollector()
    request = ExportTraceServiceRequest()
    rs = request.resource_spans.add()
    rs.resource.attributes.add(key="service.name").value.string_value = "relay-gateway"
    for trace_id in ("aa" * 16, "bb" * 16):
        s = rs.scope_spans.add().spans.add()
        s.trace_id, s.span_id, s.name = bytes.fromhex(trace_id), b"\x01" * 8, "chat.store"
        s.start_time_unix_nano, s.end_time_unix_nano = 1 * MS, 3 * MS
    collector.want("aa" * 16)
    collector.add(ts.records(request))
    [kept] = collector.of("aa" * 16)
    assert (kept.service, kept.name, kept.ms) == ("relay-gateway", "chat.store", 2.0)
    assert collector.of("bb" * 16) == []
