"""The run loop every desk agent process shares: build Deps, join the service's consumer group,
beat a heartbeat, stop cleanly on SIGTERM/SIGINT.

    run_agent("intake", IntakeSettings(), HANDLERS, bootstrap)

Stopping: the signal stops the consumer (the handler in flight finishes and is acknowledged),
then the heartbeat key is removed and the connections are closed; the process exits 0. A replica
killed without a chance to stop leaves its pending entries to another replica of the group (the
streams runtime reclaims them) and its heartbeat key to expire.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from typing import Any, Awaitable, Callable, Mapping

from ..heartbeat import heartbeat_loop
from ..streams import Consumer, consumer_name, stop_on_signals
from .deps import Deps, bind
from .settings import AgentSettings

log = logging.getLogger("relay_graph.agents")

Bootstrap = Callable[..., Awaitable[Deps]]
Handlers = Mapping[str, Callable[..., Awaitable[Any]]]


def make_consumer(service: str, deps: Deps, handlers: Handlers) -> Consumer:
    """The consumer of one replica: group = the service, name = deps.consumer_name."""
    return Consumer(
        deps.redis,
        group=service,
        handlers=bind(handlers, deps),
        settings=deps.settings.streams,
        name=deps.consumer_name or None,
    )


async def serve(service: str, settings: AgentSettings, handlers: Handlers, bootstrap: Bootstrap) -> None:
    """Run one replica until a signal (or cancellation) stops it."""
    name = consumer_name(service)
    # A signal while the model loads and the pool opens ends the process cleanly too.
    loop = asyncio.get_running_loop()
    early = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, early.set)
    building = asyncio.create_task(bootstrap(settings, consumer_name=name))
    stopped = asyncio.create_task(early.wait())
    await asyncio.wait({building, stopped}, return_when=asyncio.FIRST_COMPLETED)
    stopped.cancel()
    if not building.done():
        building.cancel()
        await asyncio.gather(building, return_exceptions=True)
        log.info("%s stopped while starting", service)
        return
    deps = building.result()
    if early.is_set():
        await deps.aclose()
        log.info("%s stopped while starting", service)
        return
    try:
        consumer = make_consumer(service, deps, handlers)
        stop = asyncio.Event()
        stop_on_signals(consumer)
        log.info(
            "%s replica %d started as consumer %s (FalkorDB %s:%d, kinds: %s)",
            service, settings.replica, consumer.name, settings.falkordb_host, settings.falkordb_port,
            ", ".join(sorted(handlers)),
        )
        running = asyncio.create_task(consumer.run())
        beat: asyncio.Task | None = None
        try:
            # Beat only once the groups exist: "alive" then also means "will see what is published".
            ready = asyncio.create_task(consumer.ready.wait())
            await asyncio.wait({running, ready}, return_when=asyncio.FIRST_COMPLETED)
            ready.cancel()
            if not running.done():
                beat = asyncio.create_task(
                    heartbeat_loop(deps.redis, service, consumer.name, stop,
                                   every_s=settings.heartbeat_every_s, ttl_s=settings.heartbeat_ttl_s)
                )
            await running
        finally:
            consumer.stop()
            stop.set()
            if not running.done():
                running.cancel()
            await asyncio.gather(running, *([beat] if beat else []), return_exceptions=True)
        log.info("%s consumer %s stopped (handled %d, failed %d)", service, consumer.name,
                 consumer.stats.handled, consumer.stats.failed)
    finally:
        await deps.aclose()


def run_agent(service: str, settings: AgentSettings, handlers: Handlers, bootstrap: Bootstrap) -> int:
    """The body of `python -m services.<name>`: logging, the loop, exit code 0 after a clean stop."""
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
        stream=sys.stderr,
    )
    from .tracing import setup_tracing

    provider = setup_tracing(settings, service)
    try:
        asyncio.run(serve(service, settings, handlers, bootstrap))
    finally:
        if provider is not None:
            provider.shutdown()  # flushes the spans still queued
    return 0
