"""Customer sessions of the customer site: who a browser is, without a tenant key in it.

A tenant opts in to the site (a flag kept beside the tenant registry). A browser that opens an
opted-in tenant's site becomes a new customer (an id; the desk learns their name from what they
say) and gets and a session token in an HttpOnly, SameSite=Strict
cookie whose path is that tenant's `/me` routes only, so the browser never sends it anywhere else
and never holds a key. The server keeps only the token's SHA-256, under a fixed key prefix no
tenant id can produce followed by the tenant (so a token is looked up on its own site only, and
a deleted tenant's sessions are found and go with it), with the customer it speaks for and an
expiry. The site flag and the sessions are declared to runtime/tenant_data.py."""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass

import redis.asyncio as aioredis

from relay_graph.runtime.errors import NotFound
from relay_graph.runtime import tenancy, tenant_data
from relay_graph.runtime.tenancy import validate_tenant

from .errors import Forbidden, Unauthorized

SITE_TENANTS_KEY = tenancy.ADMIN_PREFIX + "site-tenants"  # the set of tenants whose customer site is open
SESSION_PREFIX = "relay-admin:customer-session:"  # + tenant + ":" + sha256(token) -> {"tenant", "customer"}
COOKIE = "relay_customer"
SESSION_TTL_S = 30 * 24 * 3600
MAX_TOKEN_CHARS = 128


class SiteClosed(NotFound):
    code = "site_closed"


@dataclass(frozen=True)
class CustomerSession:
    tenant: str
    customer: str


def cookie_path(tenant: str) -> str:
    return f"/v1/tenants/{tenant}/me"


def _key(tenant: str, token: str) -> str:
    return f"{SESSION_PREFIX}{validate_tenant(tenant)}:{hashlib.sha256(token.encode('utf-8')).hexdigest()}"


tenant_data.declare(
    tenant_data.Member("site flag", SITE_TENANTS_KEY),
    tenant_data.Keys("customer sessions", lambda tenant: f"{SESSION_PREFIX}{validate_tenant(tenant)}:*"),
)


class CustomerSessions:
    def __init__(self, redis: aioredis.Redis) -> None:
        self.redis = redis

    async def set_site_open(self, tenant: str, is_open: bool) -> None:
        tenant = validate_tenant(tenant)
        if is_open:
            await self.redis.sadd(SITE_TENANTS_KEY, tenant)
        else:
            await self.redis.srem(SITE_TENANTS_KEY, tenant)

    async def site_open(self, tenant: str) -> bool:
        return bool(await self.redis.sismember(SITE_TENANTS_KEY, validate_tenant(tenant)))

    async def check_open(self, tenant: str) -> None:
        if not await self.site_open(tenant):
            raise SiteClosed(f"tenant {tenant!r} has no customer site (the tenant turns it on with PUT /site)")

    async def create(self, tenant: str, customer: str) -> tuple[str, CustomerSession]:
        """A session token for `customer` (made by relay_graph.desk.customers.store.create) on an open site."""
        await self.check_open(tenant)
        session = CustomerSession(tenant=tenant, customer=customer)
        token = secrets.token_urlsafe(32)
        await self.redis.set(_key(tenant, token), json.dumps({"tenant": session.tenant, "customer": session.customer}),
                             ex=SESSION_TTL_S)
        return token, session

    async def resolve(self, token: str | None, tenant: str) -> CustomerSession:
        """The session a cookie speaks for, on this tenant's path only (another site's cookie is no
        session here: 401)."""
        if not token or len(token) > MAX_TOKEN_CHARS or not token.isascii():
            raise Unauthorized("no customer session: open the site first (POST /me/session)")
        raw = await self.redis.get(_key(tenant, token))
        if raw is None:
            raise Unauthorized("this cookie is no customer session of this site (it ended, or it is another "
                               "site's); open the site again")
        data = json.loads(raw)
        session = CustomerSession(tenant=str(data["tenant"]), customer=str(data["customer"]))
        if session.tenant != tenant:
            raise Forbidden("this customer session belongs to another tenant's site")
        if not await self.site_open(tenant):
            raise SiteClosed(f"tenant {tenant!r} has closed its customer site")
        return session

    async def end(self, tenant: str, token: str) -> None:
        await self.redis.delete(_key(tenant, token))
