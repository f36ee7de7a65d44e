"""The regional desks of one operator: tenants created with the same `operator` (POST /v1/tenants),
each for its region. A customer placed in another desk's region is moved there (case_move) by the
desk they talk to, which needs to know who that desk is: this registry, kept in Redis beside the
tenant registry (`relay:operator:<operator>` maps region -> tenant; `relay:desk-operator` maps
tenant -> operator). A tenant of no operator has no sibling desks."""

from __future__ import annotations

import re

from relay_graph.desk.catalogue.regions import region_spec
from relay_graph.runtime import tenant_data
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import AlreadyExists, InvalidInput
from relay_graph.runtime.tenancy import validate_tenant

OPERATOR_RE = re.compile(r"^[a-z0-9][a-z0-9-]{1,62}$")
DESK_OPERATOR = "relay:desk-operator"


def _operator_key(operator: str) -> str:
    return f"relay:operator:{operator}"


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


async def _forget_desk(redis, tenant: str) -> list[str]:
    """A deleted tenant is no operator's desk: the regions that name it, then its operator."""
    op = await redis.hget(DESK_OPERATOR, tenant)
    if op is None:
        return []
    key = _operator_key(_text(op))
    held = {_text(region): _text(t) for region, t in (await redis.hgetall(key)).items()}
    gone = [f"{key}#{region}" for region, t in sorted(held.items()) if t == tenant and await redis.hdel(key, region)]
    await redis.hdel(DESK_OPERATOR, tenant)
    return gone + [f"{DESK_OPERATOR}#{tenant}"]


tenant_data.declare(tenant_data.Custom("regional desk", _forget_desk))


def check_operator(operator: object) -> str:
    if not isinstance(operator, str) or not OPERATOR_RE.fullmatch(operator):
        raise InvalidInput(f"operator must match {OPERATOR_RE.pattern}")
    return operator


async def register_desk(client: GraphClient, tenant: str, operator: str, region: str) -> None:
    """`tenant` is `operator`'s desk for `region`. One desk per region and operator: another tenant
    for a region already taken is refused (AlreadyExists `desk_taken`), a repeat changes nothing."""
    tenant, operator, region = validate_tenant(tenant), check_operator(operator), region_spec(region).code
    if not await client.redis.hsetnx(_operator_key(operator), region, tenant):
        held = await client.redis.hget(_operator_key(operator), region)
        held = held.decode() if isinstance(held, bytes) else held
        if held != tenant:
            raise AlreadyExists(f"operator {operator!r} has a {region} desk already ({held!r})", code="desk_taken")
    await client.redis.hset(DESK_OPERATOR, tenant, operator)


async def region_desk(client: GraphClient, operator: str, region: str) -> str | None:
    """The operator's desk for `region`, if any."""
    held = await client.redis.hget(_operator_key(check_operator(operator)), region_spec(region).code)
    return held.decode() if isinstance(held, bytes) else held


async def desk_for(client: GraphClient, tenant: str, region: str) -> str | None:
    """The tenant that is `tenant`'s operator's desk for `region`, if it has one (never `tenant`)."""
    op = await client.redis.hget(DESK_OPERATOR, validate_tenant(tenant))
    if op is None:
        return None
    op = op.decode() if isinstance(op, bytes) else op
    other = await client.redis.hget(_operator_key(op), region_spec(region).code)
    other = other.decode() if isinstance(other, bytes) else other
    return other if other and other != tenant else None


__all__ = ["OPERATOR_RE", "check_operator", "desk_for", "region_desk", "register_desk"]
