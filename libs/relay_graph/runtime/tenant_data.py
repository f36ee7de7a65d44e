"""What is kept per tenant outside its graph's nodes, declared by the module that keeps it, so that
deleting a tenant (usecases/operations.delete_tenant) walks one list and a new per-tenant key is
not forgotten: the module that adds one declares it beside its key's name, at import.

Each declaration says where the tenant's things are and removes them:

- `Key`: one whole key named after the tenant (its graph, its query log);
- `Keys`: every key matching a pattern (its snapshots, its Idempotency-Key claims, its customer
  sessions), found with SCAN on every primary of a cluster;
- `Field`: the tenant's field of a hash (its limits);
- `Fields`: the fields of a hash matching a pattern, each with its entry in an index hash (the
  tenant's key: `tenant -> digest` and `digest -> tenant`; its agents' keys: `tenant/agent -> digest`
  and `digest -> tenant/agent`);
- `Member`: the tenant as a member of a set or sorted set (its open site, the outbox's pending mark);
- `Custom`: what fits none of these, removed by the declaring module's own function (a regional
  desk: the tenant's operator, and the operator's regions that name it).

Keys are removed one at a time: on a cluster they live in different hash slots, and a DEL of two
is refused across slots. A declaration may be `optional`: the caller names it to keep it
(`keep_snapshots`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Iterable

from relay_graph.runtime.tenancy import KEY_INDEX, REMOVE_OWNER, TENANTS_KEY, validate_tenant


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass(frozen=True)
class Key:
    name: str
    key: Callable[[str], str]
    optional: bool = False

    async def remove(self, redis, tenant: str) -> list[str]:
        key = self.key(tenant)
        return [key] if await redis.delete(key) else []


@dataclass(frozen=True)
class Keys:
    name: str
    pattern: Callable[[str], str]  # a SCAN MATCH pattern; the tenant id holds no glob character
    optional: bool = False

    async def remove(self, redis, tenant: str) -> list[str]:
        found = {_text(k) async for k in redis.scan_iter(match=self.pattern(tenant), count=500)}
        return [k for k in sorted(found) if await redis.delete(k)]


@dataclass(frozen=True)
class Field:
    name: str
    key: str
    optional: bool = False

    async def remove(self, redis, tenant: str) -> list[str]:
        return [f"{self.key}#{tenant}"] if await redis.hdel(self.key, tenant) else []


@dataclass(frozen=True)
class Fields:
    """The fields of `key` matching `match(tenant)`, each removed with its `index` entry (value ->
    field), in one script (both hashes carry the same hash tag: one slot)."""

    name: str
    key: str
    index: str
    match: Callable[[str], str]
    optional: bool = False

    async def remove(self, redis, tenant: str) -> list[str]:
        owners = sorted({_text(f) async for f, _ in redis.hscan_iter(self.key, match=self.match(tenant))})
        return [f"{self.key}#{o}" for o in owners if int(await redis.eval(REMOVE_OWNER, 2, self.key, self.index, o))]


@dataclass(frozen=True)
class Member:
    """The tenant in a set or a sorted set (the type is asked: one declaration for either)."""

    name: str
    key: str
    optional: bool = False

    async def remove(self, redis, tenant: str) -> list[str]:
        kind = _text(await redis.type(self.key))
        if kind == "zset":
            gone = await redis.zrem(self.key, tenant)
        elif kind == "set":
            gone = await redis.srem(self.key, tenant)
        else:
            gone = 0
        return [f"{self.key}#{tenant}"] if gone else []


@dataclass(frozen=True)
class Custom:
    name: str
    remover: Callable[[Any, str], Awaitable[list[str]]]  # (redis, tenant) -> what it removed
    optional: bool = False

    async def remove(self, redis, tenant: str) -> list[str]:
        return await self.remover(redis, tenant)


Declared = Key | Keys | Field | Fields | Member | Custom
_DECLARED: dict[str, Declared] = {}


def declare(*items: Declared) -> None:
    """Adds what a module keeps per tenant (again with the same name: replaced, so a reload is harmless)."""
    for item in items:
        _DECLARED[item.name] = item


def declared() -> list[Declared]:
    return list(_DECLARED.values())


async def remove_all(redis, tenant: str, *, keep: Iterable[str] = ()) -> list[str]:
    """Removes everything declared for `tenant` but the optional declarations named in `keep`;
    returns what it removed (keys, and `key#field` for fields and members)."""
    validate_tenant(tenant)
    kept = set(keep)
    unknown = kept - {d.name for d in _DECLARED.values() if d.optional}
    if unknown:
        raise ValueError(f"only optional declarations can be kept, not {sorted(unknown)}")
    gone: list[str] = []
    for item in declared():
        if item.name not in kept:
            gone += await item.remove(redis, tenant)
    return gone


# The registration itself (deleting a tenant takes it out first: tenancy.unregister).
declare(Fields("tenant key", TENANTS_KEY, KEY_INDEX, match=lambda tenant: tenant))
