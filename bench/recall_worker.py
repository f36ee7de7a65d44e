"""One process that answers recalls for bench.recall_ab, with the code of the checkout it is started
in (its PYTHONPATH): a question per line on stdin ({"q": ...}), an answer per line on stdout
({"ms", "ids", "statements"}): the recall's own wall time, the ids it found, the statements it sent.
Run by path, not as a module, so it imports nothing of the bench that the other checkout may lack.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from relay_graph.memory.facade import Memory
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embeddings import Embedder


async def serve(port: int, tenant: str, model_dir: Path, threads: int) -> None:
    client = GraphClient(GraphSettings(falkordb_host="127.0.0.1", falkordb_port=port, model_dir=model_dir))
    # as the gateway embeds (its embed_threads, which sleep when idle); no cache: questions are distinct
    memory = Memory(client, Embedder(model_dir, cache_size=1, threads=threads))
    sent = 0
    run = client.run

    async def counted(*args, **kwargs):
        nonlocal sent
        sent += 1
        return await run(*args, **kwargs)

    client.run = counted  # type: ignore[method-assign]
    await memory.recall(tenant, "warm up the model and the pool")
    loop = asyncio.get_running_loop()
    print(json.dumps({"ready": True}), flush=True)
    try:
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            q = json.loads(line)["q"]
            before = sent
            start = time.perf_counter()
            r = await memory.recall(tenant, q, k=10)
            ms = (time.perf_counter() - start) * 1000
            print(json.dumps({"ms": ms, "ids": [i.episode_id for i in r.items], "statements": sent - before}),
                  flush=True)
    finally:
        await client.close()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])))
