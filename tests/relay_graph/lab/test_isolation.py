"""Proof that the agents' code cannot reach the fault lab's truth graph.

1. Source text: outside relay_graph/lab/truth.py no module under services/ or libs/relay_graph names
   the truth graph (TRUTH_PREFIX, "relay-truth", a "…truth:" literal); tenancy.py only defines the
   constant. Inside the lab only truth.py selects a graph at all.
2. Import graph (static, from every module's AST): only the lab's own equipment modules import
   relay_graph.lab.truth; code outside the lab imports nothing of the lab but its public package,
   its models and its pure diagnosis; no code outside the lab touches a name `truth`; the agent
   services (intake, resolver, netops) never use the grader's or the injector's functions.
3. Runtime: with every module of services/ and relay_graph imported, no module outside the lab holds
   the truth module or anything defined in it, and the lab's public API exports nothing from it.
4. Tenancy: graph_name(tenant) is always "relay:<tenant>", never the truth prefix, because a tenant id
   cannot hold ':' (so no tenant id can spell "relay-truth:x" after the prefix, nor equal it).
"""

from __future__ import annotations

import ast
import json
import random
import string
import subprocess
import sys
from pathlib import Path

import pytest

from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import InvalidTenant
from relay_graph.runtime.tenancy import GRAPH_PREFIX, TRUTH_PREFIX, graph_name, validate_tenant

ROOT = Path(__file__).resolve().parents[3]
LIBS = ROOT / "libs"
TRUTH = "relay_graph.lab.truth"
LAB = "relay_graph.lab"
PUBLIC_LAB = {LAB, f"{LAB}.models", f"{LAB}.diagnosis", f"{LAB}.queries"}
AGENTS = ("services.intake", "services.resolver", "services.netops")
GRADER_NAMES = {"scoreboard", "scoreboard_rows", "inject", "inject_fault", "truth"}


