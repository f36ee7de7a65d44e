"""`Relay` and `AsyncRelay` (an agent's memory), `Admin` and `AsyncAdmin` (the operator's verbs), over
httpx. Both kinds send the key as a bearer token, wait out 429 and 503 as `Retry-After` says, and send
every write with an `Idempotency-Key` kept across its retries."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import httpx

from . import errors
from .calls import Call, retry_after
from .verbs import AdminVerbs, MemoryVerbs

DEFAULT_URL = "http://127.0.0.1:8000"


def _settings(url: str | None, key: str | None, env_key: str) -> tuple[str, str]:
    url = (url or os.environ.get("RELAY_URL") or DEFAULT_URL).rstrip("/")
    key = key or os.environ.get(env_key)
    if not key:
        raise ValueError(f"no API key: pass one or set {env_key}")
    return url, key


def _settle(call: Call, got: httpx.Response | httpx.TransportError, attempt: int, attempts: int) -> tuple[str, Any]:
    """What a try of `call` came to: ("done", answer), ("wait", seconds) before the next try, or
    ("raise", error)."""
    if isinstance(got, httpx.TransportError):
        wait = retry_after(call, 0, "", None, attempt, attempts)
        if wait is not None:
            return "wait", wait
        error: errors.RelayError = errors.Unavailable(0, "no_answer", str(got) or type(got).__name__)
        error.__cause__ = got
        return "raise", error
    if got.is_success:
        if got.status_code == 204 or not got.content:
            return "done", None
        body = got.json()
        return "done", call.answer.model_validate(body) if call.answer is not None else body
    try:
        body = got.json()
    except ValueError:
        body = got.text
    code = str(body["error"].get("code", "")) if isinstance(body, dict) and isinstance(body.get("error"), dict) else ""
    wait = retry_after(call, got.status_code, code, got.headers.get("retry-after"), attempt, attempts)
    return ("wait", wait) if wait is not None else ("raise", errors.from_answer(got.status_code, body))


class _Sync:
    def __init__(self, url: str, key: str, *, timeout: float, attempts: int,
                 transport: httpx.BaseTransport | None) -> None:
        self._http = httpx.Client(base_url=url, timeout=timeout, transport=transport,
                                  headers={"Authorization": f"Bearer {key}"})
        self._attempts = attempts

    def _do(self, call: Call) -> Any:
        for attempt in range(self._attempts):
            try:
                got: httpx.Response | httpx.TransportError = self._http.request(
                    call.method, call.url(), params=call.params, json=call.body, headers=call.headers())
            except httpx.TransportError as exc:
                got = exc
            kind, value = _settle(call, got, attempt, self._attempts)
            if kind != "wait":
                break
            time.sleep(value)
        if kind == "raise":
            raise value
        return value

    def close(self) -> None:
        self._http.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Async:
    def __init__(self, url: str, key: str, *, timeout: float, attempts: int,
                 transport: httpx.AsyncBaseTransport | None) -> None:
        self._http = httpx.AsyncClient(base_url=url, timeout=timeout, transport=transport,
                                       headers={"Authorization": f"Bearer {key}"})
        self._attempts = attempts

    async def _do(self, call: Call) -> Any:
        for attempt in range(self._attempts):
            try:
                got: httpx.Response | httpx.TransportError = await self._http.request(
                    call.method, call.url(), params=call.params, json=call.body, headers=call.headers())
            except httpx.TransportError as exc:
                got = exc
            kind, value = _settle(call, got, attempt, self._attempts)
            if kind != "wait":
                break
            await asyncio.sleep(value)
        if kind == "raise":
            raise value
        return value

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class Relay(_Sync, MemoryVerbs):
    """One agent's (or the tenant's) memory: `Relay("acme", key=...)`; the URL from `url` or
    RELAY_URL (default http://127.0.0.1:8000), the key from `key` or RELAY_API_KEY."""

    def __init__(self, tenant: str, *, key: str | None = None, url: str | None = None, timeout: float = 30.0,
                 attempts: int = 4, transport: httpx.BaseTransport | None = None) -> None:
        url, key = _settings(url, key, "RELAY_API_KEY")
        super().__init__(url, key, timeout=timeout, attempts=attempts, transport=transport)
        self.tenant = tenant


class AsyncRelay(_Async, MemoryVerbs):
    """`Relay` for asyncio: every verb is awaited."""

    def __init__(self, tenant: str, *, key: str | None = None, url: str | None = None, timeout: float = 30.0,
                 attempts: int = 4, transport: httpx.AsyncBaseTransport | None = None) -> None:
        url, key = _settings(url, key, "RELAY_API_KEY")
        super().__init__(url, key, timeout=timeout, attempts=attempts, transport=transport)
        self.tenant = tenant


class Admin(_Sync, AdminVerbs):
    """The operator's verbs with the admin key (`key` or RELAY_ADMIN_KEY)."""

    def __init__(self, *, key: str | None = None, url: str | None = None, timeout: float = 30.0, attempts: int = 4,
                 transport: httpx.BaseTransport | None = None) -> None:
        url, key = _settings(url, key, "RELAY_ADMIN_KEY")
        super().__init__(url, key, timeout=timeout, attempts=attempts, transport=transport)
        self.url = url

    def tenant(self, tenant: str, key: str) -> Relay:
        """A client for a tenant on the same server."""
        return Relay(tenant, key=key, url=self.url)


class AsyncAdmin(_Async, AdminVerbs):
    def __init__(self, *, key: str | None = None, url: str | None = None, timeout: float = 30.0, attempts: int = 4,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        url, key = _settings(url, key, "RELAY_ADMIN_KEY")
        super().__init__(url, key, timeout=timeout, attempts=attempts, transport=transport)
        self.url = url

    def tenant(self, tenant: str, key: str) -> AsyncRelay:
        return AsyncRelay(tenant, key=key, url=self.url)
