"""Tenant and agent API keys, and who a bearer token is.

A tenant key is shown once, at creation; the server keeps only its SHA-256, in a Redis hash on the
FalkorDB server (tenant -> hash) with a reverse index (hash -> tenant). Both live under fixed
constant keys whose names no tenant id can produce (graph names are `relay:<tenant>`).

An agent key is the same for one agent of one tenant (`POST /v1/tenants/{t}/agents`, with the
tenant's key): `tenant/agent -> hash` and `hash -> tenant/agent`. Whoever holds it writes as that
agent, so the trust that ranks competing claims is learnt per key holder. The tenant key itself
writes as `api` (DEFAULT_AGENT). The desk's own agents and `api` are RESERVED: no key is ever
issued for them, so no HTTP or MCP caller can write as one."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import Awaitable, Callable

import redis.asyncio as aioredis

from relay_graph.runtime import tenancy, tenant_data
from relay_graph.runtime.errors import AlreadyExists, InvalidInput, NotFound
from relay_graph.runtime.tenancy import validate_tenant

from .errors import Forbidden, Unauthorized

TENANTS_KEY = tenancy.TENANTS_KEY  # tenant -> sha256(key)
KEY_INDEX = tenancy.KEY_INDEX  # sha256(key) -> tenant
AGENTS_KEY = tenancy.ADMIN_PREFIX + "agents"  # tenant/agent -> sha256(key)
AGENT_KEY_INDEX = tenancy.ADMIN_PREFIX + "agent-keys"  # sha256(key) -> tenant/agent
MAX_KEY_CHARS = 256

# Who a tenant key writes as; and the names no key is issued for (the desk's agents write from
# their own processes, never over HTTP).
DEFAULT_AGENT = "api"
RESERVED_AGENTS = frozenset({"intake", "resolver", "netops", "gateway", "simulator", DEFAULT_AGENT})
# An agent's id: no `:` (the `mcp:` names of the stdio server) and no `/` (sub-labels go under it);
# it begins and ends with a letter or digit, so no id is a reserved name with a dot or dash stuck on.
AGENT_ID_PATTERN = r"^[a-z0-9](?:[a-z0-9_.-]{0,46}[a-z0-9])?$"
_AGENT_ID = re.compile(AGENT_ID_PATTERN)
_SEPARATORS = re.compile(r"[_.-]")

# Both hashes change together or not at all; HSETNX makes "exists" and "create" one step.
_CREATE = """
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
return 1
"""

# An owner (a tenant, or a tenant's agent) and its key's index entry go together.
_REMOVE = tenancy.REMOVE_OWNER

# A tenant's agents' keys go with it (its own key is the registry's: runtime/tenant_data.py).
tenant_data.declare(
    tenant_data.Fields("agent keys", AGENTS_KEY, AGENT_KEY_INDEX, match=lambda tenant: f"{tenant}/*"))


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class TenantKeys:
    """The tenant registry: creating tenants and resolving keys to tenants."""

    def __init__(self, redis: aioredis.Redis) -> None:
        self.redis = redis

    async def create(self, tenant: str) -> str:
        """Registers `tenant` and returns its new API key; AlreadyExists if it is registered."""
        validate_tenant(tenant)
        key = secrets.token_urlsafe(32)
        created = await self.redis.eval(_CREATE, 2, TENANTS_KEY, KEY_INDEX, tenant, key_hash(key))
        if not int(created):
            raise AlreadyExists(f"tenant {tenant!r} exists; pick another name")
        return key

    async def remove(self, tenant: str) -> bool:
        """Unregisters `tenant`: its key authenticates nobody from now on. False if it was not.
        (Deleting a tenant does this first, then removes the rest: usecases/operations.delete_tenant.)"""
        return await tenancy.unregister(self.redis, tenant)

    async def exists(self, tenant: str) -> bool:
        return bool(await self.redis.hexists(TENANTS_KEY, validate_tenant(tenant)))

    async def tenants(self) -> list[str]:
        """Every registered tenant (for the outbox relay)."""
        names = await self.redis.hkeys(TENANTS_KEY)
        return sorted(n.decode() if isinstance(n, bytes) else n for n in names)

    async def _owner(self, index: str, registry: str, key: str) -> str | None:
        digest = key_hash(key)
        owner = await self.redis.hget(index, digest)
        if owner is None:
            return None
        stored = await self.redis.hget(registry, owner)
        # The index entry must agree with the owner's current key (a half-written or stale index
        # entry authenticates nobody).
        if stored is None or not hmac.compare_digest(str(stored), digest):
            return None
        return str(owner)

    async def tenant_for(self, key: str) -> str | None:
        """The tenant this key belongs to, or None."""
        return await self._owner(KEY_INDEX, TENANTS_KEY, key)

    async def create_agent(self, tenant: str, agent: str) -> str:
        """Issues the key of `agent` in `tenant` and returns it (shown once); AlreadyExists if that
        agent has one, Forbidden for a reserved name, InvalidInput for a name that is not an id."""
        validate_tenant(tenant)
        agent = check_agent_id(agent)
        key = secrets.token_urlsafe(32)
        created = await self.redis.eval(_CREATE, 2, AGENTS_KEY, AGENT_KEY_INDEX, f"{tenant}/{agent}", key_hash(key))
        if not int(created):
            raise AlreadyExists(f"agent {agent!r} of tenant {tenant!r} has a key already; pick another name")
        return key

    async def delete_agent(self, tenant: str, agent: str) -> None:
        """Revokes the agent's key (its facts stay, written by it); NotFound if it has none. Issuing
        a key again for the same agent is how a key is replaced: the agent, and its trust, stay."""
        validate_tenant(tenant)
        if not int(await self.redis.eval(_REMOVE, 2, AGENTS_KEY, AGENT_KEY_INDEX, f"{tenant}/{agent}")):
            raise NotFound(f"agent {agent!r} of tenant {tenant!r} has no key")

    async def agents(self, tenant: str) -> list[str]:
        """The agents of `tenant` that have a key, sorted."""
        prefix = f"{validate_tenant(tenant)}/"
        names = [str(field) async for field, _ in self.redis.hscan_iter(AGENTS_KEY, match=prefix + "*")]
        return sorted(k[len(prefix):] for k in names)

    async def agent_for(self, key: str) -> tuple[str, str] | None:
        """The (tenant, agent) this agent key belongs to, or None."""
        owner = await self._owner(AGENT_KEY_INDEX, AGENTS_KEY, key)
        if owner is None:
            return None
        tenant, _, agent = owner.partition("/")
        # A deleted tenant's agent keys authenticate nobody either.
        if not await self.redis.hexists(TENANTS_KEY, tenant):
            return None
        return tenant, agent


def check_agent_id(agent: object) -> str:
    if not isinstance(agent, str) or not _AGENT_ID.fullmatch(agent):
        raise InvalidInput(f"an agent id must match {AGENT_ID_PATTERN}", code="invalid_agent")
    # `net-ops` and `re_solver` read as the desk's own: reserved is checked without the separators.
    if _SEPARATORS.sub("", agent) in RESERVED_AGENTS:
        raise Forbidden(f"{agent!r} is reserved or reads as one that is ({', '.join(sorted(RESERVED_AGENTS))}): the desk's own agents "
                        "write only from their own processes, and `api` is the tenant key's own identity; "
                        "pick another name", code="reserved_agent")
    return agent


@dataclass(frozen=True)
class Caller:
    """Who made a request: the tenant a key authenticates, the agent it writes as (None: the
    admin), and an id of the key."""

    tenant: str | None
    admin: bool
    key_id: str
    agent: str | None = None

    @property
    def bucket(self) -> str:
        """The rate bucket: one per tenant (its key and its agents' keys share the tenant's limit)."""
        return f"tenant:{self.tenant}" if self.tenant is not None else self.key_id


class Authenticator:
    """Turns a bearer token into a Caller. `keys` gives the tenant registry (opened on first need)."""

    def __init__(self, keys: Callable[[], Awaitable[TenantKeys]], admin_key: str | None) -> None:
        self.keys = keys
        self._admin = admin_key.encode("utf-8") if admin_key else None

    def _is_admin(self, token: str) -> bool:
        return self._admin is not None and hmac.compare_digest(token.encode("utf-8"), self._admin)

    @staticmethod
    def _check_shape(token: str | None) -> str:
        if not token or len(token) > MAX_KEY_CHARS or not token.isascii() or not token.isprintable():
            raise Unauthorized("send your key as `Authorization: Bearer <key>`")
        return token

    async def identify(self, token: str | None) -> Caller:
        token = self._check_shape(token)
        if self._is_admin(token):
            return Caller(tenant=None, admin=True, key_id="admin")
        keys = await self.keys()
        tenant = await keys.tenant_for(token)
        if tenant is not None:
            return Caller(tenant=tenant, admin=False, key_id=key_hash(token), agent=DEFAULT_AGENT)
        owner = await keys.agent_for(token)
        if owner is None:
            raise Unauthorized("that key is not valid; use the key returned when the tenant (or the agent) "
                               "was created")
        return Caller(tenant=owner[0], admin=False, key_id=key_hash(token), agent=owner[1])

    async def admin(self, token: str | None, what: str = "this") -> Caller:
        """The admin; `what` names the request in the refusal (`PUT /v1/tenants/acme/limits`)."""
        if self._admin is None:
            raise Unauthorized(f"{what} needs the admin key, and this gateway has none (set RELAY_ADMIN_KEY)")
        caller = await self.identify(token)
        if not caller.admin:
            raise Forbidden(f"{what} needs the admin key; a tenant's or an agent's key cannot do it")
        return caller

    async def tenant(self, token: str | None, path_tenant: str) -> Caller:
        """The caller of a /v1/tenants/{t}/... route; its tenant is the one its key authenticates."""
        caller = await self.identify(token)
        if caller.admin:
            raise Forbidden("the admin key does not act inside a tenant; use the tenant's own key")
        if caller.tenant != path_tenant:
            raise Forbidden("this key belongs to another tenant")
        return caller

    async def admin_for_tenant(self, token: str | None, path_tenant: str, what: str = "this") -> Caller:
        """The admin acting on one tenant's settings; NotFound when there is no such tenant."""
        caller = await self.admin(token, what)
        try:
            exists = await (await self.keys()).exists(path_tenant)
        except InvalidInput:  # not a tenant name: no such tenant either
            exists = False
        if not exists:
            raise NotFound(f"no tenant {path_tenant!r}")
        return caller
