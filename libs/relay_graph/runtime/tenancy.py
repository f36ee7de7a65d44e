"""Tenant ids and the graph names derived from them. A graph name is never built from anything
but a tenant id that passed `validate_tenant`."""

from __future__ import annotations

import re

from relay_graph.runtime.errors import InvalidTenant

TENANT_RE = re.compile(r"^[a-z0-9][a-z0-9-]{1,62}$")
GRAPH_PREFIX = "relay:"
# The fault lab's hidden truth lives under a prefix that agents' code never builds (see lab module).
TRUTH_PREFIX = "relay-truth:"
REGISTRY_GRAPH = "relay-admin"
# Every admin key (the tenant registry, key indexes, limits, customer sessions) starts with the
# hash tag of the registry graph, so on a cluster they share its slot: a script or MULTI over two
# of them (a tenant and its key's index entry) is never cross-slot.
ADMIN_PREFIX = "{" + REGISTRY_GRAPH + "}:"
# The tenant registry (a Redis hash: tenant -> sha256 of its key) the gateway writes on creation.
TENANTS_KEY = ADMIN_PREFIX + "tenants"


def validate_tenant(tenant: object) -> str:
    if not isinstance(tenant, str) or not TENANT_RE.fullmatch(tenant):
        raise InvalidTenant(
            "tenant must match ^[a-z0-9][a-z0-9-]{1,62}$ (lowercase letters, digits, dashes; 2-63 chars)"
        )
    return tenant


def graph_name(tenant: str) -> str:
    return GRAPH_PREFIX + validate_tenant(tenant)


# The tenant registry's reverse index (sha256 of the key -> tenant), the gateway's (auth.py).
KEY_INDEX = ADMIN_PREFIX + "tenant-keys"

# An owner (a tenant, or a tenant's agent) and its key's index entry go together; 0 when it had no key.
REMOVE_OWNER = """
local digest = redis.call('HGET', KEYS[1], ARGV[1])
if not digest then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], digest)
return 1
"""


async def tenant_registration(redis, tenant: str) -> str | None:
    """The tenant's registration (its key's digest) while it was created (POST /v1/tenants) and not
    deleted since; None otherwise. The graph client asks (cached, db.GraphClient.check_tenant)
    before it touches a graph: naming a tenant that does not exist must not make its graph appear,
    and a tenant created again under the name (another digest) starts from nothing."""
    value = await redis.hget(TENANTS_KEY, validate_tenant(tenant))
    return None if value is None else value.decode() if isinstance(value, bytes) else str(value)


async def tenant_registered(redis, tenant: str) -> bool:
    """Whether the tenant is registered (`tenant_registration`)."""
    return await tenant_registration(redis, tenant) is not None


async def unregister(redis, tenant: str) -> bool:
    """Takes the tenant out of the registry, with its key's index entry: its key authenticates
    nobody from now on, and no process makes its graph again. False if it was not registered."""
    return bool(int(await redis.eval(REMOVE_OWNER, 2, TENANTS_KEY, KEY_INDEX, validate_tenant(tenant))))


# Before the cluster topology the admin keys were `relay-admin:<name>`, without the hash tag.
LEGACY_ADMIN_PREFIX = REGISTRY_GRAPH + ":"
ADMIN_NAMES = ("tenants", "tenant-keys", "agents", "agent-keys", "tenant-limits", "site-tenants")


async def migrate_admin_keys(redis) -> list[str]:
    """Renames a data folder's admin keys of before (`relay-admin:<name>`) to their names now, once
    (RENAMENX: a name already in use is left alone); returns the names moved. One server only: a
    cluster is new, and has only the new names."""
    from relay_graph.runtime.cluster import is_cluster

    if is_cluster(redis):
        return []
    moved = []
    for name in ADMIN_NAMES:
        old = LEGACY_ADMIN_PREFIX + name
        if await redis.exists(old) and await redis.renamenx(old, ADMIN_PREFIX + name):
            moved.append(name)
    return moved


# One tenant's admin entries: (type, key, field or member, value), for moving a tenant
# (operations.move_tenant). The names are the gateway's (services/gateway/auth.py, limits.py,
# customer_sessions.py).
AdminEntry = tuple[str, str, str, bytes | None]


async def admin_entries(redis, tenant: str) -> list[AdminEntry]:
    """`redis` answers bytes (a client without decode_responses)."""
    validate_tenant(tenant)
    out: list[AdminEntry] = []
    digest = await redis.hget(TENANTS_KEY, tenant)
    if digest is not None:
        out += [("hash", TENANTS_KEY, tenant, digest), ("hash", ADMIN_PREFIX + "tenant-keys", digest.decode(), tenant.encode())]
    limits = await redis.hget(ADMIN_PREFIX + "tenant-limits", tenant)
    if limits is not None:
        out.append(("hash", ADMIN_PREFIX + "tenant-limits", tenant, limits))
    async for field, value in redis.hscan_iter(ADMIN_PREFIX + "agents", match=f"{tenant}/*"):
        owner = field.decode()
        out += [("hash", ADMIN_PREFIX + "agents", owner, value), ("hash", ADMIN_PREFIX + "agent-keys", value.decode(), field)]
    if await redis.sismember(ADMIN_PREFIX + "site-tenants", tenant):
        out.append(("set", ADMIN_PREFIX + "site-tenants", tenant, None))
    return out


async def restore_admin_entries(redis, entries: list[AdminEntry]) -> None:
    for kind, key, field, value in entries:
        if kind == "hash":
            await redis.hset(key, field, value)
        else:
            await redis.sadd(key, field)


async def remove_admin_entries(redis, entries: list[AdminEntry]) -> None:
    for kind, key, field, _ in entries:
        if kind == "hash":
            await redis.hdel(key, field)
        else:
            await redis.srem(key, field)
