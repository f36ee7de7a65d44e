"""The gateway's SERVER spans, and one trace from a customer's HTTP chat request through intake and
the resolver: the real app over ASGI, the real intake and resolver handlers under the real consumer
runtime (in this test's event loop), real FalkorDB and real streams, spans kept in memory. Plus
the middleware's pass-through of WebSockets and streamed bodies (pure ASGI, a fake inner app), and
the real gateway process exporting its spans over OTLP/HTTP to a collector stand-in."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from relay_graph.desk import agent_reads as desk

from relay_graph.desk.tickets import store as tickets
from relay_graph import lab
from relay_graph.runtime.agents.runner import bind
from relay_graph.runtime.embedded import free_port
from relay_graph.runtime.streams import StreamApp, stream_for
from relay_graph.desk.tickets.models import TicketStage
from services.gateway.tracing import TracingMiddleware
from services.intake.bootstrap import bootstrap as intake_bootstrap
from services.intake.handlers import HANDLERS as INTAKE
from services.intake.settings import IntakeSettings
from services.resolver.bootstrap import bootstrap as resolver_bootstrap
from services.resolver.handlers import HANDLERS as RESOLVER
from services.resolver.settings import ResolverSettings
from tests import sample_network, support

from .helpers import bearer

REPO = Path(__file__).resolve().parents[2]
CHAT_ROUTE = "/v1/tenants/{t}/chat"
GUARD_S = 60.0  # against hanging, not a speed assertion

FAST = support.FAST.model_copy(update={"min_idle_ms": 5_000, "reclaim_interval_ms": 500})  # nothing is reclaimed here


async def eventually(check, what: str, timeout: float = GUARD_S):
    return await support.eventually(check, timeout=timeout, interval=0.05, what=what)


def server_spans(exporter, route: str | None = None):
    return [s for s in exporter.get_finished_spans() if s.kind is SpanKind.SERVER
            and (route is None or s.attributes.get("http.route") == route)]


async def start_agent(name, boot, settings_cls, handlers, graph_settings, memory, stream_redis, run):
    """One replica of an agent on its own consumer group, created at the end of its streams so it
    sees only what this test publishes (other tests' entries stay where they are)."""
    group = f"{name}-trace-{run}"
    settings = settings_cls(falkordb_host=graph_settings.falkordb_host, falkordb_port=graph_settings.falkordb_port,
                            model_dir=graph_settings.model_dir, preload_model=False, streams=FAST)
    deps = await boot(settings, memory=memory, redis=stream_redis, consumer_name=f"{name}-trace-{run}")
    streams = {stream_for(kind) for kind in handlers}
    for stream in streams:
        await stream_redis.xgroup_create(stream, group, id="$", mkstream=True)
    consumer = StreamApp(stream_redis, group=group, handlers=bind(handlers, deps), settings=FAST,
                        name=deps.consumer_name)
    return consumer, group, streams


async def test_one_trace_from_the_chat_request_through_intake_to_the_resolver(
        client, auth, tenant, memory, graph_settings, graph_client, stream_redis, span_exporter, monkeypatch):
    monkeypatch.delenv("GROQ_API_KEY", raising=False)  # the rules extractor: no LLM in this path
    run = uuid.uuid4().hex[:6]
    agents = [
        await start_agent("intake", intake_bootstrap, IntakeSettings, INTAKE, graph_settings, memory,
                          stream_redis, run),
        await start_agent("resolver", resolver_bootstrap, ResolverSettings, RESOLVER, graph_settings, memory,
                          stream_redis, run),
    ]
    (intake, intake_group, _), (resolver, resolver_group, _) = agents
    tasks = [asyncio.create_task(c.run()) for c, _, _ in agents]
    span_exporter.clear()
    try:
        await asyncio.wait_for(asyncio.gather(intake.ready.wait(), resolver.ready.wait()), GUARD_S)
        # the customer on a line with a frozen box: the resolver measures, acts, measures again
        await sample_network.build_sample_network(graph_client, tenant, city="pune", customers=["Trace Customer"])
        await lab.inject(graph_client, tenant, kind=lab.FaultKind.ROUTER_FROZEN, customer="Trace Customer")
        r = await client.post(f"/v1/tenants/{tenant}/chat", params={"wait": 30}, headers=auth,
                              json={"customer": "Trace Customer", "text": "my router is frozen"})
        assert r.status_code == 200, r.text  # intake answered through the streams
        tid = desk.ticket_id_for(r.json()["episode_id"])
        assert r.json()["ticket"]["id"] == tid

        async def worked():
            try:
                return (await tickets.peek_ticket(graph_client, tenant, tid)).stage is TicketStage.FIXED
            except Exception:
                return False

        await eventually(worked, "the resolver fixing the ticket")
    finally:
        for c, _, _ in agents:
            c.stop()
        await asyncio.wait_for(asyncio.gather(*tasks), GUARD_S)
        for _, group, streams in agents:
            for stream in streams:
                await stream_redis.xgroup_destroy(stream, group)

    spans = span_exporter.get_finished_spans()

    under = support.span_inside(spans)

    def only(name, *, parent, **attrs):
        found = [s for s in spans if s.name == name and under(s, parent)
                 and all(s.attributes.get(k) == v for k, v in attrs.items())]
        assert found, f"no span {name!r} {attrs} under {parent:016x}: {[(s.name, dict(s.attributes)) for s in spans]}"
        return found

    [request] = [s for s in server_spans(span_exporter, CHAT_ROUTE) if s.attributes.get("relay.tenant") == tenant]
    assert request.name == f"POST {CHAT_ROUTE}"
    assert request.parent is None  # the client sent no traceparent: the request starts the trace
    assert dict(request.attributes) == {
        "http.request.method": "POST", "http.route": CHAT_ROUTE, "http.response.status_code": 200,
        "relay.tenant": tenant,
    }
    trace_id = request.context.trace_id

    [turn_publish] = only("publish relay:stream:turns", parent=request.context.span_id, **{"relay.tenant": tenant})
    [intake_handle] = only("handle turn_received", parent=turn_publish.context.span_id,
                           **{"messaging.consumer.group.name": intake_group})
    handoffs = only("publish relay:stream:tickets", parent=intake_handle.context.span_id,
                    **{"relay.id": tid, "relay.kind": "ticket_changed"})
    handled = [s for h in handoffs for s in only("handle ticket_changed", parent=h.context.span_id,
                                                 **{"messaging.consumer.group.name": resolver_group})]
    # the turn's stages, as bench.desk reads them: the gateway's around the request, intake's in its handling
    for name in ("chat.store", "chat.announce", "chat.wait", "chat.read_reply"):
        only(name, parent=request.context.span_id)
    for name in ("intake.read_turn", "intake.read", "intake.extract", "intake.write", "intake.reply"):
        only(name, parent=intake_handle.context.span_id)
    # the reply intake wrote rides the same trace back to the gateway
    only("publish relay:stream:replies", parent=intake_handle.context.span_id, **{"relay.tenant": tenant})
    for span in (turn_publish, intake_handle, *handoffs, *handled):
        assert span.context.trace_id == trace_id, span.name
    # what the resolver announces while working the ticket continues the same trace
    assert any(s.name == "publish relay:stream:tickets" and any(under(s, h.context.span_id) for h in handled)
               and s.context.trace_id == trace_id for s in spans)


async def test_a_clients_traceparent_is_continued(client, auth, tenant, span_exporter):
    span_exporter.clear()
    trace_id, parent_id = uuid.uuid4().hex, uuid.uuid4().hex[:16]
    r = await client.get(f"/v1/tenants/{tenant}/tickets",
                         headers={**auth, "traceparent": f"00-{trace_id}-{parent_id}-01"})
    assert r.status_code == 200, r.text
    [span] = server_spans(span_exporter)
    assert span.name == "GET /v1/tenants/{t}/tickets"
    assert span.context.trace_id == int(trace_id, 16)
    assert span.parent is not None and span.parent.span_id == int(parent_id, 16) and span.parent.is_remote
    assert span.attributes["relay.tenant"] == tenant and span.attributes["http.response.status_code"] == 200


async def test_span_names_and_attributes_never_carry_raw_paths_or_refused_tenants(client, auth, tenant, span_exporter):
    span_exporter.clear()
    r = await client.post(f"/v1/tenants/{tenant}/chat", headers=bearer("not-a-key"),
                          json={"customer": "Alice Rao", "text": "hello"})
    assert r.status_code == 401
    r = await client.get("/v1/nowhere/alice-rao")
    assert r.status_code == 404
    r = await client.get(f"/v1/tenants/{tenant}/tickets/T-NOPE", headers=auth)
    assert r.status_code == 404
    refused, unknown, missing = server_spans(span_exporter)

    assert refused.name == f"POST {CHAT_ROUTE}" and refused.attributes["http.response.status_code"] == 401
    assert "relay.tenant" not in refused.attributes  # the key was refused: the path's tenant is not trusted
    assert unknown.name == "GET" and "http.route" not in unknown.attributes  # no route: no path in the name
    assert unknown.attributes["http.response.status_code"] == 404
    assert missing.name == "GET /v1/tenants/{t}/tickets/{id}"
    assert missing.attributes["relay.tenant"] == tenant
    for span in (refused, unknown, missing):
        assert tenant not in span.name and "alice" not in span.name.lower() and "T-NOPE" not in span.name
        assert span.status.is_ok  # 4xx is the client's error, not the server's (HTTP conventions)


# ---------------------------------------------------------------- pure ASGI pass-through


async def test_websockets_pass_through_untouched(span_exporter):
    seen = {}

    async def inner(scope, receive, send):
        seen.update(scope=scope, receive=receive, send=send)

    async def receive():
        return {"type": "websocket.connect"}

    async def send(message):
        pass

    span_exporter.clear()
    scope = {"type": "websocket", "path": "/v1/tenants/acme/live", "headers": []}
    await TracingMiddleware(inner)(scope, receive, send)
    assert seen == {"scope": scope, "receive": receive, "send": send}  # the very same callables
    assert span_exporter.get_finished_spans() == ()


async def test_a_streamed_body_passes_through_chunk_by_chunk_inside_the_span(span_exporter):
    chunks = [b"data: 1\n\n", b"data: 2\n\n", b""]
    open_while_streaming = []

    async def inner(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        for i, chunk in enumerate(chunks):
            open_while_streaming.append(trace.get_current_span().is_recording())
            await send({"type": "http.response.body", "body": chunk, "more_body": i < len(chunks) - 1})

    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    span_exporter.clear()
    await TracingMiddleware(inner)({"type": "http", "method": "GET", "path": "/stream", "headers": []}, receive, send)
    assert [m.get("body") for m in sent[1:]] == chunks and sent[0]["status"] == 200
    assert open_while_streaming == [True, True, True]
    [span] = span_exporter.get_finished_spans()
    assert span.name == "GET" and span.attributes["http.response.status_code"] == 200


async def test_an_exception_marks_the_span_as_an_error_and_still_propagates(span_exporter):
    async def inner(scope, receive, send):
        raise RuntimeError("boom")

    span_exporter.clear()
    with pytest.raises(RuntimeError):
        await TracingMiddleware(inner)({"type": "http", "method": "BREW", "path": "/", "headers": []}, None, None)
    [span] = span_exporter.get_finished_spans()
    assert span.name == "HTTP"  # an unknown method is client text: not in the name
    assert span.attributes["http.request.method"] == "_OTHER"
    assert span.attributes["http.response.status_code"] == 500
    assert not span.status.is_ok and span.events[0].name == "exception"


# ---------------------------------------------------------------- the real process exports over OTLP


class _Collector(ThreadingHTTPServer):
    """Stands in for the OTel collector's OTLP/HTTP receiver: keeps each decoded export request."""

    def __init__(self):
        self.requests = []
        super().__init__(("127.0.0.1", 0), _CollectorHandler)


class _CollectorHandler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 - http.server's naming
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.server.requests.append((self.path, self.headers.get("content-type"), request))
        out = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


@pytest.mark.processes
def test_the_gateway_process_exports_its_spans_over_otlp(falkordb_server, tmp_path):
    collector = _Collector()
    threading.Thread(target=collector.serve_forever, daemon=True).start()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RELAY_", "OTEL_"))}
    env.update({
        "RELAY_FALKORDB_HOST": falkordb_server.host,
        "RELAY_FALKORDB_PORT": str(falkordb_server.port),
        "RELAY_PORT": str(port),
        "RELAY_LOG_LEVEL": "warning",
        "RELAY_READY_AGENTS": "[]",
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{collector.server_port}",
    })
    log_path = tmp_path / "gateway.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "services.gateway"], cwd=REPO, env=env,
                                stdout=log, stderr=subprocess.STDOUT)
    trace_id, parent_id = uuid.uuid4().hex, uuid.uuid4().hex[:16]
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + GUARD_S
        while True:
            assert proc.poll() is None, log_path.read_text()
            try:
                if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "gateway never became ready:\n" + log_path.read_text()
            time.sleep(0.1)
        r = httpx.get(f"{base}/healthz", headers={"traceparent": f"00-{trace_id}-{parent_id}-01"}, timeout=10)
        assert r.status_code == 200
        proc.send_signal(signal.SIGTERM)  # the provider's shutdown flushes what is queued
        assert proc.wait(timeout=30) == 0, log_path.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        collector.shutdown()

    assert collector.requests, "nothing reached the collector:\n" + log_path.read_text()
    assert {(path, ctype) for path, ctype, _ in collector.requests} == {("/v1/traces", "application/x-protobuf")}
    found = []
    for _, _, request in collector.requests:
        for rs in request.resource_spans:
            service = {a.key: a.value.string_value for a in rs.resource.attributes}.get("service.name")
            for ss in rs.scope_spans:
                found += [(service, s) for s in ss.spans if s.trace_id.hex() == trace_id]
    assert [(service, s.name, s.parent_span_id.hex()) for service, s in found] == [
        ("relay-gateway", "GET /healthz", parent_id)]
