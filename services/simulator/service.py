"""The simulator as a long-running service: wait for the gateway, get a tenant, then play round
after round of storylines (round r: `plan_storylines(seed, customers, days, round=r)`, new
customers each round) until SIGTERM; with `once`, one round and out.

The tenant: the simulator creates `settings.tenant` with the admin key. A tenant's key is shown
only once, so on a later start (the tenant exists) it needs that key: from RELAY_TENANT_KEY, or
from RELAY_KEY_FILE where it kept it. Without either it plays in a fresh tenant named after the
wanted one (`demo-3f9a1c`), and says so."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
from pathlib import Path

import httpx

from .client import ApiError, DeskClient, create_tenant, ready
from .clock import SimClock
from .faults import make_injector
from .player import Player, Stats
from .settings import SimulatorSettings
from .storylines import plan_storylines

log = logging.getLogger("services.simulator")


class SetupFailed(RuntimeError):
    pass


def _read_keys(path: Path | None) -> dict[str, str]:
    if path is None or not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _keep_key(path: Path | None, tenant: str, key: str) -> None:
    if path is None:
        return
    keys = {**_read_keys(path), tenant: key}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(keys, f, indent=2)
    tmp.replace(path)


async def tenant_access(http: httpx.AsyncClient, settings: SimulatorSettings) -> tuple[str, str]:
    """(tenant, its key), creating the tenant when needed."""
    if settings.tenant_key is not None:
        return settings.tenant, settings.tenant_key.get_secret_value()
    kept = _read_keys(settings.key_file).get(settings.tenant)
    if kept:
        return settings.tenant, kept
    if settings.admin_key is None:
        raise SetupFailed("no RELAY_ADMIN_KEY to create the simulator's tenant "
                          "(nor RELAY_TENANT_KEY for an existing one)")
    admin = settings.admin_key.get_secret_value()
    tenant = settings.tenant
    for attempt in range(5):
        try:
            key = await create_tenant(http, admin, tenant)
        except ApiError as exc:
            if exc.status != 409:
                raise SetupFailed(f"cannot create tenant {tenant!r}: {exc}") from None
            fresh = f"{settings.tenant[:50]}-{secrets.token_hex(3)}"
            log.warning("tenant %r exists and its key is not known here (set RELAY_TENANT_KEY or RELAY_KEY_FILE); "
                        "playing in %r instead", tenant, fresh)
            tenant = fresh
            continue
        _keep_key(settings.key_file, tenant, key)
        log.info("created tenant %r", tenant)
        return tenant, key
    raise SetupFailed("could not create a tenant to play in")


async def wait_for_gateway(http: httpx.AsyncClient, stop: asyncio.Event, timeout_s: float) -> bool:
    """True once /readyz answers 200; False if stopped first; SetupFailed after `timeout_s`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not stop.is_set():
        if await ready(http):
            return True
        if loop.time() > deadline:
            raise SetupFailed(f"the gateway at {http.base_url} was not ready within {timeout_s:g}s")
        try:
            await asyncio.wait_for(stop.wait(), timeout=1.0)
        except asyncio.TimeoutError:
            pass
    return False


class Live:
    """The round being played and the control it follows, shared by the rounds and the control
    loop: the console's control (services/gateway, usecases/simulator_control.py) when set, else
    the settings' speed, playing."""

    def __init__(self, settings: SimulatorSettings):
        self.speed, self.running, self.version = settings.speed, True, 0
        self.round, self.clock, self.player = 0, None, None
        self.between = True

    def new_clock(self) -> SimClock:
        self.clock = SimClock(self.speed, running=self.running)
        return self.clock

    def apply(self, control: dict | None) -> None:
        if not control or int(control.get("version", 0)) <= self.version:
            return
        self.version = int(control["version"])
        self.speed, self.running = float(control["speed"]), bool(control["running"])
        if self.clock is not None:
            self.clock.set_speed(self.speed)
            (self.clock.start if self.running else self.clock.stop)()
        log.info("control %d: %s at %g simulated hours per second", self.version,
                 "playing" if self.running else "stopped", self.speed)

    def status(self) -> dict:
        player, clock = self.player, self.clock
        stats = player.stats if player else Stats()
        doing = [{"customer": who, "what": what, "since_ms": int(since * 1000)}
                 for who, (what, since) in sorted((player.doing if player else {}).items())][:200]
        return {"state": "stopped" if not self.running else "between rounds" if self.between else "playing",
                "round": self.round, "sim_hours": round(clock.hours(), 3) if clock else 0.0, "speed": self.speed,
                "control_version": self.version, "doing": doing, "events": stats.events, "turns": stats.turns,
                "tickets": len(stats.tickets), "errors": stats.errors}


async def follow_control(desk: DeskClient, live: Live, stop: asyncio.Event, every_s: float) -> None:
    """About once every `every_s`: read the console's control, apply it, report what is going on.
    A gateway that does not answer is tried again next time; the customers play on meanwhile."""
    while not stop.is_set():
        try:
            live.apply(await desk.control())
            await desk.report(live.status())
        except (ApiError, httpx.HTTPError, KeyError, ValueError) as exc:
            log.debug("simulator control: %s", exc)
        try:
            await asyncio.wait_for(stop.wait(), timeout=every_s)
        except asyncio.TimeoutError:
            pass


async def serve(settings: SimulatorSettings, stop: asyncio.Event) -> list[Stats]:
    """Play until stopped (or one round with `settings.once`). Returns each round's stats."""
    rounds: list[Stats] = []
    async with httpx.AsyncClient(base_url=settings.gateway_url, timeout=30.0) as http:
        if not await wait_for_gateway(http, stop, settings.ready_timeout_s):
            return rounds
        tenant, key = await tenant_access(http, settings)
        desk = DeskClient(http, tenant, key)
        injector = make_injector(settings.faults, desk)
        log.info("playing in tenant %r: seed %s, %d customers, %g days per round, %g simulated hours per second, "
                 "faults: %s", tenant, settings.seed, settings.customers, settings.days, settings.speed, injector.name)
        live = Live(settings)
        control = asyncio.create_task(follow_control(desk, live, stop, settings.control_every_s))
        try:
            live.apply(await desk.control())
        except (ApiError, httpx.HTTPError, KeyError, ValueError) as exc:
            log.debug("simulator control: %s", exc)
        round_no = 0
        try:
            while not stop.is_set():
                events = plan_storylines(settings.seed, settings.customers, settings.days, round=round_no)
                live.round = round_no
                live.player = player = Player(desk, injector, live.new_clock(), stop=stop, wait_s=settings.chat_wait_s)
                live.between = False
                stats = await player.play(events)
                live.between = True
                rounds.append(stats)
                log.info("round %d %s: %s", round_no, "stopped" if stop.is_set() else "done", stats.summary())
                if settings.once:
                    break
                round_no += 1
        finally:
            control.cancel()
            await asyncio.gather(control, return_exceptions=True)
    return rounds
