"""The chat use cases (usecases.chat.take_turn, await_reply) on the real FalkorDB and streams,
through a process context as the gateway's bootstrap builds it: taking a turn stores it and owes its
announcements on the call without publishing anything; await_reply registers the reply's expectation
before the announcement goes out, then waits; the TurnReceived carries the notification id its
statement kept; a wait that runs out says so; a call that cannot announce or wait is refused before
anything is written."""

from __future__ import annotations

import asyncio
from contextlib import contextmanager

import pytest

from relay_graph.desk.conversation import turns as chat
from relay_graph.runtime.queries import outbox as q
from relay_graph.runtime.streams import STREAM_TURNS
from relay_graph.usecases import chat as chat_cases
from relay_graph.usecases.context import Call, make_deps
from tests.gateway.stream_helpers import published


class Silent:
    """Replies that never come (a desk with no agent running); records what was asked."""

    def __init__(self) -> None:
        self.started, self.expected = 0, []

    async def start(self) -> None:
        self.started += 1

    @contextmanager
    def expect(self, tenant: str, episode_id: str):
        self.expected.append((tenant, episode_id))
        yield asyncio.get_running_loop().create_future()


@pytest.fixture
async def deps(graph_settings, memory, stream_redis):
    deps = make_deps("gateway", graph_settings, memory=memory, redis=stream_redis)
    yield deps
    await deps.aclose()


async def take(deps, tenant, replies=None, wait: float = 0, **turn):
    call = deps.call(tenant, chat.AGENT)
    stored = await chat_cases.take_turn(call, replies=replies, wait=wait,
                                        **{"customer": None, "text": "hello", "session": None, **turn})
    return await chat_cases.await_reply(call, stored, replies, wait)


async def test_a_turn_is_stored_and_announced_with_the_id_its_statement_kept(deps, memory, stream_redis, tenant):
    taken = await take(deps, tenant, name="Ann Bell", text="my router is frozen")
    assert not taken.waited and taken.reply is None and taken.turn.customer
    [n] = await published(stream_redis, STREAM_TURNS, tenant)
    assert (n.id, n.session, n.seq, str(n.notification_id)) == (
        taken.turn.episode_id, taken.turn.session, 1, taken.turn.notification_id)
    await deps.outbox.flush()  # what this process published leaves the outbox
    assert await memory.client.run(tenant, q.PENDING, {"before_ms": 2**62, "limit": 10}) == []


async def test_a_wait_that_runs_out_returns_the_turn_without_a_reply(deps, stream_redis, tenant):
    replies = Silent()
    taken = await take(deps, tenant, replies, wait=0.05)
    assert taken.waited and taken.reply is None and taken.ticket is None
    assert replies.started == 1 and replies.expected == [(tenant, taken.turn.episode_id)]
    assert [n.id for n in await published(stream_redis, STREAM_TURNS, tenant)] == [taken.turn.episode_id]


async def test_a_call_that_cannot_announce_or_wait_writes_nothing(deps, memory, stream_redis, tenant):
    with pytest.raises(RuntimeError, match="outbox"):
        await chat_cases.take_turn(Call(memory, tenant, chat.AGENT), customer=None, text="hi", session=None)
    with pytest.raises(RuntimeError, match="replies"):
        await chat_cases.take_turn(deps.call(tenant, chat.AGENT), customer=None, text="hi", session=None, wait=1)
    assert not await memory.client.graph_exists(tenant)
    assert await published(stream_redis, STREAM_TURNS, tenant) == []


async def test_taking_a_turn_owes_its_announcements_and_publishes_nothing(deps, memory, stream_redis, tenant):
    call = deps.call(tenant, chat.AGENT)
    turn = await chat_cases.take_turn(call, customer=None, name="Ann Bell", text="hello", session=None)
    [kept] = call.kept
    assert (kept.kind, kept.id, str(kept.notification_id)) == ("turn_received", turn.episode_id, turn.notification_id)
    assert [(n.kind, n.change) for n in call.told] == [("fact_changed", "created")]  # the new customer's name
    assert call.owed == []
    assert await published(stream_redis, STREAM_TURNS, tenant) == []  # nothing announced before the flush
    await chat_cases.await_reply(call, turn)
    assert [n.id for n in await published(stream_redis, STREAM_TURNS, tenant)] == [turn.episode_id]
    assert (call.owed, call.told, call.kept) == ([], [], [])  # flushed: the route's dependency finds nothing


async def test_the_reply_is_expected_before_the_turn_is_announced(deps, stream_redis, tenant):
    replies = Silent()
    call = deps.call(tenant, chat.AGENT)
    turn = await chat_cases.take_turn(call, customer=None, text="hello", session=None, replies=replies, wait=0.05)
    order: list[str] = []
    flush = call.flush

    async def flushing():
        order.append("flush")
        return await flush()

    call.flush = flushing  # type: ignore[method-assign]
    expect = replies.expect

    @contextmanager
    def expecting(t, e):
        order.append("expect")
        with expect(t, e) as fut:
            yield fut

    replies.expect = expecting  # type: ignore[method-assign]
    taken = await chat_cases.await_reply(call, turn, replies, 0.05)
    assert order == ["expect", "flush"] and taken.waited and taken.reply is None
    assert [n.id for n in await published(stream_redis, STREAM_TURNS, tenant)] == [turn.episode_id]
