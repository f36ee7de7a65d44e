"""The simulator is one more client of Relay, never a back door into the graph: its source imports
no graph access (no GraphClient, no relay_graph module but the heartbeat and the metrics' registry,
which holds no connection, no FalkorDB driver),
holds no Cypher, and only its liveness module touches Redis (for its heartbeat key). Checked on
the source and on what loading it actually imports."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SIMULATOR = REPO / "services" / "simulator"

ALLOWED_RELAY_GRAPH = {"relay_graph.runtime.heartbeat"}  # liveness only: a TTL key, no graph
METRICS = {"relay_graph.runtime.metrics", "relay_graph.runtime.metrics.catalogue"}  # its /metrics: no connection
REDIS_ONLY_IN = {"liveness.py"}
FORBIDDEN_ROOTS = {"falkordb", "redis"}
FORBIDDEN_NAMES = {"GraphClient", "Memory", "EmbeddedFalkorDB"}


def _sources() -> list[Path]:
    files = sorted(SIMULATOR.rglob("*.py"))
    assert len(files) >= 8, "the simulator's sources were not found"
    return files


def _imports(tree: ast.AST) -> list[tuple[str, list[str]]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.module, [a.name for a in node.names]))
    return out


def back_doors(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for module, names in _imports(tree):
        root = module.split(".")[0]
        if module in METRICS:
            continue
        if root == "relay_graph" and module not in ALLOWED_RELAY_GRAPH:
            found.append(f"imports {module}")
        if root == "relay_graph" and module in ALLOWED_RELAY_GRAPH and path.name != "liveness.py":
            found.append(f"imports {module} outside liveness.py")
        if root in FORBIDDEN_ROOTS and not (root == "redis" and path.name in REDIS_ONLY_IN):
            found.append(f"imports {module}")
        found += [f"imports {n} from {module}" for n in names if n in FORBIDDEN_NAMES]
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if any(k in text for k in ("MATCH (", "MERGE (", "GRAPH.QUERY", "GRAPH.RO_QUERY", "CREATE (")):
                found.append(f"holds Cypher: {text[:60]!r}")
    return found


def test_no_simulator_module_reaches_the_graph():
    found = {p.name: back_doors(p) for p in _sources()}
    assert not {k: v for k, v in found.items() if v}


def test_the_scan_catches_a_back_door(tmp_path):
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text("from relay_graph.runtime.db import GraphClient\nimport falkordb\nimport redis\n"
                      "Q = 'MATCH (c:Customer) RETURN c'\n")
    assert len(back_doors(sneaky)) == 5


def test_loading_the_simulator_loads_no_graph_access():
    code = ("import sys, services.simulator.__main__, services.simulator.service, services.simulator.demo, "
            "services.simulator.liveness;"
            "print(sorted(m for m in sys.modules if m.startswith(('relay_graph', 'falkordb', 'redis'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO,
                         env=dict(os.environ)).stdout
    loaded = set(eval(out))  # noqa: S307 - our own printed list
    assert loaded <= {"relay_graph", "relay_graph.runtime", "relay_graph.runtime.errors", "relay_graph.runtime.heartbeat",
                      "relay_graph.runtime.times"} | METRICS, loaded
