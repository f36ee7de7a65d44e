"""The run loop every desk agent process shares: build the process context (usecases.context.Deps), run the service's FastStream app
(its consumer group), beat a heartbeat, run the outbox relay (relay_graph.runtime.outbox), stop on
SIGTERM/SIGINT within `stop_within_s`.

    run_agent("intake", IntakeSettings(), HANDLERS, bootstrap)

Stopping: the signal stops the app (the entry in flight finishes and is acknowledged, for up to
`streams.graceful_timeout_s`), then the heartbeat key is removed and the connections are closed;
the process exits 0. Every step is bounded, so a dead FalkorDB (a handler stuck in a call, a
close that never gets an answer) cannot keep the process past its grace period: what is not
done then is cancelled, and its entry stays pending for another replica. A replica killed
without a chance to stop leaves its pending entries to another replica of the group (its
reclaim subscriber) and its heartbeat key to expire.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import signal
import sys
from typing import Any, Awaitable, Callable, Mapping, Protocol

from relay_graph.runtime import metrics, shutdown
from relay_graph.runtime.heartbeat import heartbeat_loop
from relay_graph.runtime.metrics.snapshot import refresh_loop
from relay_graph.runtime.streams import StreamApp, consumer_name
from relay_graph.runtime.agents.settings import AgentSettings

log = logging.getLogger("relay_graph.runtime.agents")

class Process(Protocol):
    """What the run loop needs of a process's context (the one there is: usecases.context.Deps)."""

    redis: Any
    settings: AgentSettings
    consumer_name: str
    outbox: Any

    async def relay_loop(self, stop: asyncio.Event, *, every_s: float = ..., older_than_s: float = ...) -> None: ...

    async def aclose(self) -> None: ...


def bind(handlers: Mapping[str, Callable[..., Awaitable[Any]]], deps: Any) -> dict[str, Callable[..., Awaitable[Any]]]:
    """HANDLERS (kind -> handler(deps, notification[, delivery])) as the consumer runtime wants
    them: handler(notification[, delivery]). functools.partial keeps the signature the runtime
    inspects to decide whether to pass the delivery."""
    return {kind: functools.partial(fn, deps) for kind, fn in handlers.items()}


Bootstrap = Callable[..., Awaitable[Process]]
Handlers = Mapping[str, Callable[..., Awaitable[Any]]]
# Work a service does on its own time beside its handlers (netops: retention), until the event is set.
Periodic = Callable[[Process, asyncio.Event], Awaitable[None]]


def make_app(service: str, deps: Process, handlers: Handlers, *, handle_signals: bool = False,
             delivery: bool = True) -> StreamApp:
    """The FastStream app of one replica: group = the service, consumer = deps.consumer_name,
    one subscriber per kind in `handlers` calling the plain handler with `deps`; a notification
    naming a tenant that was never created, or was deleted, is dropped before any graph is touched
    (the graph client's registration check, cached for `tenant_check_s`).
    delivery=False: for TestRedisBroker (see StreamApp)."""
    async def registered(tenant: str) -> bool:
        return await deps.client.is_registered(tenant)

    return StreamApp(
        deps.redis,
        group=service,
        handlers=bind(handlers, deps),
        settings=deps.settings.streams,
        name=deps.consumer_name or None,
        handle_signals=handle_signals,
        delivery=delivery,
        tenant_exists=registered,
    )


async def _bounded(what: str, aw: Awaitable[Any], seconds: float) -> None:
    task = asyncio.ensure_future(aw)
    done, _ = await asyncio.wait({task}, timeout=max(0.1, seconds))
    if not done:
        log.warning("%s did not finish within %.1fs; abandoning it", what, seconds)
        task.cancel()
        await asyncio.wait({task}, timeout=0.5)
    elif not task.cancelled() and task.exception() is not None:
        log.warning("%s failed: %r", what, task.exception())


