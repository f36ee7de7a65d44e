"""`python -m services.gateway`: the gateway under uvicorn, settings from RELAY_* variables.

uvicorn drains connections and runs the lifespan's end (closing the pool) on SIGTERM/SIGINT, then
re-raises the signal; by then the shutdown was clean, so the process exits 0."""

from __future__ import annotations

import logging
import signal
import sys

import uvicorn

from .app import create_app
from .settings import GatewaySettings
from .tracing import setup_gateway_tracing


def _exit_clean(signum: int, frame: object) -> None:
    sys.exit(0)


def main() -> None:
    settings = GatewaySettings()
    logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s")
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _exit_clean)
    provider = setup_gateway_tracing(settings)
    try:
        uvicorn.run(
            create_app(settings, ready_agents=settings.ready_agents),
            host=settings.host,
            port=settings.port,
            log_level=settings.log_level,
            lifespan="on",
            timeout_graceful_shutdown=settings.shutdown_timeout_seconds,
        )
    finally:
        if provider is not None:
            provider.shutdown()  # flushes the spans still queued (also on the SystemExit of a signal)


if __name__ == "__main__":
    main()
