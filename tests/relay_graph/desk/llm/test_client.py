"""The Groq chat wrapper on its own: what it refuses, what it remembers, what it never leaks."""

from __future__ import annotations

import httpx
import pytest

from relay_graph.runtime.errors import InvalidInput
from relay_graph.desk.llm import GroqChat, LLMSettings, LLMUnavailable, MalformedAnswer

from .fakes import Clock, Groq, completion, error

MESSAGES = [{"role": "user", "content": "hi"}]


def chat(groq: Groq, keys=("k1", "k2"), models=("m1", "m2"), clock: Clock | None = None, **kw) -> GroqChat:
    clock = clock or Clock()
    return GroqChat(list(keys), list(models), transport=groq.transport, sleep=clock.sleep, clock=clock, **kw)


def test_keys_and_models_are_required() -> None:
    with pytest.raises(InvalidInput):
        GroqChat([], ["m"])
    with pytest.raises(InvalidInput):
        GroqChat(["", "  "], ["m"])
    with pytest.raises(InvalidInput):
        GroqChat(["k"], [])
    assert GroqChat("one-key", ["m"]).key_count == 1


async def test_a_plain_request_and_its_answer() -> None:
    groq = Groq(completion("hello"))
    got = await chat(groq).complete(MESSAGES, str.upper, temperature=0.2, max_completion_tokens=50)
    assert got == "HELLO"
    (body,) = groq.bodies()
    assert body == {"model": "m1", "messages": MESSAGES, "temperature": 0.2, "max_completion_tokens": 50}
    assert "response_format" not in body


async def test_a_refused_answer_goes_to_the_next_model() -> None:
    def accept(content: str) -> str:
        if content != "good":
            raise MalformedAnswer("no")
        return content

    groq = Groq(completion("bad"), completion("good"))
    c = chat(groq)
    assert await c.complete(MESSAGES, accept) == "good"
    assert [(a.key, a.model, a.outcome) for a in c.attempts] == [(0, "m1", "malformed"), (0, "m2", "ok")]


async def test_403_skips_that_key_for_that_model_only() -> None:
    groq = Groq(error(403), completion("a"), completion("b"))
    c = chat(groq)
    await c.complete(MESSAGES, str)
    await c.complete(MESSAGES, str)
    assert groq.calls() == [("k1", "m1"), ("k2", "m1"), ("k2", "m1")]


async def test_retry_after_on_a_server_error_sets_the_pause_within_the_cap() -> None:
    clock = Clock()
    groq = Groq(error(503, headers={"retry-after": "2"}), error(503, headers={"retry-after": "60"}), completion("ok"))
    await chat(groq, clock=clock).complete(MESSAGES, str)
    assert clock.slept == [2.0, 4.0]  # the second would be 60: capped at backoff_max_s


async def test_settings_decide_retries() -> None:
    settings = LLMSettings.from_settings(None, api_keys=["k1"], retries=0)
    groq = Groq(error(500), error(500))
    clock = Clock()
    c = GroqChat.from_settings(settings, ["m1", "m2"], transport=groq.transport, sleep=clock.sleep, clock=clock)
    with pytest.raises(LLMUnavailable) as info:
        await c.complete(MESSAGES, str)
    assert groq.calls() == [("k1", "m1"), ("k1", "m2")] and clock.slept == []
    assert "k1" not in info.value.message and "key 0/m1: transient" in info.value.message
    assert info.value.status == 503


async def test_every_key_refused_is_unavailable_at_once() -> None:
    groq = Groq(error(401), error(401))
    c = chat(groq)
    with pytest.raises(LLMUnavailable):
        await c.complete(MESSAGES, str)
    with pytest.raises(LLMUnavailable):
        await c.complete(MESSAGES, str)  # no more requests: both keys are known bad
    assert len(groq.requests) == 2


async def test_a_closed_client_opens_again_on_the_next_call() -> None:
    groq = Groq(completion("a"), completion("b"))
    async with chat(groq) as c:
        assert await c.complete(MESSAGES, str) == "a"
    assert await c.complete(MESSAGES, str) == "b"
    await c.aclose()


async def test_a_non_json_body_is_malformed() -> None:
    groq = Groq(httpx.Response(200, text="<html>gateway</html>"), completion("ok"))
    c = chat(groq)
    assert await c.complete(MESSAGES, str) == "ok"
    assert [a.outcome for a in c.attempts] == ["malformed", "ok"]
