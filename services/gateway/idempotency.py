"""`Idempotency-Key` on the writes a repeat would do twice (POST /chat, /facts, /facts/batch,
/episodes, /tasks, /conflicts/{id}/settle): a retried request with the same key gets the first
result back and writes nothing.

Per tenant and route, the first request with a key claims it (SET NX, for `lock_s`) and, once it
answered, the key keeps that answer (status and body) for `ttl_s`. A request finding the answer
gets it again (header `Idempotent-Replayed: true`); one finding the claim of a request still in
flight gets 409; one whose body differs from the first's gets 422 (a key names one request). A
request that failed before writing anything gives its key back, so it can be retried; a chat turn
that was stored but could not be announced keeps its 202 answer (the outbox announces it), so
its retry does not store it twice. Keys live on the FalkorDB server next to the tenant registry,
under `relay-idem:` (no tenant id makes a graph name collide with it); the key text itself is
hashed.
"""

from __future__ import annotations

import hashlib
import logging
import json
import re
from typing import Annotated, Any, Awaitable, Callable

from fastapi import Depends, Header, Response
from pydantic import BaseModel

from relay_graph.runtime.cluster import is_cluster, through_failover
from relay_graph.runtime.errors import InvalidInput, StateConflict
from relay_graph.runtime import tenant_data
from relay_graph.runtime.tenancy import validate_tenant

from .deps import DepsDep
from .schemas import to_json

log = logging.getLogger("relay.gateway.idempotency")

PREFIX = "relay-idem:"
KEY_RE = re.compile(r"^[\x21-\x7e]{1,200}$")
REPLAYED = "Idempotent-Replayed"
# A tenant's claims and kept answers go with it (`relay-idem:<tenant>:<scope>:<digest>`).
tenant_data.declare(tenant_data.Keys("idempotency claims", lambda tenant: f"{PREFIX}{validate_tenant(tenant)}:*"))


class KeyInUse(StateConflict):
    code = "idempotency_key_in_use"
    retry_after = 1  # seconds (Retry-After): the first request answers, or gives its key back, by then


class KeyReused(InvalidInput):
    code = "idempotency_key_reused"


class Idempotency:
    def __init__(self, redis, key: str | None, *, ttl_s: int = 86_400, lock_s: int = 60) -> None:
        if key is not None and not KEY_RE.fullmatch(key):
            raise InvalidInput("Idempotency-Key must be 1 to 200 printable ASCII characters")
        self.redis = redis
        self.key = key
        self.ttl_s = ttl_s
        self.lock_s = lock_s
        self._slot: str | None = None
        self._fingerprint = ""
        self._kept = False

    def _slot_for(self, tenant: str, scope: str) -> str:
        digest = hashlib.sha256(self.key.encode()).hexdigest()  # type: ignore[union-attr]
        return f"{PREFIX}{validate_tenant(tenant)}:{scope}:{digest}"

    async def run_once(self, tenant: str, scope: str, body: BaseModel, response: Response,
                       work: Callable[[], Awaitable[Any]]) -> Any:
        """`work()` once per key; its answer again for a retry. `work` returns the route's model and
        sets `response.status_code`; a replay sets the status kept and returns the body kept (the
        route's response model validates it again)."""
        if self.key is None:
            return await work()
        self._slot = self._slot_for(tenant, scope)
        self._fingerprint = hashlib.sha256(body.model_dump_json().encode()).hexdigest()
        claim = json.dumps({"state": "pending", "fp": self._fingerprint})
        if not await self.redis.set(self._slot, claim, nx=True, ex=self.lock_s):
            return await self._replay(response)
        try:
            answer = await work()
        except BaseException:
            if not self._kept:
                await self._give_back()
            raise
        if not self._kept:
            status = response.status_code or 200
            if status < 500:
                await self.keep(status, answer)
            else:
                await self._give_back()
        return answer

    async def _give_back(self) -> None:
        """The claim given back, so a retry runs the work again. On a cluster the delete waits out a
        failover (the request most likely failed because of it): a claim left behind would answer
        every retry `idempotency_key_in_use` until it expires (`lock_s`)."""
        async def delete() -> None:
            await self.redis.delete(self._slot)

        try:
            if is_cluster(self.redis):
                await through_failover(self.redis, delete, what="giving an Idempotency-Key back")
            else:
                await delete()
        except Exception as exc:  # noqa: BLE001 - the request's own error is what the caller hears
            log.warning("could not give Idempotency-Key %s back (it is in use for %d s): %r", self.key,
                        self.lock_s, exc)

    async def keep(self, status: int, answer: Any) -> None:
        """The answer this key gives from now on (a route may keep one before it fails later)."""
        if self._slot is None:
            return
        record = {"state": "done", "fp": self._fingerprint, "status": status, "body": to_json(answer)}
        await self.redis.set(self._slot, json.dumps(record), ex=self.ttl_s)
        self._kept = True

    async def _replay(self, response: Response) -> Any:
        raw = await self.redis.get(self._slot)
        if raw is None:  # the first request gave the key back a moment ago
            raise KeyInUse("a request with this Idempotency-Key just failed; retry")
        record = json.loads(raw)
        if record.get("fp") != self._fingerprint:
            raise KeyReused("this Idempotency-Key was used for a different request; use a new key")
        if record["state"] != "done":
            raise KeyInUse("a request with this Idempotency-Key is still being handled; retry shortly")
        response.status_code = record["status"]
        response.headers[REPLAYED] = "true"
        return record["body"]


async def get_idempotency(
    deps: DepsDep,
    idempotency_key: Annotated[str | None, Header(
        alias="Idempotency-Key", pattern=KEY_RE.pattern, description="send the same key again to retry this write safely: the first "
        "result comes back and nothing is written twice (kept 24 h)")] = None,
) -> Idempotency:
    redis = (await deps.open()).client.redis if idempotency_key is not None else None
    return Idempotency(redis, idempotency_key)


IdempotencyDep = Annotated[Idempotency, Depends(get_idempotency)]
