"""A stand-in for the OpenTelemetry collector in docker-compose.yml's `otel` profile.

It reads the collector config the compose file mounts, listens where `receivers.otlp.protocols.http`
says (OTLP/HTTP, protobuf or JSON, on /v1/traces, /v1/metrics and /v1/logs) and prints one line per
export, like the `debug` exporter at `verbosity: basic`, plus each span's service and name. No gRPC
receiver, no processors, no other exporters: Relay's services export over OTLP/HTTP only.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

KINDS = {
    "/v1/traces": ("traces", trace_service_pb2.ExportTraceServiceRequest, trace_service_pb2.ExportTraceServiceResponse),
    "/v1/metrics": ("metrics", metrics_service_pb2.ExportMetricsServiceRequest,
                    metrics_service_pb2.ExportMetricsServiceResponse),
    "/v1/logs": ("logs", logs_service_pb2.ExportLogsServiceRequest, logs_service_pb2.ExportLogsServiceResponse),
}


def http_endpoint(config: dict) -> tuple[str, int]:
    endpoint = config["receivers"]["otlp"]["protocols"]["http"].get("endpoint") or "0.0.0.0:4318"
    host, _, port = endpoint.rpartition(":")
    return host or "0.0.0.0", int(port)


def service_name(resource) -> str:
    for attr in resource.attributes:
        if attr.key == "service.name":
            return attr.value.string_value
    return "?"


def summary(kind: str, request) -> list[str]:
    if kind == "traces":
        spans = [(service_name(rs.resource), span.name) for rs in request.resource_spans
                 for ss in rs.scope_spans for span in ss.spans]
        head = {"data_type": kind, "resource spans": len(request.resource_spans), "spans": len(spans)}
        return [f"TracesExporter {json.dumps(head)}"] + [f"span service.name={s} name={n}" for s, n in spans]
    items = request.resource_metrics if kind == "metrics" else request.resource_logs
    return [f"{kind.capitalize()}Exporter {json.dumps({'data_type': kind, 'resources': len(items)})}"]


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 - http.server's name
        route = KINDS.get(self.path)
        if route is None:
            self.send_error(404)
            return
        kind, request_type, response_type = route
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        request = request_type()
        try:
            if self.headers.get("Content-Type", "").startswith("application/json"):
                json_format.Parse(body, request)
            else:
                request.ParseFromString(body)
        except Exception as exc:  # a malformed export is the sender's fault: 400, as the collector does
            self.send_error(400, str(exc))
            return
        print("\n".join(summary(kind, request)), flush=True)
        out = response_type().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):  # one line per export is printed above; no access log
        pass


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True)
    args = parser.parse_args(argv)
    with open(args.config) as f:
        config = yaml.safe_load(f)
    server = ThreadingHTTPServer(http_endpoint(config), Handler)
    # docker stop sends SIGTERM: stop serving and exit 0 within the grace period
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"stand-in collector: OTLP/HTTP on {server.server_address[0]}:{server.server_address[1]}", flush=True)
    server.serve_forever()
    sys.exit(0)


if __name__ == "__main__":
    main()
