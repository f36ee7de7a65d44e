"""A chat turn stage by stage, from the processes' own spans (bench.desk).

The bench runs an OTLP/HTTP receiver (`SpanCollector`) and starts the desk's processes with
`OTEL_EXPORTER_OTLP_ENDPOINT` pointing at it, so each process exports its spans here as it would to
a collector in production (relay_graph.runtime.agents.tracing). Each measured turn is sent with a
`traceparent` of its own, so every span the turn causes, in the gateway and in intake, carries the
turn's trace id. `turn_stages` reads one turn's spans as the path the customer waits on:

    gateway: store the turn        chat.store
    gateway: announce it           chat.announce
    stream: to intake              intake's handling span starts - the gateway's publish span ends
    intake: read the turn          intake.read_turn
    intake: reads and extraction   intake.read (intake.extract runs inside it, beside the reads)
    intake: facts and ticket       intake.write
    intake: answers                intake.talk
    intake: reply written          intake.reply
    intake: announce the reply     the call's flush after the reply (call.flush)
    stream: reply to the gateway   chat.wait ends - intake's publish of the reply ends
    gateway: read the reply        chat.read_reply
    gateway: the rest              the request's span - the four gateway stages (auth, idempotency,
                                   the reply's sources, the response)

Spans are wall-clock times from one machine's clock, so stages across processes subtract.
"""

from __future__ import annotations

import gzip
import math
import secrets
import statistics
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterable

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (ExportTraceServiceRequest,
                                                                      ExportTraceServiceResponse)
from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanProto

from relay_graph.runtime.streams import ReplyWritten, TurnReceived

STAGES = (
    ("store", "gateway: store the turn"),
    ("announce", "gateway: announce it"),
    ("to_intake", "stream: to intake"),
    ("read_turn", "intake: read the turn"),
    ("read", "intake: reads and extraction"),
    ("extract", "  of which extraction (beside the reads)"),
    ("write", "intake: facts and ticket"),
    ("talk", "intake: answers"),
    ("reply", "intake: reply written"),
    ("announce_reply", "intake: announce the reply"),
    ("to_gateway", "stream: reply to the gateway"),
    ("read_reply", "gateway: read the reply"),
    ("gateway_rest", "gateway: the rest (auth, sources, response)"),
    ("total", "the request, as the gateway served it"),
)
# not on the customer's path, shown apart
AFTER = (("embed", "intake: the vectors, after the reply"),)


@dataclass(frozen=True)
class SpanRecord:
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    service: str
    kind: int
    start_ns: int
    end_ns: int

    @property
    def ms(self) -> float:
        return (self.end_ns - self.start_ns) / 1e6


def new_traceparent() -> tuple[str, str]:
    """A W3C traceparent of a new, sampled trace, and its trace id."""
    trace_id = secrets.token_hex(16)
    return f"00-{trace_id}-{secrets.token_hex(8)}-01", trace_id


def _service(resource: Any) -> str:
    for kv in resource.attributes:
        if kv.key == "service.name":
            return kv.value.string_value
    return ""


def records(request: ExportTraceServiceRequest) -> Iterable[SpanRecord]:
    for rs in request.resource_spans:
        service = _service(rs.resource)
        for ss in rs.scope_spans:
            for s in ss.spans:
                yield SpanRecord(s.trace_id.hex(), s.span_id.hex(), s.parent_span_id.hex(), s.name, service, s.kind,
                                 s.start_time_unix_nano, s.end_time_unix_nano)