def module_of(path: Path) -> str:
    rel = path.relative_to(LIBS if path.is_relative_to(LIBS) else ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources() -> dict[str, Path]:
    files = sorted((ROOT / "services").rglob("*.py")) + sorted((LIBS / "relay_graph").rglob("*.py"))
    return {module_of(p): p for p in files}


SOURCES = sources()


def imports_of(name: str, path: Path) -> set[str]:
    """Every module this one imports, relative imports resolved; `from pkg import sub` counts sub
    when sub is a module of ours."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out |= {f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in SOURCES}
    return out


GRAPH = {name: imports_of(name, path) for name, path in SOURCES.items()}


# The simulated world shares the lab's package (the simulation's role) but is no part of the fault
# lab: it is held to the same rules as code outside it.
WORLD = {f"{LAB}.world", f"{LAB}.network_gen", f"{LAB}.queries.world"}


def in_lab(name: str) -> bool:
    return (name == LAB or name.startswith(LAB + ".")) and name not in WORLD


def test_the_scan_sees_the_code():
    assert TRUTH in SOURCES and "relay_graph.desk.network.store" in SOURCES and "services.resolver.agent" in SOURCES
    # modules that reach the lab from outside it: the resolver's, the gateway's lab router, the world
    assert {"services.resolver.diagnosing", "services.gateway.routers.lab", "relay_graph.lab.world"} <= set(SOURCES)
    assert TRUTH in GRAPH[f"{LAB}.equipment"] or TRUTH in GRAPH[f"{LAB}.line"]  # the scan resolves imports


def test_only_the_truth_module_names_the_truth_graph():
    for name, path in SOURCES.items():
        if name == TRUTH:
            continue
        text = path.read_text()
        literals = [n.value for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        if name == "relay_graph.runtime.acl":  # the FalkorDB users' key patterns: it opens no graph
            continue
        if name == "relay_graph.runtime.tenancy":  # defines the constant; graph_name never uses it
            assert "TRUTH_PREFIX" not in ast.get_source_segment(text, next(
                n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == "graph_name"))
            continue
        assert "TRUTH_PREFIX" not in text, name
        assert "relay-truth" not in text, name
        assert not any("truth:" in s for s in literals), name
        if in_lab(name):
            assert "select_graph" not in text, name


def test_only_the_labs_equipment_imports_the_truth():
    importers = {name for name, deps in GRAPH.items() if TRUTH in deps}
    assert importers and all(in_lab(n) for n in importers), importers
    for name, deps in GRAPH.items():
        if in_lab(name):
            continue
        lab_deps = {d for d in deps if in_lab(d)}
        assert lab_deps <= PUBLIC_LAB, (name, lab_deps)


def test_no_code_outside_the_lab_touches_a_truth_name():
    for name, path in SOURCES.items():
        if in_lab(name):
            continue
        tree = ast.parse(path.read_text())
        used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        used |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        used |= {a.name.rpartition(".")[2] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                 for a in n.names}
        assert "truth" not in used, name
        if name.startswith(AGENTS):  # agents measure and act; they neither grade nor inject
            assert not used & GRADER_NAMES, (name, used & GRADER_NAMES)


# What an agent may take from the lab: its equipment and its vocabulary (the models), nothing else.
EQUIPMENT = {"measure", "measure_all", "act", "record_diagnosis", "diagnose_from_readings"}


def lab_names_used(path: Path) -> set[str]:
    """Names taken from the lab: `from relay_graph.lab[...] import x` and `lab.x`."""
    used: set[str] = set()
    for n in ast.walk(ast.parse(path.read_text())):
        if isinstance(n, ast.ImportFrom) and n.module and in_lab(n.module):
            used |= {a.name for a in n.names if f"{n.module}.{a.name}" not in WORLD}
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "lab":
            used.add(n.attr)
    return used


def test_agents_reach_the_lab_only_through_its_equipment():
    from relay_graph.lab import models

    allowed = EQUIPMENT | set(models.__all__)
    used_by_agents: set[str] = set()
    for name, path in SOURCES.items():  # the agents, and the use case their instruments go through
        if not name.startswith(AGENTS) and name != "relay_graph.usecases.equipment":
            continue
        used = lab_names_used(path)
        assert used <= allowed, (name, used - allowed)
        used_by_agents |= used
    # not vacuous: the resolver measures, diagnoses, records its diagnosis and acts
    assert EQUIPMENT - {"measure"} <= used_by_agents


RUNTIME_CHECK = r"""
import importlib, json, sys, types
names = json.loads(sys.argv[1])
failed = {}
for n in names:
    try:
        importlib.import_module(n)
    except Exception as exc:
        failed[n] = repr(exc)[:200]
truth = sys.modules.get("relay_graph.lab.truth")
holders = []
for name, mod in list(sys.modules.items()):
    if not (name.startswith("services") or name.startswith("relay_graph")) or name.startswith("relay_graph.lab"):
        continue
    for attr, value in vars(mod).items():
        if value is truth or getattr(value, "__module__", None) == "relay_graph.lab.truth":
            holders.append(f"{name}.{attr}")
import relay_graph.lab as lab
exported = [n for n in lab.__all__ if getattr(getattr(lab, n), "__module__", None) == "relay_graph.lab.truth"]
print(json.dumps({"failed": failed, "holders": holders, "exported": exported, "truth_loaded": truth is not None}))
"""


def test_at_runtime_nothing_outside_the_lab_holds_the_truth():
    names = sorted(n for n in SOURCES if not n.endswith("__main__") and not in_lab(n)) + [LAB]
    out = subprocess.run([sys.executable, "-c", RUNTIME_CHECK, json.dumps(names)], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["truth_loaded"]  # the lab is loaded, so the check below is not vacuous
    assert result["holders"] == [] and result["exported"] == []
    agent_modules = [n for n in names if n.startswith(AGENTS)]
    assert agent_modules and not set(result["failed"]) & set(agent_modules), result["failed"]


def test_tenant_ids_cannot_name_the_truth_graph():
    rng = random.Random(0)
    alphabet = string.ascii_lowercase + string.digits + "-"
    for _ in range(2000):
        tenant = rng.choice(string.ascii_lowercase + string.digits) + "".join(
            rng.choice(alphabet) for _ in range(rng.randint(1, 62)))
        name = graph_name(tenant)
        assert name == GRAPH_PREFIX + tenant and not name.startswith(TRUTH_PREFIX)
    for bad in ("relay-truth:acme", "acme:x", "truth:", ":acme", "acme:", "Relay-Truth", "a b", "", "x"):
        with pytest.raises(InvalidTenant):
            validate_tenant(bad)
    assert graph_name("relay-truth") == "relay:relay-truth" != TRUTH_PREFIX.rstrip(":")
    client = GraphClient.__new__(GraphClient)  # the selector alone, without a connection

    class Recorder:
        def select_graph(self, name):
            return name

    client.db = Recorder()
    assert client._graph("acme") == "relay:acme"
    with pytest.raises(InvalidTenant):
        client._graph("relay-truth:acme")
