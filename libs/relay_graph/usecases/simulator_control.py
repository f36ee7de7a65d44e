"""The simulator's control and what it reports, kept in one key per tenant on the FalkorDB server
(`relay:simulator:<tenant>`, a hash): `control` is what the console asks (running or stopped,
simulated hours per second from 0.5 to 8), `status` what the simulator process last said it is
doing. Neither is memory: nothing an agent reads, and the graph never holds it.

The simulator reaches Relay only through the gateway's HTTP API, so it reads the control with
GET /v1/console/tenants/{t}/simulator (its tenant key may read its own tenant's console routes)
about once a second, applies it to its clock (stopped: the simulated clock stands still, no new
event is released; a turn already in flight finishes), and reports with PUT .../simulator/status.
A control never set means the simulator's own settings (RELAY_SPEED, playing). A status older
than STALE_MS is shown as not live: no simulator is reporting for that tenant."""

from __future__ import annotations

import json
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, Field

from relay_graph.runtime import tenant_data
from relay_graph.runtime.tenancy import validate_tenant
from relay_graph.runtime.times import now_ms
from relay_graph.usecases.context import Call

PREFIX = "relay:simulator:"
STALE_MS = 10_000
MIN_SPEED, MAX_SPEED = 0.5, 8.0  # as services/simulator/clock.py


def _not_bool(value: object) -> object:
    if isinstance(value, bool):  # JSON's true is not 1 here; 3.0 is 3, as JSON Schema's integer says
        raise ValueError("a number, not true or false")
    return value


Int = Annotated[int, BeforeValidator(_not_bool)]
Float = Annotated[float, BeforeValidator(_not_bool)]


def key(tenant: str) -> str:
    return PREFIX + validate_tenant(tenant)


tenant_data.declare(tenant_data.Key("simulator control", key))


class SimControl(BaseModel):
    running: bool = Field(description="false: the simulated customers stand still until started again")
    speed: float = Field(ge=MIN_SPEED, le=MAX_SPEED, description="simulated hours per wall second, 0.5 to 8")
    version: int = Field(default=0, description="moves on every change (0: never set: the simulator's own settings)")
    updated_at_ms: int | None = None
    by: str | None = Field(default=None, description="who set it (the key's agent, or `admin`)")


class Doing(BaseModel):
    customer: str
    what: str = Field(max_length=300, description="what the customer is doing, e.g. `say: my router ...`")
    since_ms: Int


class SimStatus(BaseModel):
    state: Literal["playing", "stopped", "between rounds", "starting"]
    round: Int = Field(ge=0)
    sim_hours: Float = Field(ge=0, description="simulated hours into the round")
    speed: Float = Field(ge=MIN_SPEED, le=MAX_SPEED)
    control_version: Int = Field(ge=0, description="the control it has applied")
    doing: list[Doing] = Field(default=[], max_length=200, description="what the customers are doing now")
    events: Int = Field(default=0, ge=0)
    turns: Int = Field(default=0, ge=0)
    tickets: Int = Field(default=0, ge=0)
    errors: Int = Field(default=0, ge=0)


class SimReport(SimStatus):
    reported_at_ms: int
    live: bool = Field(description="reported within the last ten seconds")


class Simulator(BaseModel):
    tenant: str
    control: SimControl | None = Field(description="null: never set (the simulator plays at its own settings)")
    status: SimReport | None = Field(description="null: no simulator ever reported for this tenant")


async def read(call: Call) -> Simulator:
    redis, tenant = call.client.redis, call.tenant
    raw = await redis.hgetall(key(tenant))
    got = {(k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
           for k, v in (raw or {}).items()}
    control = SimControl(**json.loads(got["control"])) if "control" in got else None
    status = None
    if "status" in got:
        s = json.loads(got["status"])
        status = SimReport(**s, live=now_ms() - s["reported_at_ms"] <= STALE_MS)
    return Simulator(tenant=tenant, control=control, status=status)


async def set_control(call: Call, *, running: bool, speed: float, by: str) -> SimControl:
    """The new control, its version one past the last (HINCRBY: two consoles never share one)."""
    redis, tenant = call.client.redis, call.tenant
    version = await redis.hincrby(key(tenant), "control_version", 1)
    control = SimControl(running=running, speed=speed, version=version, updated_at_ms=now_ms(), by=by)
    await redis.hset(key(tenant), "control", control.model_dump_json())
    return control


async def report(call: Call, status: SimStatus) -> SimReport:
    redis, tenant = call.client.redis, call.tenant
    at = now_ms()
    await redis.hset(key(tenant), "status", json.dumps({**status.model_dump(), "reported_at_ms": at}))
    return SimReport(**status.model_dump(), reported_at_ms=at, live=True)
