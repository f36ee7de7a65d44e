"""A concurrent schema stress: 32 connections add new labels, relationship types, properties and
indexes to the same graphs while they read by label, on one FalkorDB module, until it crashes or the time
is up. `python -m bench.schema_stress [--module 4.16.3|4.22.1|both] [--seconds 60]`.

Why: FalkorDB 4.16.3 crashed here once in four full test runs with SIGSEGV in
_GraphContext_GetLabelID <- GraphContext_GetSchema (a reader finding a schema while a writer grows
the schema list; fixed upstream after 4.16). Each connection writes nodes with labels and keys
it has not used before (so every write grows the schema) and reads by labels the others just
made. The labels are made up by this tool, so it builds Cypher text itself; nothing of Relay runs.
Prints, per module, whether the server survived, how many queries answered and the server's
last log lines when it did not."""

from __future__ import annotations

import argparse
import random
import tempfile
import threading
import time
from pathlib import Path

import redis

from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port

CONNECTIONS = 32
GRAPHS = 4


def hammer(port: int, worker: int, stop: threading.Event, counts: list[int], errors: list[str]) -> None:
    rng = random.Random(worker)
    client = redis.Redis(port=port, socket_timeout=30)
    i = 0
    try:
        while not stop.is_set():
            graph = f"stress{rng.randrange(GRAPHS)}"
            i += 1
            cmd = "GRAPH.QUERY"
            if worker % 4 == 0:
                q = (f"CREATE (:W{worker}_{i} {{k{worker}_{i}: {i}}})-[:R{worker}_{i % 50}]->"
                     f"(:W{worker}_{i}b {{k{worker}_{i}b: 1}})")
            elif worker % 4 == 1:  # an index on a label that may not exist yet, as ensure_schema does
                q = f"CREATE INDEX FOR (n:W{worker - 1}_{i}) ON (n.k{worker - 1}_{i})"
            else:  # reads run beside the writer: they look up labels the writer is adding
                cmd = "GRAPH.RO_QUERY"
                other, j = rng.randrange(0, CONNECTIONS, 4), rng.randrange(1, max(2, i))
                q = f"MATCH (n:W{other}_{j}) WHERE n.k{other}_{j} > 0 RETURN count(n)"
            try:
                client.execute_command(cmd, graph, q)
                counts[worker] += 1
            except redis.exceptions.ResponseError:
                counts[worker] += 1  # an answer: the server is alive
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
        errors.append(f"worker {worker}: {type(exc).__name__}")
        stop.set()
    finally:
        client.close()


def stress(module: str, seconds: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="relay-stress-") as tmp:
        log = Path(tmp) / "falkordb.log"
        server = EmbeddedFalkorDB(Path(tmp) / "data", free_port(), log_file=log, module=module).start()
        stop, counts, errors = threading.Event(), [0] * CONNECTIONS, []
        threads = [threading.Thread(target=hammer, args=(server.port, w, stop, counts, errors), daemon=True)
                   for w in range(CONNECTIONS)]
        started = time.monotonic()
        for t in threads:
            t.start()
        while time.monotonic() - started < seconds and not stop.is_set():
            time.sleep(0.2)
            if server.process.poll() is not None:
                break
        stop.set()
        for t in threads:
            t.join(35)
        code = server.process.poll()
        crashed = code is not None
        tail = log.read_text(errors="replace").splitlines()[-12:] if crashed else []
        if not crashed:
            server.stop(compact_timeout=5)
        return {"module": module, "crashed": crashed, "exit_code": code, "queries": sum(counts),
                "seconds": round(time.monotonic() - started, 1), "errors": errors[:3], "log_tail": tail}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.schema_stress", description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", default="both", choices=["4.16.3", "4.22.1", "both"])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args(argv)
    modules = ["4.16.3", "4.22.1"] if args.module == "both" else [args.module]
    for r in range(args.rounds):
        for m in modules:
            res = stress(m, args.seconds)
            verdict = f"CRASHED (exit {res['exit_code']})" if res["crashed"] else "survived"
            print(f"round {r + 1} FalkorDB {m}: {verdict} after {res['seconds']} s, {res['queries']:,} queries answered")
            for line in res["log_tail"]:
                print(f"    {line}")


if __name__ == "__main__":
    main()
