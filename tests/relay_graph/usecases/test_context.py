"""The one process context (usecases.context.Deps): built without connecting, its memory opened on
first need (once, however many ask), closed and dropped by `aclose` (what was passed in stays open),
and every Call it makes announces through its outbox."""

from __future__ import annotations

import asyncio

import pytest

from relay_graph.runtime.embedded import free_port
from relay_graph.runtime.errors import Unavailable
from relay_graph.runtime.outbox import Outbox
from relay_graph.runtime.streams import FactChanged, ReplyWritten, TicketChanged
from relay_graph.usecases.context import Call, make_deps


async def test_a_context_is_built_without_the_server_and_says_when_it_cannot_open(graph_settings):
    settings = graph_settings.model_copy(update={"falkordb_port": free_port(), "falkordb_cluster": ""})
    deps = make_deps("gateway", settings)  # no server on that port: building asks it nothing
    try:
        assert deps.memory is None and deps.outbox is None
        with pytest.raises(Unavailable):
            deps.call("acme")
        with pytest.raises(Unavailable, match=f"{settings.falkordb_port} is not answering"):
            await deps.open()
        assert deps.memory is None  # the next need tries again
    finally:
        await deps.aclose()


async def test_the_memory_opens_once_and_is_dropped_on_close(graph_settings, tenant):
    deps = make_deps("gateway", graph_settings)
    try:
        first, second = await asyncio.gather(deps.open(), deps.open())
        assert first is second and deps.memory is first
        assert isinstance(deps.outbox, Outbox) and deps.outbox.client is first.client
        call = deps.call(tenant)
        assert (call.tenant, call.agent, call.announcer, call.memory) == (tenant, "gateway", deps.outbox, first)
        assert deps.call(tenant, "resolver", label="night").label == "night"
        assert await first.client.ping()
    finally:
        await deps.aclose()
    assert deps.memory is None and deps.outbox is None
    again = await deps.open()  # a closed context opens again on need
    try:
        assert again is not first and await again.client.ping()
    finally:
        await deps.aclose()


async def test_what_was_passed_in_stays_open(graph_settings, memory, stream_redis, tenant):
    deps = make_deps("intake", graph_settings, memory=memory, redis=stream_redis)
    assert deps.memory is memory and deps.outbox.client is memory.client  # open from the start
    assert deps.call(tenant).announcer is deps.outbox
    await deps.aclose()
    assert deps.memory is memory  # not ours to drop
    assert await memory.client.ping() and await stream_redis.ping()


class _Announcer:
    """A collector of what a flush hands the outbox (pure logic: the outbox itself is tested on the
    real FalkorDB in tests/relay_graph/runtime/streams/test_outbox.py)."""

    def __init__(self, published: bool = True, fail: Exception | None = None) -> None:
        self.calls: list[list[str]] = []
        self.published, self.fail = published, fail

    async def announce(self, tenant, notifications) -> bool:
        self.calls.append([n.kind for n in notifications])
        if self.fail is not None:
            raise self.fail
        return self.published


def _owing(announcer: _Announcer) -> Call:
    call = Call(None, "acme", "intake", announcer)  # type: ignore[arg-type] - flush never reads the memory
    call.owe(TicketChanged(tenant="acme", id="T-1", version=1, change="handed_off", actor="intake"),
             ReplyWritten(tenant="acme", id="r-1", version=1, session="s-1", customer="c-1", actor="intake",
                          reply_to="e-1"))
    call.owe(FactChanged(tenant="acme", id="f-1", version=0, change="created", actor="intake"), best_effort=True)
    return call


async def test_what_a_call_owes_and_tells_goes_out_in_one_announcement():
    announcer = _Announcer()
    assert await _owing(announcer).flush() is True
    assert announcer.calls == [["ticket_changed", "reply_written", "fact_changed"]]
    refused = _Announcer(published=False)  # kept, the streams refused them now: the relay sends them
    assert await _owing(refused).flush() is False and len(refused.calls) == 1


async def test_a_call_whose_announcements_cannot_be_kept_fails_and_owes_nothing_twice():
    announcer = _Announcer(fail=Unavailable("FalkorDB is not answering"))
    call = _owing(announcer)
    with pytest.raises(Unavailable):
        await call.flush()
    assert call.owed == [] and call.told == []
    told_only = Call(None, "acme", "gateway", announcer)  # type: ignore[arg-type]
    told_only.owe(FactChanged(tenant="acme", id="f-2", version=0, change="created", actor="gateway"), best_effort=True)
    assert await told_only.flush() is False  # best effort alone: logged, not raised
