"""Tenant API keys and who a bearer token is.

A tenant key is shown once, at creation; the server keeps only its SHA-256, in a Redis hash on the
FalkorDB server (tenant -> hash) with a reverse index (hash -> tenant). Both live under fixed
constant keys whose names no tenant id can produce (graph names are `relay:<tenant>`)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Awaitable, Callable

import redis.asyncio as aioredis

from relay_graph.errors import AlreadyExists
from relay_graph import tenancy
from relay_graph.tenancy import validate_tenant

from .errors import Forbidden, Unauthorized

TENANTS_KEY = tenancy.TENANTS_KEY  # tenant -> sha256(key)
KEY_INDEX = "relay-admin:tenant-keys"  # sha256(key) -> tenant
MAX_KEY_CHARS = 256

# Both hashes change together or not at all; HSETNX makes "exists" and "create" one step.
_CREATE = """
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
return 1
"""


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

    async def exists(self, tenant: str) -> bool:
        return bool(await self.redis.hexists(TENANTS_KEY, validate_tenant(tenant)))

    async def tenants(self) -> list[str]:
        """Every registered tenant (for the outbox relay)."""
        names = await self.redis.hkeys(TENANTS_KEY)
        return sorted(n.decode() if isinstance(n, bytes) else n for n in names)

    async def tenant_for(self, key: str) -> str | None:
        """The tenant this key belongs to, or None."""
        digest = key_hash(key)
        tenant = await self.redis.hget(KEY_INDEX, digest)
        if tenant is None:
            return None
        stored = await self.redis.hget(TENANTS_KEY, tenant)
        # The index entry must agree with the tenant's current key (a half-written or stale index
        # entry authenticates nobody).
        if stored is None or not hmac.compare_digest(str(stored), digest):
            return None
        return str(tenant)


@dataclass(frozen=True)
class Caller:
    """Who made a request: the tenant a key authenticates, and an id for its rate bucket."""

    tenant: str | None
    admin: bool
    key_id: str


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
        tenant = await (await self.keys()).tenant_for(token)
        if tenant is None:
            raise Unauthorized("that key is not valid; use the key returned when the tenant was created")
        return Caller(tenant=tenant, admin=False, key_id=key_hash(token))

    async def admin(self, token: str | None) -> Caller:
        if self._admin is None:
            raise Unauthorized("tenant creation is disabled: this gateway has no admin key (RELAY_ADMIN_KEY)")
        caller = await self.identify(token)
        if not caller.admin:
            raise Forbidden("creating tenants needs the admin key")
        return caller

    async def tenant(self, token: str | None, path_tenant: str) -> Caller:
        """The caller of a /v1/tenants/{t}/... route; its tenant is the one its key authenticates."""
        caller = await self.identify(token)
        if caller.admin:
            raise Forbidden("the admin key only creates tenants; use the tenant's own key")
        if caller.tenant != path_tenant:
            raise Forbidden("this key belongs to another tenant")
        return caller
