"""Turns of one session are handled one at a time and in order, whichever replica gets them."""

from __future__ import annotations

import asyncio
import random

from relay_graph.runtime.streams import STREAM_TURNS, StreamApp, Publisher, TurnReceived

from .conftest import FAST, STEADY, all_acknowledged, eventually, running


def turn(tenant: str, session: str, seq: int) -> TurnReceived:
    return TurnReceived(tenant=tenant, episode_id=f"{session}-e{seq}", seq=seq, session=session, customer="c1")


async def test_later_turns_wait_for_the_earlier_one_on_another_replica(redis, group, tenant):
    log: list[tuple[str, int, str]] = []
    gate = asyncio.Event()

    async def handler(n, delivery):
        log.append(("start", n.seq, delivery.consumer))
        if n.seq == 1:
            await gate.wait()
        log.append(("end", n.seq, delivery.consumer))

    a, b, c = (StreamApp(redis, group=group, handlers={TurnReceived: handler}, settings=STEADY) for _ in range(3))
    pub = Publisher(redis)
    async with running(a):
        await pub.publish(turn(tenant, "s1", 1))
        await eventually(lambda: log, what="turn 1 started on a")
        async with running(b, c):
            await pub.publish(turn(tenant, "s1", 2))
            await pub.publish(turn(tenant, "s1", 3))
            # a is busy with turn 1, so turns 2 and 3 went to b and/or c, and both are holding back.
            await eventually(lambda: b.stats.order_waits + c.stats.order_waits == 2, what="2 and 3 waiting")
            assert log == [("start", 1, a.name)]
            gate.set()
            await eventually(lambda: len(log) == 6, what="all handled")
            await all_acknowledged(redis, STREAM_TURNS, group)
    assert [(event, seq) for event, seq, _ in log] == [
        ("start", 1), ("end", 1), ("start", 2), ("end", 2), ("start", 3), ("end", 3)
    ]
    assert {log[2][2], log[4][2]} <= {b.name, c.name}


async def test_quick_turns_of_many_sessions_with_three_replicas(redis, group, tenant):
    log: list[tuple[str, str, int]] = []
    rnd = random.Random(7)

    async def handler(n):
        log.append(("start", n.session, n.seq))
        await asyncio.sleep(rnd.uniform(0, 0.01))
        log.append(("end", n.session, n.seq))

    settings = STEADY.model_copy(update={"concurrency": 2})
    replicas = [StreamApp(redis, group=group, handlers={TurnReceived: handler}, settings=settings) for _ in range(3)]
    sessions, turns = ["s1", "s2", "s3"], 5
    async with running(*replicas):
        pub = Publisher(redis)

        async def chat(session):  # one customer's quick turns, sessions interleaved with each other
            for seq in range(1, turns + 1):
                await pub.publish(turn(tenant, session, seq))

        await asyncio.gather(*(chat(s) for s in sessions))
        await eventually(lambda: len(log) == 2 * turns * len(sessions), what="all handled")
    for s in sessions:
        events = [(event, seq) for event, session, seq in log if session == s]
        assert events == [(e, seq) for seq in range(1, turns + 1) for e in ("start", "end")], s
    assert sum(r.stats.handled for r in replicas) == turns * len(sessions)


async def test_a_failed_turn_still_goes_before_the_next_one(redis, group, tenant):
    """Turn 1 fails once and is retried by the reclaim loop; turn 2 waits for it (one replica:
    the reclaim loop does not need the read slot that turn 2 is holding)."""
    log: list[tuple[int, int]] = []

    async def handler(n, delivery):
        if n.seq == 1 and delivery.deliveries == 1:
            raise RuntimeError("model not ready")
        log.append((n.seq, delivery.deliveries))

    consumer = StreamApp(redis, group=group, handlers={TurnReceived: handler}, settings=FAST)
    async with running(consumer):
        pub = Publisher(redis)
        await pub.publish(turn(tenant, "s1", 1))
        await pub.publish(turn(tenant, "s1", 2))
        await eventually(lambda: len(log) == 2, what="both handled")
    assert log == [(1, 2), (2, 1)]
    assert consumer.stats.order_waits >= 1


async def test_a_waiting_turn_does_not_hold_back_other_sessions(redis, group, tenant):
    """A turn waiting for its session's earlier turn gives its handler slot back."""
    settings = STEADY.model_copy(update={"order_wait_ms": 60_000})
    gate = asyncio.Event()
    seen = []

    async def handler(n):
        seen.append(n.session)
        if n.session == "blocked":
            await gate.wait()

    consumer = StreamApp(redis, group=group, handlers={TurnReceived: handler},
                        settings=settings.model_copy(update={"concurrency": 2}))
    async with running(consumer):
        pub = Publisher(redis)
        await pub.publish(turn(tenant, "blocked", 1))
        # sessions are independent: with two slots, wait until turn 1 holds one before going on
        await eventually(lambda: seen == ["blocked"], what="blocked turn 1 started")
        await pub.publish(turn(tenant, "blocked", 2))
        await pub.publish(turn(tenant, "free", 1))
        await eventually(lambda: "free" in seen, what="another session passes a waiting turn")
        gate.set()
        await eventually(lambda: len(seen) == 3, what="all handled")
    assert seen[0] == "blocked" and seen.count("blocked") == 2
