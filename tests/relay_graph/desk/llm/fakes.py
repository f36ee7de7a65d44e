"""A scripted Groq behind httpx.MockTransport, and a clock that never really waits."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx


def completion(content: str, finish: str = "stop") -> httpx.Response:
    return httpx.Response(200, json={
        "id": "chatcmpl-1", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
    })


def error(status: int, code: str | None = None, headers: dict | None = None) -> httpx.Response:
    body = {"error": {"message": f"error {status}", "type": "invalid_request_error", **({"code": code} if code else {})}}
    return httpx.Response(status, json=body, headers=headers or {})


class Groq:
    def __init__(self, *responses: httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]) -> None:
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if not self.responses:
            raise AssertionError(f"unexpected request #{len(self.requests)}")
        r = self.responses.pop(0)
        if isinstance(r, Exception):
            raise r
        return r(request) if callable(r) else r

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)

    def bodies(self) -> list[dict]:
        return [json.loads(r.content) for r in self.requests]

    def calls(self) -> list[tuple[str, str]]:
        return [(r.headers["authorization"].removeprefix("Bearer "), json.loads(r.content)["model"]) for r in self.requests]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
