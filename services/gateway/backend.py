"""The process's handle on FalkorDB: the Memory facade and the tenant registry on one pool.

It opens on first need rather than at import: the FalkorDB client asks the server a question
while it is being built, and a gateway started before FalkorDB (or cut off from it) must still
serve /healthz and answer 503 elsewhere until the server is back."""

from __future__ import annotations

import asyncio

from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import Unavailable
from relay_graph.memory.facade import Memory

from .auth import TenantKeys


class Backend:
    def __init__(self, settings: GraphSettings, *, memory: Memory | None = None,
                 keys: TenantKeys | None = None) -> None:
        self.settings = settings
        self.owns_memory = memory is None
        self._memory = memory
        self._keys = keys
        self._lock = asyncio.Lock()

    @property
    def is_open(self) -> bool:
        return self._memory is not None

    async def memory(self) -> Memory:
        if self._memory is None:
            async with self._lock:
                if self._memory is None:
                    try:
                        # Building the client does a blocking round trip; keep it off the event loop.
                        client = await asyncio.to_thread(GraphClient, self.settings)
                    except Exception as exc:  # refused, unreachable, loading, bad password ...
                        raise Unavailable(
                            f"FalkorDB at {self.settings.falkordb_host}:{self.settings.falkordb_port} "
                            "is not answering; retry shortly"
                        ) from exc
                    self._memory = Memory(client)
        return self._memory

    async def graph_client(self) -> GraphClient:
        return (await self.memory()).client

    async def keys(self) -> TenantKeys:
        if self._keys is None:
            self._keys = TenantKeys((await self.memory()).client.redis)
        return self._keys

    async def close(self) -> None:
        if self.owns_memory and self._memory is not None:
            await self._memory.client.close()
            self._memory = None
            self._keys = None
