"""The one process context (usecases.context.Deps): built without connecting, its memory opened on
first need (once, however many ask), closed and dropped by `aclose` (what was passed in stays open),
and every Call it makes announces through its outbox."""

from __future__ import annotations

import asyncio

import pytest

from relay_graph.runtime.embedded import free_port
from relay_graph.runtime.errors import Unavailable
from relay_graph.runtime.outbox import Outbox
from relay_graph.usecases.context import make_deps


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
