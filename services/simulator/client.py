"""The simulator's only way into Relay: the gateway's public HTTP API (docs/api.md, docs/contract.md), over httpx,
exactly as any outside client uses it. The admin key creates the tenant; every other call carries
the tenant's own key.

A 429 (rate limit) or 503 (not ready) is retried a few times with a short backoff; any other
error answer raises `ApiError` with the contract's `{"error": {"code", "message"}}`."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from relay_graph.runtime.metrics import catalogue as metrics

RETRY_STATUSES = (429, 503)
RETRIES = 5
CHAT_WAIT_S = 20.0


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, method: str, path: str):
        super().__init__(f"{method} {path} -> {status} {code}: {message}")
        self.status, self.code, self.message = status, code, message


@dataclass(frozen=True)
class ChatReply:
    """The desk's answer to one turn. `text` is None when it was not written within `wait` (the
    reply still comes, on the live feed and in the session)."""

    session: str
    episode_id: str
    text: str | None = None
    customer: str | None = None  # the customer's id (made by the desk on a first turn without one)
    how_i_know: list[str] = field(default_factory=list)
    ticket_id: str | None = None
    ticket_stage: str | None = None

    @property
    def answered(self) -> bool:
        return self.text is not None


def _error(r: httpx.Response) -> ApiError:
    try:
        err = r.json()["error"]
        code, message = str(err.get("code", "error")), str(err.get("message", ""))
    except Exception:  # noqa: BLE001 - a proxy's HTML page, an empty body ...
        code, message = "http_error", r.text[:300]
    return ApiError(r.status_code, code, message, r.request.method, r.request.url.path)


class _Api:
    def __init__(self, http: httpx.AsyncClient):
        self.http = http

    async def _call(self, method: str, path: str, *, key: str, json: Any = None, params: dict | None = None,
                    timeout: float | None = None, ok: tuple[int, ...] = (200, 201, 202)) -> httpx.Response:
        delay = 0.2
        for attempt in range(RETRIES + 1):
            r = await self.http.request(method, path, json=json, params=params,
                                        headers={"Authorization": f"Bearer {key}"},
                                        timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT)
            metrics.SIMULATOR_REQUESTS.add(1, {"method": method, "status_class": f"{r.status_code // 100}xx"})
            if r.status_code in ok:
                return r
            if r.status_code in RETRY_STATUSES and attempt < RETRIES:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 3.0)
                continue
            raise _error(r)
        raise AssertionError("unreachable")


async def create_tenant(http: httpx.AsyncClient, admin_key: str, tenant: str) -> str:
    """POST /v1/tenants with the admin key; the new tenant's API key (shown only this once).
    ApiError 409 if the tenant exists."""
    r = await _Api(http)._call("POST", "/v1/tenants", key=admin_key, json={"tenant": tenant}, ok=(201,))
    return r.json()["api_key"]


async def ready(http: httpx.AsyncClient) -> bool:
    try:
        return (await http.get("/readyz", timeout=5.0)).status_code == 200
    except httpx.HTTPError:
        return False


class DeskClient(_Api):
    """One tenant's paths, with that tenant's key."""

    def __init__(self, http: httpx.AsyncClient, tenant: str, key: str):
        super().__init__(http)
        self.tenant, self.key = tenant, key
        self.base = f"/v1/tenants/{quote(tenant, safe='')}"

    async def _get(self, path: str, **params: Any) -> Any:
        clean = {k: v for k, v in params.items() if v is not None}
        return (await self._call("GET", self.base + path, key=self.key, params=clean)).json()

    async def _post(self, path: str, body: dict, **kw: Any) -> httpx.Response:
        return await self._call("POST", self.base + path, key=self.key, json=body, **kw)

    async def chat(self, customer: str | None, text: str, *, session: str | None = None,
                   wait: float = CHAT_WAIT_S, name: str | None = None) -> ChatReply:
        """A customer's turn: `customer` is their id; None on a first turn, when the desk makes one
        (with `name` as their name) and the reply carries it."""
        body = {"text": text, **({"customer": customer} if customer else {}), **({"name": name} if name else {}),
                **({"session": session} if session else {})}
        started = time.perf_counter()
        r = await self._call("POST", self.base + "/chat", key=self.key, json=body, params={"wait": wait},
                             timeout=wait + 15.0)
        metrics.SIMULATOR_CHAT_DURATION.record(time.perf_counter() - started)
        data = r.json()
        reply, ticket = data.get("reply"), data.get("ticket")
        return ChatReply(
            session=data["session"], episode_id=data["episode_id"], customer=data.get("customer"),
            text=reply["text"] if reply else None, how_i_know=list(reply.get("how_i_know", [])) if reply else [],
            ticket_id=ticket["id"] if ticket else None, ticket_stage=ticket["stage"] if ticket else None,
        )

    async def tickets(self, customer: str | None = None) -> list[dict]:
        return (await self._get("/tickets", customer=customer))["tickets"]

    async def ticket(self, ticket_id: str) -> dict:
        return await self._get(f"/tickets/{quote(ticket_id, safe='')}")

    async def confirm(self, ticket_id: str, *, fixed: bool, by: str = "customer") -> dict:
        return (await self._post(f"/tickets/{quote(ticket_id, safe='')}/confirm", {"fixed": fixed, "by": by})).json()

    async def facts(self, subject: str, predicate: str | None = None) -> list[dict]:
        return (await self._get("/facts", subject=subject, predicate=predicate))["facts"]

    async def history(self, subject: str, predicate: str | None = None) -> list[dict]:
        return (await self._get("/facts/history", subject=subject, predicate=predicate))["facts"]

    async def line(self, customer: str) -> list[dict]:
        """The customer's line, home to core; [] when they are known but not connected. ApiError 404
        when the desk has never heard of them."""
        return (await self._get(f"/customers/{quote(customer, safe='')}/line"))["line"]

    async def lab_fault(self, customer: str, kind: str | None = None) -> dict:
        """The fault lab plants a fault on the customer's line (`kind` None: a blind one)."""
        body = {"customer": customer, **({"kind": kind} if kind else {})}
        return (await self._post("/lab/faults", body)).json()

    @property
    def console(self) -> str:
        return f"/v1/console/tenants/{quote(self.tenant, safe='')}/simulator"

    async def control(self) -> dict | None:
        """What the console asks of the simulator ({running, speed, version}); None when never set."""
        return (await self._call("GET", self.console, key=self.key, timeout=5.0)).json()["control"]

    async def report(self, status: dict) -> None:
        """What the simulated customers are doing, for the console."""
        await self._call("PUT", self.console + "/status", key=self.key, json=status, timeout=5.0)

    async def set_node_status(self, node_id: str, *, up: bool, by: str) -> dict:
        path = f"/network/nodes/{quote(node_id, safe='')}/status"
        return (await self._post(path, {"up": up, "by": by})).json()
