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
from relay_graph.usecases.context import RIDE_ALONG, Call, make_deps


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
    real FalkorDB in tests/relay_graph/runtime/streams/test_outbox.py). `fail_when`: the kinds of a
    call that cannot be kept."""

    def __init__(self, published: bool = True, fail: Exception | None = None,
                 fail_when=lambda kinds: True) -> None:
        self.calls: list[list[str]] = []
        self.published, self.fail, self.fail_when = published, fail, fail_when

    async def announce(self, tenant, notifications) -> bool:
        kinds = [n.kind for n in notifications]
        self.calls.append(kinds)
        if self.fail is not None and self.fail_when(kinds):
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
    # together, then the owed alone (which fail the call: its request or delivery is tried again)
    assert announcer.calls == [["ticket_changed", "reply_written", "fact_changed"], ["ticket_changed", "reply_written"]]
    assert await call.flush() is True and len(announcer.calls) == 2  # nothing left to announce again
    told_only = Call(None, "acme", "gateway", announcer)  # type: ignore[arg-type]
    told_only.owe(FactChanged(tenant="acme", id="f-2", version=0, change="created", actor="gateway"), best_effort=True)
    assert await told_only.flush() is False  # best effort alone: logged, not raised


async def test_best_effort_notifications_that_break_the_outbox_write_do_not_fail_the_owed():
    announcer = _Announcer(fail=Unavailable("too big"), fail_when=lambda kinds: "fact_changed" in kinds)
    call = _owing(announcer)
    assert await call.flush() is False  # the owed are kept and published; the facts' news is lost, logged
    assert announcer.calls == [["ticket_changed", "reply_written", "fact_changed"], ["ticket_changed", "reply_written"],
                               ["fact_changed"]]


async def test_many_best_effort_notifications_go_in_writes_of_their_own():
    announcer = _Announcer()
    call = _owing(announcer)
    call.owe(*[FactChanged(tenant="acme", id=f"f-{i}", version=0, change="created", actor="intake")
               for i in range(RIDE_ALONG)], best_effort=True)
    assert await call.flush() is True
    assert [len(c) for c in announcer.calls] == [2, RIDE_ALONG + 1]
