"""One wrapper around Groq's chat completions for every LLM job: retries, backoff, and fallback
across keys and models, so the extractor and the writer only say what they ask and what counts as
a usable answer.

The official `groq` SDK makes the call (its own retries off: this module decides), over an httpx
client built on the injected transport, so tests see every request through httpx.MockTransport
and no test ever reaches the network.

What happens on each outcome of one request to (key, model):

| outcome                                     | then                                                      |
|---------------------------------------------|-----------------------------------------------------------|
| 200 with a usable answer                    | return it                                                 |
| 200 but unusable (not JSON, wrong shape,    | the model's fault: next model                             |
|   cut off); 400 `json_validate_failed`      |                                                           |
| 429 rate limited                            | that key rests for that model (Retry-After): next key;    |
|                                             | no key left: next model; all resting: pause, next round   |
| 401 bad key                                 | the key is dropped for good: next key                     |
| 403                                         | that key may not use that model: next key                 |
| 400/404/413/422 (model gone, format refused)| the model is dropped for this call: next model            |
| 5xx, 498, timeout, connection error         | same key and model again after a pause, `retries` times;  |
|                                             | then next model                                           |

Nothing usable after all of that: `LLMUnavailable`, and the caller falls back (rules, templates).
Pauses double from `backoff_s` and never exceed `backoff_max_s`, Retry-After included."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import groq
import httpx

from relay_graph.runtime.errors import InvalidInput, Unavailable
from relay_graph.desk.llm.settings import GROQ_BASE_URL, LLMSettings

log = logging.getLogger("relay_graph.desk.llm")

T = TypeVar("T")

_MODEL_ERRORS = {400, 404, 413, 422}
_TRANSIENT = {408, 498, 500, 502, 503, 504}


class LLMUnavailable(Unavailable):
    """No key and model gave a usable answer; the caller uses its no-LLM path."""

    code = "llm_unavailable"


class MalformedAnswer(Exception):
    """The model answered, but not with anything usable."""


@dataclass(frozen=True)
class Attempt:
    """One request of the last call, for logs and tests (the key by position, never its value)."""

    key: int
    model: str
    outcome: str  # ok | malformed | rate_limited | bad_key | forbidden | model_error | transient


def _retry_after(response: httpx.Response | None) -> float | None:
    if response is None:
        return None
    for name in ("retry-after", "x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"):
        raw = response.headers.get(name)
        if raw is None:
            continue
        try:
            return max(0.0, float(raw.rstrip("s")))
        except ValueError:
            continue
    return None


def _error_code(body: object) -> str | None:
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("code"), str):
            return err["code"]
    return None


def content_of(data: object) -> str:
    """The text of the first choice of a chat completion, or MalformedAnswer."""
    try:
        choice = data["choices"][0]  # type: ignore[index]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError) as e:
        raise MalformedAnswer(f"not a chat completion: {e!r}") from None
    if choice.get("finish_reason") == "length":
        raise MalformedAnswer("the answer was cut off at the token limit")
    if not isinstance(content, str) or not content.strip():
        raise MalformedAnswer("the answer is empty")
    return content


class GroqChat:
    """Chat completions over several keys and models. One instance per process and job; it keeps
    which keys are resting or rejected between calls, so a rate-limited key is not tried again on
    every turn."""

    def __init__(
        self,
        api_keys: Sequence[str],
        models: Sequence[str],
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        base_url: str = GROQ_BASE_URL,
        timeout_s: float = 10.0,
        retries: int = 2,
        backoff_s: float = 0.5,
        backoff_max_s: float = 4.0,
        rounds: int = 2,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if isinstance(api_keys, str):
            api_keys = [api_keys]
        keys = [k.strip() for k in api_keys if isinstance(k, str) and k.strip()]
        if not keys:
            raise InvalidInput("at least one API key is needed")
        names = [m.strip() for m in models if isinstance(m, str) and m.strip()]
        if not names:
            raise InvalidInput("at least one model is needed")
        self._keys = keys
        self.models = names
        self._transport = transport
        self._base_url = base_url
        self._timeout = timeout_s
        self._retries = max(0, retries)
        self._backoff = max(0.0, backoff_s)
        self._backoff_max = max(0.0, backoff_max_s)
        self._rounds = max(1, rounds)
        self._sleep = sleep
        self._clock = clock
        self._http: httpx.AsyncClient | None = None
        self._clients: dict[int, groq.AsyncGroq] = {}
        self._bad_keys: set[int] = set()
        self._resting: dict[tuple[int, str], float] = {}  # (key, model) -> clock time it may be used again
        self._forbidden: set[tuple[int, str]] = set()
        self.attempts: list[Attempt] = []

    @classmethod
    def from_settings(cls, settings: LLMSettings, models: Sequence[str], **kw: Any) -> GroqChat:
        return cls(
            settings.keys(), models, base_url=settings.base_url, timeout_s=settings.timeout_s,
            retries=settings.retries, backoff_s=settings.backoff_s, backoff_max_s=settings.backoff_max_s,
            rounds=settings.rounds, **kw,
        )

    @property
    def key_count(self) -> int:
        return len(self._keys)

    def _client(self, i: int) -> groq.AsyncGroq:
        if self._http is None:
            self._http = httpx.AsyncClient(transport=self._transport, timeout=self._timeout)
        if i not in self._clients:
            self._clients[i] = groq.AsyncGroq(
                api_key=self._keys[i], base_url=self._base_url, http_client=self._http, max_retries=0,
                timeout=self._timeout,
            )
        return self._clients[i]

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
        self._http = None
        self._clients.clear()

    async def __aenter__(self) -> GroqChat:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _pause(self, n: int, hint: float | None = None) -> float:
        wait = self._backoff * (2 ** n)
        if hint is not None:
            wait = max(wait, hint)
        return min(wait, self._backoff_max)

    async def complete(
        self,
        messages: list[dict[str, str]],
        accept: Callable[[str], T],
        *,
        response_format: dict[str, Any] | None = None,
        temperature: float = 0.0,
        max_completion_tokens: int = 2048,
        extra: Callable[[str], dict[str, Any]] | None = None,
    ) -> T:
        """The first answer that `accept` takes (it raises MalformedAnswer to refuse one).
        `extra(model)` adds model-specific request fields. LLMUnavailable when none does."""
        self.attempts = []
        dropped: set[str] = set()  # models given up on in this call
        for rnd in range(self._rounds):
            soonest: float | None = None
            for model in self.models:
                if model in dropped:
                    continue
                for i in range(len(self._keys)):
                    if i in self._bad_keys or (i, model) in self._forbidden:
                        continue
                    until = self._resting.get((i, model))
                    if until is not None and until > self._clock():
                        soonest = until if soonest is None else min(soonest, until)
                        continue
                    outcome, value, wait = await self._try(i, model, messages, accept, response_format, temperature,
                                                           max_completion_tokens, extra)
                    if outcome == "ok":
                        return value  # type: ignore[return-value]
                    if outcome == "rate_limited":
                        until = self._clock() + (wait if wait is not None else self._pause(rnd))
                        self._resting[(i, model)] = until
                        soonest = until if soonest is None else min(soonest, until)
                        continue  # next key, same model
                    if outcome == "bad_key":
                        self._bad_keys.add(i)
                        continue
                    if outcome == "forbidden":
                        self._forbidden.add((i, model))
                        continue
                    dropped.add(model)  # malformed, model_error, transient after retries
                    break
            if soonest is None or rnd + 1 >= self._rounds:
                break
            wait = soonest - self._clock()
            if wait > self._backoff_max:
                break  # nothing comes back soon enough to keep a customer waiting for it
            # everything left was resting: wait for the first to come back
            await self._sleep(self._pause(rnd, max(0.0, wait)))
            now = self._clock()
            for k, until in list(self._resting.items()):
                if until - now <= self._backoff_max:
                    self._resting[k] = now  # the pause above was as long as we are willing to wait
        raise LLMUnavailable(
            "no Groq key and model gave a usable answer ("
            + ", ".join(f"key {a.key}/{a.model}: {a.outcome}" for a in self.attempts) + ")"
        )

    async def _try(
        self, i: int, model: str, messages: list[dict[str, str]], accept: Callable[[str], T],
        response_format: dict[str, Any] | None, temperature: float, max_completion_tokens: int,
        extra: Callable[[str], dict[str, Any]] | None,
    ) -> tuple[str, T | None, float | None]:
        kwargs: dict[str, Any] = {"model": model, "messages": messages, "temperature": temperature,
                                  "max_completion_tokens": max_completion_tokens}
        if response_format is not None:
            kwargs["response_format"] = response_format
        if extra is not None:
            kwargs.update(extra(model))
        for n in range(self._retries + 1):
            outcome, value, wait = await self._once(i, model, kwargs, accept)
            self.attempts.append(Attempt(i, model, outcome))
            if outcome != "transient":
                return outcome, value, wait
            if n < self._retries:
                await self._sleep(self._pause(n, wait))
        return "transient", None, None

    async def _once(self, i: int, model: str, kwargs: dict[str, Any],
                    accept: Callable[[str], T]) -> tuple[str, T | None, float | None]:
        try:
            raw = await self._client(i).chat.completions.with_raw_response.create(**kwargs)
        except groq.RateLimitError as e:
            log.info("groq key %d rate limited on %s", i, model)
            return "rate_limited", None, _retry_after(e.response)
        except groq.AuthenticationError:
            log.warning("groq key %d was refused (401); not using it again", i)
            return "bad_key", None, None
        except groq.PermissionDeniedError:
            return "forbidden", None, None
        except groq.APIStatusError as e:
            if e.status_code in _TRANSIENT or e.status_code >= 500:
                return "transient", None, _retry_after(e.response)
            if _error_code(e.body) == "json_validate_failed":
                return "malformed", None, None
            if e.status_code in _MODEL_ERRORS:
                log.warning("groq model %s refused the request (%d): %s", model, e.status_code, e.message)
                return "model_error", None, None
            return "model_error", None, None
        except (groq.APITimeoutError, groq.APIConnectionError):
            return "transient", None, None
        try:
            content = content_of(raw.http_response.json())
            return "ok", accept(content), None
        except (MalformedAnswer, ValueError) as e:
            log.info("groq model %s gave an unusable answer: %s", model, e)
            return "malformed", None, None
