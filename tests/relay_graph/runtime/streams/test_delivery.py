"""Delivery guarantees of the FastStream services on real Redis Streams (the embedded FalkorDB)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from relay_graph.runtime.streams import (
    STREAM_TICKETS,
    StreamApp,
    Publisher,
    TicketChanged,
    TurnReceived,
    decode,
    missing_groups,
    read_dead_letters,
    stream_groups,
)
from relay_graph.runtime.streams.wire import to_fields

from .conftest import FAST, STEADY, all_acknowledged, eventually, pending_count, running


def ticket(tenant: str, ref: str | int, version: int = 1) -> TicketChanged:
    return TicketChanged(tenant=tenant, ticket_id=f"T-{ref}", version=version, change="opened", actor="test")


async def test_ack_only_after_the_handler_returned(redis, group, tenant):
    entered, gate = asyncio.Event(), asyncio.Event()
    done = []

    async def handler(n):
        entered.set()
        await gate.wait()
        done.append(n.id)

    consumer = StreamApp(redis, group=group, handlers={TicketChanged: handler}, settings=STEADY)
    async with running(consumer):
        entry_id = await Publisher(redis).publish(ticket(tenant, 1))
        await eventually(entered.is_set, what="handler entered")
        rows = await redis.xpending_range(STREAM_TICKETS, group, "-", "+", 10)
        assert [(r["message_id"].decode(), r["consumer"].decode()) for r in rows] == [(entry_id, consumer.name)]
        gate.set()
        await eventually(lambda: consumer.stats.handled == 1, what="handled")
        assert await pending_count(redis, STREAM_TICKETS, group) == 0
    assert done == ["T-1"]


async def test_a_failed_handler_leaves_the_entry_pending_and_another_replica_finishes_it(redis, group, tenant):
    handled = []

    async def broken(n):
        raise RuntimeError("graph write failed")

    async def works(n, delivery):
        handled.append((n.id, delivery.consumer, delivery.reclaimed, delivery.deliveries))

    first = StreamApp(redis, group=group, handlers={TicketChanged: broken}, settings=FAST)
    second = StreamApp(redis, group=group, handlers={TicketChanged: works}, settings=FAST)
    async with running(first):
        entry_id = await Publisher(redis).publish(ticket(tenant, 7))
        await eventually(lambda: first.stats.failed >= 1, what="first failure")
    rows = await redis.xpending_range(STREAM_TICKETS, group, "-", "+", 10)
    assert [(r["message_id"].decode(), r["consumer"].decode()) for r in rows] == [(entry_id, first.name)]

    async with running(second):
        await eventually(lambda: handled, what="reclaimed and handled")
    assert handled[0][:3] == ("T-7", second.name, True) and handled[0][3] >= 2
    assert await pending_count(redis, STREAM_TICKETS, group) == 0
    assert await read_dead_letters(redis, STREAM_TICKETS) == []


async def test_a_slow_handler_keeps_its_entry(redis, group, tenant):
    """The heartbeat keeps a live handler's entry fresh: a healthy replica does not steal it."""
    gate = asyncio.Event()
    calls = []

    async def slow(n, delivery):
        calls.append(delivery.consumer)
        await gate.wait()

    a = StreamApp(redis, group=group, handlers={TicketChanged: slow}, settings=FAST)
    b = StreamApp(redis, group=group, handlers={TicketChanged: slow}, settings=FAST)
    loop = asyncio.get_running_loop()
    async with running(a):
        await Publisher(redis).publish(ticket(tenant, 1))
        await eventually(lambda: calls, what="a started")
        taken_at = loop.time()
        async with running(b):
            # Let b's reclaim subscriber look many times (every reclaim_interval_ms), over
            # several idle timeouts, while a is still working.
            await eventually(
                lambda: loop.time() - taken_at > 2.5 * FAST.min_idle_ms / 1000,
                what="several idle timeouts passed",
            )
            assert calls == [a.name] and b.stats.reclaimed == 0
            gate.set()
            await eventually(lambda: a.stats.handled == 1, what="a finished")
    assert calls == [a.name]
    assert await pending_count(redis, STREAM_TICKETS, group) == 0