async def serve(service: str, settings: AgentSettings, handlers: Handlers, bootstrap: Bootstrap,
                periodic: Periodic | None = None) -> None:
    """Run one replica until a signal (or cancellation) stops it."""
    name = consumer_name(service)
    loop = asyncio.get_running_loop()
    # A signal while the model loads and the pool opens ends the process cleanly too.
    early = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, early.set)
    building = asyncio.create_task(bootstrap(settings, consumer_name=name))
    stopped = asyncio.create_task(early.wait())
    await asyncio.wait({building, stopped}, return_when=asyncio.FIRST_COMPLETED)
    stopped.cancel()
    if not building.done():
        shutdown.arm(settings.stop_within_s - 1.0)
        building.cancel()
        await asyncio.wait({building}, timeout=1.0)
        log.info("%s stopped while starting", service)
        return
    deps = building.result()
    if early.is_set():
        await _bounded("closing", deps.aclose(), 1.0)
        log.info("%s stopped while starting", service)
        return
    app = make_app(service, deps, handlers, handle_signals=True)
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, app.stop)  # the app installs the same again after FastStream's
    log.info(
        "%s replica %d started as consumer %s (FalkorDB %s:%d, kinds: %s)",
        service, settings.replica, app.name, settings.falkordb_host, settings.falkordb_port,
        ", ".join(sorted(handlers)),
    )
    stop = asyncio.Event()
    running = asyncio.create_task(app.run())
    stopping = asyncio.create_task(app.stopping_event.wait())
    beat: asyncio.Task | None = None
    chores = asyncio.create_task(periodic(deps, stop)) if periodic is not None else None
    relay = asyncio.create_task(deps.relay_loop(stop, every_s=settings.outbox_every_s))
    # GET /metrics on its own port (a thread of prometheus_client's); this group's stream state in it.
    try:
        exporter = metrics.serve(settings.metrics_port, settings.metrics_host)
    except OSError as exc:  # the port taken: the agent still works, without its /metrics
        log.error("%s cannot serve metrics on %s:%d: %s", service, settings.metrics_host, settings.metrics_port, exc)
        exporter = None
    readings = asyncio.create_task(refresh_loop(deps.redis, stop, every_s=settings.metrics_every_s,
                                                streams=app.streams, groups={service}, server=False))
    if exporter is not None:
        log.info("%s serves metrics on http://%s:%d/metrics", service, settings.metrics_host, exporter.port)
    try:
        # Beat only once the groups exist: "alive" then also means "will see what is published".
        ready = asyncio.create_task(app.ready.wait())
        await asyncio.wait({running, ready, stopping}, return_when=asyncio.FIRST_COMPLETED)
        ready.cancel()
        if not running.done() and not stopping.done():
            beat = asyncio.create_task(
                heartbeat_loop(deps.redis, service, app.name, stop,
                               every_s=settings.heartbeat_every_s, ttl_s=settings.heartbeat_ttl_s)
            )
        await asyncio.wait({running, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        app.stop()
        stop.set()
        shutdown.arm(settings.stop_within_s - 1.0)  # threads stuck on a dead server cannot hold the exit
        deadline = loop.time() + settings.stop_within_s - 0.5
        await _bounded(f"{service}'s app stopping", running, deadline - loop.time() - 1.0)
        if beat is not None:
            await _bounded("the heartbeat", beat, min(0.5, deadline - loop.time() - 0.5))
        if chores is not None:
            await _bounded(f"{service}'s periodic work", chores, min(1.0, deadline - loop.time() - 0.5))
        await _bounded("the outbox relay", relay, min(0.5, deadline - loop.time() - 0.5))
        await _bounded("the metrics reader", readings, min(0.5, deadline - loop.time() - 0.5))
        if exporter is not None:
            await _bounded("the metrics server", asyncio.to_thread(exporter.close), 1.0)
        await _bounded("closing the connections", deps.aclose(), deadline - loop.time() - 0.2)
    log.info("%s consumer %s stopped (handled %d, failed %d)", service, app.name,
             app.stats.handled, app.stats.failed)


def run_agent(service: str, settings: AgentSettings, handlers: Handlers, bootstrap: Bootstrap,
              periodic: Periodic | None = None) -> int:
    """The body of `python -m services.<name>`: logging, the loop, exit code 0 after a clean stop."""
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
        stream=sys.stderr,
    )
    from relay_graph.runtime.agents.tracing import setup_tracing

    provider = setup_tracing(settings, service)
    try:
        shutdown.run(serve(service, settings, handlers, bootstrap, periodic))
    finally:
        if provider is not None:
            provider.shutdown()  # flushes the spans still queued
    shutdown.leave(0)
    return 0
