"""The lab's simulated equipment: what an agent may do to a customer's line. Measuring returns a
reading derived from the truth with seeded noise; acting carries out an action, which repairs the
faults it is the right action for and leaves the others as they are. The lab records every
measurement and every action (in the truth graph), so the grader can tell a fix that was proven by
measuring again from one that was only claimed. Neither returns anything of the truth itself."""

from __future__ import annotations

import hashlib
import random
import uuid
from datetime import datetime

from relay_graph.runtime.times import ms_of
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import InvalidInput
from relay_graph.memory.models import aware, utcnow
from relay_graph.runtime.tenancy import validate_tenant
from relay_graph.lab import physics, truth
from relay_graph.lab.faults import restore
from relay_graph.lab.line import Context, context
from relay_graph.lab.models import REPAIRS, Action, ActionResult, FaultKind, Reading, Test

MAX_NOTE = 200

NOTES: dict[Action, str] = {
    Action.RESTART_ONT: "restart command sent to the home box; it takes about two minutes to come back",
    Action.REPROVISION: "the home box's configuration was pushed again; it restarts to apply it",
    Action.CHANGE_WIFI_CHANNEL: "the home router was told to move to the least crowded Wi-Fi channel",
    Action.DISPATCH_TECHNICIAN: "a technician visited the home and checked the box and the in-home fibre",
    Action.REPAIR_STREET_CABLE: "a field crew checked the street cabinet and the drop cable to the home",
    Action.REPAIR_UPLINK: "the transport team checked and restored the uplinks above the home's exchange",
    Action.ADD_HUB_CAPACITY: "the hub's backhaul capacity was raised",
    Action.RESET_BILLING: "a new payment was taken and any suspension lifted",
}


def _test(test: object) -> Test:
    try:
        return Test(test)
    except ValueError:
        raise InvalidInput(f"unknown test {test!r}; one of {', '.join(t.value for t in Test)}",
                           code="unknown_test") from None


def _action(action: object) -> Action:
    try:
        return Action(action)
    except ValueError:
        raise InvalidInput(f"unknown action {action!r}; one of {', '.join(a.value for a in Action)}",
                           code="unknown_action") from None


def _short(value: object, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value or len(value) > MAX_NOTE:
        raise InvalidInput(f"{what} must be a non-empty string of at most {MAX_NOTE} characters")
    return value


def _noise(tenant: str, uid: str, test: Test, seq: int) -> random.Random:
    return random.Random(hashlib.sha1(f"{tenant}|{uid}|{test.value}|{seq}".encode()).hexdigest())


def _hidden(ctx: Context) -> physics.Hidden:
    return physics.Hidden(kinds=frozenset(FaultKind(f["kind"]) for f in ctx.faults
                                          if FaultKind(f["kind"]) in physics.HIDDEN_KINDS))


async def _read(client: GraphClient, tenant: str, ctx: Context, test: Test, at: datetime) -> Reading:
    reading_id = "rd-" + uuid.uuid4().hex[:16]
    seq = await truth.record_measurement(client, tenant, {
        "measurement_id": reading_id, "customer_uid": ctx.uid, "customer": ctx.name, "test": test.value,
        "at_ms": ms_of(at)})
    values, noise = physics.reading(test, ctx.line, _hidden(ctx), at, physics.profile(tenant, ctx.uid),
                                    _noise(tenant, ctx.uid, test, seq))
    return Reading(reading_id=reading_id, test=test, customer=ctx.name, at=at, values=values, noise=noise)


async def measure(
    client: GraphClient, tenant: str, customer: str, test: Test | str, *, at: datetime | None = None
) -> Reading:
    """Run one test on the customer's line at `at` (the lab's clock; now by default)."""
    validate_tenant(tenant)
    test = _test(test)
    ctx = await context(client, tenant, customer)
    return await _read(client, tenant, ctx, test, aware(at) or utcnow())


async def measure_all(
    client: GraphClient, tenant: str, customer: str, *, at: datetime | None = None,
    tests: list[Test | str] | None = None,
) -> list[Reading]:
    """Every test (or the given ones) on one look at the line, in Test order."""
    validate_tenant(tenant)
    chosen = [_test(t) for t in (tests if tests is not None else list(Test))]
    ctx = await context(client, tenant, customer)
    at = aware(at) or utcnow()
    return [await _read(client, tenant, ctx, t, at) for t in chosen]


async def act(
    client: GraphClient,
    tenant: str,
    customer: str,
    action: Action | str,
    *,
    ticket: str | None = None,
    actor: str | None = None,
    at: datetime | None = None,
) -> ActionResult:
    """Carry out an action on the customer's line. It repairs every active fault striking the
    customer that it is the right action for (REPAIRS), and nothing else; whether it worked is for a
    new measurement to show. Network changes it brings back (a cabinet up again) are visible on the
    network graph like any other change."""
    validate_tenant(tenant)
    action = _action(action)
    ticket, actor = _short(ticket, "ticket"), _short(actor, "actor")
    at = aware(at) or utcnow()
    ctx = await context(client, tenant, customer)
    action_id = "act-" + uuid.uuid4().hex[:16]
    verdicts = [{"fault_id": f["fault_id"], "repairs": FaultKind(f["kind"]) in REPAIRS[action]} for f in ctx.faults]
    _, fixed = await truth.record_action(client, tenant, {
        "action_id": action_id, "customer_uid": ctx.uid, "customer": ctx.name, "action": action.value,
        "at_ms": ms_of(at), "ticket_id": ticket, "actor": actor}, verdicts)
    visible = []
    for f in ctx.faults:
        if f["fault_id"] in fixed:
            visible += await restore(client, tenant, f, at)
    return ActionResult(action_id=action_id, customer=ctx.name, action=action, at=at, note=NOTES[action],
                        visible=visible)
