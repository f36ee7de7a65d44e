"""The house rules, read from the source (every module's AST, function-level imports included, those
under `if TYPE_CHECKING:` not):

1. relay_graph's packages are layers: runtime, memory (the engine), desk, lab, usecases, tools. A
   module imports only its own layer and those before it, so the engine never imports the desk, and
   the runtime knows nothing of either. Each package's docstring says what it may use, and says
   exactly what this test enforces.
2. The entry points (the gateway's routes, the agents' handlers, the CLI, the tool catalogue) reach
   the graph through the use cases and the engine, never by running statements themselves: none
   imports a `queries` module.
3. Cypher lives in the `queries` packages only.
4. No module imports itself back through others: the import graph has no cycle.
5. Every process runs on the one process context (relay_graph.usecases.context.Deps), built by its
   one bootstrap: outside a process's bootstrap module (services/<name>/bootstrap.py, `relay mcp`'s
   stdio server), no entry point (services/, the tool catalogue) constructs the parts the context
   holds (a GraphClient, Memory, Outbox, Publisher, a Deps or a Call) or calls `make_deps` or
   `build_deps`. A route or handler gets its `Call` from the context (`Deps.call`).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import networkx as nx

REPO = Path(__file__).resolve().parents[1]
LIBS = REPO / "libs"
LAYERS = ("runtime", "memory", "desk", "lab", "usecases", "tools")
ENTRY_POINTS = ("services.", "relay_cli.", "relay_graph.tools.")


def _module_files() -> dict[str, Path]:
    roots = [(LIBS, "relay_graph"), (LIBS, "relay_cli"), (REPO, "services")]
    out: dict[str, Path] = {}
    for base, package in roots:
        for path in sorted((base / package).rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


MODULES = _module_files()
TREES = {name: ast.parse(path.read_text(), filename=str(path)) for name, path in MODULES.items()}


def _absolute(name: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = name.split(".") if MODULES[name].name == "__init__.py" else name.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _type_checking_only(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skip


def _reexports() -> dict[tuple[str, str], str]:
    """(package, name) -> the module a package's __init__ takes that name from."""
    out: dict[tuple[str, str], str] = {}
    for name, tree in TREES.items():
        if MODULES[name].name != "__init__.py":
            continue
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                source = _absolute(name, node)
                for alias in node.names:
                    full = f"{source}.{alias.name}"
                    out[(name, alias.asname or alias.name)] = full if full in MODULES else source
    return out


def _imports() -> dict[str, set[str]]:
    """Module -> the modules of ours it imports. `from pkg import name` counts the module `name` is
    defined in when the package only re-exports it, so a package's __init__ does not hide a cycle
    nor make one."""
    reexports = _reexports()
    graph: dict[str, set[str]] = {}
    for name, tree in TREES.items():
        skip = _type_checking_only(tree)
        targets: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names if a.name in MODULES}
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(name, node)
                if source not in MODULES:
                    continue
                for alias in node.names:
                    target = f"{source}.{alias.name}"
                    if target not in MODULES:
                        target, seen = source, set()
                        while (target, alias.name) in reexports and target not in seen:
                            seen.add(target)
                            target = reexports[(target, alias.name)]
                    targets.add(target)
        targets.discard(name)
        graph[name] = targets
    return graph


GRAPH = _imports()


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "relay_graph" and len(parts) > 1 else None


def test_the_scan_sees_the_code():
    for layer in LAYERS:
        assert sum(1 for m in MODULES if layer_of(m) == layer) >= 3, layer
    assert len([m for m in MODULES if m.startswith("services.")]) >= 30
    assert sum(len(t) for t in GRAPH.values()) > 500


def test_every_module_of_relay_graph_is_in_a_layer():
    stray = sorted(m for m in MODULES if m.startswith("relay_graph.") and layer_of(m) not in LAYERS)
    assert not stray, f"modules outside the packages by role: {stray}"
    assert not GRAPH["relay_graph"], "relay_graph/__init__ imports nothing: each package stands alone"


def test_each_layer_imports_only_itself_and_those_before_it():
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    wrong = sorted(
        f"{module} ({layer_of(module)}) imports {target} ({layer_of(target)})"
        for module, targets in GRAPH.items() if layer_of(module) in rank
        for target in targets if layer_of(target) in rank and rank[layer_of(target)] > rank[layer_of(module)]
    )
    assert not wrong, "\n".join(wrong)


def test_each_package_says_what_it_may_use():
    for i, layer in enumerate(LAYERS):
        doc = ast.get_docstring(TREES[f"relay_graph.{layer}"]) or ""
        said = re.search(r"May use: (.*?)(?:\.\s|\.$)", doc, re.S)
        assert said, f"relay_graph.{layer}'s docstring does not say what it may use"
        named = set(re.findall(r"relay_graph\.(\w+)", said.group(1)))
        assert named == set(LAYERS[:i]), (layer, named)


