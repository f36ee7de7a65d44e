"""A stand-in service process for the supervisor's tests (`python -m tests.relay_cli.stand_in`).

It is a real process: it gets signals, exits with codes and writes its log like a service does.
Given RELAY_PORT (as the table gives the gateway) it runs in `http` mode; otherwise STAND_IN_MODE
picks its behaviour:
  exit       exit at once with code 3
  serve      run until SIGTERM; record "<name> TERM" in STAND_IN_RECORD then exit 0
  stubborn   ignore SIGTERM (only SIGKILL ends it)
  http       like serve, and answer GET /healthz and /readyz with 200 on RELAY_PORT
             (/readyz answers 503 naming "agent" as missing when STAND_IN_READY=0)
"""

from __future__ import annotations

import http.server
import os
import signal
import sys
import threading
import time


def _record(line: str) -> None:
    path = os.environ.get("STAND_IN_RECORD")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


def main() -> int:
    mode = "http" if os.environ.get("RELAY_PORT") else os.environ.get("STAND_IN_MODE", "serve")
    service = os.environ.get("OTEL_SERVICE_NAME", "relay-stand-in").removeprefix("relay-")
    name = f"{service}-{os.environ.get('RELAY_REPLICA', '?')}"
    print(f"{name} starting in mode {mode}", flush=True)
    if mode == "exit":
        print(f"{name} failing on purpose", flush=True)
        return 3
    done = threading.Event()

    def on_term(_sig, _frame):
        if mode == "stubborn":
            print(f"{name} ignoring SIGTERM", flush=True)
            return
        _record(f"{name} TERM")
        done.set()

    signal.signal(signal.SIGTERM, on_term)
    _record(f"{name} START")
    if mode == "http":

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = b'{"status": "ok"}'
                status = 200 if self.path in ("/healthz", "/readyz") else 404
                if self.path == "/readyz" and os.environ.get("STAND_IN_READY") == "0":
                    body, status = b'{"missing": ["agent"]}', 503
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["RELAY_PORT"])), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
    while not done.is_set():
        time.sleep(0.05)
    return 0


if __name__ == "__main__":
    sys.exit(main())