async def test_a_poison_message_goes_to_the_dead_letters_while_others_flow(redis, group, tenant, caplog):
    caplog.set_level(logging.ERROR, logger="relay_graph.runtime.streams")
    attempts, good = [], []

    async def handler(n, delivery):
        if n.id == "T-poison":
            attempts.append(delivery.deliveries)
            raise ValueError("cannot read ticket T-poison")
        good.append(n.id)

    replicas = [StreamApp(redis, group=group, handlers={TicketChanged: handler}, settings=FAST) for _ in range(2)]
    pub = Publisher(redis)
    async with running(*replicas):
        for i in range(3):
            await pub.publish(ticket(tenant, i))
        poison_id = await pub.publish(ticket(tenant, "poison"))
        for i in range(3, 6):
            await pub.publish(ticket(tenant, i))
        await eventually(lambda: len(good) == 6, what="good messages handled")
        dead = await eventually(lambda: read_dead_letters(redis, STREAM_TICKETS), what="dead letter")
        await pub.publish(ticket(tenant, "after"))
        await eventually(lambda: "T-after" in good, what="flow continues")
        await all_acknowledged(redis, STREAM_TICKETS, group)
    assert sorted(good) == sorted([f"T-{i}" for i in range(6)] + ["T-after"])
    assert sorted(attempts) == [1, 2, 3]  # max_deliveries handler runs, then no more
    assert len(dead) == 1
    letter = dead[0]
    assert letter.original_id == poison_id and letter.group == group and letter.deliveries == 3
    assert letter.stream == STREAM_TICKETS
    assert "ValueError: cannot read ticket T-poison" in letter.error
    assert decode(letter.fields["payload"]).id == "T-poison"
    assert any("dead-lettered" in r.getMessage() and poison_id in r.getMessage() for r in caplog.records)
    assert sum(r.stats.dead_lettered for r in replicas) == 1


async def test_undecodable_entries_go_straight_to_the_dead_letters(redis, group, tenant):
    good = []

    async def handler(n):
        good.append(n.id)

    turn = TurnReceived(tenant=tenant, episode_id="e1", seq=1, session="s", customer="c")
    bad = [
        {"kind": "ticket_changed", "payload": "{not json"},
        {"kind": "ticket_changed"},
        {b"payload": b"\xff\xfe\x00"},
        to_fields(turn),  # a valid notification on the wrong stream
        {"payload": '{"kind": "ticket_changed", "tenant": "NOT A TENANT"}'},
    ]
    consumer = StreamApp(redis, group=group, handlers={TicketChanged: handler}, settings=STEADY)
    async with running(consumer):
        bad_ids = [(await redis.xadd(STREAM_TICKETS, fields)).decode() for fields in bad]
        await Publisher(redis).publish(ticket(tenant, "fine"))
        await eventually(lambda: good == ["T-fine"], what="good handled")
        dead = await eventually(
            lambda: _n_dead(redis, len(bad)), what="all bad entries dead-lettered"
        )
        await all_acknowledged(redis, STREAM_TICKETS, group)
    assert sorted(d.original_id for d in dead) == sorted(bad_ids)
    assert all(d.error.startswith("undecodable entry:") and d.deliveries == 1 for d in dead)
    raw = await redis.xrange("relay:dlq:{relay:stream:tickets}")
    assert any(fields.get(b"payload") == b"\xff\xfe\x00" for _, fields in raw)  # kept byte for byte
    assert consumer.stats.failed == 0


async def _n_dead(redis, n):
    dead = await read_dead_letters(redis, STREAM_TICKETS)
    return dead if len(dead) == n else None


async def test_groups_created_later_see_entries_published_before_them(redis, tenant):
    pub = Publisher(redis)
    ids = [await pub.publish(ticket(tenant, i)) for i in range(3)]
    seen: dict[str, list[str]] = {"resolver": [], "live": []}

    def recorder(name):
        async def handler(n):
            seen[name].append(n.id)
        return handler

    consumers = [StreamApp(redis, group=name, handlers={TicketChanged: recorder(name)}, settings=STEADY) for name in seen]
    async with running(*consumers):
        await eventually(lambda: all(len(v) == 3 for v in seen.values()), what="both groups caught up")
    assert seen == {"resolver": ["T-0", "T-1", "T-2"], "live": ["T-0", "T-1", "T-2"]}
    assert len(ids) == 3


