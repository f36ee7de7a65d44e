"""A replica killed with SIGKILL mid-message: another replica reclaims the entry and handles it."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

from relay_graph.runtime.streams import STREAM_TICKETS, StreamApp, Publisher, TicketChanged

from .conftest import FAST, all_acknowledged, eventually, running

SCRIPT = Path(__file__).with_name("blocking_consumer.py")


async def test_an_entry_of_a_killed_replica_is_reclaimed(redis, group, tenant, falkordb_server, tmp_path):
    marker = f"test:crash-marker:{uuid.uuid4().hex}"
    log = open(tmp_path / "consumer.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), falkordb_server.host, str(falkordb_server.port), group, marker],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        entry_id = await Publisher(redis).publish(
            TicketChanged(tenant=tenant, ticket_id="T-crash", version=1, change="opened", actor="test")
        )

        async def started():
            assert proc.poll() is None, (tmp_path / "consumer.log").read_text()
            return await redis.get(marker)

        assert (await eventually(started, what="the subprocess's handler started")).decode() == entry_id
        rows = await redis.xpending_range(STREAM_TICKETS, group, "-", "+", 10)
        dead_name = rows[0]["consumer"].decode()
        assert len(rows) == 1 and dead_name.startswith(group + "-")
        proc.kill()  # SIGKILL: no cleanup, no ack
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        log.close()
        await redis.delete(marker)

    handled = []

    async def handler(n, delivery):
        handled.append((n.id, delivery.entry_id, delivery.reclaimed, delivery.deliveries))

    replica = StreamApp(redis, group=group, handlers={TicketChanged: handler}, settings=FAST)
    async with running(replica):
        await eventually(lambda: handled, what="reclaimed by the surviving replica")
        await all_acknowledged(redis, STREAM_TICKETS, group)
    assert handled == [("T-crash", entry_id, True, 2)]
    assert replica.name != dead_name