class SpanCollector:
    """An OTLP/HTTP (protobuf) trace receiver on 127.0.0.1: keeps the spans of the traces it was told
    to `want`, drops the rest (the resolvers' tickets in the throughput part)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wanted: set[str] = set()
        self.spans: dict[str, list[SpanRecord]] = {}
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                collector.add(records(request))
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="otlp-receiver", daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> "SpanCollector":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def want(self, trace_id: str) -> None:
        with self._lock:
            self._wanted.add(trace_id)

    def add(self, spans: Iterable[SpanRecord]) -> None:
        with self._lock:
            for s in spans:
                if s.trace_id in self._wanted:
                    self.spans.setdefault(s.trace_id, []).append(s)

    def of(self, trace_id: str) -> list[SpanRecord]:
        with self._lock:
            return list(self.spans.get(trace_id, ()))


def _first(spans: list[SpanRecord], name: str, service: str | None = None, after_ns: int = 0) -> SpanRecord | None:
    found = [s for s in spans if s.name == name and (service is None or service in s.service)
             and s.start_ns >= after_ns]
    return min(found, key=lambda s: s.start_ns) if found else None


def _publish(spans: list[SpanRecord], service: str, stream: str, within: SpanRecord | None) -> SpanRecord | None:
    """The publish of `stream` inside `within` (a flush publishes other kinds beside it: the facts'
    news, a ticket's change)."""
    if within is None:
        return None
    found = [s for s in spans if s.kind == SpanProto.SPAN_KIND_PRODUCER and service in s.service
             and s.name == f"publish {stream}" and within.start_ns <= s.start_ns <= within.end_ns]
    return min(found, key=lambda s: s.start_ns) if found else None


def turn_stages(spans: list[SpanRecord]) -> dict[str, float] | None:
    """One answered turn's stages in ms (see the module doc), or None when its trace lacks the
    request's span, the wait, the reply's read (a turn not answered in time has none) or intake's
    handling (not exported yet)."""
    server = next((s for s in spans if s.kind == SpanProto.SPAN_KIND_SERVER and "gateway" in s.service), None)
    wait = _first(spans, "chat.wait", "gateway")
    handle = next((s for s in sorted(spans, key=lambda s: s.start_ns)
                   if s.kind == SpanProto.SPAN_KIND_CONSUMER and "intake" in s.service), None)
    if server is None or wait is None or handle is None or _first(spans, "chat.read_reply", "gateway") is None:
        return None
    out: dict[str, float] = {}
    gateway_named = ("store", "chat.store"), ("announce", "chat.announce"), ("read_reply", "chat.read_reply")
    for key, name in gateway_named:
        span = _first(spans, name, "gateway")
        if span is not None:
            out[key] = span.ms
    announce = _first(spans, "chat.announce", "gateway")
    sent = _publish(spans, "gateway", TurnReceived.stream, announce) or announce
    if sent is not None:
        out["to_intake"] = (handle.start_ns - sent.end_ns) / 1e6
    for key in ("read_turn", "read", "extract", "write", "talk", "reply", "embed"):
        span = _first(spans, f"intake.{key}", "intake")
        if span is not None:
            out[key] = span.ms
    reply = _first(spans, "intake.reply", "intake")
    flush = _first(spans, "call.flush", "intake", after_ns=reply.end_ns if reply else handle.start_ns)
    if flush is not None:
        out["announce_reply"] = flush.ms
        replied = _publish(spans, "intake", ReplyWritten.stream, flush) or flush
        out["to_gateway"] = (wait.end_ns - replied.end_ns) / 1e6
    out["total"] = server.ms
    out["gateway_rest"] = server.ms - sum(out.get(k, 0.0) for k in ("store", "announce", "read_reply")) - wait.ms
    return out


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100] of a non-empty list: a value that was measured."""
    ordered = sorted(values)
    rank = min(len(ordered), max(1, math.ceil(p / 100 * len(ordered))))
    return ordered[rank - 1]


def summarise(turns: list[dict[str, float]]) -> dict[str, Any]:
    """p50 / p95 of each stage over the turns, and each stage's mean over the slowest 5% of turns
    (what the tail is made of)."""
    if not turns:
        return {"n": 0, "stages": {}}
    cut = percentile([t["total"] for t in turns], 95)
    tail = [t for t in turns if t["total"] >= cut]
    stages = {}
    for key, _ in STAGES + AFTER:
        values = [t[key] for t in turns if key in t]
        if not values:
            continue
        in_tail = [t[key] for t in tail if key in t]
        stages[key] = {"n": len(values), "p50_ms": round(percentile(values, 50), 2), "p95_ms": round(percentile(values, 95), 2),
                       "tail_mean_ms": round(statistics.fmean(in_tail), 2) if in_tail else None}
    return {"n": len(turns), "tail_n": len(tail), "stages": stages}

