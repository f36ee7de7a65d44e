"""Where a recall's time goes, measured on bench.recall_hybrid's crowded tenant (`--cost`).

For each timed question: the recall's wall time, each statement it sent (the client's wall time for
it, and the rows it returned), and afterwards, for each of those statements with the same
parameters, the server's own execution time (GRAPH.RO_QUERY's "internal execution time") and,
for the slowest, its GRAPH.PROFILE (each operation's records and time). The model's share is the
question embedded alone on an embedder like recall's (distinct questions: no cache hit). The
client's share of a statement is its wall time less the server's: the wire, the parsing, the
event loop. Round trips overlap (the vector beside round trip 1, two signal statements side by
side), so shares are per statement, not a sum of the recall.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

from relay_graph.memory.facade import Memory
from relay_graph.runtime import graph_wire
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embeddings import Embedder
from relay_graph.runtime.queries import Query
from relay_graph.runtime.tenancy import graph_name

from .memory_core import percentile

K = 10


async def server_ms(client: GraphClient, tenant: str, query: Query, params: dict[str, Any] | None) -> float:
    """The server's own execution time of a read-only statement (its reply's statistics)."""
    reply = await client.redis.execute_command("GRAPH.RO_QUERY", graph_name(tenant),
                                               graph_wire.params_header(params) + query.cypher)
    for line in reply[-1]:
        text = line.decode() if isinstance(line, bytes) else str(line)
        if text.startswith("Query internal execution time"):
            return float(text.split(":")[1].split()[0])
    return float("nan")


async def breakdown(memory: Memory, tenant: str, questions: Sequence[Any], model: Embedder) -> dict[str, Any]:
    """Per statement: calls, client wall p50/p95, server p50/p95, rows; per recall: wall, model,
    statements sent. `questions` have `.q`."""
    client = memory.client
    calls: list[tuple[Query, dict[str, Any] | None, float, int]] = []
    run = client.run

    async def watch(t: str, query: Query, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        start = time.perf_counter()
        rows = await run(t, query, params)
        calls.append((query, params, (time.perf_counter() - start) * 1000, len(rows)))
        return rows

    walls, per_recall = [], []
    client.run = watch  # type: ignore[method-assign]
    try:
        for q in questions:
            before = len(calls)
            start = time.perf_counter()
            await memory.recall(tenant, q.q, k=K)
            walls.append((time.perf_counter() - start) * 1000)
            per_recall.append(len(calls) - before)
    finally:
        del client.run  # the instance's own attribute; the method shows through again
    models = []
    for q in questions:
        start = time.perf_counter()
        await model.aembed([q.q])
        models.append((time.perf_counter() - start) * 1000)
    by_name: dict[str, dict[str, list[float]]] = {}
    slowest: tuple[float, Query | None, dict[str, Any] | None] = (-1.0, None, None)
    for query, params, wall, rows in calls:
        server = await server_ms(client, tenant, query, params) if query.read_only else float("nan")
        s = by_name.setdefault(query.name, {"wall": [], "server": [], "rows": []})
        s["wall"].append(wall)
        s["server"].append(server)
        s["rows"].append(rows)
        if server > slowest[0]:
            slowest = (server, query, params)
    out = {"recalls": len(walls), "recall_p50_ms": _r(percentile(walls, 50)), "recall_p95_ms": _r(percentile(walls, 95)),
           "model_p50_ms": _r(percentile(models, 50)), "model_p95_ms": _r(percentile(models, 95)),
           "statements_per_recall": _r(sum(per_recall) / len(per_recall)),
           "statements": {name: _stats(s, len(walls)) for name, s in sorted(by_name.items())}}
    if slowest[1] is not None:
        out["slowest_profile"] = {"statement": slowest[1].name, "server_ms": _r(slowest[0]),
                                  "plan": (await client.profile(tenant, slowest[1], slowest[2])).splitlines()}
    return out


def _stats(s: dict[str, list[float]], recalls: int) -> dict[str, Any]:
    wall, server = s["wall"], [x for x in s["server"] if x == x]
    out = {"calls": len(wall), "per_recall": _r(len(wall) / recalls), "wall_p50_ms": _r(percentile(wall, 50)),
           "wall_p95_ms": _r(percentile(wall, 95)), "rows_mean": _r(sum(s["rows"]) / len(s["rows"]))}
    if server:
        out |= {"server_p50_ms": _r(percentile(server, 50)), "server_p95_ms": _r(percentile(server, 95)),
                "client_share_p50_ms": _r(percentile(wall, 50) - percentile(server, 50))}
    return out


def _r(x: float) -> float:
    return round(x, 2)


def lines(cost: dict[str, Any]) -> list[str]:
    """The breakdown as text, one statement a line."""
    out = [f"recall p50 / p95 {cost['recall_p50_ms']} / {cost['recall_p95_ms']} ms over {cost['recalls']} questions; "
           f"the model alone p50 / p95 {cost['model_p50_ms']} / {cost['model_p95_ms']} ms; "
           f"{cost['statements_per_recall']} statements per recall"]
    for name, s in cost["statements"].items():
        server = (f"server p50 / p95 {s['server_p50_ms']} / {s['server_p95_ms']} ms, client share p50 "
                  f"{s['client_share_p50_ms']} ms" if "server_p50_ms" in s else "writes: not re-run")
        out.append(f"  {name}: {s['per_recall']} per recall, wall p50 / p95 {s['wall_p50_ms']} / {s['wall_p95_ms']} ms, "
                   f"{server}, {s['rows_mean']} rows")
    if "slowest_profile" in cost:
        p = cost["slowest_profile"]
        out.append(f"  slowest statement: {p['statement']} ({p['server_ms']} ms on the server); its profile:")
        out += [f"    {line}" for line in p["plan"]]
    return out
