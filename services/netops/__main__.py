"""`python -m services.netops`: one replica of netops (consumer group "netops")."""

from __future__ import annotations

import asyncio
import sys

from relay_graph.runtime.agents.runner import run_agent
from relay_graph.memory.entity_graph import communities_loop
from relay_graph.memory.retention import retention_loop

from .bootstrap import bootstrap
from .handlers import HANDLERS
from .settings import SERVICE, NetopsSettings

if __name__ == "__main__":
    settings = NetopsSettings()

    async def maintenance(deps, stop: asyncio.Event) -> None:
        await asyncio.gather(retention_loop(deps.client, stop, every_s=settings.retention_every_s),
                             communities_loop(deps.client, stop, every_s=settings.communities_every_s))

    sys.exit(run_agent(SERVICE, settings, HANDLERS, bootstrap, maintenance))
