"""`python -m services.simulator`: simulated customers playing against Relay's public API.

    python -m services.simulator                    # round after round until SIGTERM / Ctrl-C
    python -m services.simulator --once --speed 8   # one round as fast as allowed, then exit

Command-line options override the RELAY_* settings (services/simulator/settings.py). Exit code 0
after a clean stop or a finished `--once` round; 1 when it cannot start (no gateway, no tenant)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from pydantic import ValidationError

from .service import SetupFailed, serve
from .settings import SimulatorSettings

log = logging.getLogger("services.simulator")


def parse_args(argv: list[str] | None) -> dict:
    p = argparse.ArgumentParser(prog="python -m services.simulator", description=__doc__.split("\n\n")[0])
    p.add_argument("--once", action="store_true", default=None, help="play one round of storylines, then exit")
    p.add_argument("--speed", type=float, help="simulated hours per second, 0.5 to 8 (RELAY_SPEED, default 1)")
    p.add_argument("--seed", type=int, help="the storylines' seed (RELAY_SEED, default 7)")
    p.add_argument("--customers", type=int, help="customers per round (RELAY_CUSTOMERS, default 12)")
    p.add_argument("--days", type=float, help="simulated days per round (RELAY_DAYS, default 14)")
    p.add_argument("--tenant", help="the tenant to play in (RELAY_TENANT, default demo)")
    p.add_argument("--faults", choices=("network", "words"), help="how faults are planted (RELAY_FAULTS)")
    p.add_argument("--gateway-url", dest="gateway_url", help="(RELAY_GATEWAY_URL)")
    args = p.parse_args(argv)
    return {k: v for k, v in vars(args).items() if v is not None}


async def amain(settings: SimulatorSettings) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    exporter = _serve_metrics(settings)
    beat = None
    if settings.heartbeat:
        from .liveness import beat_until

        beat = asyncio.create_task(beat_until(settings, stop))
    try:
        await serve(settings, stop)
        return 0
    except SetupFailed as exc:
        log.error("%s", exc)
        return 1
    finally:
        stop.set()
        if beat is not None:
            await asyncio.gather(beat, return_exceptions=True)
        if exporter is not None:
            await asyncio.to_thread(exporter.close)


def _serve_metrics(settings: SimulatorSettings):
    from relay_graph.runtime.metrics import serve as serve_metrics

    try:
        exporter = serve_metrics(settings.metrics_port, settings.metrics_host)
    except OSError as exc:  # the port taken: play on without /metrics
        log.error("cannot serve metrics on %s:%d: %s", settings.metrics_host, settings.metrics_port, exc)
        return None
    if exporter is not None:
        log.info("serving metrics on http://%s:%d/metrics", settings.metrics_host, exporter.port)
    return exporter


def main(argv: list[str] | None = None) -> int:
    try:
        settings = SimulatorSettings(**parse_args(argv))
    except ValidationError as exc:
        print(f"simulator: bad settings:\n{exc}", file=sys.stderr)
        return 2
    logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s",
                        stream=sys.stderr)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    return asyncio.run(amain(settings))


if __name__ == "__main__":
    sys.exit(main())
