"""A consumer process for the crash test: its handler records the entry it got, then hangs
until the test kills the process with SIGKILL. Usage: blocking_consumer.py HOST PORT GROUP MARKER"""

import asyncio
import sys

from relay_graph.runtime.streams import StreamApp, StreamSettings, TicketChanged, connect


async def main(host: str, port: str, group: str, marker: str) -> None:
    redis = connect(host=host, port=int(port))

    async def handler(notification, delivery):
        await redis.set(marker, delivery.entry_id)
        await asyncio.Event().wait()

    settings = StreamSettings(min_idle_ms=1_000, heartbeat_ms=100, block_ms=50, reclaim_interval_ms=50)
    await StreamApp(redis, group=group, handlers={TicketChanged: handler}, settings=settings).run()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
