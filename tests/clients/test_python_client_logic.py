"""relay_client's retry and error rules, on httpx's mock transport (pure client logic: the server's
side is tested against the real gateway in tests/gateway/test_python_client.py)."""

from __future__ import annotations

import httpx
import pytest

from relay_client import AsyncRelay, Relay, errors


def replies(*answers):
    """A transport answering each request with the next of `answers` (a (status, body, headers)
    tuple, or an exception to raise), recording the requests."""
    seen: list[httpx.Request] = []
    queue = list(answers)

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = queue.pop(0)
        if isinstance(answer, Exception):
            raise answer
        status, body, headers = answer
        return httpx.Response(status, json=body, headers=headers)

    return seen, handle


WRITTEN = {"fact_id": "f1", "outcome": "created", "superseded": [], "conflict_id": None}


def test_a_write_waits_out_429_and_retries_with_the_same_idempotency_key():
    seen, handle = replies((429, {"error": {"code": "rate_limited", "message": "slow down"}}, {"Retry-After": "0"}),
                           (503, {"error": {"code": "not_ready", "message": "starting"}}, {"Retry-After": "0"}),
                           (201, WRITTEN, {}))
    with Relay("acme", key="k", url="http://relay", transport=httpx.MockTransport(handle)) as relay:
        written = relay.remember("asha", "lives_in", "pune")
    assert written.fact_id == "f1" and written.outcome == "created"
    keys = {r.headers["Idempotency-Key"] for r in seen}
    assert len(seen) == 3 and len(keys) == 1 and keys.pop().startswith("relay-client-")
    assert all(r.headers["Authorization"] == "Bearer k" for r in seen)


def test_a_lost_connection_is_retried_for_a_write_only_with_its_key():
    seen, handle = replies(httpx.ConnectError("refused"), (201, WRITTEN, {}))
    with Relay("acme", key="k", url="http://relay", transport=httpx.MockTransport(handle)) as relay:
        assert relay.remember("asha", "lives_in", "pune").fact_id == "f1"
    assert seen[0].headers["Idempotency-Key"] == seen[1].headers["Idempotency-Key"]


def test_two_writes_have_two_keys():
    seen, handle = replies((201, WRITTEN, {}), (201, WRITTEN, {}))
    with Relay("acme", key="k", url="http://relay", transport=httpx.MockTransport(handle)) as relay:
        relay.remember("asha", "lives_in", "pune")
        relay.remember("asha", "lives_in", "pune")
    assert seen[0].headers["Idempotency-Key"] != seen[1].headers["Idempotency-Key"]


def test_a_refusal_is_not_retried_and_comes_back_typed():
    body = {"error": {"code": "unknown_predicate", "message": "register it with PUT .../predicates/likes"}}
    seen, handle = replies((422, body, {}))
    with Relay("acme", key="k", url="http://relay", transport=httpx.MockTransport(handle)) as relay:
        with pytest.raises(errors.UnknownPredicate) as caught:
            relay.remember("asha", "likes", "tea")
    assert len(seen) == 1
    assert caught.value.status == 422 and "PUT" in caught.value.message and caught.value.body == body


def test_retries_end_and_the_last_answer_is_raised():
    busy = (503, {"error": {"code": "not_ready", "message": "FalkorDB is restarting"}}, {"Retry-After": "0"})
    seen, handle = replies(busy, busy, busy)
    relay = Relay("acme", key="k", url="http://relay", attempts=3, transport=httpx.MockTransport(handle))
    with pytest.raises(errors.Unavailable, match="restarting"):
        relay.facts("asha")
    assert len(seen) == 3


def test_a_write_whose_first_request_is_in_flight_asks_again():
    in_use = (409, {"error": {"code": "idempotency_key_in_use", "message": "in flight"}}, {"Retry-After": "0"})
    seen, handle = replies(in_use, (201, WRITTEN, {}))
    with Relay("acme", key="k", url="http://relay", transport=httpx.MockTransport(handle)) as relay:
        assert relay.remember("asha", "lives_in", "pune").outcome == "created"
    assert len(seen) == 2


def test_other_conflicts_are_raised_at_once():
    seen, handle = replies((409, {"error": {"code": "already_exists", "message": "tenant acme exists"}}, {}))
    with Relay("acme", key="k", url="http://relay", transport=httpx.MockTransport(handle)) as relay:
        with pytest.raises(errors.Conflict):
            relay.create_agent("planner")
    assert len(seen) == 1


def test_no_key_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("RELAY_API_KEY", raising=False)
    with pytest.raises(ValueError, match="RELAY_API_KEY"):
        Relay("acme")


async def test_the_async_client_follows_the_same_rules():
    seen, handle = replies((429, {"error": {"code": "rate_limited", "message": "slow"}}, {"Retry-After": "0"}),
                           (200, {"shape": "memory", "items": [], "facts": []}, {}))
    async with AsyncRelay("acme", key="k", url="http://relay", transport=httpx.MockTransport(handle)) as relay:
        recalled = await relay.recall("where does asha live?", k=5, subject="asha")
    assert recalled.shape == "memory" and len(seen) == 2
    assert seen[0].url.params["k"] == "5" and seen[0].url.params["subject"] == "asha"
    assert "Idempotency-Key" not in seen[0].headers
