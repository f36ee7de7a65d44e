"""`python -m services.gateway`: the gateway under uvicorn, settings from RELAY_* variables.

uvicorn drains connections (up to RELAY_SHUTDOWN_TIMEOUT_SECONDS) and runs the lifespan's end
(closing the pool) on SIGTERM/SIGINT, then re-raises the signal; by then the shutdown was clean, so
the process exits 0. Whatever its connections are doing, the process is gone within
RELAY_STOP_WITHIN_S of the signal (relay_graph.runtime.shutdown)."""

from __future__ import annotations

import logging
import signal
import sys

import uvicorn

from relay_graph.runtime import shutdown

from .app import create_app
from .settings import GatewaySettings
from .tracing import setup_gateway_tracing


def _exit_clean(signum: int, frame: object) -> None:
    sys.exit(0)


class _Server(uvicorn.Server):
    stop_within_s = 5.0

    def handle_exit(self, sig: int, frame) -> None:  # type: ignore[no-untyped-def]
        shutdown.arm(self.stop_within_s - 1.0)
        super().handle_exit(sig, frame)


def main() -> None:
    settings = GatewaySettings()
    logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s")
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _exit_clean)
    provider = setup_gateway_tracing(settings)
    try:
        server = _Server(uvicorn.Config(
            create_app(settings, ready_agents=settings.ready_agents),
            host=settings.host,
            port=settings.port,
            log_level=settings.log_level,
            lifespan="on",
            proxy_headers=True,
            forwarded_allow_ips=settings.trusted_proxies,
            timeout_graceful_shutdown=settings.shutdown_timeout_seconds,
        ))
        server.stop_within_s = settings.stop_within_s
        shutdown.run(server.serve())
    finally:
        if provider is not None:
            provider.shutdown()  # flushes the spans still queued (also on the SystemExit of a signal)
        shutdown.leave(0)


if __name__ == "__main__":
    main()
