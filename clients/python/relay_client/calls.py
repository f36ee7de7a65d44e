"""The API's calls as data, shared by the sync and the async client: what to send, what comes back,
and when to try again. Nothing here does I/O."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import quote

from .models import Model

RETRY_STATUSES = {429, 503}
MAX_WAIT_S = 30.0


@dataclass(frozen=True)
class Call:
    method: str
    path: str  # a template of the gateway's OpenAPI, e.g. /v1/tenants/{t}/facts
    answer: type[Model] | None
    args: dict[str, str] = field(default_factory=dict)  # the template's parameters
    params: dict[str, Any] | None = None
    body: Any = None
    # A write is sent with an Idempotency-Key, the same on every retry, so a retry writes nothing twice.
    write: bool = False
    idempotency_key: str | None = None

    def url(self) -> str:
        return self.path.format(**{k: quote(v, safe="") for k, v in self.args.items()})

    def headers(self) -> dict[str, str]:
        return {"Idempotency-Key": self.idempotency_key} if self.idempotency_key else {}


def make(method: str, path: str, answer: type[Model] | None, *, write: bool = False, params: dict[str, Any] | None = None,
         body: Any = None, **args: str) -> Call:
    params = {k: _wire(v) for k, v in (params or {}).items() if v is not None} or None
    key = f"relay-client-{uuid.uuid4().hex}" if write else None
    return Call(method, path, answer, args, params, _wire(body), write, key)


def _wire(value: Any) -> Any:
    """JSON-ready: times as ISO 8601 (a time without an offset is refused by the server, never guessed
    here), models as their fields, None fields left out."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Model):
        return _wire(value.model_dump(exclude_none=True))
    if isinstance(value, dict):
        return {k: _wire(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_wire(v) for v in value]
    return value


def retry_after(call: Call, status: int, code: str, header: str | None, attempt: int, attempts: int) -> float | None:
    """Seconds to wait before trying `call` again after an answer with `status` and error `code`
    (status 0: no answer at all) and its Retry-After `header`, or None when it is not tried again."""
    if attempt + 1 >= attempts:
        return None
    if status == 0:  # no answer: a read may be asked again, a write only with its Idempotency-Key
        return None if (call.method != "GET" and not call.idempotency_key) else min(0.2 * 2 ** attempt, MAX_WAIT_S)
    # the first request with this write's key is still being answered: its answer will be replayed
    in_flight = status == 409 and code == "idempotency_key_in_use" and call.idempotency_key is not None
    if status not in RETRY_STATUSES and not in_flight:
        return None
    try:
        wait = float(header) if header is not None else 0.5 * 2 ** attempt
    except ValueError:
        wait = 0.5 * 2 ** attempt
    return min(max(wait, 0.0), MAX_WAIT_S)