async def test_every_xadd_trims_the_stream(redis, tenant):
    node_size = int((await redis.config_get("stream-node-max-entries"))["stream-node-max-entries"])
    pub = Publisher(redis, maxlen=50)
    for i in range(700):
        await pub.publish(ticket(tenant, i))
    length = await redis.xlen(STREAM_TICKETS)
    assert 50 <= length <= 50 + node_size  # MAXLEN ~ trims whole macro nodes
    newest = await redis.xrevrange(STREAM_TICKETS, count=1)
    assert decode(newest[0][1][b"payload"]).id == "T-699"


@pytest.mark.parametrize("concurrency", [1, 2])
async def test_stop_finishes_the_message_in_flight(redis, group, tenant, concurrency):
    entered, gate = asyncio.Event(), asyncio.Event()
    done = []

    async def handler(n):
        entered.set()
        await gate.wait()
        done.append(n.id)

    settings = STEADY.model_copy(update={"concurrency": concurrency})
    consumer = StreamApp(redis, group=group, handlers={TicketChanged: handler}, settings=settings)
    task = asyncio.create_task(consumer.run())
    await eventually(consumer.ready.is_set, what="ready")
    pub = Publisher(redis)
    await pub.publish(ticket(tenant, "in-flight"))
    await eventually(entered.is_set, what="handler entered")
    consumer.stop()
    # The stop has reached every subscriber (each stopped reading: FastStream's `running`, as the
    # housekeeping reads it); the handler cannot finish before the gate opens, so the check below
    # cannot flake.
    await eventually(lambda: not any(sub.running for sub in consumer.broker.subscribers),
                     what="every subscriber stopped reading")
    assert not task.done()  # it waits for the handler instead of abandoning it
    if concurrency == 1:  # with one slot, nothing can be read while the handler runs
        await pub.publish(ticket(tenant, "after-stop"))
    gate.set()
    await asyncio.wait_for(task, 10)
    assert done == ["T-in-flight"]
    assert await pending_count(redis, STREAM_TICKETS, group) == 0  # acknowledged before exiting
    if concurrency > 1:
        return

    later = []

    async def record(n):
        later.append(n.id)

    async with running(StreamApp(redis, group=group, handlers={TicketChanged: record}, settings=STEADY)):
        await eventually(lambda: later, what="next replica picks up")
    assert later == ["T-after-stop"]


async def test_a_repeated_notification_is_handled_once(redis, group, tenant):
    calls = []

    async def handler(n):
        calls.append(n.notification_id)

    same = ticket(tenant, 1)
    consumer = StreamApp(redis, group=group, handlers={TicketChanged: handler}, settings=STEADY)
    async with running(consumer):
        pub = Publisher(redis)
        await pub.publish(same)
        await pub.publish(same)  # e.g. a publisher that retried after a timeout
        await pub.publish(ticket(tenant, 2))
        await eventually(lambda: consumer.stats.handled + consumer.stats.duplicates == 3, what="all three seen")
        assert await pending_count(redis, STREAM_TICKETS, group) == 0
    assert calls.count(same.notification_id) == 1 and len(calls) == 2
    assert consumer.stats.duplicates == 1


async def test_readiness_sees_which_groups_exist(redis, tenant):
    expected = {STREAM_TICKETS: ["resolver", "live"]}
    assert await missing_groups(redis, expected) == expected  # the stream does not even exist yet

    async def handler(n):
        pass

    resolver = StreamApp(redis, group="resolver", handlers={TicketChanged: handler}, settings=STEADY)
    async with running(resolver):
        assert await missing_groups(redis, expected) == {STREAM_TICKETS: ["live"]}
        await Publisher(redis).publish(ticket(tenant, 1))
        await eventually(lambda: resolver.stats.handled == 1, what="handled")
        [info] = await stream_groups(redis, STREAM_TICKETS)
    assert (info.group, info.consumers, info.pending, info.lag) == ("resolver", 1, 0, 0)