def test_the_engine_loads_nothing_of_the_desk():
    """What importing the engine actually loads (not only what its source names)."""
    code = ("import sys, relay_graph.memory.facade, relay_graph.memory.recall; "
            "print(sorted(m for m in sys.modules if m.startswith('relay_graph.') "
            "and m.split('.')[1] not in ('runtime', 'memory')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "[]", out.stdout


def _is_statements(module: str) -> bool:
    return ".queries" in module and layer_of(module) is not None


def test_entry_points_reach_statements_only_through_the_use_cases():
    wrong = sorted(f"{module} imports {target}" for module, targets in GRAPH.items()
                   if module.startswith(ENTRY_POINTS) for target in targets if _is_statements(target))
    assert not wrong, "\n".join(wrong)


# A statement's text, not a command that carries one (the driver's GRAPH.QUERY in runtime.db).
CYPHER = re.compile(r"\b(MATCH|MERGE|CREATE|UNWIND)\s*[\(\$]")


def test_cypher_lives_in_the_statement_packages():
    found = []
    for module, tree in TREES.items():
        if _is_statements(module):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CYPHER.search(node.value):
                if ast.get_docstring(tree) == node.value:
                    continue
                found.append(f"{module}:{node.lineno}: {node.value[:60]!r}")
    assert not found, "\n".join(found)


def test_no_import_cycles():
    graph = nx.DiGraph([(m, t) for m, targets in GRAPH.items() for t in targets])
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not cycles, cycles


# What a process's context holds, and what builds one.
CONTEXT_PARTS = {"GraphClient", "Memory", "Outbox", "Publisher", "BrokerPublisher", "Deps", "Call"}
CONTEXT_BUILDERS = {"make_deps", "build_deps"}
BOOTSTRAPS = re.compile(r"^services\.\w+\.bootstrap$|^relay_graph\.tools\.stdio$")


def _ours(tree: ast.AST, name: str) -> set[str]:
    """The names a module binds by importing them from our packages (the ones a call could mean)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(name, node) if name in MODULES else (node.module or "")
            if source.split(".")[0] in ("relay_graph", "services"):
                out |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name.startswith("relay_graph")}
    return out


def context_built(name: str, tree: ast.AST) -> list[str]:
    """Where module `name`, not a bootstrap, constructs a part of the process context or builds a
    context: `Memory(...)` (imported from our packages), `db.GraphClient(...)`, `make_deps(...)`."""
    if BOOTSTRAPS.match(name):
        return []
    ours = _ours(tree, name)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = (func.id if isinstance(func, ast.Name) and func.id in ours else
                  func.attr if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                  and func.value.id in ours else None)
        if called in CONTEXT_PARTS | CONTEXT_BUILDERS:
            found.append(f"{name}:{node.lineno}: {called}(...)")
    return found


def test_entry_points_build_no_context_of_their_own():
    wrong = sorted(f for module, tree in TREES.items() if module.startswith(("services.", "relay_graph.tools."))
                   for f in context_built(module, tree))
    assert not wrong, "build these through the process's bootstrap (usecases.context.make_deps):\n" + "\n".join(wrong)
    for service in ("gateway", "intake", "resolver", "netops"):  # each process has its bootstrap, and uses it
        assert f"services.{service}.bootstrap" in MODULES, service
        assert any(CONTEXT_BUILDERS & {n.id for n in ast.walk(TREES[f"services.{service}.bootstrap"])
                                       if isinstance(n, ast.Name)}), service


def test_a_context_built_by_hand_would_be_seen():
    route = ast.parse("from relay_graph.memory.facade import Memory\nfrom relay_graph.runtime import db\n"
                      "from relay_graph.usecases.context import build_deps\n"
                      "def f(c):\n    return Memory(db.GraphClient(c)), build_deps('x', c)\n")
    assert sorted(context_built("services.gateway.routers.chat", route)) == [
        "services.gateway.routers.chat:5: GraphClient(...)", "services.gateway.routers.chat:5: Memory(...)",
        "services.gateway.routers.chat:5: build_deps(...)"]
    assert context_built("services.intake.bootstrap", route) == []  # the composition root builds them
    local = ast.parse("class Memory:\n    pass\nm = Memory()\n")  # a name of its own is not ours
    assert context_built("services.simulator.world", local) == []


def test_a_cycle_or_a_wrong_import_would_be_seen():
    """The checks above on a graph with the faults they look for."""
    graph = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "a")])
    assert [c for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert "relay_graph.runtime.db" in GRAPH["relay_graph.memory.facts"] or any(
        layer_of(t) == "runtime" for t in GRAPH["relay_graph.memory.facts"])
    assert _is_statements("relay_graph.memory.queries.facts") and not _is_statements("relay_graph.memory.facts")
